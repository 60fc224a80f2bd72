"""What the model's checks (`model-check`, `advisor-check`) share: their options, the profile cut to the paths asked
for, the yardstick measured in every round, and the profile scaled to it."""

from __future__ import annotations

import argparse
import statistics
from dataclasses import dataclass, replace

from xnf import results_file
from xnf.lab import placement
from xnf.model import cases, lab_rate, rate_statistic
from xnf.model.profile import Profile, load

YARDSTICK_SUBJECT = ("yardstick", None)


def add_arguments(parser: argparse.ArgumentParser, default_cases: list[str], paths: list[str],
                  profile_help: str, placements: tuple[str, ...] = placement.CHOICES) -> None:
    """The options beside --rounds and --seconds (the study's skeleton adds those)."""
    parser.add_argument("--profile", help=profile_help + " (default: the installed one)")
    parser.add_argument("--cases", default=",".join(default_cases), help="a subset of " + ", ".join(default_cases))
    parser.add_argument("--paths", default=",".join(paths), help="the profile's paths to measure")
    parser.add_argument("--frames", type=int, help="frames of xnf cost's mix (default: every flow once)")
    parser.add_argument("--from", dest="earlier", metavar="RESULTS", help="measure nothing: judge the samples of an "
                        "earlier results file of this check against the profile (after the profile or the fit "
                        "changed)")
    placement.add_argument(parser, placements)


@dataclass
class CheckSetup:
    profile: Profile          # cut to the paths asked for
    labels: list[str]         # the cases


def on_paths(full: Profile, paths: str) -> Profile | None:
    """The profile cut to the paths named (a comma-separated list), or None when one is not the profile's."""
    keys = [k for k in paths.split(",") if k]
    if not keys or any(k not in full.paths for k in keys):
        return None
    return replace(full, paths={k: v for k, v in full.paths.items() if k in keys})


def setup(args: argparse.Namespace, study: str) -> CheckSetup:
    """The profile and the cases the options ask for; a wrong option ends the study with what is known."""
    full = load(args.profile)
    profile = on_paths(full, args.paths)
    labels = [c for c in args.cases.split(",") if c]
    known = [c.label for c in cases.known()]
    if not labels or profile is None or any(c not in known for c in labels):
        raise SystemExit(f"{study}: cases are {', '.join(known)}; paths {', '.join(full.paths)}")
    return CheckSetup(profile, labels)


def yardstick_trial(args: argparse.Namespace, tsc_hz: float | None, **fields) -> dict:
    return {**fields, "case": YARDSTICK_SUBJECT[0], "mpps": lab_rate.yardstick(args.seconds, tsc_hz)}


def drift(samples: list[dict], profile: Profile) -> dict:
    """The yardstick of these rounds (taken as the profile's fit took its own) beside the one stored with the profile:
    how far the machine moved since the fit, and how far the yardstick itself spreads."""
    rates = [s["mpps"] for s in samples if s["case"] == YARDSTICK_SUBJECT[0]]
    then = profile.yardsticks.get(lab_rate.YARDSTICK_KEY)
    now = rate_statistic.of(rates, profile.statistic)
    return {"yardstick": lab_rate.YARDSTICK, "at_fit_mpps": then, "statistic": profile.statistic,
            "now_mpps": round(now, 4), "median_mpps": round(statistics.median(rates), 4),
            "rounds_mpps": [round(r, 4) for r in rates], "ratio": round(now / then, 4) if then else None,
            "stdev_mpps": round(statistics.stdev(rates), 4) if len(rates) > 1 else 0.0}


def earlier(args: argparse.Namespace, study: str) -> dict | None:
    """The earlier results file --from names (its samples, environment and seconds per trial judged again), or None
    to measure."""
    return results_file.read(args.earlier, study) if args.earlier else None

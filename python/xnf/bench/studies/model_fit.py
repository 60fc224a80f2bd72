"""The machine profile of the cost model (docs/cost-model.md): c_IO of every data path, fitted from taskemu.

taskemu spends a set number of TSC cycles per frame and takes one step along a list of a set size, then swaps the
MACs and sends the frame on. Two series, the drop NF and a drop mix:
  cycles   0, 250, 750, 1500, 3000, 5000 cycles, the list 4 KiB (in cache)
  memory   no cycles, the list 256 KiB, 16 MiB, 256 MiB (one dependent access per frame, out of cache)
  drop     the drop NF: the time of a dropped frame
  drop-25  taskemu spending nothing and dropping one frame in four: what a dropped frame saves a busy worker (on
           the AF_XDP paths the drop NF leaves the workers idle and measures the sender); where it is left out
           (an older results file), the drop point alone sets the drops
Each point's c_task is what `xnf cost` measures for it, natively and in XDP, less what it measures for the first
point (taskemu spending nothing: the baseline), the way a user's NF is measured; its RFC 2544 rate is measured on
every data path of the lab (python/xnf/model/lab_paths.py). Each path's line (python/xnf/model/fit.py) is fitted
to the best of each point's rounds (--statistic median: their medians; python/xnf/model/rate_statistic.py says
why), c_task to their medians. The yardstick, measured in every round beside them: the hand-written XDP macswap's
RFC 2544 rate, taken the same way, which `xnf advise --calibrate` and `model-check` measure again to scale the
profile to the day.

Every rate is bracketed by a probe of the cores' round trip (xnf.lab.placement). With --placement near the fit takes
only the measurements at the near level; the best of every point's rounds (the default) is the near level's too,
the far one only slowing a path. Either way the profile keeps what the far level cost each path (its "placement":
far_adds_ns, per role the time a frame that crosses between the cores takes more there), which `xnf advise`
reports and `model-check --placement each` predicts the far measurements with.

The profile goes to the results folder and is installed where `xnf advise` looks (profile.default_path(); not with
--no-install). What is measured and how the profile is fitted from it is python/xnf/model/profile_fit.py; --quick
fits the quick profile (python/xnf/model/quick_fit.py), marked when the host was unsteady.

    xnf bench run model-fit [--rounds 3] [--seconds 0.5] [--paths xdp,afxdp/live,...] [--placement near]
                            [--statistic best|median] [--no-install]
    xnf bench run model-fit --refit results/model/model_fit-STAMP.json    # the same samples, fitted again
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, replace
from pathlib import Path

from xnf import results_file, say
from xnf.bench.figures import model_plots
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import placement
from xnf.model import lab_paths, lab_rate, quick_fit, rate_statistic
from xnf.model.profile import Profile, default_path, install, quick_path
from xnf.model.profile_fit import BASELINE_LABEL, DROP_LABEL, measure, points, profile_from, subjects

NAME = "model-fit"
DESCRIPTION = "the cost model's machine profile: c_IO of every data path, fitted from taskemu's cycles and memory " \
              "series and the drop NF (RFC 2544 on each path)"


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paths", default=",".join(lab_paths.runnable()),
                        help="a subset of " + ", ".join(lab_paths.runnable()) + " (the paths this kernel runs)")
    parser.add_argument("--points", default=",".join(points()), help="a subset of " + ", ".join(points()) +
                        f" ({BASELINE_LABEL}, the baseline, and drop always among them)")
    parser.add_argument("--frames", type=int, help="frames of xnf cost's mix (default: every flow once)")
    parser.add_argument("--repeat", type=int, help="xnf cost's timed passes (default: xnf cost's)")
    parser.add_argument("--no-install", action="store_true", help=f"do not install the profile as {default_path()}")
    parser.add_argument("--quick", action="store_true",
                        help=f"about two and a half minutes: {', '.join(lab_paths.quick_paths())}, points "
                             f"{', '.join(quick_fit.POINTS)}, {quick_fit.ROUNDS} rounds of {quick_fit.SECONDS} s "
                             f"trials, installed as {quick_path()}, marked when the host was unsteady (what xnf "
                             "advise makes on first use; its confidence is lower)")
    placement.add_argument(parser)
    rate_statistic.add_argument(parser)
    parser.add_argument("--refit", metavar="RESULTS", help="measure nothing: fit again the samples of an earlier "
                        "model-fit results file (after the fit itself changed)")


def prepare(args: argparse.Namespace) -> None:
    """--quick: the quick fit's paths, points, rounds and trial length in place of the options' (not with --refit,
    which measures nothing), and what other programs take of the cores before it starts."""
    args.idle_before = None
    if args.quick:
        if args.refit:
            raise SystemExit("model-fit: --quick measures; --refit does not: one or the other")
        args.paths, args.points = ",".join(lab_paths.quick_paths()), ",".join(quick_fit.POINTS)
        args.rounds, args.seconds = quick_fit.ROUNDS, quick_fit.SECONDS
        args.idle_before = quick_fit.others_busy()


def trial(subject: tuple[str, str | None], args: argparse.Namespace, place: Place) -> dict:
    return measure(subject, args.seconds, place.tsc_hz, place.folder, args.frames, args.repeat)


def _keys(args: argparse.Namespace) -> list[str]:
    return [k for k in args.paths.split(",") if k]


def _labels(args: argparse.Namespace) -> list[str]:
    return [p for p in args.points.split(",") if p]


def wrong(args: argparse.Namespace) -> str | None:
    keys, labels = _keys(args), _labels(args)
    if any(k not in lab_paths.runnable() for k in keys) or not keys or any(p not in points() for p in labels) or \
            not {BASELINE_LABEL, DROP_LABEL} <= set(labels) or len([p for p in labels if p != DROP_LABEL]) < 2:
        return (f"paths this kernel runs are {', '.join(lab_paths.runnable())}; points {', '.join(points())} "
                f"({BASELINE_LABEL}, drop and one more at least)")
    return None


@dataclass
class Fitted:
    profile: Profile
    table: list[dict]      # the points each path's line was fitted on
    labels: list[str]      # the points measured


def fitted(samples: list[dict], args: argparse.Namespace) -> Fitted:
    """The profile from the samples (measured now or an earlier file's); a quick fit's with how steady the host
    was."""
    profile, table, labels = profile_from(samples, args.measured_in, args.placement, args.statistic, NAME)
    if args.quick:
        host = quick_fit.judge(samples, args.idle_before, quick_fit.others_busy())
        profile = replace(profile, quick=True, host=host.as_dict())
    return Fitted(profile, table, labels)


def document(found: Fitted) -> dict:
    return {"placement": found.profile.placement,
            "points": {k: {"series": v[0], "nf": v[1].nf, "rules": v[1].rules, "map_sizes": v[1].map_sizes}
                       for k, v in points().items() if k in found.labels},
            "profile": json.loads(found.profile.to_json()), "fit_table": found.table}


def save(found: Fitted, path: Path, args: argparse.Namespace, env: dict) -> None:
    """The profile beside the results file, and installed where xnf advise looks (not with --no-install)."""
    profile_path = path.with_name(path.stem.replace("model_fit", "profile") + ".json")
    profile_path.write_text(found.profile.to_json())
    if not args.no_install:
        install(found.profile)
    if found.profile.host and not found.profile.host["steady"]:
        say.info("the host was unsteady during the quick fit (its \"host\" says how): its answers are of low "
                 "confidence, and xnf advise fits it again once the host is quiet")
    say.info(f"profile: {profile_path}")


def paths_said(found: Fitted) -> list[str]:
    kept = found.profile.placement["kept"]
    return [f"{key:16s} c_IO " + ", ".join(f"{name} {r.fixed_ns['forward']:.0f} ns" for name, r in p.roles.items())
            + f"; NF on the {p.task_role} x{p.task_scale:.2f}; rms error {p.fit['rms_error']:.1%}, largest "
            f"{p.fit['max_error']:.1%}"
            + (f"; no measurement at the {kept} placement of {', '.join(p.fit['points_left_out'])}, left out"
               if p.fit.get("points_left_out") else "")
            for key, p in found.profile.paths.items()]


STUDY = RoundsStudy(
    NAME, "model_fit", rounds=3, seconds=lab_rate.TRIAL_SECONDS, seconds_help=lab_rate.TRIAL_SECONDS_HELP,
    options=options, prepare=prepare, check=wrong, trial=trial,
    subjects=lambda args: subjects(_keys(args), _labels(args)),
    line=lambda s: f"{s['point']:13s} {s['path'] or '':16s} {s['mpps']:6.3f} Mpps",
    earlier=lambda args: results_file.read(args.refit, NAME) if args.refit else None,
    summarise=fitted, document=document, table=lambda found: found.table, then=save, said_last=paths_said,
    plot=lambda found, samples, png: model_plots.fit_lines(found.profile, found.table, png),
    fields=lambda args: {"yardstick": lab_rate.YARDSTICK, "refitted_from": args.refit})
add_arguments, run = STUDY.add_arguments, STUDY.run

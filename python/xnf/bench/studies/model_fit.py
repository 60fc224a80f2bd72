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
--no-install).

    xnf bench run model-fit [--rounds 3] [--seconds 0.5] [--paths xdp,afxdp/live,...] [--placement near]
                            [--statistic best|median] [--no-install]
    xnf bench run model-fit --refit results/model/model_fit-STAMP.json    # the same samples, fitted again
"""

from __future__ import annotations

import argparse
import json
import statistics
from dataclasses import dataclass, replace
from pathlib import Path

from xnf import nf_cost, results_file, say
from xnf.analysis import model_plots
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import placement
from xnf.model import fit, lab_paths, lab_rate, rate_statistic
from xnf.model.profile import Profile, default_path, install, quick_path

NAME = "model-fit"
DESCRIPTION = "the cost model's machine profile: c_IO of every data path, fitted from taskemu's cycles and memory " \
              "series and the drop NF (RFC 2544 on each path)"
CYCLES = [0, 250, 750, 1500, 3000, 5000]
MEMORY_BYTES = [256 << 10, 16 << 20, 256 << 20]
NODE_BYTES = 64
BASELINE_LABEL = "cycles-0"
DROP_LABEL = "drop"
DROP_MIX_PERCENT = 25
DROP_MIX_LABEL = f"drop-{DROP_MIX_PERCENT}"
BASELINE = {"nf": "taskemu", "rules": "cycles 0\n"}
YARDSTICK_SUBJECT = ("yardstick", None)


def _size(n: int) -> str:
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n >> shift}{unit}"
    return str(n)


def points() -> dict[str, tuple[str, lab_rate.NfCase]]:
    """label: (series, the case)."""
    out = {f"cycles-{c}": (fit.CYCLES, lab_rate.NfCase(f"cycles-{c}", "taskemu", f"cycles {c}\n")) for c in CYCLES}
    for size in MEMORY_BYTES:
        label = f"memory-{_size(size)}"
        out[label] = (fit.MEMORY, lab_rate.NfCase(label, "taskemu", "cycles 0\n",
                                                  map_sizes=[f"te_list={size // NODE_BYTES}"]))
    out[DROP_LABEL] = (fit.DROP, lab_rate.NfCase(DROP_LABEL, "drop"))
    out[DROP_MIX_LABEL] = (fit.DROP_MIX, lab_rate.NfCase(DROP_MIX_LABEL, "taskemu",
                                                         f"cycles 0\ndrop {DROP_MIX_PERCENT}\n"))
    return out


def c_task(case: lab_rate.NfCase, args: argparse.Namespace, folder: Path) -> dict:
    rules = case.write_rules(folder)
    return nf_cost.measure(case.nf, case.gen_options, rules, args.frames, args.repeat, case.map_sizes)


def trial(subject: tuple[str, str | None], args: argparse.Namespace, place: Place) -> dict:
    label, key = subject
    tsc_hz, folder = place.tsc_hz, place.folder
    if subject == YARDSTICK_SUBJECT:
        return {"point": label, "path": None, "mpps": lab_rate.yardstick(args.seconds, tsc_hz)}
    case = points()[label][1]
    path = lab_paths.find(key)
    cost = c_task(case, args, folder)   # beside the rate, in the same round
    rate = lab_rate.measure(case, case.nf, path.run_options(), args.seconds, tsc_hz)
    return {"point": label, "path": key, **rate, "native_ns": cost["native_ns_per_frame"],
            "xdp_ns": cost["xdp_ns_per_frame"]}


def _found(samples: list[dict], field: str, **match) -> list[float]:
    found = [s[field] for s in samples if all(s[k] == v for k, v in match.items())]
    if not found:
        what = ", ".join(f"{k} {v}" for k, v in match.items())
        raise SystemExit(f"model-fit: no measurement of {what} at the placement kept: more --rounds, or "
                         f"--placement all")
    return found


def _median(samples: list[dict], field: str, **match) -> float:
    return statistics.median(_found(samples, field, **match))


def _rate(samples: list[dict], statistic: str, **match) -> float:
    """The rate (Mpps) of the rounds that match, as the statistic takes it (python/xnf/model/rate_statistic.py)."""
    return rate_statistic.of(_found(samples, "mpps", **match), statistic)


def _left_out(samples: list[dict], label: str, key: str) -> bool:
    """A task point or the drop mix the path has no measurement of at the placement kept (every one of its rounds
    straddled the host moving the vCPUs, say) is left out of the path's fit. The baseline and the drop point are
    not: the line's fixed time and the drop's come from them (_median says what to do)."""
    if label in (BASELINE_LABEL, DROP_LABEL):
        return False
    return not any(s["point"] == label and s["path"] == key for s in samples)


def fit_profile(samples: list[dict], keys: list[str], env: dict, placement_kept: str = placement.ALL,
                labels: list[str] | None = None,
                statistic: str = rate_statistic.DEFAULT) -> tuple[Profile, list[dict]]:
    """The profile from the rounds' rates as statistic takes them (of the measurements at placement_kept; c_task
    from their medians), and the table it was fitted on. labels: the points the run measured (by default those in
    samples; a placement kept may hold fewer)."""
    measured = set(labels or (s["point"] for s in samples)) | {BASELINE_LABEL, DROP_LABEL}
    series = {label: s for label, (s, _) in points().items() if label in measured}
    table = []
    paths = {}
    for key in keys:
        side = lab_paths.find(key).task_side + "_ns"
        base = _median(samples, side, point=BASELINE_LABEL)
        rows = []
        left_out = [label for label in series if _left_out(samples, label, key)]
        for label in series:
            if label in left_out:
                continue
            mpps = _rate(samples, statistic, point=label, path=key)
            x = _median(samples, side, point=label) - base
            rows.append({"path": key, "point": label, "series": series[label], "x_ns": round(x, 2),
                         "mpps": round(mpps, 4), "y_ns": round(1e3 / mpps, 2)})
        table += rows
        task_points = [fit.Point(r["x_ns"], r["y_ns"], r["series"]) for r in rows
                       if r["series"] in fit.TASK_SERIES]
        drop = next(fit.Point(r["x_ns"], r["y_ns"], fit.DROP) for r in rows if r["series"] == fit.DROP)
        mix = next((fit.DropMix(fit.Point(r["x_ns"], r["y_ns"], fit.DROP_MIX), DROP_MIX_PERCENT / 100)
                    for r in rows if r["series"] == fit.DROP_MIX), None)
        load = statistics.median(s["generator_ns_per_packet"] for s in samples
                                 if s["path"] == key and s.get("generator_ns_per_packet"))
        paths[key] = fit.fit_path(lab_paths.find(key), task_points, drop, load_ns=load, drop_mix=mix)
        if left_out:
            paths[key].fit["points_left_out"] = left_out
    kernel_drop = paths.get(lab_paths.KERNEL_DROP_WITH_SOCKETS)
    for key, path in paths.items():
        if kernel_drop and path.task_side == "native":
            fit.add_kernel_drop(path, kernel_drop)
    baseline = {**BASELINE, "native_ns": round(_median(samples, "native_ns", point=BASELINE_LABEL), 2),
                "xdp_ns": round(_median(samples, "xdp_ns", point=BASELINE_LABEL), 2)}
    yard = _rate(samples, statistic, point=YARDSTICK_SUBJECT[0])
    rounds = 1 + max(s["round"] for s in samples)
    profile = Profile(
        name=f"this machine, {env['started_utc'][:10]}", source="measured",
        description=f"fitted by model-fit from taskemu ({rounds} rounds, {rate_statistic.WHAT[statistic]}"
                    + ("" if placement_kept == placement.ALL
                       else f" of the measurements at the {placement_kept} placement") + ")",
        platform=f"veth lab: {lab_paths.SENDER_WHAT}; {lab_paths.WORKER_WHAT}; 64-byte UDP frames",
        baseline=baseline, paths=paths, yardsticks={lab_rate.YARDSTICK_KEY: round(yard, 4)}, environment=env,
        statistic=statistic)
    return profile, table


def far_adds_ns(samples: list[dict], profile: Profile, table: list[dict]) -> dict[str, dict[str, float] | None]:
    """Per path, what the far placement adds to each role's time for a frame that crosses between the cores
    (fit.far_times), from the path's far measurements of the points it was fitted on (each with its point's c_task
    in the fit's table); None where it has none. Times per role and not a ratio of rates: on the live path the far
    level added about 80 ns to a cheap frame's time, where the sender binds, and nothing measurable to a dear
    one's, where the worker does (research/cost-model-notebook.md)."""
    out = {}
    for key, path in profile.paths.items():
        rows = {r["point"]: r for r in table if r["path"] == key}
        drops_in = lab_paths.find(key).drops_in
        far = [(_point_load(path, drops_in, rows[s["point"]]), 1e3 / s["mpps"]) for s in samples
               if s.get("path") == key and s.get("placement") == placement.FAR and s["point"] in rows]
        out[key] = {r: round(ns, 1) for r, ns in fit.far_times(path, far).items()} if far else None
    return out


def _point_load(path, drops_in: str, row: dict):
    share = {fit.DROP: 1.0, fit.DROP_MIX: DROP_MIX_PERCENT / 100}.get(row["series"], 0.0)
    return fit.point_load(path, drops_in, row["x_ns"], share)


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--paths", default=",".join(lab_paths.PATHS), help="a subset of " + ", ".join(lab_paths.PATHS))
    parser.add_argument("--points", default=",".join(points()), help="a subset of " + ", ".join(points()) +
                        f" ({BASELINE_LABEL}, the baseline, and drop always among them)")
    parser.add_argument("--frames", type=int, help="frames of xnf cost's mix (default: every flow once)")
    parser.add_argument("--repeat", type=int, help="xnf cost's timed passes (default: xnf cost's)")
    parser.add_argument("--no-install", action="store_true", help=f"do not install the profile as {default_path()}")
    parser.add_argument("--quick", action="store_true",
                        help=f"about a minute: {', '.join(QUICK['paths'])}, points {', '.join(QUICK['points'])}, "
                             f"{QUICK['rounds']} round of {QUICK['seconds']} s trials, installed as {quick_path()} "
                             "(what xnf advise makes on first use; its confidence is lower)")
    placement.add_argument(parser)
    rate_statistic.add_argument(parser)
    parser.add_argument("--refit", metavar="RESULTS", help="measure nothing: fit again the samples of an earlier "
                        "model-fit results file (after the fit itself changed)")


# The quick fit: the three paths that win most cases (docs/cost-model.md), the baseline, one dear point and drop.
QUICK = {"paths": lab_paths.QUICK_PATHS, "points": (BASELINE_LABEL, "cycles-3000", DROP_LABEL),
         "rounds": 1, "seconds": 0.3}


def prepare(args: argparse.Namespace) -> None:
    """--quick: its paths, points, rounds and trial length in place of the options' (not with --refit, which
    measures nothing)."""
    if args.quick:
        if args.refit:
            raise SystemExit("model-fit: --quick measures; --refit does not: one or the other")
        args.paths, args.points = ",".join(QUICK["paths"]), ",".join(QUICK["points"])
        args.rounds, args.seconds = QUICK["rounds"], QUICK["seconds"]


def _keys(args: argparse.Namespace) -> list[str]:
    return [k for k in args.paths.split(",") if k]


def _labels(args: argparse.Namespace) -> list[str]:
    return [p for p in args.points.split(",") if p]


def wrong(args: argparse.Namespace) -> str | None:
    keys, labels = _keys(args), _labels(args)
    if any(k not in lab_paths.PATHS for k in keys) or not keys or any(p not in points() for p in labels) or \
            not {BASELINE_LABEL, DROP_LABEL} <= set(labels) or len([p for p in labels if p != DROP_LABEL]) < 2:
        return (f"paths are {', '.join(lab_paths.PATHS)}; points {', '.join(points())} ({BASELINE_LABEL}, drop and "
                "one more at least)")
    return None


@dataclass
class Fitted:
    profile: Profile
    table: list[dict]      # the points each path's line was fitted on
    labels: list[str]      # the points measured


def fitted(samples: list[dict], args: argparse.Namespace) -> Fitted:
    """The profile from the samples (measured now or an earlier file's), with the far level's times where it keeps
    the near one."""
    keys = list(dict.fromkeys(s["path"] for s in samples if s["path"]))
    labels = list(dict.fromkeys(s["point"] for s in samples if s["path"]))
    kept, placed = placement.keep(samples, args.placement, NAME)
    profile, table = fit_profile(kept, keys, args.measured_in, placed["kept"], labels, args.statistic)
    profile = replace(profile, placement=placed, quick=args.quick)
    if profile.near_level:
        profile = replace(profile, placement={**placed, "far_adds_ns": far_adds_ns(samples, profile, table)})
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
    subjects=lambda args: [YARDSTICK_SUBJECT] + [(label, key) for label in _labels(args) for key in _keys(args)],
    line=lambda s: f"{s['point']:13s} {s['path'] or '':16s} {s['mpps']:6.3f} Mpps",
    earlier=lambda args: results_file.read(args.refit, NAME) if args.refit else None,
    summarise=fitted, document=document, table=lambda found: found.table, then=save, said_last=paths_said,
    plot=lambda found, samples, png: model_plots.fit_lines(found.profile, found.table, png),
    fields=lambda args: {"yardstick": lab_rate.YARDSTICK, "refitted_from": args.refit})
add_arguments, run = STUDY.add_arguments, STUDY.run

"""What the AF_XDP worker's frame prefetch gains, against a variant built with -DXNF_NO_PREFETCH (the NF meets each
frame's first line itself), in the same rounds, with the hand-written XDP yardstick. Two measurements per NF case:
  rate  its RFC 2544 rate on a user-space path (--paths), as the cost model measures it
        (python/xnf/model/lab_rate.py); on veth its rounds spread by 10-20 %
  cost  the worker core's busy time per frame on afxdp-poll/live (its worker sleeps when idle) at a rate below every
        case's (--cost-mpps): what the frames cost the worker, without the rate search's spread

On veth in copy mode the kernel copies each frame into the UMEM on the sending core, so the worker's first read of a
frame is a miss to the other core's cache. An NF whose own work per frame is longer than the processor looks ahead
meets those misses one after the other (docs/afxdp.md, "Frames prefetched"). The cases are the cost model's
(python/xnf/model/cases.py) and macswap.

    xnf bench run frame-prefetch [--rounds 5] [--seconds 0.5] [--cases ...] [--paths afxdp/live,...]
                                 [--measure rate,cost] [--cost-mpps 1.0] [--cost-seconds 3]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics

from xnf.bench import variants
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import paths
from xnf.lab.rounds import rate_rows
from xnf.errors import XnfError
from xnf.model import cases, lab_paths, lab_rate
from xnf.model.lab_rate import NfCase

NAME = "frame-prefetch"
DESCRIPTION = "the AF_XDP worker's frame prefetch against a build without it, per NF case (same rounds, yardstick)"
VARIANT, DEFINES = "no-prefetch", "-DXNF_NO_PREFETCH"
BUILDS = ("prefetch", VARIANT)
YARDSTICK = "yardstick"
RATE, COST = "rate", "cost"
COST_MODE = "afxdp-poll"   # its worker sleeps when idle: its busy time is what the frames cost
MACSWAP = NfCase("macswap", "macswap", None, cases.THOUSAND_FLOWS)
DEFAULT_CASES = ["macswap", "lb", "lb-10k", "firewall-10k", "router", "checksum-16"]


def find_case(label: str) -> NfCase:
    if label == MACSWAP.label:
        return MACSWAP
    try:
        return cases.find(label)
    except KeyError:
        raise XnfError(f"unknown NF case '{label}': use macswap or one of the cost model's cases "
                       f"(python/xnf/model/cases.py)") from None


def trial(subject: tuple, args: argparse.Namespace, place: Place) -> dict:
    tsc_hz, binaries = place.tsc_hz, place.lab
    if subject == (YARDSTICK,):
        return {"subject": YARDSTICK, "mpps": lab_rate.yardstick(args.seconds, tsc_hz)}
    kind, label, key, build = subject
    case, path = find_case(label), lab_paths.find(key)
    options = path.run_options()
    binary = binaries[f"xnf-{case.nf}"] if build == VARIANT else None
    sample = {"subject": f"{label} {key} {build} {kind}", "kind": kind, "case": label, "path": key, "build": build}
    if kind == COST:
        return sample | lab_rate.worker_cost(case, options, args.cost_mpps * 1e6, args.cost_seconds, tsc_hz, binary)
    rate = lab_rate.measure(case, case.nf, options, args.seconds, tsc_hz, binary=binary)
    return sample | {"mpps": rate["mpps"], "generator_limited": rate["generator_limited"],
                     "round_trip_ns": rate["round_trip_ns"]}


def _per_round(mine: list[dict], metric: str) -> list[float]:
    """The prefetching build's metric over the variant's, round by round."""
    without = {s["round"]: s[metric] for s in mine if s["build"] == VARIANT}
    return [s[metric] / without[s["round"]] for s in mine if s["build"] == BUILDS[0] and without.get(s["round"])]


def gains(samples: list[dict]) -> list[dict]:
    """Per measurement, case and path: the prefetching build's rate (or worker time) over the variant's in the
    same round, the median of the rounds."""
    rows = []
    for kind, label, key in dict.fromkeys((s["kind"], s["case"], s["path"]) for s in samples if "case" in s):
        mine = [s for s in samples if (s.get("kind"), s.get("case"), s.get("path")) == (kind, label, key)]
        metric = "worker_ns_per_frame" if kind == COST else "mpps"
        ratios = _per_round(mine, metric)
        rows.append({"measured": kind, "case": label, "path": key, "metric": metric,
                     "prefetch_over_without": round(statistics.median(ratios), 3) if ratios else None,
                     "per_round": [round(r, 3) for r in ratios],
                     "prefetch": statistics.median(s[metric] for s in mine if s["build"] == BUILDS[0]),
                     "without": statistics.median(s[metric] for s in mine if s["build"] == VARIANT)})
    return rows


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help="NF cases (macswap, or the cost model's)")
    parser.add_argument("--paths", default=paths.find("afxdp").key,
                        help="user-space paths of the lab whose RFC 2544 rate is "
                        "measured (python/xnf/model/lab_paths.py)")
    parser.add_argument("--measure", default=f"{RATE},{COST}", help=f"{RATE}: the RFC 2544 rate on --paths; {COST}: "
                        f"the worker core's busy time per frame on {paths.find(COST_MODE).key} at --cost-mpps")
    parser.add_argument("--cost-mpps", type=float, default=1.0, help="the offered rate of a cost trial (below every "
                        "case's rate)")
    parser.add_argument("--cost-seconds", type=float, default=3.0)


def _subjects(args: argparse.Namespace) -> list[tuple]:
    labels, keys, kinds = args.cases.split(","), args.paths.split(","), args.measure.split(",")
    for key in keys:
        if lab_paths.find(key).task_side != "native":
            raise XnfError(f"path '{key}' runs the NF in XDP, where nothing is prefetched: give user-space paths")
    for kind in kinds:
        if kind not in (RATE, COST):
            raise XnfError(f"unknown measurement '{kind}': use {RATE}, {COST} or both")
    for label in labels:
        find_case(label)
    subjects = [(YARDSTICK,)] + [(RATE, label, key, build) for label in labels for key in keys for build in BUILDS
                                 if RATE in kinds]
    cost_path = paths.find(COST_MODE).key
    return subjects + [(COST, label, cost_path, build) for label in labels for build in BUILDS if COST in kinds]


def _line(sample: dict) -> str:
    if "worker_ns_per_frame" in sample:
        return (f"{sample['subject']:44s} {sample['worker_ns_per_frame']:7.1f} ns a frame, "
                f"loss {sample['loss_ratio']:.4f}")
    return f"{sample['subject']:44s} {sample['mpps']:7.3f} Mpps"


def summarise(samples: list[dict], args: argparse.Namespace) -> dict:
    return {"rates": rate_rows([s for s in samples if "mpps" in s], YARDSTICK, "ratio_to_yardstick"),
            "gains": gains(samples)}


def variant_binaries(args: argparse.Namespace, folder) -> contextlib.AbstractContextManager[dict]:
    """The NFs' variants built without the prefetch (what every trial of the variant runs)."""
    nfs = sorted({f"xnf-{find_case(s[1]).nf}" for s in _subjects(args) if len(s) == 4})
    return contextlib.nullcontext(variants.binaries(VARIANT, DEFINES, nfs))


STUDY = RoundsStudy(
    NAME, "frame_prefetch", subjects=_subjects, trial=trial, line=_line, summarise=summarise, options=options,
    seconds=lab_rate.TRIAL_SECONDS, seconds_help=lab_rate.TRIAL_SECONDS_HELP, lab=variant_binaries,
    table=lambda summary: summary["rates"],
    report=lambda row: f"{row['subject']:44s} {row['mpps']:.3f} ± {row['stdev']:.3f} Mpps",
    said_last=lambda summary: [
        f"{row['measured']:4s} {row['case']:14s} {row['path']:16s} {row['metric']}: {row['prefetch']:.3f} against "
        f"{row['without']:.3f} without, {row['prefetch_over_without']} (rounds {row['per_round']})"
        for row in summary["gains"]],
    fields=lambda args: {"yardstick": YARDSTICK, "yardstick_is": lab_rate.YARDSTICK,
                         "cost": {"path": paths.find(COST_MODE).key, "offered_mpps": args.cost_mpps,
                                  "seconds": args.cost_seconds},
                         "variant": {"name": VARIANT, "defines": DEFINES}})
add_arguments, run = STUDY.add_arguments, STUDY.run

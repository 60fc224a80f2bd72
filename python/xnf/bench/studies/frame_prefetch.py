"""What the AF_XDP worker's frame prefetch gains: each NF case's RFC 2544 rate on a user-space path with the usual
build (the worker asks for every frame of a batch before the NF runs) and with a variant built with
-DXNF_NO_PREFETCH (the NF meets each frame's first line itself), in the same rounds, with the hand-written XDP
yardstick.

On veth in copy mode the kernel copies each frame into the UMEM on the sending core, so the worker's first read of a
frame is a miss to the other core's cache. An NF whose own work per frame is longer than the processor looks ahead
meets those misses one after the other (docs/afxdp.md, "Frames prefetched"). The cases are the cost model's
(python/xnf/model/cases.py) and macswap, measured as the model measures them (python/xnf/model/lab_rate.py).

    xnf bench run frame-prefetch [--rounds 5] [--seconds 0.5] [--cases ...] [--paths afxdp/live,...]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from xnf import say
from xnf.bench import results_file, variants
from xnf.bench.rounds import measure_rounds, rate_rows
from xnf.errors import XnfError
from xnf.lab import environment
from xnf.model import cases, lab_paths, lab_rate
from xnf.model.lab_rate import NfCase

NAME = "frame-prefetch"
DESCRIPTION = "the AF_XDP worker's frame prefetch against a build without it, per NF case (same rounds, yardstick)"
VARIANT, DEFINES = "no-prefetch", "-DXNF_NO_PREFETCH"
BUILDS = ("prefetch", VARIANT)
YARDSTICK = "yardstick"
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


def trial(subject: tuple, args: argparse.Namespace, tsc_hz, binaries: dict) -> dict:
    if subject == (YARDSTICK,):
        return {"subject": YARDSTICK, "mpps": lab_rate.yardstick(args.seconds, tsc_hz)}
    label, key, build = subject
    case, path = find_case(label), lab_paths.find(key)
    options = ["--mode", path.mode, *path.run_options()]
    binary = binaries[f"xnf-{case.nf}"] if build == VARIANT else None
    rate = lab_rate.measure(case, case.nf, options, args.seconds, tsc_hz, binary=binary)
    return {"subject": f"{label} {key} {build}", "case": label, "path": key, "build": build, "mpps": rate["mpps"],
            "generator_limited": rate["generator_limited"], "round_trip_ns": rate["round_trip_ns"]}


def gains(samples: list[dict]) -> list[dict]:
    """Per case and path: the prefetching build's rate over the variant's, in the same round (median)."""
    rows = []
    for label, key in dict.fromkeys((s["case"], s["path"]) for s in samples if "case" in s):
        mine = [s for s in samples if s.get("case") == label and s.get("path") == key]
        without = {s["round"]: s["mpps"] for s in mine if s["build"] == VARIANT}
        ratios = [s["mpps"] / without[s["round"]] for s in mine
                  if s["build"] == BUILDS[0] and without.get(s["round"])]
        rows.append({"case": label, "path": key, "prefetch_over_without": round(statistics.median(ratios), 3)
                     if ratios else None, "rounds": len(ratios)})
    return rows


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--cases", default=",".join(DEFAULT_CASES), help="NF cases (macswap, or the cost model's)")
    parser.add_argument("--paths", default="afxdp/live", help="user-space paths of the lab (python/xnf/model/"
                        "lab_paths.py)")


def _subjects(args: argparse.Namespace) -> list[tuple]:
    labels, keys = args.cases.split(","), args.paths.split(",")
    for key in keys:
        if lab_paths.find(key).task_side != "native":
            raise XnfError(f"path '{key}' runs the NF in XDP, where nothing is prefetched: give user-space paths")
    for label in labels:
        find_case(label)
    return [(YARDSTICK,)] + [(label, key, build) for label in labels for key in keys for build in BUILDS]


def run(args: argparse.Namespace, out_dir: Path) -> Path:
    subjects = _subjects(args)
    nfs = sorted({f"xnf-{find_case(s[0]).nf}" for s in subjects if len(s) == 3})
    binaries = variants.binaries(VARIANT, DEFINES, nfs)
    env = environment.describe()
    samples = measure_rounds(subjects, args.rounds, lambda s: trial(s, args, env["tsc_hz"], binaries),
                             lambda s: f"{s['subject']:36s} {s['mpps']:6.3f} Mpps")
    rows = rate_rows(samples, YARDSTICK, "ratio_to_yardstick")
    gained = gains(samples)
    path = results_file.write(out_dir, "frame_prefetch", {
        "environment": env, "yardstick": YARDSTICK, "yardstick_is": lab_rate.YARDSTICK,
        "seconds_per_trial": args.seconds, "variant": {"name": VARIANT, "defines": DEFINES},
        "summary": rows, "gains": gained, "samples": samples}, rows)
    for row in gained:
        say.info(f"{row['case']:14s} {row['path']:12s} prefetch / without: {row['prefetch_over_without']}")
    return path


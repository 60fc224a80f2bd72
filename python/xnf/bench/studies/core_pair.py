"""The live path's levels beside how the host placed the VM's two vCPUs.

On veth the live path's trivial NF forwards at one of two levels (about 0.66 or 0.91 of the yardstick) that hold for
minutes, while XDP holds steady (docs/methodology.md, "The DUT's core"). The live path spins its worker on core 1
while the sender works on core 0; XDP leaves core 1 idle. If the host puts the two vCPUs on one physical core's SMT
siblings part of the time (or runs them on one core in turns), the spin takes from the sender exactly then. And
every ring entry one core writes and the other reads crosses between them: if the host moves the pair between cores
that share a cache and cores that do not, each crossing costs more part of the time.

Every round measures, in turn: xnf-core-pair (tools/core-pair: a fixed compute loop on core 0 alone, beside a
spinner on core 1, and alone again; then a cache line's round trip between the two), the yardstick, the trivial NF
(taskemu spending nothing) in XDP and on the live path. The summary sets each round's rates over its yardstick
beside the round's slowdown and round trip, and the correlation of each with them over the rounds.

    xnf bench run core-pair [--rounds 12] [--seconds 0.5] [--probe-ms 1000]
"""

from __future__ import annotations

import argparse
import statistics

from xnf.bench.study import Place, RoundsStudy
from xnf.lab import paths, placement
from xnf.model import lab_paths, lab_rate

NAME = "core-pair"
DESCRIPTION = "the live path's trivial NF beside what a thread spinning on the worker's core costs the sender's, " \
              "and a cache line's round trip between the two"
PROBE, YARDSTICK = "core-pair", "yardstick"
TRIVIAL = lab_rate.NfCase("cycles-0", "taskemu", "cycles 0\n")
MODES = paths.Modes(paths.kernel_and_user)   # on this kernel's transmit path (paths.keys)
PLACEMENT = ["slowdown", "round_trip_ns"]     # what the probe reads of the pair's placement


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--probe-ms", type=int, default=1000, help="milliseconds of each of the probe's phases")


def trial(subject: str, args: argparse.Namespace, place: Place) -> dict:
    tsc_hz = place.tsc_hz
    if subject == PROBE:
        return {"subject": subject, **placement.probe(args.probe_ms)}
    if subject == YARDSTICK:
        return {"subject": subject, "mpps": lab_rate.yardstick(args.seconds, tsc_hz)}
    path = lab_paths.find(subject)
    rate = lab_rate.measure(TRIVIAL, TRIVIAL.nf, path.run_options(), args.seconds, tsc_hz)
    return {"subject": subject, **rate}


def per_round(samples: list[dict]) -> list[dict]:
    """A row per round: what the probe read, each path's rate over the round's yardstick."""
    rows = []
    for round_no in sorted({s["round"] for s in samples}):
        mine = {s["subject"]: s for s in samples if s["round"] == round_no}
        yard = mine[YARDSTICK]["mpps"]
        rows.append({"round": round_no, **{k: mine[PROBE][k] for k in PLACEMENT},
                     "alone_ns": mine[PROBE]["alone_ns"], "alone_drift": mine[PROBE]["alone_drift"],
                     "partner_alone_ns": mine[PROBE]["partner_alone_ns"],
                     "yardstick_mpps": round(yard, 4),
                     **{f"{key}_over_yardstick": round(mine[key]["mpps"] / yard, 4) for key in paths.keys(*MODES)}})
    return rows


def correlation(rows: list[dict], x: str, y: str) -> float | None:
    xs, ys = [r[x] for r in rows], [r[y] for r in rows]
    if len(rows) < 3 or len(set(xs)) < 2 or len(set(ys)) < 2:
        return None
    return round(statistics.correlation(xs, ys), 3)


def summarise(samples: list[dict], args: argparse.Namespace) -> dict:
    """The rows per round, and the correlation over the rounds of each path's ratio with what the probe read."""
    rows = per_round(samples)
    return {"rounds": rows, "correlation": {probe_field: {key: correlation(rows, probe_field, f"{key}_over_yardstick")
                                                          for key in paths.keys(*MODES)} for probe_field in PLACEMENT}}


STUDY = RoundsStudy(
    NAME, "core_pair", rounds=12, min_rounds=3, seconds=lab_rate.TRIAL_SECONDS,
    seconds_help=lab_rate.TRIAL_SECONDS_HELP,
    subjects=lambda args: [PROBE, YARDSTICK, *paths.keys(*MODES)], trial=trial, summarise=summarise, options=options,
    check=lambda args: None if args.probe_ms >= 100 else "--probe-ms at least 100",
    line=lambda s: f"{s['subject']:12s} " + (f"slowdown {s['slowdown']:.3f}, round trip {s['round_trip_ns']:.0f} ns"
                                             if s["subject"] == PROBE else f"{s['mpps']:6.3f} Mpps"),
    table=lambda summary: summary["rounds"],
    report=lambda r: f"round {r['round']:2d} slowdown {r['slowdown']:.3f} round trip {r['round_trip_ns']:4.0f} ns  " +
    "  ".join(f"{key} {r[f'{key}_over_yardstick']:.2f}" for key in paths.keys(*MODES)),
    said_last=lambda summary: [f"correlation with {probe_field}: " + ", ".join(f"{k} {v}" for k, v in of.items())
                               for probe_field, of in summary["correlation"].items()],
    fields=lambda args: {"yardstick": lab_rate.YARDSTICK, "probe_ms": args.probe_ms})
add_arguments, run = STUDY.add_arguments, STUDY.run

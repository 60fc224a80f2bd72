"""The live path's rate second by second, beside where the host has put the VM's two vCPUs.

The live path forwards at one of two levels on this VM while XDP holds steady (docs/methodology.md, "The DUT's
core"). core-pair probed the pair's placement half a minute away from the trial it was set beside, and found no
link; a placement that changes every few seconds escapes such a probe. This study keeps one live-path NF (taskemu
spending nothing) and one yardstick (hand-written XDP macswap) running for the whole run, each in its own topology,
and turns between them in short flat-out bursts, with xnf-core-pair's cache-line round trip between every pair of
bursts. A burst is then bracketed by two probes a few hundred milliseconds from it.

The round trips fall in two levels (the host moves the pair between cores that share a cache and cores that do
not); the summary splits them where the gap between the levels is (xnf.lab.placement) and sets the live path's rate over
the yardstick's, for the bursts whose probes on both sides read the same level, beside each other.

    xnf bench run live-placement [--seconds 300] [--burst 0.3] [--probe-ms 20]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from pathlib import Path

from xnf import kernel, say
from xnf.bench.study import Place, Study
from xnf.bench.studies import core_pair
from xnf.lab.xdp_subject import attach, detach
from xnf.lab import placement
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.model import lab_paths, lab_rate

NAME = "live-placement"
DESCRIPTION = "the live path's rate second by second over the yardstick's, beside the cache-line round trip " \
              "between the two vCPUs measured between every burst"
LIVE_PATH = "afxdp/live"
TRIVIAL = core_pair.TRIVIAL
MIN_BURSTS = 6     # enough for two levels with a bracketed burst in each


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--burst", type=float, default=0.3, help="seconds of each flat-out burst")
    parser.add_argument("--probe-ms", type=int, default=20, help="milliseconds of each of the probe's phases")


def bracketed(bursts: list[dict], probes: list[float], cut: float | None) -> dict[str, list[dict]]:
    """The bursts whose probes before and after read the same level, by level (all near with no cut)."""
    levels: dict[str, list[dict]] = {placement.NEAR: [], placement.FAR: []}
    for burst in bursts:
        at = placement.level(probes[burst["probe_before"]], probes[burst["probe_before"] + 1], cut)
        if at != placement.MIXED:
            levels[at].append(burst)
    return levels


def _summary(bursts: list[dict], probes: list[float]) -> dict:
    cut = placement.two_levels(probes)
    levels = {}
    for name, mine in bracketed(bursts, probes, cut).items():
        ratios = [b["live_over_yardstick"] for b in mine]
        trips = [p for p in probes if placement.level(p, p, cut) == name]
        levels[name] = {
            "probes": len(trips), "round_trip_ns_median": round(statistics.median(trips), 1) if trips else None,
            "bursts": len(mine),
            "live_over_yardstick_median": round(statistics.median(ratios), 3) if ratios else None,
            "live_over_yardstick_quartiles": [round(q, 3) for q in statistics.quantiles(ratios, n=4)]
            if len(ratios) >= 2 else None,
            "yardstick_mpps_median": round(statistics.median(b["yardstick_mpps"] for b in mine), 3) if mine else None,
        }
    around = [(probes[b["probe_before"]] + probes[b["probe_before"] + 1]) / 2 for b in bursts]
    ratios = [b["live_over_yardstick"] for b in bursts]
    corr = round(statistics.correlation(around, ratios), 3) if len(set(around)) > 1 and len(set(ratios)) > 1 else None
    far = sum(placement.level(p, p, cut) == placement.FAR for p in probes)
    return {"cut_ns": round(cut, 1) if cut else None, "far_share_of_probes": round(far / len(probes), 3),
            "correlation_round_trip_ratio": corr, "levels": levels}


def _burst(generator: Generator, seconds: float) -> float:
    """The burst's forwarded rate in Mpps: what came back over how long it was sent."""
    out = generator.run("--duration", str(seconds), "--rate", "0", "--cores", str(GEN_CORE),
                        "--call-ms", "50").summary
    return out["received"] / out["seconds"] / 1e6


@contextlib.contextmanager
def running(args: argparse.Namespace, folder: Path):
    """The live path's NF and the yardstick, each on its own topology, running for the whole study."""
    path = lab_paths.find(LIVE_PATH)
    with Topology("pair", gen_xdp=None) as live_t, Topology("pair", gen_xdp=None) as yard_t:
        nf = NfInstance.start(live_t, TRIVIAL.nf, None, live_t.dut_ifaces, rules=TRIVIAL.write_rules(folder),
                              extra=[*path.run_options(), "--cores", str(DUT_CORE)])
        yardstick = attach(yard_t, ("object", "hand_macswap"))
        try:
            yield live_t, yard_t
        finally:
            detach(yardstick)
            nf.stop()


def measure(args: argparse.Namespace, place: Place) -> list[dict]:
    """Bursts through each in turn, a probe of the pair's round trip before the first and after each."""
    live_t, yard_t = place.lab
    bursts, probes = [], [placement.round_trip_ns(args.probe_ms)]
    start = time.monotonic()
    while time.monotonic() - start < args.seconds or len(bursts) < MIN_BURSTS:
        at = time.monotonic() - start
        live = _burst(Generator(live_t, receive_on=0), args.burst)
        yard = _burst(Generator(yard_t, receive_on=0), args.burst)
        probes.append(placement.round_trip_ns(args.probe_ms))
        bursts.append({"t": round(at, 2), "probe_before": len(probes) - 2, "round_trip_before_ns": probes[-2],
                       "round_trip_after_ns": probes[-1], "live_mpps": round(live, 4),
                       "yardstick_mpps": round(yard, 4), "live_over_yardstick": round(live / yard, 4)})
        say.info(f"{at:6.1f} s  live {live:6.3f}  yardstick {yard:6.3f}  ratio {live / yard:5.3f}  "
                 f"round trip {probes[-2]:6.0f} -> {probes[-1]:6.0f} ns")
    return bursts


def probes_of(bursts: list[dict]) -> list[float]:
    """Every probe's round trip, in order: the one before the first burst, then the one after each."""
    return [bursts[0]["round_trip_before_ns"]] + [b["round_trip_after_ns"] for b in bursts]


def _levels_table(summary: dict) -> list[dict]:
    return [{"level": name, **level} for name, level in summary["levels"].items()]


STUDY = Study(
    NAME, "live_placement", measure=measure, lab=running, options=options, keep_samples="bursts",
    seconds=300, seconds_help="how long the study runs", seconds_field="seconds",
    check=lambda args: (None if args.burst >= 0.1 and args.probe_ms >= 5 else
                        "--burst at least 0.1, --probe-ms at least 5") or
    "; ".join(kernel.refusal(n) for n in kernel.missing(lab_paths.find(LIVE_PATH).needs)) or None,
    summarise=lambda bursts, args: _summary(bursts, probes_of(bursts)), table=_levels_table,
    report=lambda level: f"{level['level']:4s} ({level['probes']} probes, median {level['round_trip_ns_median']} "
                         f"ns): {level['bursts']} bracketed bursts, live over yardstick "
                         f"{level['live_over_yardstick_median']}",
    said_last=lambda summary: [f"round trips split at {summary['cut_ns']} ns; correlation with the ratio "
                               f"{summary.get('correlation_round_trip_ratio')}"],
    fields=lambda args: {"yardstick": lab_rate.YARDSTICK, "path": LIVE_PATH, "nf": TRIVIAL.label,
                         "burst_seconds": args.burst, "probe_ms": args.probe_ms})
add_arguments, run = STUDY.add_arguments, STUDY.run

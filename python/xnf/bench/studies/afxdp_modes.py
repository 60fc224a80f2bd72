"""drop and macswap in every mode, beside a minimal reference AF_XDP loop and (--dpdk) DPDK's testpmd with
its af_xdp and af_packet drivers, with CPU cost per packet.

Cores: xnf-gen runs pinned to core 0; AF_XDP workers (and the reference loop) are pinned to core 1. On veth
the DUT's XDP program, the redirect into the AF_XDP socket and its copy into the UMEM run in softirq on the
generator's core (0); the worker's loop and its sendto() calls run on core 1, and so does the receive of the
frames it sends back (veth receive runs on the sender's core) unless --pin-return moves that to core 0.

The xnf AF_XDP subjects send with the runtime's default transmit path (--tx-path auto: live frames on veth);
The live-tx study compares the live path with the socket's own ring. The results in docs/results.md, "AF_XDP
modes", were taken before the live path existed, on the ring.

Counted: drop = frames the NF dropped (its own verdict counters; the reference loop's and testpmd's own
receive counts);
macswap = frames that came back to the generator side (veth's rx_xdp_drops on gen0, the sink), the same
counter for every subject. Cost per packet = busy CPU time of both cores / frames completed.

    xnf bench run afxdp-modes [--rounds 3] [--seconds 3] [--study] [--dpdk] [--only LABELS] [--out results/]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
from pathlib import Path

from xnf.bench.study import Place, RoundsStudy
from xnf.bench.subject import REFERENCE, TESTPMD, Subject, flooded
from xnf.errors import XnfError
from xnf.lab import paths
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.topology import Topology

NAME = "afxdp-modes"
DESCRIPTION = ("drop and macswap in every mode at native XDP beside a minimal AF_XDP loop and (--dpdk) DPDK testpmd; "
               "cost per packet")
MODES = paths.Modes(paths.at_native_xdp)
# One change at a time against plain afxdp, for the transmit study (macswap).
TX_STUDY = {
    "afxdp tx-budget=2048": ["--tx-budget", "2048"],
    "afxdp batch=256": ["--batch", "256"],
    "afxdp batch=16": ["--batch", "16"],
    "afxdp no-need-wakeup": ["--no-need-wakeup"],
    "afxdp ring=512": ["--ring-size", "512"],
}


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    """One pair for every trial (the returned frames received on the generator's core with --pin-return)."""
    with Topology("pair", gen_xdp="drop") as t:
        if args.pin_return:
            t.pin_gen_receive(GEN_CORE)
        yield t


def trial(subject: Subject, args: argparse.Namespace, place: Place) -> dict:
    t, tsc_hz = place.lab, place.tsc_hz
    got = flooded(t, subject, args.seconds, ["--stamp-every", "64"], place.folder)
    run, done = got.run, got.done
    ns = run.ns_per_frame(done)
    return {"subject": subject.label, "job": subject.nf, "offered_mpps": run.offered_mpps,
            "mpps": run.mpps(done), "completed": done, "seconds": run.seconds,
            "ns_per_packet": ns, "cycles_per_packet": ns * tsc_hz / 1e9 if ns and tsc_hz else None,
            "worker_core_ns_per_packet": run.cpu[DUT_CORE]["busy"] / done * 1e9 if done else None, "cpu": run.cpu}


def subjects(args: argparse.Namespace) -> list[Subject]:
    out = []
    for job in ("drop", "macswap"):
        out += [Subject(mode, job, mode) for mode in MODES] + [Subject("reference loop", job, kind=REFERENCE)]
        if args.dpdk:
            out += [Subject("dpdk af_xdp", job, kind=TESTPMD, busy_budget=0),
                    Subject("dpdk af_xdp busy-poll", job, kind=TESTPMD, busy_budget=None),
                    Subject("dpdk af_packet", job, kind=TESTPMD, testpmd_driver="af_packet")]
    if args.study:
        out += [Subject(label, "macswap", "afxdp", extra) for label, extra in TX_STUDY.items()]
    if args.only:
        keep = {label.strip() for label in args.only.split(",")}
        out = [s for s in out if s.label in keep]
        if not out:
            raise XnfError(f"--only {args.only}: no such subject")
    return out


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = {}
    for s in samples:
        rows.setdefault((s["job"], s["subject"]), []).append(s)
    table = []
    for (job, subject), group in rows.items():
        mpps = [g["mpps"] for g in group]
        costs = [g["ns_per_packet"] for g in group if g["ns_per_packet"]]
        wcost = [g["worker_core_ns_per_packet"] for g in group if g["worker_core_ns_per_packet"]]
        table.append({"job": job, "subject": subject, "mean_mpps": statistics.mean(mpps),
                      "stdev_mpps": statistics.stdev(mpps) if len(mpps) > 1 else 0.0,
                      "ns_per_packet": statistics.mean(costs) if costs else None,
                      "worker_core_ns_per_packet": statistics.mean(wcost) if wcost else None,
                      "samples": len(group)})
    return table


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--study", action="store_true", help="add the macswap transmit study variants")
    parser.add_argument("--pin-return", action="store_true",
                        help="receive returned frames on the generator's core (threaded NAPI) instead of the worker's")
    parser.add_argument("--dpdk", action="store_true",
                        help="add DPDK testpmd with its af_xdp (busy poll off and on) and af_packet drivers")
    parser.add_argument("--only", metavar="LABELS",
                        help="comma-separated subject labels to keep (e.g. 'afxdp,reference loop,dpdk af_xdp')")


STUDY = RoundsStudy(
    NAME, "afxdp_modes", subjects=subjects, trial=trial, summarise=summarise, lab=_lab, rounds=3, seconds=3.0,
    options=_options,
    line=lambda s: f"{s['job']:8s} {s['subject']:22s} {s['mpps']:6.3f} Mpps ({s['ns_per_packet'] or 0:7.0f} ns/pkt, "
                   f"worker core {s['worker_core_ns_per_packet'] or 0:6.0f})",
    report=lambda row: f"{row['job']:8s} {row['subject']:22s} {row['mean_mpps']:6.3f} ± {row['stdev_mpps']:.3f} Mpps  "
                       f"{row['ns_per_packet'] or 0:6.0f} ns/pkt  worker core "
                       f"{row['worker_core_ns_per_packet'] or 0:6.0f}",
    fields=lambda args: {"generator_core": GEN_CORE, "worker_core": DUT_CORE, "pin_return": args.pin_return})
add_arguments, run = STUDY.add_arguments, STUDY.run

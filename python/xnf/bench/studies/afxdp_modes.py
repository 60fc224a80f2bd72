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
import json
import statistics
from pathlib import Path

from xnf import build, control, say
from xnf.bench import results_file
from xnf.bench.rounds import interleaved
from xnf.errors import XnfError
from xnf.lab import environment
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.testpmd import Testpmd
from xnf.lab.topology import Topology

NAME = "afxdp-modes"
DESCRIPTION = ("drop and macswap in every mode beside a minimal AF_XDP loop and (--dpdk) DPDK testpmd; "
               "cost per packet")
MODES = ["xdp", "xdp-sk", "xdp-sk-sysc", "afxdp", "afxdp-sysc", "afxdp-poll"]
# One change at a time against plain afxdp, for the transmit study (macswap).
TX_STUDY = {
    "afxdp tx-budget=2048": ["--tx-budget", "2048"],
    "afxdp batch=256": ["--batch", "256"],
    "afxdp batch=16": ["--batch", "16"],
    "afxdp no-need-wakeup": ["--no-need-wakeup"],
    "afxdp ring=512": ["--ring-size", "512"],
}


class Subject:
    """Something that does the job on dut0: an xnf mode, the reference loop, or DPDK's testpmd."""

    def __init__(self, label: str, job: str, mode: str | None, extra: list[str] | None = None,
                 testpmd_driver: str | None = None, busy_budget: int | None = 0):
        self.label, self.job, self.mode, self.extra = label, job, mode, extra or []
        self.testpmd_driver, self.busy_budget = testpmd_driver, busy_budget
        self.handle = None

    def start(self, t: Topology) -> None:
        if self.testpmd_driver:
            self.handle = Testpmd.start(t, self.job, self.testpmd_driver, "dut0", core=DUT_CORE,
                                        control_core=GEN_CORE, busy_budget=self.busy_budget)
            return
        if self.mode is None:
            self.handle = t.spawn(t.dut_ns, [str(build.tool_binary("xnf-afxdp-ref")), "--iface", "dut0", "--job", self.job,
                                             "--core", str(DUT_CORE)])
            if "xnf-afxdp-ref" not in self.handle.stdout.readline():
                raise RuntimeError(self.handle.stderr.read())
            return
        extra = ["--cores", str(DUT_CORE)] + self.extra if self.mode != "xdp" else []
        self.handle = NfInstance.start(t, self.job, self.mode, t.dut_ifaces, extra=extra)

    def dropped(self) -> int:
        if self.mode is None:
            return 0
        return control.request_json(self.handle.name, "stats")["verdicts"]["drop"]["packets"]

    def stop(self) -> int:
        """Stops the subject; returns the reference loop's or testpmd's own receive count (0 for xnf)."""
        if self.testpmd_driver:
            return self.handle.stop().rx_packets
        if self.mode is None:
            self.handle.terminate()
            out, _ = self.handle.communicate(timeout=10)
            return json.loads(out.strip().splitlines()[-1])["rx_packets"]
        self.handle.stop()
        return 0


def trial(t: Topology, subject: Subject, seconds: float, tsc_hz: float | None) -> dict:
    subject.start(t)
    try:
        drops0 = subject.dropped()
        run = flood(t, seconds, GEN_CORE, ["--stamp-every", "64"])
        drops1 = subject.dropped()
    finally:
        ref_rx = subject.stop()
    if subject.job == "macswap":
        done = run.returned
    else:
        done = ref_rx if subject.mode is None else drops1 - drops0
    worker = run.cpu[DUT_CORE]
    ns = run.ns_per_frame(done)
    return {"subject": subject.label, "job": subject.job, "offered_mpps": run.offered_mpps,
            "mpps": run.mpps(done), "completed": done, "seconds": run.seconds,
            "ns_per_packet": ns, "cycles_per_packet": ns * tsc_hz / 1e9 if ns and tsc_hz else None,
            "worker_core_ns_per_packet": worker["busy"] / done * 1e9 if done else None, "cpu": run.cpu}


def subjects(study: bool, dpdk: bool) -> list[Subject]:
    out = []
    for job in ("drop", "macswap"):
        out += [Subject(mode, job, mode) for mode in MODES] + [Subject("reference loop", job, None)]
        if dpdk:
            out += [Subject("dpdk af_xdp", job, None, testpmd_driver="af_xdp", busy_budget=0),
                    Subject("dpdk af_xdp busy-poll", job, None, testpmd_driver="af_xdp", busy_budget=None),
                    Subject("dpdk af_packet", job, None, testpmd_driver="af_packet")]
    if study:
        out += [Subject(label, "macswap", "afxdp", extra) for label, extra in TX_STUDY.items()]
    return out


def summarise(samples: list[dict]) -> list[dict]:
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


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--study", action="store_true", help="add the macswap transmit study variants")
    parser.add_argument("--pin-return", action="store_true",
                        help="receive returned frames on the generator's core (threaded NAPI) instead of the worker's")
    parser.add_argument("--dpdk", action="store_true",
                        help="add DPDK testpmd with its af_xdp (busy poll off and on) and af_packet drivers")
    parser.add_argument("--only", metavar="LABELS",
                        help="comma-separated subject labels to keep (e.g. 'afxdp,reference loop,dpdk af_xdp')")


def run(args: argparse.Namespace, out_dir: Path) -> Path:
    env = environment.describe()
    todo = subjects(args.study, args.dpdk)
    if args.only:
        keep = {label.strip() for label in args.only.split(",")}
        todo = [s for s in todo if s.label in keep]
        if not todo:
            raise XnfError(f"--only {args.only}: no such subject")
    samples = []
    with Topology("pair", gen_xdp="drop") as t:
        if args.pin_return:
            t.pin_gen_receive(GEN_CORE)
        for round_no, subject in interleaved(todo, args.rounds):
            s = trial(t, subject, args.seconds, env["tsc_hz"])
            s["round"] = round_no
            samples.append(s)
            say.info(f"round {round_no} {s['job']:8s} {s['subject']:22s} {s['mpps']:6.3f} Mpps "
                     f"({s['ns_per_packet'] or 0:7.0f} ns/pkt, worker core "
                     f"{s['worker_core_ns_per_packet'] or 0:6.0f})")
    table = summarise(samples)
    path = results_file.write(out_dir, "afxdp_modes", {
        "environment": env, "generator_core": GEN_CORE, "worker_core": DUT_CORE, "pin_return": args.pin_return,
        "seconds_per_trial": args.seconds, "summary": table, "samples": samples}, table)
    for row in table:
        say.info(f"{row['job']:8s} {row['subject']:22s} {row['mean_mpps']:6.3f} ± {row['stdev_mpps']:.3f} Mpps  "
                 f"{row['ns_per_packet'] or 0:6.0f} ns/pkt  worker core {row['worker_core_ns_per_packet'] or 0:6.0f}")
    return path

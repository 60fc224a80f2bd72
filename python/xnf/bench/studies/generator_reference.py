"""xnf-gen beside the smallest live-frames generator (tools/gen-ref), in the same run.

The generator's targets were measured with a public live-frames tool (xdp-trafficgen), whose Debian build
does not run on this kernel. xnf-gen-ref does what that tool does, and nothing more: one fixed frame, a
program that only returns XDP_TX, 2^20 frames per call. Its rate is the kernel's live-frames path alone on
this machine today, so xnf-gen / reference is the figure that says what our program costs, and the
reference's own rate says what the machine allows.

Set-up: `pair` topology, an XDP_DROP sink (bpf/xnf_sink.bpf.c) on dut0, generators pinned to core 0 (to both
cores in "two-cores"; "ns/frame" is then the busy time of both per frame).
Placements: "shared" = the sink's receive runs in softirq on core 0 beside the generator (veth receives on
the sending CPU); "napi" = dut0 in threaded NAPI pinned to core 1, core 0 generates only; "two-cores" = two
queues, a generator thread on each core with the sink's receive beside it (the "about 29 Mpps" target).
Counted: frames the sink received (veth's rx_xdp_drops on dut0), the same counter for every subject;
frames the peer's full ring refused (veth's xdp_xmit_errors on gen0) are reported as "refused".

    xnf bench run generator-reference [--rounds 3] [--seconds 3] [--placements LIST] [--out results/]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from xnf import build, results_file, say
from xnf.lab.rounds import interleaved
from xnf.errors import XnfError
from xnf.lab import cpu, environment, netns, veth_stats
from xnf.lab.cores import DUT_CORE as PEER_CORE
from xnf.lab.cores import GEN_CORE
from xnf.lab.generator import Generator, flat_out
from xnf.lab.topology import Topology

NAME = "generator-reference"
DESCRIPTION = ("xnf-gen beside the smallest live-frames generator (xnf-gen-ref), in the same run, on one core "
               "and on two")
PLACEMENTS = ("shared", "napi", "two-cores")
# label -> (binary, extra arguments)
SUBJECTS = {
    "xnf-gen stamp=1 batch=64": ("xnf-gen", ["--stamp-every", "1", "--batch", "64"]),
    "xnf-gen stamp=1/64 batch=64": ("xnf-gen", ["--stamp-every", "64", "--batch", "64"]),
    "xnf-gen stamp=1/64 batch=256": ("xnf-gen", ["--stamp-every", "64", "--batch", "256"]),
    "reference batch=64": ("xnf-gen-ref", ["--batch", "64"]),
    "reference batch=256": ("xnf-gen-ref", ["--batch", "256"]),
}


def trial(t: Topology, label: str, seconds: float, tsc_hz: float | None, cores: str) -> dict:
    binary, extra = SUBJECTS[label]
    rx0, tx0, cpu0 = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0"), cpu.snapshot()
    options = flat_out(seconds, cores) if binary == "xnf-gen" else ["--duration", str(seconds), "--cores", cores]
    g = Generator(t, program=binary).run(*options, *extra).summary
    rx1, tx1, cpu1 = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0"), cpu.snapshot()
    delivered = rx1["rx_xdp_drops"] - rx0["rx_xdp_drops"]
    refused = tx1.get("tx_xdp_xmit_errors", 0) - tx0.get("tx_xdp_xmit_errors", 0)
    usage = cpu.split(cpu0, cpu1)
    gen_busy = sum(usage[int(c)][k] for c in cores.split(",") for k in ("user", "system", "softirq"))
    ns = gen_busy / delivered * 1e9 if delivered else None
    return {"subject": label, "mpps": delivered / g["seconds"] / 1e6, "refused_mpps": refused / g["seconds"] / 1e6,
            "delivered": delivered, "seconds": g["seconds"], "generator_cores": cores, "gen_core_ns_per_frame": ns,
            "gen_core_cycles_per_frame": ns * tsc_hz / 1e9 if ns and tsc_hz else None, "cpu": usage}


def run_placement(placement: str, rounds: int, seconds: float, tsc_hz: float | None) -> list[dict]:
    samples = []
    labels = list(SUBJECTS)
    cores = f"{GEN_CORE},{PEER_CORE}" if placement == "two-cores" else str(GEN_CORE)
    with Topology("pair", queues=len(cores.split(",")), gen_xdp=None) as t:
        netns.ip("link", "set", "dev", "dut0", "xdp", "obj", str(build.bpf_object("xnf_sink")), "sec", "xdp", ns=t.dut_ns)
        if placement == "napi":
            t.pin_dut_receive(PEER_CORE)
        for round_no, label in interleaved(labels, rounds):
            s = trial(t, label, seconds, tsc_hz, cores)
            s.update(round=round_no, placement=placement)
            samples.append(s)
            say.info(f"{placement:9s} round {round_no} {label:30s} {s['mpps']:6.2f} Mpps delivered "
                     f"({s['refused_mpps']:.2f} refused; cores {cores}: {s['gen_core_ns_per_frame'] or 0:.0f} "
                     f"ns/frame)")
    return samples


def summarise(samples: list[dict]) -> list[dict]:
    groups: dict[tuple[str, str], list[dict]] = {}
    for s in samples:
        groups.setdefault((s["placement"], s["subject"]), []).append(s)
    table = []
    for (placement, subject), group in groups.items():
        mpps = [g["mpps"] for g in group]
        ref = [r["mpps"] for r in samples if r["placement"] == placement and r["subject"] == "reference batch=64"]
        table.append({"placement": placement, "subject": subject, "mean_mpps": statistics.mean(mpps),
                      "stdev_mpps": statistics.stdev(mpps) if len(mpps) > 1 else 0.0,
                      "of_reference_batch64": statistics.mean(mpps) / statistics.mean(ref) if ref else None,
                      "refused_mpps": statistics.mean(g["refused_mpps"] for g in group),
                      "gen_core_ns_per_frame": statistics.mean(g["gen_core_ns_per_frame"] or 0 for g in group),
                      "samples": len(group)})
    return table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--placements", default=",".join(PLACEMENTS),
                        help=f"comma-separated, of: {', '.join(PLACEMENTS)}")


def run(args: argparse.Namespace, out_dir: Path) -> Path:
    placements = [p.strip() for p in args.placements.split(",")]
    if not set(placements) <= set(PLACEMENTS):
        raise XnfError(f"--placements {args.placements}: choose from {', '.join(PLACEMENTS)}")
    env = environment.describe()
    samples = []
    for placement in placements:
        samples += run_placement(placement, args.rounds, args.seconds, env["tsc_hz"])
    table = summarise(samples)
    path = results_file.write(out_dir, "generator_reference", {
        "environment": env, "generator_core": GEN_CORE, "peer_core_napi": PEER_CORE,
        "seconds_per_trial": args.seconds, "summary": table, "samples": samples}, table)
    for row in table:
        say.info(f"{row['placement']:9s} {row['subject']:30s} {row['mean_mpps']:6.2f} ± {row['stdev_mpps']:.2f} Mpps "
                 f"({(row['of_reference_batch64'] or 0):.2f} of reference batch=64)")
    return path

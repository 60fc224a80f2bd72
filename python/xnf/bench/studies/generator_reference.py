"""xnf-gen beside the smallest live-frames generator (tools/gen-ref), in the same run.

The generator's targets were measured with a public live-frames tool (xdp-trafficgen), whose Debian build
does not run on this kernel. xnf-gen-ref does what that tool does, and nothing more: one fixed frame, a
program that only returns XDP_TX, 2^20 frames per call. Its rate is the kernel's live-frames path alone on
this machine today, so xnf-gen / reference is the figure that says what our program costs, and the
reference's own rate says what the machine allows.

Set-up: a `pair` topology per placement, all kept over the rounds (each round goes through every placement's
subjects), an XDP_DROP sink (bpf/xnf_sink.bpf.c) on dut0, generators pinned to core 0 (to both
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
import contextlib
import statistics
from pathlib import Path

from xnf import build
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import cpu, netns, veth_stats
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


def generator_cores(placement: str) -> str:
    return f"{GEN_CORE},{PEER_CORE}" if placement == "two-cores" else str(GEN_CORE)


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    placement, label = subject
    t, seconds, tsc_hz, cores = place.lab[placement], args.seconds, place.tsc_hz, generator_cores(placement)
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
    return {"subject": label, "placement": placement, "mpps": delivered / g["seconds"] / 1e6,
            "refused_mpps": refused / g["seconds"] / 1e6,
            "delivered": delivered, "seconds": g["seconds"], "generator_cores": cores, "gen_core_ns_per_frame": ns,
            "gen_core_cycles_per_frame": ns * tsc_hz / 1e9 if ns and tsc_hz else None, "cpu": usage}


@contextlib.contextmanager
def topologies(args: argparse.Namespace, folder: Path):
    """A topology per placement, kept over the rounds: the sink on dut0, the DUT's receive pinned for "napi", a
    queue per generator core."""
    with contextlib.ExitStack() as stack:
        made = {}
        for placement in placements(args):
            t = stack.enter_context(Topology("pair", queues=len(generator_cores(placement).split(",")), gen_xdp=None))
            netns.attach_own_xdp(t.dut_ns, "dut0", build.bpf_object("xnf_sink"))
            if placement == "napi":
                t.pin_dut_receive(PEER_CORE)
            made[placement] = t
        yield made


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
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


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--placements", default=",".join(PLACEMENTS),
                        help=f"comma-separated, of: {', '.join(PLACEMENTS)}")


def placements(args: argparse.Namespace) -> list[str]:
    return [p.strip() for p in args.placements.split(",")]


STUDY = RoundsStudy(
    NAME, "generator_reference", rounds=3, seconds=3.0, options=options, lab=topologies, trial=trial,
    subjects=lambda args: [(placement, label) for placement in placements(args) for label in SUBJECTS],
    check=lambda args: None if set(placements(args)) <= set(PLACEMENTS) else
    f"--placements {args.placements}: choose from {', '.join(PLACEMENTS)}",
    summarise=summarise,
    line=lambda s: f"{s['placement']:9s} {s['subject']:30s} {s['mpps']:6.2f} Mpps delivered ({s['refused_mpps']:.2f} "
                   f"refused; cores {s['generator_cores']}: {s['gen_core_ns_per_frame'] or 0:.0f} ns/frame)",
    report=lambda row: f"{row['placement']:9s} {row['subject']:30s} {row['mean_mpps']:6.2f} ± {row['stdev_mpps']:.2f} "
                       f"Mpps ({(row['of_reference_batch64'] or 0):.2f} of reference batch=64)",
    fields=lambda args: {"generator_core": GEN_CORE, "peer_core_napi": PEER_CORE})
add_arguments, run = STUDY.add_arguments, STUDY.run

"""What the xnf framework costs on the kernel path.

Runs xnf's `drop` and `macswap` in XDP mode and minimal hand-written XDP programs doing the same jobs
(bpf/hand_drop.bpf.c, bpf/hand_macswap.bpf.c), alternately, on one veth pair, with the same generator, and compares packet rates.
Every program is counted the same way: by veth's own XDP counters, not by the program.

Cores: the generator runs pinned on core 0; on veth the DUT's XDP program (and for macswap the generator
side's receive) runs in softirq on that same core, so the ratio compares whole-core packet rates.

    xnf bench run xdp-overhead [--rounds 5] [--seconds 3] [--out results/]
"""

from __future__ import annotations

import argparse
import statistics
from pathlib import Path

from xnf import results_file, say
from xnf.lab.rounds import measure_rounds
from xnf.lab import environment, veth_stats
from xnf.lab.cores import GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.topology import Topology
from xnf.lab.xdp_subject import attach, detach

NAME = "xdp-overhead"
DESCRIPTION = "xnf's drop and macswap in XDP beside hand-written XDP programs doing the same: the framework's cost"
SUBJECTS = [  # (label, job, how it is loaded)
    ("xnf-drop", "drop", ("nf", "drop")),
    ("hand-drop", "drop", ("object", "hand_drop")),
    ("xnf-macswap", "macswap", ("nf", "macswap")),
    ("hand-macswap", "macswap", ("object", "hand_macswap")),
]


def counted(topology: Topology, job: str) -> int:
    """Frames the job completed: dropped at the DUT, or returned to the generator side."""
    if job == "drop":
        return veth_stats.read(topology.dut_ns, "dut0")["rx_xdp_drops"]
    return veth_stats.read(topology.gen_ns, "gen0")["rx_xdp_drops"]


def trial(topology: Topology, label: str, job: str, how, seconds: float) -> dict:
    handle = attach(topology, how)
    try:
        run = flood(topology, seconds, GEN_CORE, [], lambda: counted(topology, job))
    finally:
        detach(handle)
    return {"subject": label, "job": job, "sent": run.sent, "completed": run.returned, "seconds": run.seconds,
            "mpps": run.mpps(run.returned), "cpu": run.cpu}


def summarise(samples: list[dict]) -> dict:
    by_subject: dict[str, list[float]] = {}
    for s in samples:
        by_subject.setdefault(s["subject"], []).append(s["mpps"])
    rates = {k: {"mean_mpps": statistics.mean(v), "stdev_mpps": statistics.stdev(v) if len(v) > 1 else 0.0,
                 "samples": len(v)} for k, v in by_subject.items()}
    ratios = {}
    for job in ("drop", "macswap"):
        ours, hand = by_subject[f"xnf-{job}"], by_subject[f"hand-{job}"]
        per_round = [o / h for o, h in zip(ours, hand)]
        ratios[job] = {"median_ratio": statistics.median(per_round), "mean_ratio": statistics.mean(per_round),
                       "per_round": per_round, "meets_97_percent": statistics.median(per_round) >= 0.97}
    return {"rates": rates, "ratios": ratios}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)


def run(args: argparse.Namespace, out_dir: Path) -> Path:
    env = environment.describe()
    with Topology("pair", gen_xdp="drop") as topology:
        samples = measure_rounds(SUBJECTS, args.rounds, lambda s: trial(topology, *s, args.seconds),
                                 lambda s: f"{s['subject']:13s} {s['mpps']:6.3f} Mpps "
                                           f"(sent {s['sent']}, completed {s['completed']})")
    samples.sort(key=lambda s: (s["round"], s["subject"]))
    summary = summarise(samples)
    rows = [{"round": s["round"], "subject": s["subject"], "job": s["job"], "sent": s["sent"],
             "completed": s["completed"], "seconds": round(s["seconds"], 4), "mpps": round(s["mpps"], 4),
             "core0_system_s": s["cpu"][GEN_CORE]["system"], "core0_softirq_s": s["cpu"][GEN_CORE]["softirq"],
             "core0_busy_share": s["cpu"][GEN_CORE]["busy_share"]} for s in samples]
    path = results_file.write(out_dir, "xdp_overhead", {"environment": env, "generator_core": GEN_CORE,
                                                        "seconds_per_trial": args.seconds, "summary": summary,
                                                        "samples": samples}, rows)
    for job, r in summary["ratios"].items():
        say.info(f"{job}: xnf / hand-written = {r['median_ratio']:.3f} (median of {len(r['per_round'])} rounds)")
    return path

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

from xnf.bench.study import Place, RoundsStudy
from xnf.lab import veth_stats
from xnf.lab.cores import GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.rounds import median_ratio
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


def trial(subject: tuple, args: argparse.Namespace, place: Place) -> dict:
    label, job, how = subject
    topology = place.lab
    handle = attach(topology, how)
    try:
        run = flood(topology, args.seconds, GEN_CORE, [], lambda: counted(topology, job))
    finally:
        detach(handle)
    core0 = run.cpu[GEN_CORE]
    return {"subject": label, "job": job, "sent": run.sent, "completed": run.returned, "seconds": round(run.seconds, 4),
            "mpps": round(run.mpps(run.returned), 4), "core0_system_s": core0["system"],
            "core0_softirq_s": core0["softirq"], "core0_busy_share": core0["busy_share"]}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per subject: its median rate, and for xnf's programs the median of their same-round ratios to the
    hand-written program doing the same job (and whether that is within 3 % of it)."""
    rows = []
    for label, job, how in SUBJECTS:
        mine = [s for s in samples if s["subject"] == label]
        rates = [s["mpps"] for s in mine]
        row = {"subject": label, "job": job, "mpps": round(statistics.median(rates), 4),
               "stdev": round(statistics.stdev(rates), 4) if len(rates) > 1 else 0.0, "rounds": len(mine)}
        if how[0] == "nf":
            ratio = median_ratio(samples, mine, "mpps", f"hand-{job}")
            row |= {"ratio_to_hand": ratio, "meets_97_percent": ratio is not None and ratio >= 0.97}
        rows.append(row)
    return rows


STUDY = RoundsStudy(
    NAME, "xdp_overhead", subjects=lambda args: SUBJECTS, trial=trial, summarise=summarise, seconds=3.0,
    lab=lambda args, folder: Topology("pair", gen_xdp="drop"),
    line=lambda s: f"{s['subject']:13s} {s['mpps']:6.3f} Mpps (sent {s['sent']}, completed {s['completed']})",
    report=lambda row: f"{row['subject']:13s} {row['mpps']:.3f} ± {row['stdev']:.3f} Mpps" + (
        f", {row['ratio_to_hand']} of hand-{row['job']} (median of same-round ratios)" if "ratio_to_hand" in row
        else ""),
    fields=lambda args: {"generator_core": GEN_CORE})
add_arguments, run = STUDY.add_arguments, STUDY.run

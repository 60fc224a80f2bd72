#!/usr/bin/env python3
"""What the xnf framework costs on the kernel path.

Runs xnf's `drop` and `macswap` in XDP mode and minimal hand-written XDP programs doing the same jobs
(bench/baselines/), alternately, on one veth pair, with the same generator, and compares packet rates.
Every program is counted the same way: by veth's own XDP counters, not by the program.

Cores: the generator runs pinned on core 0; on veth the DUT's XDP program (and for macswap the generator
side's receive) runs in softirq on that same core, so the ratio compares whole-core packet rates.

    python3 bench/xdp_overhead.py [--rounds 5] [--seconds 3] [--out results/]
"""

from __future__ import annotations

import argparse
import csv
import json
import statistics
import sys
import time
from pathlib import Path

from xnf.build import BIN_DIR, BUILD_DIR, ensure_built
from xnf.lab import cpu, environment, veth_stats
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

GEN_CORE = 0
SUBJECTS = [  # (label, job, how it is loaded)
    ("xnf-drop", "drop", ("nf", "drop")),
    ("hand-drop", "drop", ("object", BUILD_DIR / "bench" / "hand_drop.bpf.o")),
    ("xnf-macswap", "macswap", ("nf", "macswap")),
    ("hand-macswap", "macswap", ("object", BUILD_DIR / "bench" / "hand_macswap.bpf.o")),
]


def attach(topology: Topology, how):
    kind, what = how
    if kind == "nf":
        return NfInstance.start(topology, what, "xdp", topology.dut_ifaces)
    proc = topology.spawn(topology.dut_ns, [str(BIN_DIR / "xnf-xdp-load"), "--object", str(what), "--iface", "dut0"])
    line = proc.stdout.readline()
    if "attached" not in line:
        raise RuntimeError(f"xnf-xdp-load failed: {proc.stderr.read()}")
    return proc


def detach(handle) -> None:
    if isinstance(handle, NfInstance):
        handle.stop()
    else:
        handle.terminate()
        handle.wait(timeout=10)


def counted(topology: Topology, job: str) -> int:
    """Frames the job completed: dropped at the DUT, or returned to the generator side."""
    if job == "drop":
        return veth_stats.read(topology.dut_ns, "dut0")["rx_xdp_drops"]
    return veth_stats.read(topology.gen_ns, "gen0")["rx_xdp_drops"]


def trial(topology: Topology, label: str, job: str, how, seconds: float) -> dict:
    handle = attach(topology, how)
    try:
        link = topology.links[0]
        before_count, before_cpu = counted(topology, job), cpu.snapshot()
        result = topology.run(topology.gen_ns, [str(BIN_DIR / "xnf-gen"), "--iface", "gen0", "--dst-mac",
                                                link.dut_mac, "--duration", str(seconds), "--cores",
                                                str(GEN_CORE), "--call-ms", "1000"], timeout=seconds + 30)
        after_count, after_cpu = counted(topology, job), cpu.snapshot()
    finally:
        detach(handle)
    gen = json.loads(result.stdout)
    done = after_count - before_count
    return {"subject": label, "job": job, "sent": gen["sent"], "completed": done,
            "seconds": gen["seconds"], "mpps": done / gen["seconds"] / 1e6,
            "cpu": cpu.split(before_cpu, after_cpu)}


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--out", default="results")
    args = parser.parse_args()
    ensure_built()
    env = environment.describe()
    samples = []
    with Topology("pair", gen_xdp="drop") as topology:
        for round_no in range(args.rounds):
            # Alternate the order each round so drift does not favour one side.
            order = SUBJECTS if round_no % 2 == 0 else SUBJECTS[::-1]
            for label, job, how in order:
                sample = trial(topology, label, job, how, args.seconds)
                sample["round"] = round_no
                samples.append(sample)
                print(f"round {round_no} {label:13s} {sample['mpps']:6.3f} Mpps "
                      f"(sent {sample['sent']}, completed {sample['completed']})", flush=True)
    samples.sort(key=lambda s: (s["round"], s["subject"]))
    summary = summarise(samples)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    doc = {"benchmark": "xdp_overhead", "environment": env, "generator_core": GEN_CORE,
           "seconds_per_trial": args.seconds, "summary": summary, "samples": samples}
    json_path = out / f"xdp_overhead-{stamp}.json"
    json_path.write_text(json.dumps(doc, indent=2))
    with open(out / f"xdp_overhead-{stamp}.csv", "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["round", "subject", "job", "sent", "completed", "seconds", "mpps",
                         "core0_system_s", "core0_softirq_s", "core0_busy_share"])
        for s in samples:
            c0 = s["cpu"][GEN_CORE]
            writer.writerow([s["round"], s["subject"], s["job"], s["sent"], s["completed"], f"{s['seconds']:.4f}",
                             f"{s['mpps']:.4f}", c0["system"], c0["softirq"], c0["busy_share"]])
    for job, r in summary["ratios"].items():
        print(f"{job}: xnf / hand-written = {r['median_ratio']:.3f} (median of {len(r['per_round'])} rounds)")
    print(f"results: {json_path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

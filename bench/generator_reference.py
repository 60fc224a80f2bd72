#!/usr/bin/env python3
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

    python3 bench/generator_reference.py [--rounds 3] [--seconds 3] [--out results/]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys

from xnf.bench import results_file
from xnf.build import BIN_DIR, BUILD_DIR, ensure_built
from xnf.lab import cpu, environment, netns, veth_stats
from xnf.lab.topology import Topology

GEN_CORE, PEER_CORE = 0, 1
PLACEMENTS = ("shared", "napi", "two-cores")
SINK = BUILD_DIR / "bpf" / "xnf_sink.bpf.o"
# label -> (binary, extra arguments)
SUBJECTS = {
    "xnf-gen stamp=1 batch=64": ("xnf-gen", ["--stamp-every", "1", "--batch", "64"]),
    "xnf-gen stamp=1/64 batch=64": ("xnf-gen", ["--stamp-every", "64", "--batch", "64"]),
    "xnf-gen stamp=1/64 batch=256": ("xnf-gen", ["--stamp-every", "64", "--batch", "256"]),
    "reference batch=64": ("xnf-gen-ref", ["--batch", "64"]),
    "reference batch=256": ("xnf-gen-ref", ["--batch", "256"]),
}


def gen_argv(binary: str, extra: list[str], t: Topology, seconds: float, cores: str) -> list[str]:
    argv = [str(BIN_DIR / binary), "--iface", "gen0", "--dst-mac", t.links[0].dut_mac, "--duration", str(seconds),
            "--cores", cores]
    return argv + (["--call-ms", "1000"] if binary == "xnf-gen" else []) + extra


def trial(t: Topology, label: str, seconds: float, tsc_hz: float | None, cores: str) -> dict:
    binary, extra = SUBJECTS[label]
    rx0, tx0, cpu0 = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0"), cpu.snapshot()
    out = t.run(t.gen_ns, gen_argv(binary, extra, t, seconds, cores), timeout=seconds + 30)
    rx1, tx1, cpu1 = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0"), cpu.snapshot()
    g = json.loads(out.stdout.strip().splitlines()[-1])
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
        netns.ip("link", "set", "dev", "dut0", "xdp", "obj", str(SINK), "sec", "xdp", ns=t.dut_ns)
        if placement == "napi":
            t.pin_dut_receive(PEER_CORE)
        for round_no in range(rounds):
            for label in (labels if round_no % 2 == 0 else labels[::-1]):
                s = trial(t, label, seconds, tsc_hz, cores)
                s.update(round=round_no, placement=placement)
                samples.append(s)
                print(f"{placement:9s} round {round_no} {label:30s} {s['mpps']:6.2f} Mpps delivered "
                      f"({s['refused_mpps']:.2f} refused; cores {cores}: {s['gen_core_ns_per_frame'] or 0:.0f} "
                      f"ns/frame)", flush=True)
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0)
    parser.add_argument("--placements", default=",".join(PLACEMENTS),
                        help=f"comma-separated, of: {', '.join(PLACEMENTS)}")
    parser.add_argument("--out", default="results")
    args = parser.parse_args()
    placements = [p.strip() for p in args.placements.split(",")]
    if not set(placements) <= set(PLACEMENTS):
        parser.error(f"--placements {args.placements}: choose from {', '.join(PLACEMENTS)}")
    ensure_built()
    env = environment.describe()
    samples = []
    for placement in placements:
        samples += run_placement(placement, args.rounds, args.seconds, env["tsc_hz"])
    table = summarise(samples)
    path = results_file.write(args.out, "generator_reference", {
        "environment": env, "generator_core": GEN_CORE, "peer_core_napi": PEER_CORE,
        "seconds_per_trial": args.seconds}, table, samples)
    for row in table:
        print(f"{row['placement']:9s} {row['subject']:30s} {row['mean_mpps']:6.2f} ± {row['stdev_mpps']:.2f} Mpps "
              f"({(row['of_reference_batch64'] or 0):.2f} of reference batch=64)")
    print(f"results: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

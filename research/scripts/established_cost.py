"""What builds of xnf-acl cost per established frame, without traffic (research/lab-notebook.md, 2026-11-29, "Helper
calls on the frame path"): `xnf-acl cost` (BPF_PROG_RUN and the native build) on the frames of N UDP connections,
each connection's opening frame then its answer, so that from the second pass on every frame is established. The
builds run in turns, each pass pinned to one core; the medians of the XDP program's warm time and of its first pass
(each connection's opening and answer: new connections) are printed.

    python3 research/scripts/established_cost.py OTHER-CHECKOUT/build/bin/xnf-acl build/bin/xnf-acl [--rounds 6]

--rules: the acl's rules (default: conntrack-rates' stateful rules). Run as root, nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
from pathlib import Path

from scapy.all import IP, UDP, Ether, Raw, wrpcap

from xnf.bench.studies import conntrack_rates as study
from xnf.lab.cores import DUT_CORE

INSIDE_MAC, OUTSIDE_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02"
SERVER, SERVER_PORT, PAYLOAD = "10.2.0.1", 5001, b"x" * 18   # 64-byte frames


def write_connections(path: Path, connections: int) -> None:
    """Every connection's opening frame (inside to the server), then every answer."""
    clients = [(f"10.1.{i // 250}.{i % 250 + 1}", 10000 + i) for i in range(connections)]
    openings = [Ether(src=INSIDE_MAC, dst=OUTSIDE_MAC) / IP(src=a, dst=SERVER) / UDP(sport=p, dport=SERVER_PORT) /
                Raw(PAYLOAD) for a, p in clients]
    answers = [Ether(src=OUTSIDE_MAC, dst=INSIDE_MAC) / IP(src=SERVER, dst=a) / UDP(sport=SERVER_PORT, dport=p) /
               Raw(PAYLOAD) for a, p in clients]
    wrpcap(str(path), openings + answers)


def cost(binary: Path, frames: Path, rules: Path) -> dict:
    out = subprocess.run(["taskset", "-c", str(DUT_CORE), str(binary), "cost", "--frames", str(frames), "--rules",
                          str(rules), "--repeat", "100"], capture_output=True, text=True, check=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", type=Path, nargs="+", help="xnf-acl builds to compare")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--connections", type=int, default=1000)
    parser.add_argument("--rules", type=Path, help="the acl's rules (default: conntrack-rates' stateful rules)")
    args = parser.parse_args()
    warm: dict[Path, list[float]] = {b: [] for b in args.binaries}
    first: dict[Path, list[float]] = {b: [] for b in args.binaries}
    with tempfile.TemporaryDirectory() as folder:
        frames, rules = Path(folder) / "connections.pcap", args.rules or Path(folder) / "acl.rules"
        write_connections(frames, args.connections)
        if not args.rules:
            rules.write_text(study.RULES)
        for r in range(args.rounds):
            for binary in args.binaries if r % 2 == 0 else list(reversed(args.binaries)):
                report = cost(binary, frames, rules)
                warm[binary].append(report["xdp_warm_ns_per_frame"])
                first[binary].append(report["xdp_first_ns_per_frame"])
    for binary in args.binaries:
        print(f"{binary}: XDP warm median {statistics.median(warm[binary]):.0f} ns a frame "
              f"({' '.join(f'{v:.0f}' for v in warm[binary])}), first pass {statistics.median(first[binary]):.0f}")


if __name__ == "__main__":
    main()

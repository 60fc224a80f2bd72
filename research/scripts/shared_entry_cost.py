"""What an established connection's frames cost when its two directions are taken on two cores at once, as RSS does
with a connection whose directions hash to different queues (research/lab-notebook.md, 2026-11-30, "A connection's
entry shared by two cores"): the stateful acl in XDP on a two-port topology, its program run by BPF_PROG_RUN (bpftool
prog run, --repeat times one frame) on core 0 with the connection's opening direction and on core 1 with its answer:
each alone, both at once ("shared"), and at once with core 1 on another connection's answer ("apart": what two busy
cores cost each other without a shared entry). The kernel's own time per run, per build and case, builds in turns.

    python3 research/scripts/shared_entry_cost.py OTHER-CHECKOUT/build/bin/xnf-acl build/bin/xnf-acl [--rounds 4]

Run as root, nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import struct
import subprocess
import tempfile
from pathlib import Path

from scapy.all import IP, UDP, Ether, Raw

from xnf.lab import netns
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.model import cases

INSIDE, OTHER_INSIDE, OUTSIDE = ("10.1.0.1", 10000), ("10.1.0.2", 10000), ("10.2.0.1", 5001)
PAYLOAD = b"x" * 18   # 64-byte frames


def frame(src: tuple[str, int], dst: tuple[str, int]) -> bytes:
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src=src[0], dst=dst[0]) /
                 UDP(sport=src[1], dport=dst[1]) / Raw(PAYLOAD))


def xdp_md(ifindex: int, length: int) -> bytes:
    """struct xdp_md for BPF_PROG_RUN: the frame's bounds and the port it came in on."""
    return struct.pack("6I", 0, length, 0, ifindex, 0, 0)


def attached_program(ns: str, iface: str) -> tuple[int, int]:
    [link] = json.loads(netns.run(ns, ["ip", "-j", "link", "show", "dev", iface]).stdout)
    return link["xdp"]["prog"]["id"], link["ifindex"]


def run(ns: str, prog: int, core: int, data: Path, ctx: Path, repeat: int) -> subprocess.Popen:
    return subprocess.Popen(["ip", "netns", "exec", ns, "taskset", "-c", str(core), "bpftool", "prog", "run", "id",
                             str(prog), "data_in", str(data), "ctx_in", str(ctx), "repeat", str(repeat)],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)


def duration(process: subprocess.Popen) -> float:
    out = process.communicate()[0]
    found = re.search(r"[Dd]uration[^0-9]*([0-9]+)", out)
    if not found:
        raise SystemExit(f"bpftool prog run said: {out}")
    return float(found.group(1))


def measure(binary: Path, folder: Path, repeat: int) -> dict[str, float]:
    rules = folder / "acl.rules"
    rules.write_text(cases.STATEFUL_ACL)
    with Topology("two-port", gen_xdp="drop") as t:
        with NfInstance.start(t, "acl", "xdp", t.dut_ifaces, rules=str(rules), binary=binary):
            prog, inside_if = attached_program(t.dut_ns, t.links[0].dut_if)
            _, outside_if = attached_program(t.dut_ns, t.links[1].dut_if)
            files = {}
            for name, data, ifindex in (("opener", frame(INSIDE, OUTSIDE), inside_if),
                                        ("answer", frame(OUTSIDE, INSIDE), outside_if),
                                        ("other_opener", frame(OTHER_INSIDE, OUTSIDE), inside_if),
                                        ("other_answer", frame(OUTSIDE, OTHER_INSIDE), outside_if)):
                files[name] = (folder / f"{name}.bin", folder / f"{name}.ctx")
                files[name][0].write_bytes(data)
                files[name][1].write_bytes(xdp_md(ifindex, len(data)))
            for name in ("opener", "answer", "other_opener", "other_answer"):   # both connections established
                duration(run(t.dut_ns, prog, 0, *files[name], 1))
            alone = [duration(run(t.dut_ns, prog, core, *files[name], repeat))
                     for core, name in ((0, "opener"), (1, "answer"))]
            at_once = {}
            for case, second in (("shared", "answer"), ("apart", "other_answer")):
                both = [run(t.dut_ns, prog, core, *files[name], repeat) for core, name in ((0, "opener"), (1, second))]
                at_once[case] = statistics.mean(duration(p) for p in both)
    return {"alone": statistics.mean(alone), **at_once}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("binaries", type=Path, nargs="+", help="xnf-acl builds to compare")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=5_000_000)
    args = parser.parse_args()
    results: dict[Path, dict[str, list[float]]] = {b: {"alone": [], "shared": [], "apart": []} for b in args.binaries}
    with tempfile.TemporaryDirectory() as folder:
        for r in range(args.rounds):
            for binary in args.binaries if r % 2 == 0 else list(reversed(args.binaries)):
                for case, ns in measure(binary, Path(folder), args.repeat).items():
                    results[binary][case].append(ns)
    for binary, cases_ns in results.items():
        print(binary, "; ".join(f"{case}: median {statistics.median(v):.0f} ns a frame ({_rounds(v)})"
                                for case, v in cases_ns.items()))


def _rounds(values: list[float]) -> str:
    return " ".join(f"{v:.0f}" for v in values)


if __name__ == "__main__":
    main()

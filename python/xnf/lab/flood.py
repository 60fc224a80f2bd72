"""One flat-out run of xnf-gen from gen0 into the device under test, for the stand-alone benchmarks: what the
generator sent, what came back to gen0 (counted by veth's own XDP counter there, the same for every subject,
so gen0 needs the topology's XDP sink: gen_xdp="drop"), and every core's CPU time meanwhile."""

from __future__ import annotations

import json
from dataclasses import dataclass

from xnf import build
from xnf.lab import cpu, veth_stats
from xnf.lab.topology import Topology


@dataclass
class Flood:
    sent: int
    seconds: float
    returned: int           # frames back at gen0
    cpu: dict               # per core, cpu.split()

    @property
    def offered_mpps(self) -> float:
        return self.sent / self.seconds / 1e6

    def mpps(self, frames: int) -> float:
        return frames / self.seconds / 1e6

    def ns_per_frame(self, frames: int) -> float | None:
        """Busy time of every core (exact: wall time less idle, docs/methodology.md) per frame done."""
        return sum(c["busy"] for c in self.cpu.values()) / frames * 1e9 if frames else None


def flood(t: Topology, seconds: float, core: int, gen_args: list[str]) -> Flood:
    """xnf-gen pinned to core, unpaced, 1 s calls, for seconds; gen_args: its traffic options."""
    returned_before, cpu_before = veth_stats.read(t.gen_ns, "gen0")["rx_xdp_drops"], cpu.snapshot()
    gen = t.run(t.gen_ns, [str(build.tool_binary("xnf-gen")), "--iface", "gen0", "--dst-mac", t.links[0].dut_mac,
                           "--duration", str(seconds), "--cores", str(core), "--call-ms", "1000", *gen_args],
                timeout=seconds + 30)
    cpu_after, returned_after = cpu.snapshot(), veth_stats.read(t.gen_ns, "gen0")["rx_xdp_drops"]
    out = json.loads(gen.stdout)
    return Flood(out["sent"], out["seconds"], returned_after - returned_before, cpu.split(cpu_before, cpu_after))

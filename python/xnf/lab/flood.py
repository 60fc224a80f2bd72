"""One flat-out run of xnf-gen from gen0 into the device under test, for the benchmark studies and the demo:
what the generator sent, what the DUT completed (by default the frames that came back to gen0, counted by
veth's own XDP counter there, the same for every subject, so gen0 needs the topology's XDP sink:
gen_xdp="drop"), and every core's CPU time meanwhile."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from xnf.lab import cpu, veth_stats
from xnf.lab.generator import Generator, flat_out
from xnf.lab.topology import Topology


@dataclass
class Flood:
    sent: int
    seconds: float
    returned: int           # frames back at gen0
    cpu: dict               # per core, cpu.split()
    sender: str = "live"    # how xnf-gen sent (live, tc, socket: its summary's), which the results must say

    @property
    def offered_mpps(self) -> float:
        return self.sent / self.seconds / 1e6

    def mpps(self, frames: int) -> float:
        return frames / self.seconds / 1e6

    def ns_per_frame(self, frames: int) -> float | None:
        """Busy time of every core (exact: wall time less idle, docs/methodology.md) per frame done."""
        return sum(c["busy"] for c in self.cpu.values()) / frames * 1e9 if frames else None

    def core_ns_per_frame(self, core: int, frames: int) -> float | None:
        """Busy time of one core (the DUT's, where all of its work is kept) per frame done."""
        return self.cpu[core]["busy"] / frames * 1e9 if frames else None


def returned_to_gen0(t: Topology) -> Callable[[], int]:
    return lambda: veth_stats.read(t.gen_ns, "gen0")["rx_xdp_drops"]


def flood(t: Topology, seconds: float, core: int, gen_args: list[str],
          completed: Callable[[], int] | None = None, count: int | None = None) -> Flood:
    """xnf-gen pinned to core, unpaced, 1 s calls, for seconds (or, given count, exactly count frames as fast as
    they go); gen_args: its traffic options. completed: a counter of the frames the DUT completed (default:
    returned to gen0)."""
    completed = completed or returned_to_gen0(t)
    how = ["--cores", str(core), "--count", str(count)] if count else flat_out(seconds, core)
    done_before, cpu_before = completed(), cpu.snapshot()
    out = Generator(t).run(*how, *gen_args).summary
    cpu_after, done_after = cpu.snapshot(), completed()
    return Flood(out["sent"], out["seconds"], done_after - done_before, cpu.split(cpu_before, cpu_after),
                 out.get("sender", "live"))

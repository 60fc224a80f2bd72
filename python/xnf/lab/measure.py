"""One measurement: offer a rate for a while, and account for every frame and every CPU second.

Who pays for what (veth, see docs/lab.md): the generator's threads run in system time on the generator
cores; the DUT's XDP work, and on the way back the receiver's, run in softirq on those same cores; AF_XDP
workers run wherever they are pinned. So the DUT's cost is taken as: softirq time on the generator cores
plus all busy time on the other cores, per frame offered. The generator's own cost (system time on its
cores) is reported beside it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace

from xnf.lab import cpu
from xnf.lab.generator import Generator, unless_chosen
from xnf.lab.topology import Topology


@dataclass
class TrafficSpec:
    """What the generator sends, besides the rate."""

    size: int | None = None   # None: the smallest frame that carries the probe
    proto: str = "udp"
    ipv6: bool = False
    flows: int = 1
    vary: str | None = None
    flow_mode: str = "seq"
    gen_cores: tuple[int, ...] = (0,)
    stamp_every: int = 1      # send time in one frame of N: reading the clock costs generator speed
    batch: int = 64           # frames per kernel round of BPF_PROG_RUN (xnf-gen --batch, at most 256)
    options: tuple[str, ...] = ()   # any other xnf-gen options: a mix's classes, addresses (docs/methodology.md)

    def with_stamps(self, every: int) -> "TrafficSpec":
        return replace(self, stamp_every=every)

    def argv(self) -> list[str]:
        """The spec's fields, except those its options state (a case's traffic: --flows 1000), then the options."""
        fields = ["--proto", self.proto, "--flows", str(self.flows), "--flow-mode", self.flow_mode,
                  "--cores", ",".join(map(str, self.gen_cores)), "--stamp-every", str(self.stamp_every),
                  "--batch", str(self.batch)]
        if self.size:
            fields += ["--size", str(self.size)]
        if self.vary:
            fields += ["--vary", self.vary]
        flags = ["--ipv6"] if self.ipv6 and "--ipv6" not in self.options else []
        return unless_chosen(fields, list(self.options)) + flags + list(self.options)


@dataclass
class Trial:
    offered_pps: float        # asked for (0: as fast as the generator goes)
    sent: int
    send_errors: int          # built, refused by the interface (the peer's ring was full): not sent
    received: int
    lost: int
    loss_ratio: float
    reordered: int
    achieved_pps: float       # what the generator really put out
    frame_bytes: float | None  # the frames' mean size on the wire, FCS included (a mix's sizes weighed)
    seconds: float
    latency_ns: dict
    cpu: dict                 # per core: user, system, softirq, idle seconds, busy share
    dut_ns_per_packet: float | None
    dut_cycles_per_packet: float | None
    generator_ns_per_packet: float | None
    sender: str = "live"      # how xnf-gen sent (its summary's sender: live, tc or socket): a DUT's cost includes
                              # veth's copy of every frame that arrives as an skb (tc, socket), not a live frame

    @property
    def achieved_gbps(self) -> float | None:
        return self.achieved_pps * self.frame_bytes * 8 / 1e9 if self.frame_bytes else None

    @property
    def offered_loss_ratio(self) -> float:
        """Of the frames the trial offered, the share the DUT did not forward: what RFC 2544 judges a rate by. A paced
        trial offers rate x seconds frames, and a frame the DUT's port refused (on veth its receive ring was full:
        where a NIC would drop the frame, the veth refuses it to the sender) is one the DUT did not take: lost. An
        unpaced trial offers whatever the generator put out: refusals only hold the generator back, and its rate
        (achieved_pps) is what the DUT took."""
        if not self.offered_pps:
            return self.loss_ratio
        offered = self.sent + self.send_errors
        return (self.lost + self.send_errors) / offered if offered else 0.0

    def passes(self, loss_threshold: float) -> bool:
        return self.offered_loss_ratio < loss_threshold

    def as_dict(self) -> dict:
        return asdict(self) | {"offered_loss_ratio": self.offered_loss_ratio, "achieved_gbps": self.achieved_gbps}


def _costs(usage: dict, gen_cores: tuple[int, ...], frames: int, tsc_hz: float | None):
    if frames <= 0:
        return None, None, None
    dut = sum(c["softirq"] for core, c in usage.items() if core in gen_cores)
    dut += sum(c["user"] + c["system"] + c["softirq"] for core, c in usage.items() if core not in gen_cores)
    gen = sum(c["system"] + c["user"] for core, c in usage.items() if core in gen_cores)
    dut_ns = dut / frames * 1e9
    return dut_ns, (dut_ns * tsc_hz / 1e9 if tsc_hz else None), gen / frames * 1e9


# Verdicts by which an NF keeps a frame from coming back, by its own decision: not a loss of the data path.
KEPT_BACK = ("drop", "pass", "local")


def _kept_back(nf) -> int:
    return sum(v["packets"] for k, v in nf.stats().items() if k in KEPT_BACK)


def run_trial(topology: Topology, rate: float, seconds: float, traffic: TrafficSpec | None = None,
              tsc_hz: float | None = None, link: int = 0, rx_link: int | None = None, nf=None) -> Trial:
    """Offers rate frames per second (0: unlimited) for seconds into the DUT, receiving on the generator's
    side of rx_link (the same link by default). The receiver needs that interface free of XDP
    (a topology with gen_xdp=None).

    nf: for an NF that keeps frames back by its own decision (drops them, or passes them to the local stack),
    its NfInstance: those frames are not lost, so loss is what neither came back nor was kept back by a verdict
    (for the drop NF, what it never processed)."""
    traffic = traffic or TrafficSpec()
    generator = Generator(topology, link=link, receive_on=rx_link if rx_link is not None else link)
    kept_before = _kept_back(nf) if nf else 0
    before = cpu.snapshot()
    out = generator.run("--duration", str(seconds), "--rate", str(rate), *traffic.argv()).summary
    usage = cpu.split(before, cpu.snapshot())
    if nf:
        kept = _kept_back(nf) - kept_before
        out["lost"] = max(out["sent"] - out["received"] - kept, 0)
        out["loss_ratio"] = out["lost"] / out["sent"] if out["sent"] else 0.0
    dut_ns, dut_cycles, gen_ns = _costs(usage, traffic.gen_cores, out["sent"], tsc_hz)
    latency = {k: v for k, v in out["latency_ns"].items() if k != "histogram"}
    latency["histogram"] = out["latency_ns"].get("histogram", [])
    return Trial(offered_pps=rate, sent=out["sent"], send_errors=out.get("send_errors", 0),
                 received=out["received"], lost=out["lost"],
                 loss_ratio=out["loss_ratio"], reordered=out["reordered"], achieved_pps=out["pps"],
                 frame_bytes=out["bps"] / 8 / out["pps"] if out.get("pps") else None,
                 seconds=out["seconds"], latency_ns=latency, cpu=usage, dut_ns_per_packet=dut_ns,
                 dut_cycles_per_packet=dut_cycles, generator_ns_per_packet=gen_ns, sender=out.get("sender", "live"))

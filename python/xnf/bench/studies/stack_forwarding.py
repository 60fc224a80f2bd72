"""The Linux stack's own forwarding against xnf's router (the frameworks comparison's "packet frameworks forward
about nine times what the Linux stack does").

A two-port topology: xnf-gen sends flat out from core 0 into dut0, to gen1's address (198.18.1.1); the DUT forwards
out of dut1 to gen1, where veth's XDP sink counts what arrives. All of the DUT's work runs on core 1 (its veth
receive in NAPI threads pinned there, and the AF_XDP worker). Subjects:
  linux        the kernel's IPv4 forwarding (ip_forward=1, a static neighbour for gen1: the sink answers no ARP)
  xdp          xnf's router in XDP (a route to 198.18.1.0/24 out of port 1)
  tc           the same router at tc ingress (--mode tc: an skb per frame; GRO on the DUT's ports and frames sent
               out of dut1, as linux: python/xnf/lab/nf_process.py)
  afxdp-poll   the same router in user space (afxdp-poll, live transmit: the worker sleeps in poll() on the core
               it shares with the NAPI threads that feed it; a spinning one starved them, 0.26 Mpps)
The yardstick is linux in the same round: every rate is also given as a ratio to it.

    xnf bench run stack-forwarding [--rounds 5] [--seconds 2]
"""

from __future__ import annotations

import argparse

from xnf.bench.study import Place, RoundsStudy
from xnf.lab import netfilter, paths, veth_stats
from xnf.lab.rounds import rate_rows
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "stack-forwarding"
DESCRIPTION = ("the Linux stack's IPv4 forwarding against xnf's router in XDP, at tc and in user space (64-byte "
               "frames), the DUT on one core")
USER_SPACE = "afxdp-poll"   # a worker that sleeps: one that spins would take the core from the receive feeding it
EXTRA = {USER_SPACE: ["--cores", str(DUT_CORE)]}
YARDSTICK = "linux"


def subjects() -> list[str]:
    """Linux's forwarding, the router at each kernel hook, and in user space."""
    return [YARDSTICK, *paths.modes(paths.kernel_hooks), USER_SPACE]


def trial(label: str, args: argparse.Namespace, place: Place) -> dict:
    seconds, folder = args.seconds, place.folder
    with Topology("two-port", gen_xdp="drop") as t:
        out = t.links[1]
        nf = None
        if label == "linux":
            netfilter.linux_forwards_to(t, out)
        else:
            rules = folder / "routes.rules"
            rules.write_text(f"route 198.18.1.0/24 via {out.gen_mac} port 1\n")
            nf = NfInstance.start(t, "router", label, t.dut_ifaces, rules=str(rules), extra=EXTRA.get(label, []))
        t.pin_dut_receive(DUT_CORE)
        arrived = (lambda: veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"])
        run = flood(t, seconds, GEN_CORE, ["--dst-ip", out.gen_ip], completed=arrived)
        if nf:
            nf.stop()
    return {"subject": label, "sent": run.sent, "forwarded": run.returned, "seconds": round(run.seconds, 4),
            "mpps": round(run.mpps(run.returned), 4), "offered_mpps": round(run.offered_mpps, 4),
            "core1_busy_share": run.cpu[DUT_CORE]["busy_share"], "core0_busy_share": run.cpu[GEN_CORE]["busy_share"]}


STUDY = RoundsStudy(
    NAME, "stack_forwarding", subjects=lambda args: subjects(), trial=trial,
    summarise=lambda samples, args: rate_rows(samples, YARDSTICK, "ratio_to_linux", ("core1_busy_share",)),
    line=lambda s: f"{s['subject']:6s} {s['mpps']:6.3f} Mpps forwarded (offered {s['offered_mpps']:.3f}), core "
                   f"{DUT_CORE} {s['core1_busy_share']:.0%} busy",
    report=lambda row: f"{row['subject']:6s} {row['mpps']:.3f} ± {row['stdev']:.3f} Mpps, "
                       f"{row['ratio_to_linux']}x linux",
    fields=lambda args: {"generator_core": GEN_CORE, "dut_core": DUT_CORE, "yardstick": YARDSTICK})
add_arguments, run = STUDY.add_arguments, STUDY.run

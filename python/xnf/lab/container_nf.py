"""An NF between the lab's containers (python/xnf/lab/hosts.py: h0 the client, h1 the server, h2 a second
backend), with the rules that make it carry h0's traffic to h1: what the goodput study and `xnf advise --verify` on a
segment mix run iperf3 through. "linux" is the DUT's own forwarding (ip_forward, no xnf) and "nftables" the same
with nftables masquerade from h0 out towards h1: the yardsticks.

    with HostsTopology(hosts=3) as t, container_nf.running(t, "router", "tc", [], folder) as target:
        apps.iperf3(t, t.host(0).ns, t.host(1).ns, t.host(1).ip, connect_to=target)
"""

from __future__ import annotations

import contextlib
from pathlib import Path

from xnf.errors import XnfError
from xnf.lab import apps, netfilter
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

LINUX = "linux"
NFTABLES = "nftables"
# The address lb serves on, in front of h1 (and h2 for HTTP).
VIP = "198.19.100.1"


def lb_rules(t: HostsTopology) -> str:
    """iperf3 to h1 alone (its control and data connections must meet one server), HTTP to h1 and h2."""
    h1, h2 = t.host(1), t.host(2)
    lines = [f"service tcp {VIP} {apps.IPERF_PORT}", f"service tcp {VIP} {apps.HTTP_PORT}",
             f"backend tcp {VIP} {apps.IPERF_PORT} slot 0 {h1.ip} {apps.IPERF_PORT} mac {h1.mac} port 1"]
    lines += [f"backend tcp {VIP} {apps.HTTP_PORT} slot {k} {b.ip} {apps.HTTP_PORT} mac {b.mac} port {b.index}"
              for k, b in enumerate((h1, h2))]
    return "\n".join(lines) + "\n"


def nat_rules(t: HostsTopology) -> str:
    """h0 inside, h1 outside (its gateway's MAC the DUT's next hop), the DUT's outside address public."""
    return f"inside port 0\noutside port 1 gateway {t.host(1).mac}\npublic {t.host(1).dut_ip}\n"


# The NFs the lab has rules for: each carries h0's TCP to h1.
RULES = {"router": HostsTopology.router_rules, "lb": lb_rules, "nat": nat_rules}


def target(t: HostsTopology, nf: str) -> str:
    """The address h0 connects to for h1 through nf (or a yardstick)."""
    return VIP if nf == "lb" else t.host(1).ip


def check_nf(nf: str) -> None:
    if nf not in RULES:
        raise XnfError(f"the lab carries containers' TCP through {', '.join(RULES)} (it has their rules), not "
                       f"{nf!r}")


@contextlib.contextmanager
def running(t: HostsTopology, nf: str, mode: str | None, options: list[str], folder: Path):
    """nf (or LINUX, NFTABLES) carrying h0's traffic to h1 on the DUT while the block runs: yields the address h0
    connects to. options: `xnf run`'s (mode, transmit path, the workers' cores) when mode is None."""
    instance = None
    if nf == NFTABLES:
        netfilter.masquerade(t.dut_ns, t.host(0).dut_if, t.host(1).dut_if)
    elif nf != LINUX:
        check_nf(nf)
        rules = folder / f"{nf}.rules"
        rules.write_text(RULES[nf](t))
        instance = NfInstance.start(t, nf, mode, t.dut_ifaces, rules=str(rules), extra=options)
    try:
        yield target(t, nf)
    finally:
        if instance:
            instance.stop()
        if nf == NFTABLES:
            netfilter.nft(t.dut_ns, f"delete table ip {netfilter.NAT_TABLE}")

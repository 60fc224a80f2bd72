"""Hosts around the DUT as containers are attached to one: each in a namespace of its own, joined to a DUT port by
a plain veth pair left at the kernel's defaults (checksum offload on, GRO off, no XDP program), IPv4 and IPv6.

  routed  h<i> ns  eth0 198.18.i.1/24, 2001:2:0:i::1/64  <-veth->  dut<i> 198.18.i.2, 2001:2:0:i::2  DUT ns
          each host routes everything through its DUT port (the DUT's Linux forwards, or an NF does)
  wire    h<i> ns  eth0 198.18.0.(i+1)/24, 2001:2::(i+1)/64  <-veth->  dut<i> (no address)        DUT ns
          one subnet: the DUT is a bump in the wire between the hosts (the firewall's place)

With generator=True, xnf-gen joins the first two hosts' segments: each of those hosts bridges its eth0 with a veth
whose other end, gen<i>, is in the generator's namespace (its address on the bridge, br0, which takes eth0's MAC),
so that xnf-gen sends into the DUT beside host i's own traffic and its receiver counts what the DUT sends to gen<i>'s
MAC; links[i] names both ends as a plain topology's link does (Generator(t, link=1, receive_on=0)).

  h<i> ns  br0 (198.18.i.1) = eth0 <-veth-> dut<i>  DUT ns
                            + g<i> <-veth-> gen<i>  generator ns

Addresses come from the benchmarking ranges (RFC 2544, RFC 5180). What runs on the hosts is python/xnf/lab/apps.py.

    with HostsTopology(hosts=2) as t:
        NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()))
        apps.iperf3(t, client=0, server=1)
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from xnf.errors import XnfError
from xnf.lab import netns
from xnf.lab.topology import Link, Topology

MAX_HOSTS = 7  # a port per host, one NF has eight
GENERATOR_SEGMENTS = 2   # generator=True: the hosts whose segment xnf-gen joins
BRIDGE = "br0"


@dataclass
class Host:
    index: int
    ns: str
    iface: str      # the host's end: eth0
    mac: str
    ip: str
    ip6: str
    dut_if: str     # the DUT's end
    dut_mac: str
    dut_ip: str     # "" on a wire
    dut_ip6: str
    stack_if: str = "eth0"   # where its addresses are: br0 when the generator shares its segment


@dataclass
class HostsTopology(Topology):
    KINDS = ("routed", "wire")
    FEEDS_XDP_FRAMES = False   # the hosts' stacks send skbs, and read what arrives with their stacks
    kind: str = "routed"
    hosts: int = 2
    gen_xdp: str | None = None
    generator: bool = False  # xnf-gen on the first two hosts' segments (above)
    mtu: int | None = None   # every host's and DUT port's MTU (and the bridges'); None: the kernel's 1500
    host_list: list[Host] = field(default_factory=list)

    def __post_init__(self) -> None:
        if not 2 <= self.hosts <= MAX_HOSTS:
            raise XnfError(f"a hosts topology has 2 to {MAX_HOSTS} hosts, not {self.hosts}")
        super().__post_init__()

    def _build(self) -> None:
        netns.create(self.dut_ns)
        _enable_ipv6(self.dut_ns)
        if self.kind == "routed":
            netns.run(self.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv6.conf.all.forwarding=1"])
        if self.generator:
            netns.create(self.gen_ns)
        for i in range(self.hosts):
            self.host_list.append(self._add_host(i))
            if self.generator and i < GENERATOR_SEGMENTS:
                self.links.append(self._add_generator_segment(self.host_list[i]))

    def _add_host(self, i: int) -> Host:
        routed = self.kind == "routed"
        host = Host(index=i, ns=f"{self._tag}-h{i}", iface="eth0", mac=f"02:00:00:00:{i:02x}:01",
                    ip=f"198.18.{i}.1" if routed else f"198.18.0.{i + 1}",
                    ip6=f"2001:2:0:{i}::1" if routed else f"2001:2::{i + 1}",
                    dut_if=f"dut{i}", dut_mac=f"02:00:00:00:{i:02x}:02",
                    dut_ip=f"198.18.{i}.2" if routed else "", dut_ip6=f"2001:2:0:{i}::2" if routed else "")
        if self.generator and i < GENERATOR_SEGMENTS:
            host.stack_if = BRIDGE
        netns.create(host.ns)
        _enable_ipv6(host.ns)
        netns.ip("link", "add", host.iface, "netns", host.ns, "address", host.mac, *self._mtu_args(), "type", "veth",
                 "peer", "name", host.dut_if, "netns", self.dut_ns, "address", host.dut_mac, *self._mtu_args())
        if host.stack_if == BRIDGE:
            netns.ip("link", "add", BRIDGE, "address", host.mac, *self._mtu_args(), "type", "bridge", "stp_state",
                     "0", "forward_delay", "0", ns=host.ns)
            netns.ip("link", "set", host.iface, "master", BRIDGE, ns=host.ns)
            netns.ip("link", "set", BRIDGE, "up", ns=host.ns)
        netns.ip("addr", "add", f"{host.ip}/24", "dev", host.stack_if, ns=host.ns)
        netns.ip("-6", "addr", "add", f"{host.ip6}/64", "dev", host.stack_if, "nodad", ns=host.ns)
        netns.ip("link", "set", host.iface, "up", ns=host.ns)
        if routed:
            netns.ip("addr", "add", f"{host.dut_ip}/24", "dev", host.dut_if, ns=self.dut_ns)
            netns.ip("-6", "addr", "add", f"{host.dut_ip6}/64", "dev", host.dut_if, "nodad", ns=self.dut_ns)
        netns.ip("link", "set", host.dut_if, "up", ns=self.dut_ns)
        if routed:
            netns.ip("route", "add", "default", "via", host.dut_ip, ns=host.ns)
            netns.ip("-6", "route", "add", "default", "via", host.dut_ip6, ns=host.ns)
        return host

    def _add_generator_segment(self, host: Host) -> Link:
        """gen<i> in the generator's namespace, joined to host i's bridge through g<i>."""
        i = host.index
        link = Link(index=i, gen_if=f"gen{i}", dut_if=host.dut_if, gen_mac=f"02:00:00:00:{i:02x}:03",
                    dut_mac=host.dut_mac, gen_ip="", dut_ip=host.dut_ip, gen_ip6="", dut_ip6=host.dut_ip6)
        netns.ip("link", "add", link.gen_if, "netns", self.gen_ns, "address", link.gen_mac, *self._mtu_args(),
                 "type", "veth", "peer", "name", f"g{i}", "netns", host.ns, *self._mtu_args())
        netns.ip("link", "set", f"g{i}", "master", BRIDGE, "up", ns=host.ns)
        netns.ip("link", "set", link.gen_if, "up", ns=self.gen_ns)
        # veth facts: xnf-gen sends XDP frames out of gen<i>, which g<i> takes only with GRO (or XDP) on; gen<i>
        # keeps GRO on between receiver runs, as a plain topology's generator side does.
        netns.run(host.ns, ["ethtool", "-K", f"g{i}", "gro", "on"])
        netns.run(self.gen_ns, ["ethtool", "-K", link.gen_if, "gro", "on"])
        return link

    def _mtu_args(self) -> list[str]:
        return ["mtu", str(self.mtu)] if self.mtu else []

    def namespaces_to_remove(self) -> list[str]:
        return [self.dut_ns] + [f"{self._tag}-h{i}" for i in range(self.hosts)] + \
            ([self.gen_ns] if self.generator else [])

    @property
    def namespaces(self) -> list[str]:
        return [self.dut_ns] + [h.ns for h in self.host_list] + ([self.gen_ns] if self.generator else [])

    @property
    def dut_ifaces(self) -> list[str]:
        return [h.dut_if for h in self.host_list]

    def host(self, i: int) -> Host:
        return self.host_list[i]

    def host_settings(self) -> dict[str, dict]:
        """Each host's own interface as its owner set it: link attributes (MTU, queues, XDP, GRO and GSO limits)
        and every ethtool feature (offloads), to compare before and after an NF ran in front of it."""
        settings = {}
        for h in self.host_list:
            link = json.loads(netns.run(h.ns, ["ip", "-d", "-j", "link", "show", h.iface]).stdout)[0]
            kept = {k: v for k, v in link.items() if k not in ("stats64", "operstate", "linkmode", "flags")}
            features = netns.run(h.ns, ["ethtool", "-k", h.iface]).stdout.splitlines()
            settings[h.ns] = {"link": kept, "features": features}
        return settings

    def router_rules(self) -> str:
        """The router's routes: each host's prefixes out of its port, to its MAC; the DUT's own addresses local."""
        lines = []
        for h in self.host_list:
            lines += [f"route 198.18.{h.index}.0/24 via {h.mac} port {h.index}",
                      f"route 2001:2:0:{h.index}::/64 via {h.mac} port {h.index}",
                      f"local {h.dut_ip}/32", f"local {h.dut_ip6}/128", f"port {h.index} mac {h.dut_mac}"]
        return "\n".join(lines) + "\n"


def _enable_ipv6(ns: str) -> None:
    """netns.create keeps IPv6 off (no chatter in the lab's captures); real hosts have it."""
    netns.run(ns, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=0", "net.ipv6.conf.default.disable_ipv6=0",
                   "net.ipv6.conf.lo.disable_ipv6=0"])

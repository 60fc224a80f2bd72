"""The acl with connection state against Linux's conntrack, and real applications through a stateful acl.

Differential: one stateful ruleset ("answers to what the inside opened, nothing else") as an acl between two ports
and as an nftables chain with conntrack on a bridge of the same ports (python/xnf/lab/netfilter.py). A script of
frames goes through both in the same order, each direction by its own port: TCP handshakes, data, closes, RSTs,
half-open and out-of-window segments, invalid flags, UDP, ICMP echo, ICMP errors about tracked and untracked flows,
IPv6, neighbour discovery, idle expiry. Each frame is followed by a fence (a non-IP frame both forward) and what
came out before the fence is what passed. Both must pass exactly what the script says, frame by frame."""

from __future__ import annotations

import struct
import time
from dataclasses import dataclass

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, UDPerror
from scapy.layers.inet6 import ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NS, IPv6
from scapy.layers.l2 import Ether

from xnf.errors import XnfError
from xnf import control
from xnf.lab import apps, netfilter, paths
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology
from test_real_traffic import MODES as EVERY_MODE

MODES = paths.options_by_key("xdp", "afxdp", "hybrid", "tc")
MARK = b"xnfct"
FENCE_TYPE = 0x88B5          # IEEE's local experimental EtherType: not IP, so both forward it untouched
INSIDE, OUTSIDE = 0, 1       # the port a frame enters by
A, B, ROUTER = "10.1.0.5", "198.51.100.7", "198.51.100.254"
A6, B6 = "2001:db8:1::5", "2001:db8:2::7"

STATEFUL_RULES = """\
10 allow state established,related
20 drop state invalid
30 allow from 10.1.0.0/16 state new
31 allow from 2001:db8:1::/48 state new
40 allow icmpv6 state untracked
default drop
"""


@dataclass(frozen=True)
class Step:
    enters: int      # INSIDE or OUTSIDE
    frame: object    # scapy layers from IP up
    passes: bool
    why: str


def tcp(enters: int, sport: int, dport: int, flags: str, seq: int = 0, ack: int = 0, v6: bool = False):
    src, dst = ((A6, B6) if v6 else (A, B))[::1 if enters == INSIDE else -1]
    return (IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)) / TCP(sport=sport, dport=dport, flags=flags,
                                                                            seq=seq, ack=ack)


def udp(enters: int, sport: int, dport: int):
    src, dst = (A, B) if enters == INSIDE else (B, A)
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport)


def port_unreachable(src: str, about_sport: int, about_dport: int, code: int = 3, kind: int = 3):
    """An ICMP error from src to A about a UDP frame A sent to B."""
    return IP(src=src, dst=A) / ICMP(type=kind, code=code) / IPerror(src=A, dst=B) / UDPerror(sport=about_sport,
                                                                                               dport=about_dport)


def handshake(sport: int, dport: int, v6: bool = False) -> list[Step]:
    return [Step(INSIDE, tcp(INSIDE, sport, dport, "S", 1000, v6=v6), True, "the inside opens"),
            Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "SA", 5000, 1001, v6=v6), True, "the answer"),
            Step(INSIDE, tcp(INSIDE, sport, dport, "A", 1001, 5001, v6=v6), True, "the handshake's last ACK")]


def script() -> list[Step]:
    s = handshake(40001, 80) + [
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40001, "PA", 5001, 1001), True, "data back"),
        Step(INSIDE, tcp(INSIDE, 40001, 80, "FA", 1001, 5101), True, "the inside closes"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40001, "FA", 5101, 1002), True, "the outside closes"),
        Step(INSIDE, tcp(INSIDE, 40001, 80, "A", 1002, 5102), True, "the last ACK"),
        Step(OUTSIDE, tcp(OUTSIDE, 5555, 22, "S"), False, "a SYN from outside: new, not inside"),
        Step(OUTSIDE, tcp(OUTSIDE, 5556, 23, "SA", 1, 1), False, "a SYN/ACK nobody asked for: invalid"),
        Step(OUTSIDE, tcp(OUTSIDE, 5557, 24, "A", 1, 1), False, "an ACK scan: picked up as new, not inside"),
        Step(OUTSIDE, tcp(OUTSIDE, 5558, 25, "R", 1), False, "a RST of no connection: invalid"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "S", 1000), True, "a second connection opens"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "A", 1001, 1), False, "an ACK before the answer: invalid"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "SA", 7000, 1001), True, "the answer, half-open till now"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "A", 1001, 7001), True, "established"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "RA", 7001, 1001), True, "the server resets it"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "S", 90000), True, "the same ports opened again after the reset"),
        Step(INSIDE, tcp(INSIDE, 40003, 80, "SF", 1000), False, "SYN and FIN together: invalid"),
        Step(INSIDE, tcp(INSIDE, 40003, 80, "", 1000), False, "no flags: invalid"),
        Step(INSIDE, udp(INSIDE, 5353, 53), True, "a UDP query"),
        Step(OUTSIDE, udp(OUTSIDE, 53, 5353), True, "its answer"),
        Step(OUTSIDE, udp(OUTSIDE, 54, 5353), False, "another outside port to the same inside one: new"),
        Step(INSIDE, IP(src=A, dst=B) / ICMP(type=8, id=77, seq=1), True, "an echo request"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=0, id=77, seq=1), True, "its reply"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=0, id=78, seq=1), False, "a reply to no request: invalid"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=8, id=79, seq=1), False, "a request from outside: new"),
        Step(INSIDE, udp(INSIDE, 5354, 33434), True, "a probe"),
        Step(OUTSIDE, port_unreachable(B, 5354, 33434), True, "port unreachable about it: related"),
        Step(OUTSIDE, port_unreachable(ROUTER, 5355, 33435, code=0, kind=11), False,
             "time exceeded about nothing sent: invalid"),
        Step(OUTSIDE, port_unreachable(ROUTER, 5353, 53, code=0, kind=11), True,
             "time exceeded about the UDP query: related"),
    ] + handshake(40004, 443) + [
        Step(OUTSIDE, tcp(OUTSIDE, 443, 40004, "PA", 900000000, 1001), True,
             "far out of the window: passed, as netfilter with be_liberal does"),
    ] + handshake(40005, 80, v6=True) + [
        Step(OUTSIDE, tcp(OUTSIDE, 6000, 22, "S", v6=True), False, "an IPv6 SYN from outside"),
        Step(INSIDE, IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(id=5, seq=1), True, "an IPv6 echo request"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6EchoReply(id=5, seq=1), True, "its reply"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6EchoReply(id=6, seq=1), False, "an IPv6 reply to nothing"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6, hlim=255) / ICMPv6ND_NS(tgt=A6), True,
             "neighbour discovery: untracked, allowed by its rule"),
    ]
    return s


class Wire:
    """Frames into one port and out of the other, one at a time, each followed by a fence."""

    def __init__(self, t: Topology):
        self.t = t
        self.ports = [PacketPort(t.gen_ns, link.gen_if) for link in t.links[:2]]
        self.fences = 0

    def passes(self, enters: int, payload, number: int) -> bool:
        sender, receiver = self.t.links[enters], self.t.links[1 - enters]
        frame = bytes(Ether(src=sender.gen_mac, dst=receiver.gen_mac) / payload / (MARK + struct.pack("!I", number)))
        self.fences += 1
        fence_id = struct.pack("!I", self.fences)
        fence = bytes(Ether(src=sender.gen_mac, dst=receiver.gen_mac, type=FENCE_TYPE) / (b"fence" + fence_id))
        self.ports[enters].send([frame, fence])
        got = self.ports[1 - enters].receive_until(lambda f: f[12:14] == b"\x88\xb5" and f[19:23] == fence_id)
        return any(MARK + struct.pack("!I", number) in f for f in got)

    def run(self, steps: list[Step]) -> list[bool]:
        return [self.passes(s.enters, s.frame, i) for i, s in enumerate(steps)]

    def close(self) -> None:
        for port in self.ports:
            port.close()


def differences(steps: list[Step], passed: list[bool]) -> list[str]:
    return [f"step {i} ({s.why}): {'passed' if p else 'dropped'}" for i, (s, p) in enumerate(zip(steps, passed))
            if p != s.passes]


def through(t: Topology, steps: list[Step]) -> list[bool]:
    wire = Wire(t)
    try:
        return wire.run(steps)
    finally:
        wire.close()


def test_nftables_with_conntrack_passes_what_the_script_says():
    """The script is netfilter's behaviour: checked against Linux itself, so the acl is held to Linux, not to us."""
    steps = script()
    with Topology("two-port") as t:
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, STATEFUL_RULES)
        assert differences(steps, through(t, steps)) == []


@pytest.mark.parametrize("mode", MODES)
def test_the_stateful_acl_passes_what_conntrack_passes(mode, rules_file, two_port):
    steps = script()
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(STATEFUL_RULES), extra=extra)
    assert differences(steps, through(two_port, steps)) == []
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["ct_new"] > 0 and counters["ct_full"] == 0
    assert nf.stop() == 0


EXPIRY_RULES = STATEFUL_RULES + "timeout udp 4\ntimeout udp_stream 4\n"


def expiry_steps() -> tuple[list[Step], list[Step]]:
    before = [Step(INSIDE, udp(INSIDE, 7000, 7000), True, "a UDP flow opens"),
              Step(OUTSIDE, udp(OUTSIDE, 7000, 7000), True, "answered within the idle time")]
    after = [Step(OUTSIDE, udp(OUTSIDE, 7000, 7000), False, "answered after the idle time: new, from outside")]
    return before, after


def expiry(t: Topology) -> list[str]:
    before, after = expiry_steps()
    wire = Wire(t)
    try:
        passed = wire.run(before)
        time.sleep(4 + 1.5)   # past the idle time: an entry only gets more over with time, so this cannot flake
        return differences(before, passed) + differences(after, wire.run(after))
    finally:
        wire.close()


def test_an_idle_flow_is_over_in_nftables():
    with Topology("two-port") as t:
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, EXPIRY_RULES)
        assert expiry(t) == []


@pytest.mark.parametrize("mode", MODES)
def test_an_idle_flow_is_over_in_the_acl(mode, rules_file, two_port):
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(EXPIRY_RULES), extra=extra)
    assert expiry(two_port) == []
    assert "timeout udp 4" in nf.request("rules list")
    assert nf.stop() == 0


def inside_only(inside) -> str:
    """What an edge firewall in front of a host says: answers to what it opened come back, nothing else does."""
    return (f"10 allow state established,related\n20 drop state invalid\n30 allow from {inside.ip} state new\n"
            f"31 allow from {inside.ip6} state new\n40 allow icmpv6 state untracked\ndefault drop\n")


@pytest.mark.parametrize("variant", EVERY_MODE)
def test_real_applications_opened_inside_work_and_an_outside_scan_gets_nothing(variant, rules_file):
    mode, extra = EVERY_MODE[variant]
    with HostsTopology(kind="wire", hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        web = apps.WebServer(t, outside.ns, outside.ip)
        inside_web = apps.WebServer(t, inside.ns, inside.ip, port=apps.HTTP_PORT + 1)
        nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(inside_only(inside)), extra=extra)
        assert apps.ping(inside.ns, outside.ip, 10) == 10 and apps.ping(inside.ns, outside.ip6, 10) == 10
        assert apps.download_sha256(inside.ns, web.url) == web.sha256
        assert apps.iperf3(t, inside.ns, outside.ns, outside.ip).received_bytes > 0
        assert apps.iperf3(t, inside.ns, outside.ns, outside.ip6, reverse=True).received_bytes > 0
        assert apps.traceroute_hops(inside.ns, outside.ip) == [outside.ip], "port unreachable is related"
        assert apps.ping(outside.ns, inside.ip, 5) == 0 and apps.ping(outside.ns, inside.ip6, 5) == 0
        ports = [22, 80, apps.HTTP_PORT + 1, 443, 5201, 8080]
        assert set(apps.tcp_scan(outside.ns, inside.ip, ports).values()) == {"filtered"}
        assert set(apps.tcp_scan(outside.ns, inside.ip6, ports).values()) == {"filtered"}
        with pytest.raises(XnfError, match="curl"):
            apps.download_sha256(outside.ns, inside_web.url, timeout_s=2)
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["ct_new"] > 0 and counters["default_drop"] > 0
        assert nf.stop() == 0

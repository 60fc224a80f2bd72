"""The acl against Linux's netfilter, and with real applications.

Differential: the same rules as an acl between two ports and as nftables rules on a bridge of the same ports
(python/xnf/lab/netfilter.py), the same frames sent into port 0 (the fixtures' edges and a few hundred random
ones over random rules): the frames that come out of port 1 are the same, in every mode. Then changes while it
runs, real applications through it as a bump in the wire, and what it says of rules it cannot take."""

from __future__ import annotations

import ipaddress
import random
import struct
import subprocess

import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import ICMPv6EchoRequest, IPv6
from scapy.layers.l2 import Dot1AD, Dot1Q, Ether

from xnf import build
from xnf.build import REPO_ROOT
from xnf.errors import XnfError
from xnf.lab import apps, netfilter, paths
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology

MODES = paths.Selection(select=paths.representative)
MARK = b"xnfacl"
FIXED_RULES = (REPO_ROOT / "nfs" / "acl" / "example.rules").read_text()
PORT_CHOICES = [("tcp", "dport 22"), ("udp", "dport 53"), ("tcp", "dport 20-23"), ("udp", "dport 1024-65535"),
                ("tcp", "sport 443"), (None, "")]


def random_rules(rng: random.Random, count: int) -> str:
    """Rules over 10.0.0.0/8 of a few shapes, as an operator's list has, numbered after the fixed ones."""
    lines = []
    for i in range(count):
        proto, ports = rng.choice(PORT_CHOICES)
        words = [str(1000 + 10 * i), rng.choice(["allow", "drop"])] + ([proto] if proto else [])
        for side, lengths in (("from", (0, 16, 24)), ("to", (0, 24))):
            length = rng.choice(lengths)
            if length:
                net = ipaddress.ip_network(f"10.{rng.randrange(4)}.{rng.randrange(4)}.0/{length}", strict=False)
                words += [side, str(net)]
        lines.append(" ".join(words + ([ports] if ports else [])))
    return "\n".join(lines) + "\n"


def tagged(n: int, frame) -> bytes:
    return bytes(frame / (MARK + struct.pack("!I", n)))


def edge_frames(dst_mac: str) -> list:
    e = Ether(dst=dst_mac)
    return [
        e / IP(src="10.1.2.9", dst="192.0.2.1") / TCP(sport=40000, dport=22, flags="A"),
        e / IP(src="10.1.3.9", dst="192.0.2.1") / TCP(sport=40000, dport=22, flags="A"),
        e / IP(src="10.1.3.9", dst="192.0.2.1") / TCP(sport=40000, dport=20, flags="A"),
        e / IP(src="10.1.3.9", dst="192.0.2.1") / TCP(sport=40000, dport=24, flags="A"),
        e / IP(src="10.2.0.0", dst="192.0.2.1") / TCP(sport=1, dport=21, flags="A"),
        e / IP(src="10.9.9.9", dst="192.0.2.53") / UDP(sport=50000, dport=53),
        e / IP(src="10.9.9.9", dst="192.0.2.54") / UDP(sport=53, dport=1023),
        e / IP(src="10.9.9.9", dst="192.0.2.54") / UDP(sport=53, dport=65535),
        e / IP(src="203.0.113.1", dst="192.0.2.1") / TCP(sport=1000, dport=8080, flags="S"),
        e / IP(src="203.0.113.1", dst="192.0.2.1") / TCP(sport=1000, dport=8080, flags="SA"),
        e / IP(src="198.51.100.7", dst="192.0.2.1") / ICMP(),
        e / IP(src="198.51.101.7", dst="192.0.2.1") / ICMP(),
        e / IPv6(src="2001:db8:bad:1::1", dst="2001:db8::1") / UDP(dport=9),
        e / IPv6(src="2001:db8:bae::1", dst="2001:db8::1") / UDP(dport=9),
        e / IPv6(src="2001:db8:1::1", dst="2001:db8::1") / UDP(dport=4000),
        e / IPv6(src="2001:db9::1", dst="2001:db8::1") / TCP(sport=443, dport=999, flags="A"),
        e / IPv6(src="2001:db9::1", dst="2001:db8::1") / ICMPv6EchoRequest(),
    ]


def random_frames(rng: random.Random, dst_mac: str, count: int) -> list:
    out = []
    for _ in range(count):
        src = f"10.{rng.randrange(4)}.{rng.randrange(4)}.{rng.randrange(1, 255)}"
        dst = f"10.{rng.randrange(4)}.{rng.randrange(4)}.{rng.randrange(1, 255)}"
        sport, dport = rng.choice([22, 53, 443, 20, 23, 1023, 1024, 40000, 65535]), rng.choice(
            [22, 53, 20, 21, 23, 24, 1023, 1024, 8080, 65535])
        l4 = rng.choice([TCP(sport=sport, dport=dport, flags=rng.choice(["S", "SA", "A"])),
                         UDP(sport=sport, dport=dport), ICMP()])
        out.append(Ether(dst=dst_mac) / IP(src=src, dst=dst) / l4)
    return out


END = MARK + b"end"


def crossed(t: Topology, frames: list[bytes]) -> set[int]:
    """The numbers of the frames sent into port 0 that came out of port 1, read through a last frame that every
    side forwards (not IP: an experimental ether type), which comes out after them. Each leaves with port 0's own
    address as its source: scapy fills in the host's, which is 00:00:00:00:00:00 on a machine without a network (a VM
    guest), and a Linux bridge, nftables' reference here, drops a frame from that address."""
    source = bytes.fromhex(t.links[0].gen_mac.replace(":", ""))
    frames = [f[:6] + source + f[12:] for f in frames]
    last = frames[0][:12] + struct.pack("!H", 0x88B5) + END
    with PacketPort(t.gen_ns, t.links[0].gen_if) as tx, PacketPort(t.gen_ns, t.links[1].gen_if) as rx:
        tx.send(frames + [last])
        got = rx.receive_through(lambda frame: END in frame)
    assert got and END in got[-1], "the last frame, which every side forwards, never came out"
    return {struct.unpack("!I", f[f.index(MARK) + len(MARK):][:4])[0] for f in got if MARK in f and END not in f}


@pytest.fixture(scope="module")
def case():
    """(rules, frames): the fixed rules with 150 random ones, and the edge frames with 300 random ones."""
    rules = FIXED_RULES + random_rules(random.Random(20261126), 150)
    return rules, lambda dst_mac: [tagged(i, f) for i, f in enumerate(
        edge_frames(dst_mac) + random_frames(random.Random(20261127), dst_mac, 300))]


def netfilter_verdicts(rules: str, make_frames) -> set[int]:
    with Topology("two-port") as t:
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, rules)
        return crossed(t, make_frames(t.links[1].gen_mac))


@pytest.mark.parametrize("default", ["allow", "drop"])
@pytest.mark.parametrize("mode", MODES)
def test_the_acl_passes_what_nftables_passes(mode, default, case, rules_file, two_port):
    rules, make_frames = case
    rules += f"default {default}\n"
    expected = netfilter_verdicts(rules, make_frames)
    assert 20 < len(expected) < 317, "the rules must pass some frames and drop others"
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(rules), extra=extra)
    assert crossed(two_port, make_frames(two_port.links[1].gen_mac)) == expected
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", MODES)
def test_a_change_is_in_force_when_the_command_returns(mode, rules_file, two_port):
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file("10 allow udp dport 9\n"), extra=extra)
    frame = [tagged(0, Ether(dst=two_port.links[1].gen_mac) / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=9))]
    assert crossed(two_port, frame) == {0}
    nf.request("rules add 5 drop udp from 10.0.0.0/24")
    assert crossed(two_port, frame) == set()
    assert "5 drop udp from 10.0.0.0/24" in nf.request("rules list")
    nf.request("rules del 5 drop udp from 10.0.0.0/24")
    assert crossed(two_port, frame) == {0}
    assert nf.stop() == 0


VLAN_RULES = """10 drop vlan 10
20 allow vlan 20.30
30 drop vlan 20
40 allow udp dport 9 vlan 40
50 drop vlan 40
default allow
"""
Q, AD = 0x8100, 0x88A8
# (the tags, outermost first, as (type, id); the UDP destination port): passes
VLAN_CASES = {((), 9): True, (((Q, 10),), 9): False, (((Q, 11),), 9): True, (((AD, 20), (Q, 30)), 9): True,
              (((AD, 20), (Q, 31)), 9): True, (((Q, 20),), 9): False, (((Q, 40),), 9): True,
              (((Q, 40),), 10): False, (((Q, 10), (Q, 20)), 9): False, (((AD, 10), (Q, 20)), 9): True,
              (((AD, 10),), 9): True, (((Q, 30),), 9): True, (((Q, 20), (Q, 30)), 9): False}


def vlan_frame(dst_mac: str, tags, dport: int):
    """A UDP frame from 10.0.0.1 port 53 (scapy's default) to 10.0.0.2 with the tags (scapy's Dot1AD is 802.1ad,
    Dot1Q 802.1Q: each sets the type before it)."""
    frame = Ether(dst=dst_mac)
    for kind, vid in tags:
        frame = frame / (Dot1AD(vlan=vid) if kind == AD else Dot1Q(vlan=vid))
    return frame / IP(src="10.0.0.1", dst="10.0.0.2") / UDP(dport=dport)


@pytest.mark.parametrize("mode", MODES)
def test_rules_match_an_802_1q_tag_or_a_qinq_pair(mode, rules_file, two_port):
    """vlan ID: an outermost 802.1Q tag (as nftables' vlan id); OUTER.INNER: an 802.1ad tag, then an 802.1Q one.
    At tc the kernel has moved the outer tag into the skb: the rules see it all the same."""
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(VLAN_RULES), extra=extra)
    cases = list(VLAN_CASES)
    frames = [tagged(i, vlan_frame(two_port.links[1].gen_mac, *case)) for i, case in enumerate(cases)]
    assert crossed(two_port, frames) == {i for i, case in enumerate(cases) if VLAN_CASES[case]}
    assert "20 allow vlan 20.30" in nf.request("rules list")
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", MODES)
def test_the_firewall_takes_a_rule_of_a_vlan_before_the_same_rule_of_none(mode, rules_file, two_port):
    """The firewall's exact rules may name an 802.1Q VLAN too (at tc from the tag the kernel moved into the skb)."""
    name, extra = MODES[mode]
    rules = ("allow udp 10.0.0.1 53 10.0.0.2 9 vlan 40\ndrop udp 10.0.0.1 53 10.0.0.2 9\n"
             "drop udp 10.0.0.1 53 10.0.0.2 10 vlan 50\n")
    nf = NfInstance.start(two_port, "firewall", name, two_port.dut_ifaces, rules=rules_file(rules), extra=extra)
    cases = {(((Q, 40),), 9): True, ((), 9): False, (((Q, 41),), 9): False, (((Q, 50),), 10): False,
             (((Q, 51),), 10): True, ((), 10): True, (((AD, 50), (Q, 7)), 10): True}
    frames = [tagged(i, vlan_frame(two_port.links[1].gen_mac, *case)) for i, case in enumerate(cases)]
    assert crossed(two_port, frames) == {i for i, case in enumerate(cases) if cases[case]}
    assert "allow udp 10.0.0.1 53 10.0.0.2 9 vlan 40" in nf.request("rules list")
    assert nf.stop() == 0


@pytest.mark.parametrize("variant", MODES)
def test_real_applications_through_the_acl_and_a_blocked_port(variant, rules_file):
    """ping over IPv4 and IPv6, a download, iperf3 over IPv6, and a blocked port, in every way xnf carries frames."""
    mode, extra = MODES[variant]
    with HostsTopology(kind="wire", hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        blocked = apps.WebServer(t, h1.ns, h1.ip, port=apps.HTTP_PORT + 7)
        web = apps.WebServer(t, h1.ns, h1.ip)
        rules = f"10 drop tcp to {h1.ip} dport {apps.HTTP_PORT + 7}\n20 allow icmp\n30 allow icmpv6\ndefault allow\n"
        nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra)
        assert apps.ping(h0.ns, h1.ip, 10) == 10 and apps.ping(h0.ns, h1.ip6, 10) == 10
        assert apps.download_sha256(h0.ns, web.url) == web.sha256
        tcp = apps.iperf3(t, h0.ns, h1.ns, h1.ip6)
        assert tcp.received_bytes > 0
        with pytest.raises(XnfError, match="curl"):
            apps.download_sha256(h0.ns, blocked.url, timeout_s=2)
        assert nf.stats()["drop"]["packets"] > 0
        assert nf.stop() == 0


def test_rules_it_cannot_take_are_refused_with_the_line_and_why(tmp_path):
    cases = {
        "10 drop udp from 10.0.0.0/33\n": "with a length of 0-32",
        "10 drop from 10.0.0.0/" + "0" * 60 + "32\n": "too long for an IPv4 or IPv6 prefix",
        "10 drop from 10.0.0.1/8\n": "host bits set",
        "10 drop tcp dport 1-" + "0" * 60 + "65536\n": "range LOW-HIGH",
        "10 drop tcp dport +80\n": "range LOW-HIGH",
        "10 drop tcp flags " + "syn," * 40 + "!ack\n": "named twice",
        "10 drop tcp flags syn,!syn\n": "named twice",
        "10 drop from 10.0.0.0/8 to 2001:db8::/32\n": "one family",
        "10 drop dport 22\n": "ports need the protocol tcp or udp",
        "10 drop udp flags syn\n": "flags need the protocol tcp",
        "10 drop tcp dport 30-20\n": "range LOW-HIGH",
        "drop tcp dport 22\n": "'drop' is not a sequence number",
        "10 reject tcp\n": "use allow or drop",
        "10 drop vlan 4095\n": "not a VLAN id",
        "10 drop vlan 0\n": "not a VLAN id",
        "10 drop vlan 10.20.30\n": "not a VLAN id",
        "10 drop vlan 10. \n": "not a VLAN id",
        "10 drop vlan 10 vlan 11\n": "'vlan' is given twice",
        "10 drop tcp dport 22 dport 80\n": "'dport' is given twice",
        "10 drop from 10.0.0.1 from 10.0.0.2\n": "'from' is given twice",
        "10 drop to 10.0.0.1 to 10.0.0.2\n": "'to' is given twice",
        "10 drop udp sport 53 sport 54\n": "'sport' is given twice",
        "10 drop tcp flags syn flags fin\n": "'flags' is given twice",
        "10 drop state new state invalid\n": "'state' is given twice",
        "10 drop state new,bogus\n": "unknown connection state",
        "10 drop state new,new\n": "named twice",
        "timeout udp 0\n": "'0' is not a timeout in seconds (1 up to a year)",
        "timeout tcp_forever 30\n": "unknown idle time",
    }
    for text, reason in cases.items():
        path = tmp_path / "acl.txt"
        path.write_text(text)
        checked = subprocess.run([str(build.nf_binary("acl")), "check-rules", str(path)], capture_output=True,
                                 text=True)
        assert checked.returncode == 1 and f"{path}:1: " in checked.stderr and reason in checked.stderr, \
            (text, checked.stderr)

"""The firewall's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

from nf_fixtures import CLIENT_IP, CLIENT_IP6, CLIENT_MAC, PORT_MAC, SERVER_IP, SERVER_IP6, Fixture, check

RULES = f"""\
drop udp {CLIENT_IP} 1111 {SERVER_IP} 53
drop tcp {CLIENT_IP6} 4000 {SERVER_IP6} 80
drop icmp {CLIENT_IP} {SERVER_IP}
allow udp {CLIENT_IP} 2222 {SERVER_IP} 53
"""


def eth():
    return Ether(src=CLIENT_MAC, dst=PORT_MAC)


UDP_MATCH = bytes(eth() / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP(sport=1111, dport=53))
UDP_MISS = bytes(eth() / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP(sport=1111, dport=54))
UDP_ALLOWED = bytes(eth() / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP(sport=2222, dport=53))
TCP6_MATCH = bytes(eth() / IPv6(src=CLIENT_IP6, dst=SERVER_IP6) / TCP(sport=4000, dport=80))
ICMP_MATCH = bytes(eth() / IP(src=CLIENT_IP, dst=SERVER_IP) / ICMP())
ARP_REQUEST = bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=SERVER_IP))
LATER_FRAGMENT = bytes(eth() / IP(src=CLIENT_IP, dst=SERVER_IP, proto=17, frag=100) / b"no ports in here")


def test_the_acl_with_the_default_allow(tmp_path):
    check("firewall", [
        Fixture("udp on an acl line: dropped", UDP_MATCH, "drop"),
        Fixture("one port off: forwarded unchanged (back out of the only port)", UDP_MISS, "tx"),
        Fixture("an allow line", UDP_ALLOWED, "tx"),
        Fixture("tcp over ipv6 on an acl line", TCP6_MATCH, "drop"),
        Fixture("icmp on an acl line", ICMP_MATCH, "drop"),
        Fixture("arp: non-IP keeps the link working", ARP_REQUEST, "tx"),
        Fixture("a later fragment has no ports to match", LATER_FRAGMENT, "tx"),
        Fixture("an IPv4 header cut short", UDP_MATCH[:14 + 19], "drop", malformed=True),
    ], tmp_path, rules=RULES)


def test_the_default_drop_spares_the_allow_lines(tmp_path):
    check("firewall", [
        Fixture("a miss meets the default", UDP_MISS, "drop"),
        Fixture("an allow line still passes", UDP_ALLOWED, "tx"),
    ], tmp_path, rules=RULES + "default drop\n")


def test_with_two_ports_a_frame_goes_out_of_the_other(tmp_path):
    check("firewall", [
        Fixture("a miss goes out of port 1", UDP_MISS, "redirect", port=1),
        Fixture("a match is still dropped", UDP_MATCH, "drop"),
    ], tmp_path, rules=RULES, ports=2)


def test_rules_of_a_vlan_come_first_for_its_frames(tmp_path):
    """A rule may name an 802.1Q VLAN: only frames with that outermost tag match it, and for them it comes before
    the same rule of no VLAN; an 802.1ad outer tag is no 802.1Q VLAN."""
    def udp(sport, *tags):
        frame = eth()
        for layer in tags:
            frame = frame / layer
        return bytes(frame / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP(sport=sport, dport=53))

    rules = (f"drop udp {CLIENT_IP} 3333 {SERVER_IP} 53 vlan 10\nallow udp {CLIENT_IP} 4444 {SERVER_IP} 53 vlan 20\n"
             f"drop udp {CLIENT_IP} 4444 {SERVER_IP} 53\n")
    check("firewall", [
        Fixture("untagged, its rule names a VLAN: default", udp(3333), "tx"),
        Fixture("in VLAN 10: its rule", udp(3333, Dot1Q(vlan=10)), "drop"),
        Fixture("in VLAN 11: not its rule", udp(3333, Dot1Q(vlan=11)), "tx"),
        Fixture("in VLAN 20: its VLAN's allow before the drop of none", udp(4444, Dot1Q(vlan=20)), "tx"),
        Fixture("untagged: the drop of no VLAN", udp(4444), "drop"),
        Fixture("in VLAN 30: the drop of no VLAN", udp(4444, Dot1Q(vlan=30)), "drop"),
        Fixture("an S-tag of 10 (802.1ad) then a C-tag: not VLAN 10", udp(3333, Dot1AD(vlan=10), Dot1Q(vlan=5)),
                "tx"),
    ], tmp_path, rules=rules)

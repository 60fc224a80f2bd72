"""The router's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import ICMPv6ND_NA, ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_IP6, CLIENT_MAC, NEXT_HOP_MAC, PORT_MAC, SERVER_IP, Fixture, check

OTHER_HOP_MAC, PORT1_MAC = "02:aa:00:00:00:01", "02:00:00:00:01:02"
ROUTES = f"""\
route 198.18.1.0/24 via {NEXT_HOP_MAC} port 0
route 198.18.1.128/25 via {OTHER_HOP_MAC} port 0
route 198.18.2.0/24 via {NEXT_HOP_MAC} port 1
route 2001:2:0:1::/64 via {NEXT_HOP_MAC} port 0
local {SERVER_IP}/32
port 1 mac {PORT1_MAC}
"""


def ip4(dst: str, ttl: int = 64, src_mac: str = CLIENT_MAC, dst_mac: str = PORT_MAC) -> bytes:
    return bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=CLIENT_IP, dst=dst, ttl=ttl) / UDP(sport=1, dport=2))


def ip6(dst: str, hlim: int = 64, src_mac: str = CLIENT_MAC, dst_mac: str = PORT_MAC) -> bytes:
    return bytes(Ether(src=src_mac, dst=dst_mac) / IPv6(src=CLIENT_IP6, dst=dst, hlim=hlim) / UDP(sport=1, dport=2))


def test_routes(tmp_path):
    # Forwarded: one hop less (the IPv4 checksum rebuilt by scapy must equal the router's incremental update),
    # to the next hop, from the MAC it was sent to (port 0 has no MAC line) or from port 1's own.
    check("router", [
        Fixture("a /24 route, back out of the port it came in", ip4("198.18.1.5"), "tx",
                ip4("198.18.1.5", ttl=63, src_mac=PORT_MAC, dst_mac=NEXT_HOP_MAC)),
        Fixture("the longer prefix wins", ip4("198.18.1.200"), "tx",
                ip4("198.18.1.200", ttl=63, src_mac=PORT_MAC, dst_mac=OTHER_HOP_MAC)),
        Fixture("out of the other port, from its own MAC", ip4("198.18.2.9"), "redirect",
                ip4("198.18.2.9", ttl=63, src_mac=PORT1_MAC, dst_mac=NEXT_HOP_MAC), port=1),
        Fixture("ipv6: the hop limit goes down", ip6("2001:2:0:1::7"), "tx",
                ip6("2001:2:0:1::7", hlim=63, src_mac=PORT_MAC, dst_mac=NEXT_HOP_MAC)),
        Fixture("ttl 1 expires here", ip4("198.18.1.5", ttl=1), "drop"),
        Fixture("no route", ip4("10.0.0.1"), "drop"),
        Fixture("a local address goes to this host's stack, untouched", ip4(SERVER_IP), "pass"),
        Fixture("arp goes to the stack", bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=SERVER_IP)),
                "pass"),
        Fixture("an IPv4 header that claims more than the frame", ip4("198.18.1.5")[:30], "drop", malformed=True),
    ], tmp_path, rules=ROUTES, ports=2)


def test_what_belongs_to_the_link_goes_to_the_stack(tmp_path):
    """Neighbour discovery, link-local and multicast destinations are this host's, never routed: a route that
    would cover them (here ::/0 and 0.0.0.0/0) changes nothing."""
    solicitation = bytes(Ether(src=CLIENT_MAC, dst="33:33:ff:00:00:02") / IPv6(src=CLIENT_IP6, dst="ff02::1:ff00:2",
                         hlim=255) / ICMPv6ND_NS(tgt="2001:2::2"))
    check("router", [
        Fixture("a neighbour solicitation for this host", solicitation, "pass"),
        Fixture("a neighbour advertisement to a global address", bytes(
            Ether(src=CLIENT_MAC, dst=PORT_MAC) / IPv6(src=CLIENT_IP6, dst="2001:2:0:9::2", hlim=255)
            / ICMPv6ND_NA(tgt=CLIENT_IP6)), "pass"),
        Fixture("ipv6 link-local", ip6("fe80::2"), "pass"),
        Fixture("ipv6 multicast", ip6("ff05::2"), "pass"),
        Fixture("ipv4 multicast", ip4("224.0.0.251"), "pass"),
        Fixture("ipv4 limited broadcast", ip4("255.255.255.255"), "pass"),
        Fixture("a global ipv6 address is still routed", ip6("2001:2:0:9::1"), "tx",
                ip6("2001:2:0:9::1", hlim=63, src_mac=PORT_MAC, dst_mac=NEXT_HOP_MAC)),
    ], tmp_path, rules=f"route ::/0 via {NEXT_HOP_MAC} port 0\nroute 0.0.0.0/0 via {NEXT_HOP_MAC} port 0\n", ports=2)

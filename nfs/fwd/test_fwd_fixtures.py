"""The container forwarder's logic from the uplink (port 0, where the harness delivers every frame), frame by
frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_IP6, CLIENT_MAC, NEXT_HOP_MAC, PORT_MAC, Fixture, check

C1, C1_MAC, C2_MAC, PINNED_MAC = "198.19.0.2", "02:00:00:01:00:02", "02:00:00:01:01:02", "02:00:00:00:00:99"
C1_IP6 = "2001:2:0:100::2"
RULES = f"""\
uplink via {NEXT_HOP_MAC} from {PORT_MAC}
container {C1} port 1 mac {C1_MAC}
container {C1_IP6} port 1 mac {C1_MAC}
client {PINNED_MAC} port 2 mac {C2_MAC}
"""


def to(dst: str, src_mac: str = CLIENT_MAC, dst_mac: str = PORT_MAC, src: str | None = None) -> bytes:
    ip = IPv6(src=src or CLIENT_IP6, dst=dst) if ":" in dst else IP(src=src or CLIENT_IP, dst=dst)
    return bytes(Ether(src=src_mac, dst=dst_mac) / ip / UDP(sport=1, dport=2))


def test_from_the_uplink(tmp_path):
    check("fwd", [
        Fixture("to a container's address: its port, its MAC", to(C1), "redirect", to(C1, dst_mac=C1_MAC), port=1),
        Fixture("from a pinned client: its container, whatever the address", to(C1, src_mac=PINNED_MAC), "redirect",
                to(C1, src_mac=PINNED_MAC, dst_mac=C2_MAC), port=2),
        Fixture("to no container: the host's stack", to("198.19.9.9"), "pass"),
        Fixture("arp: the host's stack", bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=C1)), "pass"),
        Fixture("to a container's IPv6 address: its port, its MAC", to(C1_IP6), "redirect",
                to(C1_IP6, dst_mac=C1_MAC), port=1),
        Fixture("to no container's IPv6 address: the host's stack", to("2001:2:0:999::1"), "pass"),
        Fixture("a neighbour solicitation: the host's stack", bytes(
            Ether(src=CLIENT_MAC, dst="33:33:ff:00:00:02") / IPv6(src=CLIENT_IP6, dst="ff02::1:ff00:2", hlim=255)
            / ICMPv6ND_NS(tgt=C1_IP6)), "pass"),
    ], tmp_path, rules=RULES, ports=3)

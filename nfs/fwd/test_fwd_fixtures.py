"""The container forwarder's logic from the uplink (port 0, where the harness delivers every frame), frame by
frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

from differential import BUILDS_OF_MOVING_NFS
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


def test_a_vlan_bridged_to_a_container_port(tmp_path):
    """vlan 100 port 2: the uplink's frames of VLAN 100 go to port 2 with the tag taken off, whatever they are (ARP
    too), their MACs as they were; a frame of another VLAN goes by its address, tag and all."""
    def tagged(vid, layers):
        return bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / Dot1Q(vlan=vid) / layers)

    def untagged(layers):
        return bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / layers)

    udp = IP(src=CLIENT_IP, dst="198.19.100.2") / UDP(sport=1, dport=2)
    arp = ARP(psrc="198.19.100.1", pdst="198.19.100.2")
    to_c1 = IP(src=CLIENT_IP, dst=C1) / UDP(sport=1, dport=2)
    check("fwd", [
        Fixture("VLAN 100: untagged, to port 2", tagged(100, udp), "redirect", untagged(udp), port=2),
        Fixture("VLAN 100's ARP: untagged, to port 2", tagged(100, arp), "redirect", untagged(arp), port=2),
        Fixture("VLAN 101, to a container's address: by its address, tagged still", tagged(101, to_c1), "redirect",
                bytes(Ether(src=CLIENT_MAC, dst=C1_MAC) / Dot1Q(vlan=101) / to_c1), port=1),
        Fixture("an 802.1ad tag of 100 is not VLAN 100", bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / Dot1AD(vlan=100)
                                                              / Dot1Q(vlan=5) / udp), "pass"),
    ], tmp_path, rules=RULES + "vlan 100 port 2\n", ports=3, builds=BUILDS_OF_MOVING_NFS)

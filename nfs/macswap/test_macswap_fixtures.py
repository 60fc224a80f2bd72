"""macswap's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_MAC, PORT_MAC, SERVER_IP, Fixture, check, swap_macs

UDP4 = bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP() / b"payload")
BARE = bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC, type=0x88B5))
ARP_REQUEST = bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=SERVER_IP))

FIXTURES = [
    Fixture("udp: back out, MACs swapped, nothing else touched", UDP4, "tx", swap_macs(UDP4)),
    Fixture("arp: any Ethernet frame is swapped", ARP_REQUEST, "tx", swap_macs(ARP_REQUEST)),
    # Shorter than an Ethernet header it would be malformed, but BPF_PROG_RUN takes nothing under 14 bytes.
    Fixture("a bare Ethernet header", BARE, "tx", swap_macs(BARE)),
]


def test_macswap(tmp_path):
    check("macswap", FIXTURES, tmp_path)

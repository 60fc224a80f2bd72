"""drop's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_MAC, PORT_MAC, SERVER_IP, Fixture, check

FIXTURES = [
    Fixture("udp", bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=SERVER_IP) / UDP()), "drop"),
    Fixture("arp", bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=SERVER_IP)), "drop"),
    Fixture("a bare Ethernet header: drop parses nothing, so nothing is malformed", bytes(14), "drop"),
]


def test_drop(tmp_path):
    check("drop", FIXTURES, tmp_path)

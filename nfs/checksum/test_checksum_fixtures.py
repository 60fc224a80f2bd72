"""The checksum NF's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py)."""

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_IP6, CLIENT_MAC, PORT_MAC, SERVER_IP, SERVER_IP6, Fixture, check, swap_macs

PAYLOAD = bytes(range(256)) * 3


def udp4(checksum: int | None = None) -> bytes:
    return bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=SERVER_IP) /
                 UDP(sport=1, dport=2, chksum=checksum) / PAYLOAD)


def tcp6(checksum: int | None = None) -> bytes:
    return bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IPv6(src=CLIENT_IP6, dst=SERVER_IP6) /
                 TCP(sport=1, dport=2, chksum=checksum) / PAYLOAD)


def test_computed_checksums_are_right(tmp_path):
    check("checksum", [
        Fixture("a correct udp checksum is kept", udp4(), "tx", swap_macs(udp4())),
        Fixture("a wrong one is corrected", udp4(checksum=0x1234), "tx", swap_macs(udp4())),
        Fixture("tcp over ipv6, corrected", tcp6(checksum=0x1234), "tx", swap_macs(tcp6())),
        Fixture("arp is sent on untouched but for the MACs",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / ARP(pdst=SERVER_IP)), "tx",
                swap_macs(bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / ARP(pdst=SERVER_IP)))),
    ], tmp_path, rules="repeat 2\n")


def test_repeat_0_only_swaps(tmp_path):
    check("checksum", [
        Fixture("a wrong checksum stays wrong: nothing is computed", udp4(checksum=0x1234), "tx",
                swap_macs(udp4(checksum=0x1234))),
    ], tmp_path)

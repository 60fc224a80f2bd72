"""Packet builders for the tests (scapy), addressed for a topology link."""

from __future__ import annotations

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from xnf.lab.topology import Link


def udp4(link: Link, sport: int, dport: int, seq: int = 0, dst: str | None = None, size: int = 64) -> bytes:
    """A UDP/IPv4 frame from the generator to the DUT; seq is carried in the payload."""
    payload = seq.to_bytes(8, "big")
    frame = (Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=dst or link.dut_ip)
             / UDP(sport=sport, dport=dport) / payload)
    raw = bytes(frame)
    return raw + bytes(max(0, size - 4 - len(raw)))


def tcp6(link: Link, sport: int, dport: int, seq: int = 0) -> bytes:
    frame = (Ether(src=link.gen_mac, dst=link.dut_mac) / IPv6(src=link.gen_ip6, dst=link.dut_ip6)
             / TCP(sport=sport, dport=dport, seq=seq))
    return bytes(frame)


def icmp4(link: Link, seq: int = 0) -> bytes:
    return bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=link.dut_ip) / ICMP(seq=seq))


def arp_request(link: Link) -> bytes:
    frame = Ether(src=link.gen_mac, dst="ff:ff:ff:ff:ff:ff") / ARP(hwsrc=link.gen_mac, psrc=link.gen_ip,
                                                                   pdst=link.dut_ip)
    return bytes(frame)


def swap_macs(frame: bytes) -> bytes:
    return frame[6:12] + frame[0:6] + frame[12:]

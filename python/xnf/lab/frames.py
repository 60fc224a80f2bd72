"""Frames the lab builds by hand, where xnf-gen is not the sender: the demo's exchanges, the programs timed
with BPF_PROG_RUN."""

from __future__ import annotations

import socket
import struct

from xnf.lab.topology import Link


def _ip_checksum(header: bytes) -> int:
    total = sum(struct.unpack(f"!{len(header) // 2}H", header))
    total = (total & 0xFFFF) + (total >> 16)
    return ~((total & 0xFFFF) + (total >> 16)) & 0xFFFF


def udp_frame(link: Link, sport: int, dport: int, payload: bytes = b"xnf-demo") -> bytes:
    """A UDP/IPv4 frame from the link's generator side to the DUT (checksum 0 is valid for UDP over IPv4)."""
    udp = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0) + payload
    header = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(udp), 0, 0, 64, socket.IPPROTO_UDP, 0,
                         socket.inet_aton(link.gen_ip), socket.inet_aton(link.dut_ip))
    header = header[:10] + struct.pack("!H", _ip_checksum(header)) + header[12:]
    eth = bytes.fromhex(link.dut_mac.replace(":", "")) + bytes.fromhex(link.gen_mac.replace(":", "")) + b"\x08\x00"
    return eth + header + udp

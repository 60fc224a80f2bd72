"""The differential corpus: well-formed frames of every header the parser knows, the same
frames broken in every way a header can lie, and seeded random noise."""

from __future__ import annotations

import random

from scapy.contrib.gtp import GTP_U_Header, GTPEchoRequest, GTPPDUSessionContainer
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPOption_RR
from scapy.layers.inet6 import (IPv6, IPv6ExtHdrDestOpt, IPv6ExtHdrFragment, IPv6ExtHdrHopByHop,
                                IPv6ExtHdrRouting, ICMPv6EchoRequest, PadN)
from scapy.layers.l2 import ARP, Dot1AD, Dot1Q, Ether

SRC4, DST4 = "198.18.0.1", "198.18.0.2"
SRC6, DST6 = "2001:2::1", "2001:2::2"
ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
GTPU = dict(sport=2152, dport=2152)
UE4, UE6 = "10.60.0.1", "2001:db8:60::1"


def _tunnelled(inner, teid: int = 100, qfi: int | None = 9):
    """A G-PDU from SRC4 to DST4 (the fuzzed UPF's N3 address), with a PDU Session Container when qfi is given."""
    outer = Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(**GTPU)
    if qfi is None:
        return outer / GTP_U_Header(teid=teid, gtp_type=255) / inner
    return outer / GTP_U_Header(teid=teid, gtp_type=255, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=qfi) / inner


def well_formed() -> list[tuple[str, bytes]]:
    payload = b"xnf-payload-0123456789"
    frames = {
        "udp4": Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=53) / payload,
        "udp4-other-port": Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=54) / payload,
        "tcp4": Ether(**ETH) / IP(src=SRC4, dst=DST4) / TCP(sport=4000, dport=80, flags="S"),
        "tcp4-options": Ether(**ETH) / IP(src=SRC4, dst=DST4) / TCP(sport=4000, dport=80,
                                                                  options=[("MSS", 1460), ("NOP", None), ("WScale", 7)]),
        "icmp4": Ether(**ETH) / IP(src=SRC4, dst=DST4) / ICMP() / payload,
        "ip4-options-udp": Ether(**ETH) / IP(src=SRC4, dst=DST4, options=[IPOption_RR(routers=["1.2.3.4"] * 8)])
                           / UDP(sport=1111, dport=53) / payload,
        "ip4-first-fragment": Ether(**ETH) / IP(src=SRC4, dst=DST4, flags="MF") / UDP(sport=1111, dport=53) / payload,
        "ip4-later-fragment": Ether(**ETH) / IP(src=SRC4, dst=DST4, frag=100, proto=17) / payload,
        "ip4-gre": Ether(**ETH) / IP(src=SRC4, dst=DST4, proto=47) / payload,
        "vlan-udp4": Ether(**ETH) / Dot1Q(vlan=10) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=53) / payload,
        "qinq-udp4": Ether(**ETH) / Dot1AD(vlan=20) / Dot1Q(vlan=10) / IP(src=SRC4, dst=DST4)
                     / UDP(sport=1111, dport=53) / payload,
        "triple-vlan": Ether(**ETH) / Dot1AD(vlan=1) / Dot1Q(vlan=2) / Dot1Q(vlan=3) / IP(src=SRC4, dst=DST4) / UDP(),
        "tcp6": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / TCP(sport=4000, dport=80),
        "udp6": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / UDP(sport=1111, dport=53) / payload,
        "icmp6": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / ICMPv6EchoRequest(),
        "ip6-hbh-dst-udp": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
                           / UDP(sport=1111, dport=53) / payload,
        "ip6-routing-tcp": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / IPv6ExtHdrRouting(addresses=[DST6])
                           / TCP(sport=4000, dport=80),
        "ip6-first-fragment": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / IPv6ExtHdrFragment(offset=0, m=1)
                              / UDP(sport=1111, dport=53) / payload,
        "ip6-later-fragment": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / IPv6ExtHdrFragment(offset=10, nh=17) / payload,
        "ip6-too-many-ext": Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / IPv6ExtHdrHopByHop() / IPv6ExtHdrDestOpt()
                            / IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() / IPv6ExtHdrDestOpt() / UDP(),
        "arp": Ether(src=ETH["src"], dst="ff:ff:ff:ff:ff:ff") / ARP(psrc=SRC4, pdst=DST4),
        "lldp-ish": Ether(src=ETH["src"], dst="01:80:c2:00:00:0e", type=0x88CC) / payload,
        "padded-udp4": Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=53) / b"x" / (b"\0" * 30),
        "gtpu-udp4": _tunnelled(IP(src=UE4, dst=SRC4) / UDP(sport=1111, dport=53) / payload),
        "gtpu-tcp6-no-container": _tunnelled(IPv6(src=UE6, dst=SRC6) / TCP(sport=4000, dport=80), qfi=None),
        "gtpu-unknown-teid": _tunnelled(IP(src=UE4, dst=SRC4) / UDP() / payload, teid=999),
        "gtpu-echo-request": Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(**GTPU) / GTP_U_Header(S=1, seq=1, gtp_type=1)
                             / GTPEchoRequest(),
    }
    return [(name, bytes(frame)) for name, frame in frames.items()]


def _patch(frame: bytes, offset: int, value: bytes) -> bytes:
    return frame[:offset] + value + frame[offset + len(value):]


def malformed() -> list[tuple[str, bytes]]:
    udp4 = bytes(Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=53) / b"payload!")
    tcp4 = bytes(Ether(**ETH) / IP(src=SRC4, dst=DST4) / TCP(sport=4000, dport=80))
    tcp6 = bytes(Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / TCP(sport=4000, dport=80))
    vlan = bytes(Ether(**ETH) / Dot1Q(vlan=10) / IP(src=SRC4, dst=DST4) / UDP())
    gtpu = bytes(_tunnelled(IP(src=UE4, dst=SRC4) / UDP(sport=1111, dport=53) / b"payload!"))
    gtp_at = 14 + 20 + 8
    cases = [(f"udp4-cut-at-{n}", udp4[:n]) for n in range(14, len(udp4))]
    cases += [(f"tcp6-cut-at-{n}", tcp6[:n]) for n in (14, 20, 53, 54, 60, 70, 73)]
    cases += [(f"vlan-cut-at-{n}", vlan[:n]) for n in (14, 16, 17, 30)]
    cases += [(f"gtpu-cut-at-{n}", gtpu[:n]) for n in (gtp_at + 4, gtp_at + 10, gtp_at + 14, gtp_at + 20)]
    cases += [
        ("ihl-below-5", _patch(udp4, 14, b"\x44")),
        ("ihl-15-no-options", _patch(udp4, 14, b"\x4f")),
        ("ip-version-6-in-ipv4", _patch(udp4, 14, b"\x65")),
        ("tot-len-beyond-frame", _patch(udp4, 16, (len(udp4) - 14 + 40).to_bytes(2, "big"))),
        ("tot-len-below-header", _patch(udp4, 16, (12).to_bytes(2, "big"))),
        ("tcp-doff-below-5", _patch(tcp4, 14 + 20 + 12, b"\x30")),
        ("tcp-doff-beyond-frame", _patch(tcp4, 14 + 20 + 12, b"\xf0")),
        ("ip6-payload-len-beyond-frame", _patch(tcp6, 14 + 4, (500).to_bytes(2, "big"))),
        ("ip6-version-4", _patch(tcp6, 14, b"\x40")),
        ("ethernet-only", udp4[:14]),
        ("gtpu-length-beyond-udp", _patch(gtpu, gtp_at + 2, (200).to_bytes(2, "big"))),
        ("gtpu-version-2", _patch(gtpu, gtp_at, b"\x48")),
        ("gtpu-extension-never-ends", _patch(gtpu, gtp_at + 15, b"\x85")),
        ("gtpu-extension-length-0", _patch(gtpu, gtp_at + 12, b"\x00")),
        ("gtpu-must-know-extension", _patch(gtpu, gtp_at + 11, b"\xc0")),
    ]
    return cases


def noise(count: int = 300, seed: int = 2544) -> list[tuple[str, bytes]]:
    """Random bytes behind plausible Ethernet and IP starts, so the fuzz reaches deep parsers."""
    rng = random.Random(seed)
    base = bytes(Ether(**ETH) / IP(src=SRC4, dst=DST4) / UDP(sport=1111, dport=53) / (b"\0" * 40))
    base6 = bytes(Ether(**ETH) / IPv6(src=SRC6, dst=DST6) / TCP(sport=4000, dport=80) / (b"\0" * 40))
    frames = []
    for i in range(count):
        template = rng.choice((base, base6))
        cut = rng.randint(14, len(template))
        frame = bytearray(template[:cut])
        for _ in range(rng.randint(1, 6)):
            pos = rng.randint(12, len(frame) - 1)
            frame[pos] = rng.randrange(256)
        frames.append((f"noise-{i}", bytes(frame)))
    return frames


def jumbo() -> list[tuple[str, bytes]]:
    """Frames longer than a page, which the XDP build gets in several buffers: 9,000-byte packets of each kind, a
    tunnelled one, frames either side of the kernel's first buffer, the longest IPv4 packet, and jumbo frames whose
    headers claim more than the frame holds."""
    big = bytes(range(256)) * 256
    ip4, ip6 = dict(src=SRC4, dst=DST4), dict(src=SRC6, dst=DST6)
    frames = {
        "jumbo-udp4": Ether(**ETH) / IP(**ip4) / UDP(sport=1111, dport=53) / big[:9000 - 28],
        "jumbo-tcp4": Ether(**ETH) / IP(**ip4) / TCP(sport=4000, dport=80, flags="PA") / big[:9000 - 40],
        "jumbo-icmp4": Ether(**ETH) / IP(**ip4) / ICMP() / big[:9000 - 28],
        "jumbo-udp6": Ether(**ETH) / IPv6(**ip6) / UDP(sport=1111, dport=53) / big[:9000 - 48],
        "jumbo-tcp6": Ether(**ETH) / IPv6(**ip6) / TCP(sport=4000, dport=80, flags="PA") / big[:9000 - 60],
        "jumbo-vlan-udp4": Ether(**ETH) / Dot1Q(vlan=10) / IP(**ip4) / UDP(sport=1111, dport=53) / big[:8972],
        "jumbo-gtpu-udp4": _tunnelled(IP(src=UE4, dst=SRC4) / UDP(sport=1111, dport=53) / big[:9000 - 28]),
        "longest-ip4-udp": Ether(**ETH) / IP(**ip4) / UDP(sport=1111, dport=53) / big[:65000 - 28],
    }
    frames |= {f"udp4-of-{n}-bytes": Ether(**ETH) / IP(**ip4) / UDP(sport=1111, dport=53) / big[:n - 42]
               for n in (3000, 3500, 3520, 3521, 3600, 4096, 4097, 8192)}
    # headers that go on past the first buffer (3,520 bytes in the kernel's test run): two 2,048-byte extension
    # headers put the UDP header, or the second header itself, in the next buffer
    padding = [PadN(optdata=bytes(253))] * 8   # an option carries 255 bytes at most
    long_hbh = IPv6ExtHdrHopByHop(options=padding)
    frames |= {"ip6-headers-past-first-buffer": Ether(**ETH) / IPv6(**ip6) / long_hbh /
               IPv6ExtHdrDestOpt(options=padding) / UDP(sport=1111, dport=53) / big[:4000],
               "ip6-header-across-buffers": Ether(**ETH) / IPv6(**ip6) / long_hbh /
               IPv6ExtHdrDestOpt(options=padding[:6]) / TCP(sport=4000, dport=80) / big[:4000]}
    cases = [(name, bytes(frame)) for name, frame in frames.items()]
    udp4 = bytes(frames["jumbo-udp4"])
    cases += [("jumbo-tot-len-beyond-frame", _patch(udp4, 16, (9000 + 100).to_bytes(2, "big"))),
              ("jumbo-cut-in-its-last-buffer", udp4[:8000]),
              ("jumbo-udp-len-beyond-ip", _patch(udp4, 14 + 20 + 4, (9000).to_bytes(2, "big")))]
    return cases


def corpus() -> list[tuple[str, bytes]]:
    return well_formed() + malformed() + jumbo() + noise()


def write_pcap(path, frames: list[tuple[str, bytes]], times: list[float] | None = None, epoch: float = 0.0) -> None:
    """A classic pcap (libpcap 2.4, Ethernet) of the frames; times: each frame's time stamp in seconds from the
    first (the differential harness runs a frame at its time), else all at 0; epoch: the first one's (a real
    capture's is its date)."""
    with open(path, "wb") as out:
        out.write((0xA1B2C3D4).to_bytes(4, "little") + (2).to_bytes(2, "little") + (4).to_bytes(2, "little")
                  + bytes(8) + (65535).to_bytes(4, "little") + (1).to_bytes(4, "little"))
        for i, (_, frame) in enumerate(frames):
            at = round((epoch + (times[i] if times else 0.0)) * 1e6)
            stamp = (at // 1000000).to_bytes(4, "little") + (at % 1000000).to_bytes(4, "little")
            out.write(stamp + len(frame).to_bytes(4, "little") + len(frame).to_bytes(4, "little") + frame)

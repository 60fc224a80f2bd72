"""The checksum helpers, kernel and native alike, produce checksums that a full recomputation agrees with."""

from __future__ import annotations

import random

from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from differential import XDP_PASS, XDP_TX, run_differential

ETH = dict(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")


def ones_complement_sum(data: bytes) -> int:
    if len(data) % 2:
        data += b"\0"
    total = sum(int.from_bytes(data[i:i + 2], "big") for i in range(0, len(data), 2))
    while total >> 16:
        total = (total & 0xFFFF) + (total >> 16)
    return total


def udp_checksum(ip_src: bytes, ip_dst: bytes, udp: bytes) -> int:
    pseudo = ip_src + ip_dst + bytes([0, 17]) + len(udp).to_bytes(2, "big")
    value = ~ones_complement_sum(pseudo + udp[:6] + b"\0\0" + udp[8:]) & 0xFFFF
    return value or 0xFFFF


def frame_whose_rewritten_udp_checksum_is_ffff() -> bytes:
    """Searches the source port so that after the rewrite the UDP checksum computes to 0 (sent as 0xffff)."""
    template = bytearray(bytes(Ether(**ETH) / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=0, dport=53)
                               / b"zz"))
    src, dst, rewritten_dst = bytes(template[26:30]), bytes(template[30:34]), bytes([198, 18, 9, 9])
    for sport in range(1, 65536):
        udp = bytearray(template[34:])
        udp[0:2] = sport.to_bytes(2, "big")
        rewritten = bytearray(udp)
        rewritten[2:4] = (4242).to_bytes(2, "big")
        pseudo = src + rewritten_dst + bytes([0, 17]) + len(udp).to_bytes(2, "big")
        if ones_complement_sum(pseudo + bytes(rewritten[:6]) + bytes(rewritten[8:])) == 0xFFFF:
            udp[6:8] = udp_checksum(src, dst, bytes(udp)).to_bytes(2, "big")
            return bytes(template[:34] + udp)
    raise AssertionError("no such source port")


def frames() -> list[tuple[str, bytes]]:
    rng = random.Random(768)
    cases = []
    for i in range(60):
        ip = IP(src=f"198.18.{rng.randrange(256)}.{rng.randrange(256)}", dst=f"10.{i}.{rng.randrange(256)}.1",
                ttl=rng.randrange(2, 256), id=rng.randrange(65536))
        payload = bytes(rng.randrange(256) for _ in range(rng.randrange(0, 40)))
        l4 = (UDP(sport=rng.randrange(65536), dport=rng.randrange(65536)) if i % 2
              else TCP(sport=rng.randrange(65536), dport=rng.randrange(65536), seq=rng.randrange(1 << 32)))
        cases.append((f"random-{i}", bytes(Ether(**ETH) / ip / l4 / payload)))
    no_checksum = bytearray(bytes(Ether(**ETH) / IP(src="198.18.0.1", dst="198.18.0.2") / UDP(sport=1, dport=2)))
    no_checksum[40:42] = b"\0\0"
    cases += [
        ("udp-without-checksum", bytes(no_checksum)),
        ("udp-checksum-becomes-ffff", frame_whose_rewritten_udp_checksum_is_ffff()),
        ("ip-options", bytes(Ether(**ETH) / IP(src="198.18.0.1", dst="198.18.0.2", options=b"\x01\x01\x01\x00")
                             / TCP(sport=5, dport=6))),
        ("ttl-1-passes", bytes(Ether(**ETH) / IP(src="198.18.0.1", dst="198.18.0.2", ttl=1) / UDP())),
    ]
    return cases


def test_rewritten_checksums_are_correct(tmp_path):
    corpus = frames()
    results = run_differential("csum_rewrite", tmp_path, frames=corpus)
    for name, original in corpus:
        record = results[name]["kernel"]
        if name == "ttl-1-passes":
            assert record["action"] == XDP_PASS
            continue
        assert record["action"] == XDP_TX, name
        out = bytes.fromhex(record["out"])
        packet = Ether(out)
        assert packet[IP].dst == "198.18.9.9" and packet[IP].ttl == Ether(original)[IP].ttl - 1
        recomputed = Ether(out)
        del recomputed[IP].chksum
        l4 = TCP if TCP in packet else UDP
        assert packet[l4].dport == 4242
        if name == "udp-without-checksum":
            assert packet[UDP].chksum == 0
            del recomputed[l4].chksum  # only the IP checksum is recomputed below
            assert Ether(bytes(recomputed))[IP].chksum == packet[IP].chksum
            continue
        del recomputed[l4].chksum
        rebuilt = Ether(bytes(recomputed))
        assert rebuilt[IP].chksum == packet[IP].chksum, name
        assert rebuilt[l4].chksum == packet[l4].chksum, name
    assert Ether(bytes.fromhex(results["udp-checksum-becomes-ffff"]["kernel"]["out"]))[UDP].chksum == 0xFFFF

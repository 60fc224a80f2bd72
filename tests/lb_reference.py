"""The lb's choice of backend (rendezvous hashing, nfs/lb/lb_hash.h), computed independently of the C code: what
the lb tests and the multi-node tests check every flow against."""

from __future__ import annotations

import ipaddress
import struct

M64 = (1 << 64) - 1
BACKEND_SEED = 0x5851F42D4C957F2D


def _mix64(x: int) -> int:
    x ^= x >> 30
    x = (x * 0xBF58476D1CE4E5B9) & M64
    x ^= x >> 27
    x = (x * 0x94D049BB133111EB) & M64
    return x ^ (x >> 31)


def _hash_words(words: list[int], seed: int) -> int:
    h = seed
    for w in words:
        h = _mix64(h ^ w)
    return h


def _addr_words(addr: str) -> list[int]:
    raw = ipaddress.ip_address(addr).packed.ljust(16, b"\0")
    return list(struct.unpack("<4I", raw))  # the bytes as the host reads them


def _port_word(port: int) -> int:
    return struct.unpack("<H", port.to_bytes(2, "big"))[0]


def expected_backend(client: str, cport: int, vip: str, vport: int, proto: int, backends):
    """The backend (address, port, ...) a flow from client:cport to vip:vport lands on: the highest score."""
    flow = _hash_words(_addr_words(client) + _addr_words(vip)
                       + [(_port_word(cport) << 16) | _port_word(vport), proto], 0)
    best, best_score = None, -1
    for backend in backends:
        score = _mix64(flow ^ _hash_words(_addr_words(backend[0]) + [_port_word(backend[1])], BACKEND_SEED))
        if score > best_score:
            best, best_score = backend, score
    return best

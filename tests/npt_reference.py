"""NPTv6 (RFC 6296) written from the RFC, as the NAT's fixtures and its test beside Linux's SNPT expect it: what an
address becomes when its prefix is swapped for another of the same length."""

from __future__ import annotations

import ipaddress


def _ones_add(a: int, b: int) -> int:
    total = a + b
    return (total & 0xffff) + (total >> 16)


def _ones_sum(address: bytes) -> int:
    total = 0
    for i in range(0, 16, 2):
        total = _ones_add(total, int.from_bytes(address[i:i + 2], "big"))
    return total


def npt(address: str, inside: str, outside: str) -> str:
    """RFC 6296's translation of address from the inside prefix to the outside one, written from the RFC: the prefix
    swapped, and the difference of the prefixes' sums added to the subnet word (/48 and shorter) or to the first
    interface-identifier word that is not 0xffff."""
    net_in, net_out = ipaddress.IPv6Network(inside), ipaddress.IPv6Network(outside)
    bits = int(ipaddress.IPv6Address(address)) & ((1 << (128 - net_in.prefixlen)) - 1) | int(net_out.network_address)
    words = [(bits >> (112 - 16 * i)) & 0xffff for i in range(8)]
    adjustment = _ones_add(_ones_sum(net_in.network_address.packed), ~_ones_sum(net_out.network_address.packed) & 0xffff)
    at = 3 if net_in.prefixlen <= 48 else next(i for i in range(4, 8) if words[i] != 0xffff)
    words[at] = _ones_add(words[at], adjustment)
    words[at] = 0 if words[at] == 0xffff else words[at]
    return str(ipaddress.IPv6Address(sum(w << (112 - 16 * i) for i, w in enumerate(words))))

"""A script of frames between an inside host A and an outside host B through a stateful acl, and what netfilter's
conntrack passes of each (tests/integration/test_conntrack.py holds Linux itself to it): TCP handshakes, data,
closes, RSTs, half-open and out-of-window segments, invalid flags, UDP, ICMP echo, ICMP errors about tracked and
untracked flows, IPv6, neighbour discovery. Frames from IP up; each step says which side it enters by. Every frame
leaves with the test's mark after it (MARK and the step's number: PAYLOAD bytes), so a TCP segment's data ends PAYLOAD
bytes after its sequence number (one more with SYN or FIN): the acknowledgements below count them, as netfilter's
window tracking does."""

from __future__ import annotations

import struct
from dataclasses import dataclass

from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, IPOption_NOP, IPOption_Router_Alert, UDPerror
from scapy.layers.inet6 import (ICMPv6DestUnreach, ICMPv6EchoReply, ICMPv6EchoRequest, ICMPv6ND_NS, IPerror6, IPv6,
                                IPv6ExtHdrDestOpt, IPv6ExtHdrRouting, UDPerror as UDPerror6)

INSIDE, OUTSIDE = 0, 1       # the port a frame enters by
MARK = b"xnfct"              # after every frame's own bytes, with the step's number (4 bytes)
PAYLOAD = len(MARK) + 4
A, B, ROUTER = "10.1.0.5", "198.51.100.7", "198.51.100.254"
OTHER_INSIDE = "10.1.0.6"
A6, B6 = "2001:db8:1::5", "2001:db8:2::7"

STATEFUL_RULES = """\
10 allow state established,related
20 drop state invalid
30 allow from 10.1.0.0/16 state new
31 allow from 2001:db8:1::/48 state new
40 allow icmpv6 state untracked
default drop
"""


def mark(number: int) -> bytes:
    """What follows step `number`'s frame: PAYLOAD bytes, by which a test finds the frame where it came out."""
    return MARK + struct.pack("!I", number)


@dataclass(frozen=True)
class Step:
    enters: int      # INSIDE or OUTSIDE
    frame: object    # scapy layers from IP up
    passes: bool
    why: str


def tcp(enters: int, sport: int, dport: int, flags: str, seq: int = 0, ack: int = 0, v6: bool = False):
    src, dst = ((A6, B6) if v6 else (A, B))[::1 if enters == INSIDE else -1]
    return (IPv6(src=src, dst=dst) if v6 else IP(src=src, dst=dst)) / TCP(sport=sport, dport=dport, flags=flags,
                                                                            seq=seq, ack=ack)


def udp(enters: int, sport: int, dport: int):
    src, dst = (A, B) if enters == INSIDE else (B, A)
    return IP(src=src, dst=dst) / UDP(sport=sport, dport=dport)


def port_unreachable(src: str, about_sport: int, about_dport: int, code: int = 3, kind: int = 3, to: str = A,
                     options: bool = False):
    """An ICMP error from src to `to` (A, whose frame it quotes, by default) about a UDP frame A sent to B; its quote
    of the frame's IP header with options (a router alert and padding) if asked."""
    quoted = IPerror(src=A, dst=B, options=[IPOption_Router_Alert(), IPOption_NOP(), IPOption_NOP(),
                                            IPOption_NOP(), IPOption_NOP()] if options else [])
    return IP(src=src, dst=to) / ICMP(type=kind, code=code) / quoted / UDPerror(sport=about_sport, dport=about_dport)


def handshake(sport: int, dport: int, v6: bool = False) -> list[Step]:
    """The inside's data then ends at 1001 + PAYLOAD, the outside's at 5001 + PAYLOAD."""
    return [Step(INSIDE, tcp(INSIDE, sport, dport, "S", 1000, v6=v6), True, "the inside opens"),
            Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "SA", 5000, 1001, v6=v6), True, "the answer"),
            Step(INSIDE, tcp(INSIDE, sport, dport, "A", 1001, 5001, v6=v6), True, "the handshake's last ACK")]


def windows(sport: int, dport: int) -> list[Step]:
    """After handshake(sport, dport): segments for and against each end's window, as netfilter's tcp_in_window (with
    nf_conntrack_tcp_be_liberal=0, its default) judges them."""
    inside_end, outside_end = 1001 + PAYLOAD, 5001 + PAYLOAD
    return [
        Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "PA", 900000000, inside_end), False,
             "data far past the inside's window: invalid"),
        Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "R", 100005001), False,
             "a blind RST far from the window: invalid, the connection stays"),
        Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "PA", 5001, inside_end), True, "data back, in the window"),
        Step(INSIDE, tcp(INSIDE, sport, dport, "A", inside_end, outside_end + 50000), False,
             "an acknowledgement of data never sent: invalid"),
        Step(INSIDE, tcp(INSIDE, sport, dport, "A", (1001 - 100000) % 2**32, outside_end), True,
             "data from before the window (acknowledged long ago): ignored, it goes with the connection"),
        Step(OUTSIDE, tcp(OUTSIDE, dport, sport, "R", outside_end + 100), True,
             "a RST in the window but not where the inside expects one: it passes, the connection stays"),
        Step(INSIDE, tcp(INSIDE, sport, dport, "PA", inside_end, outside_end), True, "the connection goes on"),
    ]


def script() -> list[Step]:
    s = handshake(40001, 80) + [
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40001, "PA", 5001, 1001), True, "data back"),
        Step(INSIDE, tcp(INSIDE, 40001, 80, "FA", 1001 + PAYLOAD, 5001 + PAYLOAD), True, "the inside closes"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40001, "FA", 5001 + PAYLOAD, 1002 + 2 * PAYLOAD), True, "the outside closes"),
        Step(INSIDE, tcp(INSIDE, 40001, 80, "A", 1002 + 2 * PAYLOAD, 5002 + 2 * PAYLOAD), True, "the last ACK"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40001, "S", 9000), False,
             "the answerer reopens from TIME_WAIT: a new connection, from outside"),
        Step(OUTSIDE, tcp(OUTSIDE, 5555, 22, "S"), False, "a SYN from outside: new, not inside"),
        Step(OUTSIDE, tcp(OUTSIDE, 5556, 23, "SA", 1, 1), False, "a SYN/ACK nobody asked for: invalid"),
        Step(OUTSIDE, tcp(OUTSIDE, 5557, 24, "A", 1, 1), False, "an ACK scan: picked up as new, not inside"),
        Step(OUTSIDE, tcp(OUTSIDE, 5558, 25, "R", 1), False, "a RST of no connection: invalid"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "S", 1000), True, "a second connection opens"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "A", 1001, 1), False, "an ACK before the answer: invalid"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "SA", 7000, 1001), True, "the answer, half-open till now"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "SA", 7000, 1001), True,
             "the answer again (its ACK lost): ignored by the state table, it goes with the connection"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "A", 1001, 7001), True, "established"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "SA", 7000, 1001), True,
             "the answer once more, after the handshake: ignored, established"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40002, "RA", 7001, 1001), True, "the server resets it"),
        Step(INSIDE, tcp(INSIDE, 40002, 80, "S", 90000), True, "the same ports opened again after the reset"),
        Step(INSIDE, tcp(INSIDE, 40006, 25, "S", 3000), True, "a connection opens"),
        Step(OUTSIDE, tcp(OUTSIDE, 25, 40006, "RA", 0, 3001), True, "refused: a reset as its only answer"),
        Step(OUTSIDE, tcp(OUTSIDE, 25, 40006, "A", 1, 3001), False,
             "an ACK after it: the refused connection is gone, nothing to belong to"),
        Step(INSIDE, tcp(INSIDE, 40007, 587, "SP", 4000), True, "a SYN with PSH: a SYN (PSH does not count)"),
        Step(OUTSIDE, tcp(OUTSIDE, 587, 40007, "SAP", 6000, 4001), True, "its answer with PSH"),
        Step(INSIDE, tcp(INSIDE, 40003, 80, "SF", 1000), False, "SYN and FIN together: invalid"),
        Step(INSIDE, tcp(INSIDE, 40003, 80, "", 1000), False, "no flags: invalid"),
        Step(INSIDE, udp(INSIDE, 5353, 53), True, "a UDP query"),
        Step(OUTSIDE, udp(OUTSIDE, 53, 5353), True, "its answer"),
        Step(OUTSIDE, udp(OUTSIDE, 54, 5353), False, "another outside port to the same inside one: new"),
        Step(INSIDE, IP(src=A, dst=B) / ICMP(type=8, id=77, seq=1), True, "an echo request"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=0, id=77, seq=1), True, "its reply"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=0, id=78, seq=1), False, "a reply to no request: invalid"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=8, id=79, seq=1), False, "a request from outside: new"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=8, id=77, seq=2), False,
             "a request from outside with the inside's identifier: a query of its own, new, not the inside's"),
        Step(INSIDE, IP(src=A, dst=B) / ICMP(type=13, id=80, seq=1), True, "a timestamp request"),
        Step(OUTSIDE, IP(src=B, dst=A) / ICMP(type=14, id=80, seq=1), True, "its reply"),
        Step(INSIDE, udp(INSIDE, 5354, 33434), True, "a probe"),
        Step(OUTSIDE, port_unreachable(B, 5354, 33434), True, "port unreachable about it: related"),
        Step(OUTSIDE, port_unreachable(B, 5354, 33434, to=OTHER_INSIDE), False,
             "the same error sent to another inside host than the probe's sender: invalid"),
        Step(OUTSIDE, port_unreachable(B, 5354, 33434, options=True), True,
             "port unreachable quoting the probe's header with IP options: related"),
        Step(OUTSIDE, port_unreachable(ROUTER, 5355, 33435, code=0, kind=11), False,
             "time exceeded about nothing sent: invalid"),
        Step(OUTSIDE, port_unreachable(ROUTER, 5353, 53, code=0, kind=11), True,
             "time exceeded about the UDP query: related"),
    ] + handshake(40004, 443) + windows(40004, 443) + handshake(40005, 80, v6=True) + [
        Step(OUTSIDE, tcp(OUTSIDE, 6000, 22, "S", v6=True), False, "an IPv6 SYN from outside"),
        Step(INSIDE, IPv6(src=A6, dst=B6) / ICMPv6EchoRequest(id=5, seq=1), True, "an IPv6 echo request"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6EchoReply(id=5, seq=1), True, "its reply"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6EchoReply(id=6, seq=1), False, "an IPv6 reply to nothing"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6, hlim=255) / ICMPv6ND_NS(tgt=A6), True,
             "neighbour discovery: untracked, allowed by its rule"),
        Step(INSIDE, IPv6(src=A6, dst=B6) / IPv6ExtHdrDestOpt() / UDP(sport=5356, dport=33436), True,
             "an IPv6 probe behind a destination-options header"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6DestUnreach(code=4) /
             IPerror6(src=A6, dst=B6) / IPv6ExtHdrDestOpt(nh=17) / UDPerror6(sport=5356, dport=33436), True,
             "port unreachable quoting it, its extension header too: related"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6DestUnreach(code=4) /
             IPerror6(src=A6, dst=B6) / IPv6ExtHdrDestOpt(nh=43) / IPv6ExtHdrRouting(nh=17) /
             UDPerror6(sport=5356, dport=33436),
             True, "the same behind two extension headers: related"),
        Step(OUTSIDE, IPv6(src=B6, dst=A6) / ICMPv6DestUnreach(code=4) /
             IPerror6(src=A6, dst=B6) / IPv6ExtHdrDestOpt(nh=17) / UDPerror6(sport=5357, dport=33436),
             False, "port unreachable about nothing sent: invalid"),
    ]
    return s

"""The NAT's translation, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py), on one
port that is both inside and outside (a NAT on a stick): source rewritten going out with the inside port kept where
free, answers rewritten back, remotes not talked to filtered, ICMP echo and errors, checksums as a full
recomputation gives them, and what is not translated; IPv6 prefixes (NPTv6) against tests/npt_reference.py."""


import pytest
from scapy.layers.inet import ICMP, IP, TCP, UDP, IPerror, UDPerror
from scapy.layers.inet6 import ICMPv6EchoRequest, ICMPv6ND_NS, IPv6
from scapy.layers.l2 import ARP, Ether

from nf_fixtures import CLIENT_IP, CLIENT_MAC, NEXT_HOP_MAC, PORT_MAC, Fixture, check
from npt_reference import npt

PUBLIC, REMOTE, OTHER_REMOTE, ROUTER = "203.0.113.1", "192.0.2.9", "192.0.2.10", "192.0.2.254"
NEIGHBOUR_IP, NEIGHBOUR_MAC = "198.18.0.3", "02:00:00:00:00:03"
RULES = f"""\
inside port 0
outside port 0 gateway {NEXT_HOP_MAC}
public {PUBLIC} ports 1024-65535
"""


def going_out(src=CLIENT_IP, mac=CLIENT_MAC):
    return Ether(src=mac, dst=PORT_MAC) / IP(src=src, dst=REMOTE)


def translated_out():
    """As it leaves: from the MAC it was sent to (the port's), to the gateway, from the public address."""
    return Ether(src=PORT_MAC, dst=NEXT_HOP_MAC) / IP(src=PUBLIC, dst=REMOTE)


def coming_in(src=REMOTE):
    return Ether(src=NEXT_HOP_MAC, dst=PORT_MAC) / IP(src=src, dst=PUBLIC)


def translated_in(src=REMOTE, to=CLIENT_IP, mac=CLIENT_MAC):
    return Ether(src=PORT_MAC, dst=mac) / IP(src=src, dst=to)


def unreachable(src: str, dst: str, sport: int, dport: int, data: bytes, icmp_type: int = 3, ttl: int = 64):
    """An ICMP error (port unreachable, or time exceeded) about a UDP datagram from src:sport to dst:dport."""
    code = 3 if icmp_type == 3 else 0
    return (ICMP(type=icmp_type, code=code) / IPerror(src=src, dst=dst, ttl=ttl) / UDPerror(sport=sport, dport=dport)
            / data)


def test_flows_out_and_their_answers_back(tmp_path):
    payload = b"query"
    check("nat", [
        Fixture("udp out: the public address, the inside port kept",
                bytes(going_out() / UDP(sport=40000, dport=53) / payload), "tx",
                bytes(translated_out() / UDP(sport=40000, dport=53) / payload)),
        Fixture("the answer back to the inside host",
                bytes(coming_in() / UDP(sport=53, dport=40000) / payload), "tx",
                bytes(translated_in() / UDP(sport=53, dport=40000) / payload)),
        Fixture("a remote it did not send to is filtered",
                bytes(coming_in(OTHER_REMOTE) / UDP(sport=53, dport=40000) / payload), "drop"),
        Fixture("the same remote from another port is filtered",
                bytes(coming_in() / UDP(sport=54, dport=40000) / payload), "drop"),
        Fixture("a public port no one holds: the local stack's",
                bytes(coming_in() / UDP(sport=53, dport=40001) / payload), "pass"),
        Fixture("another host, the same port: the next one free",
                bytes(going_out(NEIGHBOUR_IP, NEIGHBOUR_MAC) / UDP(sport=40000, dport=53) / payload), "tx",
                bytes(translated_out() / UDP(sport=40001, dport=53) / payload)),
        Fixture("its answer finds it",
                bytes(coming_in() / UDP(sport=53, dport=40001) / payload), "tx",
                bytes(translated_in(to=NEIGHBOUR_IP, mac=NEIGHBOUR_MAC) / UDP(sport=53, dport=40000) / payload)),
        Fixture("its port unreachable back out: the inner port is the public one it was sent to",
                bytes(going_out(NEIGHBOUR_IP, NEIGHBOUR_MAC) / unreachable(REMOTE, NEIGHBOUR_IP, 53, 40000, payload)),
                "tx", bytes(translated_out() / unreachable(REMOTE, PUBLIC, 53, 40001, payload))),
        Fixture("the first host to another remote: the same public port (endpoint-independent mapping)",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=OTHER_REMOTE) /
                      UDP(sport=40000, dport=53) / payload), "tx",
                bytes(Ether(src=PORT_MAC, dst=NEXT_HOP_MAC) / IP(src=PUBLIC, dst=OTHER_REMOTE) /
                      UDP(sport=40000, dport=53) / payload)),
        Fixture("now that remote gets in",
                bytes(coming_in(OTHER_REMOTE) / UDP(sport=53, dport=40000) / payload), "tx",
                bytes(translated_in(OTHER_REMOTE) / UDP(sport=53, dport=40000) / payload)),
        Fixture("udp checksum 0 stays 0",
                bytes(going_out() / UDP(sport=40002, dport=53, chksum=0) / payload), "tx",
                bytes(translated_out() / UDP(sport=40002, dport=53, chksum=0) / payload)),
        Fixture("tcp out", bytes(going_out() / TCP(sport=5000, dport=80, flags="S")), "tx",
                bytes(translated_out() / TCP(sport=5000, dport=80, flags="S"))),
        Fixture("tcp back", bytes(coming_in() / TCP(sport=80, dport=5000, flags="SA")), "tx",
                bytes(translated_in() / TCP(sport=80, dport=5000, flags="SA"))),
        Fixture("udp's public port is not tcp's", bytes(coming_in() / TCP(sport=53, dport=40000, flags="S")), "pass"),
    ], tmp_path, rules=RULES)


def test_icmp_echo_and_errors(tmp_path):
    sent = UDP(sport=40000, dport=53) / b"query"
    check("nat", [
        Fixture("echo request out: the identifier is its port",
                bytes(going_out() / ICMP(type=8, id=0x1234, seq=1) / b"ping"), "tx",
                bytes(translated_out() / ICMP(type=8, id=0x1234, seq=1) / b"ping")),
        Fixture("echo reply back", bytes(coming_in() / ICMP(type=0, id=0x1234, seq=1) / b"ping"), "tx",
                bytes(translated_in() / ICMP(type=0, id=0x1234, seq=1) / b"ping")),
        Fixture("a reply to an identifier no one holds", bytes(coming_in() / ICMP(type=0, id=0x9999) / b"ping"),
                "pass"),
        Fixture("the udp flow out", bytes(going_out() / sent), "tx", bytes(translated_out() / sent)),
        Fixture("port unreachable about it, inner header translated too",
                bytes(coming_in() / unreachable(PUBLIC, REMOTE, 40000, 53, b"query")), "tx",
                bytes(translated_in() / unreachable(CLIENT_IP, REMOTE, 40000, 53, b"query"))),
        Fixture("time exceeded from a router on the way",
                bytes(coming_in(ROUTER) / unreachable(PUBLIC, REMOTE, 40000, 53, b"query", 11, ttl=1)), "tx",
                bytes(translated_in(ROUTER) / unreachable(CLIENT_IP, REMOTE, 40000, 53, b"query", 11, ttl=1))),
        Fixture("the inside host's port unreachable about the answer: from the public address, inner to it too",
                bytes(going_out() / unreachable(REMOTE, CLIENT_IP, 53, 40000, b"answer")), "tx",
                bytes(translated_out() / unreachable(REMOTE, PUBLIC, 53, 40000, b"answer"))),
        Fixture("one about a frame to an endpoint with no mapping: the local stack's",
                bytes(going_out() / unreachable(REMOTE, CLIENT_IP, 53, 40999, b"answer")), "pass"),
        Fixture("an error about a flow to a remote never sent to is filtered",
                bytes(coming_in() / unreachable(PUBLIC, OTHER_REMOTE, 40000, 53, b"query")), "drop"),
    ], tmp_path, rules=RULES)


def test_what_is_not_translated(tmp_path):
    check("nat", [
        Fixture("arp: the local stack's", bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") /
                                                ARP(psrc=CLIENT_IP, pdst="198.18.0.254")), "pass"),
        Fixture("ipv6: the local stack's", bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) /
                                                 IPv6(src="2001:2::1", dst="2001:db8::9") / UDP(dport=53)), "pass"),
        Fixture("gre: no port to translate, dropped (Linux would forward it with the inside source)",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=REMOTE, proto=47) / (b"\x00" * 20)),
                "drop"),
        Fixture("an ICMP timestamp request: no identifier the NAT maps, dropped",
                bytes(going_out() / ICMP(type=13)), "drop"),
        Fixture("mDNS to its multicast group: the link's, the local stack's",
                bytes(Ether(src=CLIENT_MAC, dst="01:00:5e:00:00:fb") / IP(src=CLIENT_IP, dst="224.0.0.251") /
                      UDP(sport=5353, dport=5353)), "pass"),
        Fixture("a broadcast: the link's, the local stack's",
                bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / IP(src=CLIENT_IP, dst="255.255.255.255") /
                      UDP(sport=68, dport=67)), "pass"),
        Fixture("a later fragment has no port: dropped, as Linux reassembles first",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=REMOTE, proto=17, frag=100) /
                      (b"x" * 16)), "drop"),
        Fixture("a header cut short", bytes(going_out() / UDP(sport=40000, dport=53))[:20], "drop", malformed=True),
    ], tmp_path, rules=RULES)


@pytest.mark.parametrize("missing", ["outside", "public", "inside"])
def test_rules_without_outside_public_or_inside_drop_what_would_leave(missing, tmp_path):
    """Without an outside, a public address or an inside port, a frame from inside to a remote is dropped
    (`untranslatable`), as the local stack would forward it with its inside source; ARP and the link's multicast
    still go to the local stack."""
    rules = "".join(line + "\n" for line in RULES.splitlines() if not line.startswith(missing))
    check("nat", [
        Fixture("udp to a remote", bytes(going_out() / UDP(sport=40000, dport=53)), "drop"),
        Fixture("an echo request to a remote", bytes(going_out() / ICMP(type=8, id=7)), "drop"),
        Fixture("arp: the local stack's", bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") /
                                                ARP(psrc=CLIENT_IP, pdst="198.18.0.254")), "pass"),
        Fixture("mDNS to its multicast group: the local stack's",
                bytes(Ether(src=CLIENT_MAC, dst="01:00:5e:00:00:fb") / IP(src=CLIENT_IP, dst="224.0.0.251") /
                      UDP(sport=5353, dport=5353)), "pass"),
    ], tmp_path, rules=rules)


def test_a_full_pool_drops_and_counts(tmp_path):
    rules = RULES.replace("ports 1024-65535", "ports 2000-2001")
    check("nat", [
        Fixture(f"host {i} gets port {port}",
                bytes(going_out(f"198.18.0.{10 + i}") / UDP(sport=2000, dport=53)), "tx",
                bytes(translated_out() / UDP(sport=port, dport=53)))
        for i, port in ((1, 2000), (2, 2001))
    ] + [Fixture("a third host: no port left", bytes(going_out("198.18.0.13") / UDP(sport=2000, dport=53)), "drop")],
        tmp_path, rules=rules)


def test_only_the_inside_prefixes_are_translated(tmp_path):
    """With inside prefixes named, a source within one is translated (the longest match decides nothing more), any
    other goes to the local stack untranslated, as nftables' `ip saddr PREFIX masquerade` leaves it to routing."""
    rules = RULES + "inside from 198.18.0.0/30\ninside from 10.1.0.0/16\n"
    check("nat", [
        Fixture("a source in the first prefix", bytes(going_out() / UDP(sport=40000, dport=53)), "tx",
                bytes(translated_out() / UDP(sport=40000, dport=53))),
        Fixture("a source in the second", bytes(going_out("10.1.2.3") / UDP(sport=41000, dport=53)), "tx",
                bytes(translated_out() / UDP(sport=41000, dport=53))),
        Fixture("a source just past the first: untranslated, the local stack's",
                bytes(going_out(NEIGHBOUR_IP.replace(".3", ".4")) / UDP(sport=40000, dport=53)), "pass"),
        Fixture("an answer to a translated flow still comes in",
                bytes(coming_in() / UDP(sport=53, dport=40000)), "tx",
                bytes(translated_in() / UDP(sport=53, dport=40000))),
    ], tmp_path, rules=rules)


def test_ipv6_prefixes_translated_checksum_neutral(tmp_path):
    """NPTv6: sources in an inside prefix leave from the outside one, what comes to the outside prefix goes to the
    local stack with its destination turned back; the UDP and ICMPv6 checksums are the ones a full recomputation
    gives without being touched (the expected frames are built by scapy from the translated addresses)."""
    inside48, outside48 = "2001:2::/48", "2001:db8:1::/48"
    inside64, outside64 = "2001:2:7:7::/64", "2001:db8:5:5::/64"
    rules = RULES + f"prefix6 {inside48} to {outside48}\nprefix6 {inside64} to {outside64}\n"
    remote, host48, host64 = "2001:db8:ffff::9", "2001:2::1", "2001:2:7:7:0:1:2:3"
    stuck = "2001:2:7:7:ffff:ffff:ffff:ffff"

    def out(src, dst=remote):
        return Ether(src=CLIENT_MAC, dst=PORT_MAC) / IPv6(src=src, dst=dst)

    def sent(src, dst=remote):
        return Ether(src=PORT_MAC, dst=NEXT_HOP_MAC) / IPv6(src=src, dst=dst)

    public48, public64 = npt(host48, inside48, outside48), npt(host64, inside64, outside64)
    assert npt(public48, outside48, inside48) == host48     # the reference turns back too
    check("nat", [
        Fixture("udp from a /48 host: the outside prefix, the subnet word adjusted",
                bytes(out(host48) / UDP(sport=5000, dport=53) / b"q"), "tx",
                bytes(sent(public48) / UDP(sport=5000, dport=53) / b"q")),
        Fixture("an echo request from a /64 host: the identifier's first word adjusted",
                bytes(out(host64) / ICMPv6EchoRequest(id=7, seq=1)), "tx",
                bytes(sent(public64) / ICMPv6EchoRequest(id=7, seq=1))),
        Fixture("the answer to the /48 host: its address back, to the local stack to route",
                bytes(Ether(src=NEXT_HOP_MAC, dst=PORT_MAC) / IPv6(src=remote, dst=public48) /
                      UDP(sport=53, dport=5000) / b"a"), "pass",
                bytes(Ether(src=NEXT_HOP_MAC, dst=PORT_MAC) / IPv6(src=remote, dst=host48) /
                      UDP(sport=53, dport=5000) / b"a")),
        Fixture("an identifier of 0xffff words cannot be adjusted: dropped",
                bytes(out(stuck) / UDP(sport=5000, dport=53)), "drop"),
        Fixture("a source in no inside prefix: the local stack's, as it is",
                bytes(out("2001:3::1") / UDP(sport=5000, dport=53)), "pass"),
        Fixture("a neighbour solicitation from an inside host stays on its link, untranslated",
                bytes(out(host48, "ff02::1:ff00:2") / ICMPv6ND_NS(tgt="2001:2::2")), "pass"),
    ], tmp_path, rules=rules)


def test_port_forwards(tmp_path):
    rules = RULES + f"forward tcp 8080 to {CLIENT_IP} 80 mac {CLIENT_MAC}\n"
    check("nat", [
        Fixture("a remote reaches the inside server by the forwarded port, unasked",
                bytes(coming_in() / TCP(sport=5555, dport=8080, flags="S")), "tx",
                bytes(translated_in() / TCP(sport=5555, dport=80, flags="S"))),
        Fixture("the server answers from the forwarded port",
                bytes(going_out() / TCP(sport=80, dport=5555, flags="SA")), "tx",
                bytes(translated_out() / TCP(sport=8080, dport=5555, flags="SA"))),
        Fixture("a new mapping never takes a forwarded port",
                bytes(going_out(NEIGHBOUR_IP, NEIGHBOUR_MAC) / TCP(sport=8080, dport=443, flags="S")), "tx",
                bytes(translated_out() / TCP(sport=8081, dport=443, flags="S"))),
        Fixture("udp to the forwarded tcp port: no one's",
                bytes(coming_in() / UDP(sport=5555, dport=8080)), "pass"),
    ], tmp_path, rules=rules)


def test_hairpinning(tmp_path):
    """With the inside and outside ports apart, an inside host that addresses the public address is translated both
    ways and sent back inside."""
    server_ip, server_mac = "198.18.0.10", "02:00:00:00:00:10"
    rules = (RULES.replace("outside port 0", "outside port 1") +
             f"forward tcp 8080 to {server_ip} 80 mac {server_mac}\n")
    check("nat", [
        Fixture("to a port forward by the public address: from the host's own public port, to the server",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=PUBLIC) /
                      TCP(sport=4000, dport=8080, flags="S")), "tx",
                bytes(Ether(src=PORT_MAC, dst=server_mac) / IP(src=PUBLIC, dst=server_ip) /
                      TCP(sport=4000, dport=80, flags="S"))),
        Fixture("the server's answer by the same way back",
                bytes(Ether(src=server_mac, dst=PORT_MAC) / IP(src=server_ip, dst=PUBLIC) /
                      TCP(sport=80, dport=4000, flags="SA")), "tx",
                bytes(Ether(src=PORT_MAC, dst=CLIENT_MAC) / IP(src=PUBLIC, dst=CLIENT_IP) /
                      TCP(sport=8080, dport=4000, flags="SA"))),
        Fixture("a public port no one holds: the box's own",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=PUBLIC) /
                      TCP(sport=4001, dport=9999, flags="S")), "pass"),
    ], tmp_path, rules=rules, ports=2)


def test_what_is_idle_past_its_time_is_over(tmp_path):
    """Idle times, as the packet path reads them (before the sweeper removes anything): a UDP mapping idle past
    its 1 s, and a TCP connection closed by FIN past its 1 s closing time, no longer let answers in; the flow
    going out again opens a mapping afresh."""
    rules = RULES + "timeout udp 1\ntimeout tcp-closing 1\n"
    query, answer = UDP(sport=40000, dport=53) / b"query", UDP(sport=53, dport=40000) / b"answer"
    check("nat", [
        Fixture("a udp flow out", bytes(going_out() / query), "tx", bytes(translated_out() / query)),
        Fixture("its answer within the idle time", bytes(coming_in() / answer), "tx", bytes(translated_in() / answer)),
        Fixture("a tcp connection out", bytes(going_out() / TCP(sport=5000, dport=80, flags="S")), "tx",
                bytes(translated_out() / TCP(sport=5000, dport=80, flags="S"))),
        Fixture("closed by the inside host", bytes(going_out() / TCP(sport=5000, dport=80, flags="FA")), "tx",
                bytes(translated_out() / TCP(sport=5000, dport=80, flags="FA"))),
        Fixture("an answer after 1.5 s idle: the mapping is over, not translated", bytes(coming_in() / answer),
                "pass", wait_s=1.5),
        Fixture("the closed connection's last segment after its closing time: not translated either",
                bytes(coming_in() / TCP(sport=80, dport=5000, flags="A")), "pass"),
        Fixture("the flow out again: a mapping afresh, its own port", bytes(going_out() / query), "tx",
                bytes(translated_out() / query)),
        Fixture("and its answer gets in", bytes(coming_in() / answer), "tx", bytes(translated_in() / answer)),
    ], tmp_path, rules=rules)


def test_several_public_addresses_are_paired_to_inside_hosts(tmp_path):
    """Two public addresses: an inside host's mappings all take one of them (paired, RFC 4787 REQ-2: its address
    modulo the addresses, in address order), so two hosts can each keep port 40000; an answer to the other address
    finds nothing; port forwards are on the first address."""
    first, second, even_host, even_mac = "203.0.113.1", "203.0.113.2", "198.18.0.4", "02:00:00:00:00:04"
    rules = (f"inside port 0\noutside port 0 gateway {NEXT_HOP_MAC}\npublic {second}\npublic {first}\n"
             f"forward tcp 8080 to {even_host} 80 mac {even_mac}\n")
    query, answer = UDP(sport=40000, dport=53) / b"query", UDP(sport=53, dport=40000) / b"answer"

    def out_from(addr):
        return Ether(src=PORT_MAC, dst=NEXT_HOP_MAC) / IP(src=addr, dst=REMOTE)

    def in_to(addr):
        return Ether(src=NEXT_HOP_MAC, dst=PORT_MAC) / IP(src=REMOTE, dst=addr)

    check("nat", [
        Fixture("an odd inside address leaves from the second address", bytes(going_out() / query), "tx",
                bytes(out_from(second) / query)),
        Fixture("its answer to that address gets in", bytes(in_to(second) / answer), "tx",
                bytes(translated_in() / answer)),
        Fixture("an answer to the first address finds no one", bytes(in_to(first) / answer), "pass"),
        Fixture("an even one leaves from the first, keeping the same port",
                bytes(going_out(even_host, even_mac) / query), "tx", bytes(out_from(first) / query)),
        Fixture("and its answer reaches it", bytes(in_to(first) / answer), "tx",
                bytes(translated_in(to=even_host, mac=even_mac) / answer)),
        Fixture("the odd host to another remote: the same address and port",
                bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=OTHER_REMOTE) / query), "tx",
                bytes(Ether(src=PORT_MAC, dst=NEXT_HOP_MAC) / IP(src=second, dst=OTHER_REMOTE) / query)),
        Fixture("the even host's port unreachable goes out from its address",
                bytes(going_out(even_host, even_mac) / unreachable(REMOTE, even_host, 53, 40000, b"answer")), "tx",
                bytes(out_from(first) / unreachable(REMOTE, first, 53, 40000, b"answer"))),
        Fixture("a port forward, on the first address",
                bytes(in_to(first) / TCP(sport=5555, dport=8080, flags="S")), "tx",
                bytes(translated_in(to=even_host, mac=even_mac) / TCP(sport=5555, dport=80, flags="S"))),
        Fixture("not on the second", bytes(in_to(second) / TCP(sport=5555, dport=8080, flags="S")), "pass"),
    ], tmp_path, rules=rules)

"""The acl's classifier, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py): the
lowest sequence number that matches wins, prefix and range edges on both sides, protocols, TCP flags, IPv6, a rule
of either family, the default, and what is not IP."""

from pathlib import Path

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from conntrack_script import STATEFUL_RULES, mark, script
from nf_fixtures import CLIENT_MAC, PORT_MAC, Fixture, check

RULES = (Path(__file__).parent / "example.rules").read_text() + "default allow\n"

def eth():
    return Ether(src=CLIENT_MAC, dst=PORT_MAC)


def tcp4(src, dst, sport, dport, flags="A"):
    return bytes(eth() / IP(src=src, dst=dst) / TCP(sport=sport, dport=dport, flags=flags))


def udp4(src, dst, sport, dport):
    return bytes(eth() / IP(src=src, dst=dst) / UDP(sport=sport, dport=dport))


def test_the_first_matching_rule_decides(tmp_path):
    check("acl", [
        Fixture("10 before 20: ssh from the /24 allowed", tcp4("10.1.2.9", "192.0.2.1", 40000, 22), "tx"),
        Fixture("20: ssh from elsewhere in the /16 dropped", tcp4("10.1.3.9", "192.0.2.1", 40000, 22), "drop"),
        Fixture("20: the range's low edge", tcp4("10.1.3.9", "192.0.2.1", 40000, 20), "drop"),
        Fixture("20: the range's high edge", tcp4("10.1.3.9", "192.0.2.1", 40000, 23), "drop"),
        Fixture("20: one past the range", tcp4("10.1.3.9", "192.0.2.1", 40000, 24), "tx"),
        Fixture("20: one below the range", tcp4("10.1.3.9", "192.0.2.1", 40000, 19), "tx"),
        Fixture("20: the /16's last address", tcp4("10.1.255.255", "192.0.2.1", 1, 21), "drop"),
        Fixture("20: just outside the /16", tcp4("10.2.0.0", "192.0.2.1", 1, 21), "tx"),
        Fixture("30 before 40: DNS to the resolver from a high port", udp4("10.9.9.9", "192.0.2.53", 50000, 53), "tx"),
        Fixture("40: a high UDP port", udp4("10.9.9.9", "192.0.2.54", 53, 1024), "drop"),
        Fixture("40: just below its range", udp4("10.9.9.9", "192.0.2.54", 53, 1023), "tx"),
        Fixture("40: its top", udp4("10.9.9.9", "192.0.2.54", 53, 65535), "drop"),
    ], tmp_path, rules=RULES)


def test_flags_protocols_and_families(tmp_path):
    v6 = lambda src, dst: eth() / IPv6(src=src, dst=dst)
    check("acl", [
        Fixture("50: a SYN to 8080", tcp4("203.0.113.1", "192.0.2.1", 1000, 8080, "S"), "drop"),
        Fixture("50: a SYN-ACK is not a first segment", tcp4("203.0.113.1", "192.0.2.1", 1000, 8080, "SA"), "tx"),
        Fixture("50: an ACK passes", tcp4("203.0.113.1", "192.0.2.1", 1000, 8080, "A"), "tx"),
        Fixture("70 before 80: ping from the /24", bytes(eth() / IP(src="198.51.100.7", dst="192.0.2.1") / ICMP()), "tx"),
        Fixture("80: any other ping", bytes(eth() / IP(src="198.51.101.7", dst="192.0.2.1") / ICMP()), "drop"),
        Fixture("60: anything from the bad /48", bytes(v6("2001:db8:bad:1::1", "2001:db8::1") / UDP(dport=9)), "drop"),
        Fixture("60: next door to the /48", bytes(v6("2001:db8:bae::1", "2001:db8::1") / UDP(dport=9)), "tx"),
        Fixture("40 has no prefix: it holds for IPv6 too", bytes(v6("2001:db8:1::1", "2001:db8::1") / UDP(dport=4000)),
                "drop"),
        Fixture("90: from port 443 into the /32", bytes(v6("2001:db9::1", "2001:db8::1") / TCP(sport=443, dport=999)),
                "drop"),
        Fixture("90: from port 444", bytes(v6("2001:db9::1", "2001:db8::1") / TCP(sport=444, dport=999)), "tx"),
        Fixture("arp: non-IP keeps the link working",
                bytes(Ether(src=CLIENT_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst="192.0.2.1")), "tx"),
        Fixture("an IPv4 header cut short", tcp4("10.1.2.9", "192.0.2.1", 1, 22)[:14 + 19], "drop", malformed=True),
    ], tmp_path, rules=RULES)


def test_the_default_drop(tmp_path):
    check("acl", [
        Fixture("no rule: the default", udp4("10.9.9.9", "192.0.2.54", 53, 80), "drop"),
        Fixture("an allow rule still passes", tcp4("10.1.2.9", "192.0.2.1", 40000, 22), "tx"),
    ], tmp_path, rules=RULES.replace("default allow", "default drop"))


ZEROS = "0" * 60


def test_every_word_is_read_whole(tmp_path):
    """Numbers padded with zeros mean what they say, however long: the parser never cuts a word and reads the
    rest (a port of 60 zeros and 80 was once read as port 0, a range's top as 6)."""
    check("acl", [
        Fixture("dport 0...080 is port 80", tcp4("10.9.9.9", "192.0.2.1", 1, 80), "drop"),
        Fixture("and not port 0", tcp4("10.9.9.9", "192.0.2.1", 1, 0), "tx"),
        Fixture("1-0...065535 reaches the top", udp4("10.9.9.9", "192.0.2.1", 1, 65535), "drop"),
        Fixture("not only up to 6", udp4("10.9.9.9", "192.0.2.1", 1, 7), "drop"),
    ], tmp_path, rules=f"10 drop tcp dport {ZEROS}80\n20 drop udp dport 1-{ZEROS}65535\ndefault allow\n")


def test_connection_state_is_the_same_in_every_build(tmp_path):
    """The script netfilter's conntrack is held to (tests/conntrack_script.py), frame by frame, each with its mark
    after it as the script counts, in the XDP, tc and native builds: one port, so a passing frame leaves by it
    (tx)."""
    check("acl", [Fixture(f"{i}: {step.why}", bytes(eth() / step.frame / mark(i)), "tx" if step.passes else "drop")
                  for i, step in enumerate(script())], tmp_path, rules=STATEFUL_RULES)


def test_a_connection_idle_past_its_time_is_over(tmp_path):
    udp = lambda src, dst: bytes(eth() / IP(src=src, dst=dst) / UDP(sport=7000, dport=7000))
    check("acl", [
        Fixture("the inside opens a UDP flow", udp("10.1.0.5", "198.51.100.7"), "tx"),
        Fixture("answered at once", udp("198.51.100.7", "10.1.0.5"), "tx"),
        Fixture("answered after its idle time: new, from outside", udp("198.51.100.7", "10.1.0.5"), "drop", wait_s=3.5),
    ], tmp_path, rules=STATEFUL_RULES + "timeout udp 2\ntimeout udp_stream 2\n")

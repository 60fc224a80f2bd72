"""The acl with connection state against Linux's conntrack, and real applications through a stateful acl.

Differential: one stateful ruleset ("answers to what the inside opened, nothing else") as an acl between two ports
and as an nftables chain with conntrack on a bridge of the same ports (python/xnf/lab/netfilter.py). A script of
frames goes through both in the same order, each direction by its own port: TCP handshakes, data, closes, RSTs,
half-open and out-of-window segments, invalid flags, UDP, ICMP echo, ICMP errors about tracked and untracked flows,
IPv6, neighbour discovery, idle expiry. Each frame is followed by a fence (a non-IP frame both forward) and what
came out before the fence is what passed. Both must pass exactly what the script says, frame by frame."""

from __future__ import annotations

import json
import struct
import time

import pytest
from scapy.layers.inet import IP, TCP, UDP, fragment
from scapy.layers.inet6 import IPv6, IPv6ExtHdrFragment, fragment6
from scapy.layers.l2 import Dot1Q, Ether

from conntrack_script import (A, A6, B, B6, INSIDE, OUTSIDE, PAYLOAD, STATEFUL_RULES, Step, handshake, mark, script,
                              tcp, udp)
from xnf import contract, control
from xnf.errors import XnfError
from xnf.lab import apps, bpf_maps, netfilter, paths
from xnf.lab.generator import Generator
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology
from xnf.model import cases
from lab_helpers import run_xnf, wait_until

MODES = paths.Selection(select=paths.representative)
FENCE_TYPE = 0x88B5          # IEEE's local experimental EtherType: not IP, so both forward it untouched


class Wire:
    """Frames into one port and out of the other, one at a time, each followed by a fence."""

    def __init__(self, t: Topology):
        self.t = t
        self.ports = [PacketPort(t.gen_ns, link.gen_if) for link in t.links[:2]]
        self.fences = 0

    def carry(self, enters: int, packets: list) -> list[bytes]:
        """Packets (from IP up) into one port, then a fence: the frames that came out of the other before it."""
        sender, receiver = self.t.links[enters], self.t.links[1 - enters]
        frames = [bytes(Ether(src=sender.gen_mac, dst=receiver.gen_mac) / p) for p in packets]
        self.fences += 1
        fence_id = struct.pack("!I", self.fences)
        fence = bytes(Ether(src=sender.gen_mac, dst=receiver.gen_mac, type=FENCE_TYPE) / (b"fence" + fence_id))
        self.ports[1 - enters].drain()   # what came before (a flood's frames) would hide the fence
        self.ports[enters].send([*frames, fence])
        got = self.ports[1 - enters].receive_until(lambda f: f[12:14] == b"\x88\xb5" and f[19:23] == fence_id)
        return [f for f in got if f[12:14] != b"\x88\xb5"]

    def passes(self, enters: int, payload, number: int) -> bool:
        marked = mark(number)
        return any(marked in f for f in self.carry(enters, [payload / marked]))

    def run(self, steps: list[Step]) -> list[bool]:
        return [self.passes(s.enters, s.frame, i) for i, s in enumerate(steps)]

    def close(self) -> None:
        for port in self.ports:
            port.close()


def differences(steps: list[Step], passed: list[bool]) -> list[str]:
    return [f"step {i} ({s.why}): {'passed' if p else 'dropped'}" for i, (s, p) in enumerate(zip(steps, passed))
            if p != s.passes]


def through(t: Topology, steps: list[Step]) -> list[bool]:
    wire = Wire(t)
    try:
        return wire.run(steps)
    finally:
        wire.close()


def test_nftables_with_conntrack_passes_what_the_script_says():
    """The script is netfilter's behaviour: checked against Linux itself, so the acl is held to Linux, not to us."""
    steps = script()
    with Topology("two-port") as t:
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, STATEFUL_RULES)
        assert differences(steps, through(t, steps)) == []


@pytest.mark.parametrize("mode", MODES)
def test_the_stateful_acl_passes_what_conntrack_passes(mode, rules_file, two_port):
    steps = script()
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(STATEFUL_RULES), extra=extra)
    assert differences(steps, through(two_port, steps)) == []
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["ct_new"] > 0 and counters["ct_full"] == 0
    assert nf.stop() == 0


EXPIRY_RULES = STATEFUL_RULES + "timeout udp 4\ntimeout udp_stream 4\n"


def expiry_steps() -> tuple[list[Step], list[Step]]:
    before = [Step(INSIDE, udp(INSIDE, 7000, 7000), True, "a UDP flow opens"),
              Step(OUTSIDE, udp(OUTSIDE, 7000, 7000), True, "answered within the idle time")]
    after = [Step(OUTSIDE, udp(OUTSIDE, 7000, 7000), False, "answered after the idle time: new, from outside")]
    return before, after


def across_idle_time(t: Topology, before: list[Step], after: list[Step]) -> list[str]:
    """before's steps, then after's once a 4 s idle time is past: what went otherwise than the steps say."""
    wire = Wire(t)
    try:
        passed = wire.run(before)
        time.sleep(4 + 1.5)   # past the idle time: an entry only gets more over with time, so this cannot flake
        return differences(before, passed) + differences(after, wire.run(after))
    finally:
        wire.close()


def expiry(t: Topology) -> list[str]:
    return across_idle_time(t, *expiry_steps())


def test_an_idle_flow_is_over_in_nftables():
    with Topology("two-port") as t:
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, EXPIRY_RULES)
        assert expiry(t) == []


@pytest.mark.parametrize("mode", MODES)
def test_an_idle_flow_is_over_in_the_acl(mode, rules_file, two_port):
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(EXPIRY_RULES), extra=extra)
    assert expiry(two_port) == []
    assert "timeout udp 4" in nf.request("rules list")
    assert nf.stop() == 0


def unacknowledged(t: Topology) -> list[str]:
    """A connection whose data is not acknowledged is over after tcp_unacknowledged (4 s) rather than
    tcp_established's days: an acknowledgement after it is of no connection, picked up from outside."""
    inside_end = 1001 + PAYLOAD
    before = handshake(40020, 80) + [
        Step(INSIDE, tcp(INSIDE, 40020, 80, "PA", inside_end, 5001 + PAYLOAD), True, "data past what was sent")]
    after = [Step(OUTSIDE, tcp(OUTSIDE, 80, 40020, "A", 5001 + PAYLOAD, inside_end + PAYLOAD), False,
                  "its acknowledgement after tcp_unacknowledged: new, from outside")]
    return across_idle_time(t, before, after)


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_data_never_acknowledged_ends_its_connection_sooner(subject, rules_file):
    with Topology("two-port") as t:
        rules = STATEFUL_RULES + "timeout tcp_unacknowledged 4\n"
        if subject == "nftables":
            netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, rules)
        else:
            mode, extra = MODES[subject]
            NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra)
        assert unacknowledged(t) == []


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_a_liberal_table_leaves_windows_unchecked(subject, rules_file):
    """`conntrack liberal`, as netfilter's nf_conntrack_tcp_be_liberal=1 (for one-way routes, where the tracker sees
    one direction only): data far past the window passes, and so does a blind RST."""
    rules = STATEFUL_RULES + "conntrack liberal\n"
    steps = handshake(40030, 443) + [
        Step(OUTSIDE, tcp(OUTSIDE, 443, 40030, "PA", 900000000, 1001 + PAYLOAD), True, "data far past the window"),
        Step(OUTSIDE, tcp(OUTSIDE, 443, 40030, "R", 100005001), True, "a blind RST far from the window"),
        Step(INSIDE, tcp(INSIDE, 40030, 443, "PA", 1001 + PAYLOAD, 5001 + PAYLOAD), True, "the connection goes on"),
        Step(OUTSIDE, tcp(OUTSIDE, 6001, 22, "S"), False, "liberal windows, the same rules: a SYN from outside"),
    ]
    with Topology("two-port") as t:
        if subject == "nftables":
            netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, rules)
        else:
            mode, extra = MODES[subject]
            nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra)
            assert "conntrack liberal" in nf.request("rules list")
        assert differences(steps, through(t, steps)) == []


def established_udp(wire: Wire, sport: int) -> tuple:
    """A UDP connection from the inside to port 53 opened, answered and used both ways: its two directions' frames."""
    outward, inward = udp(INSIDE, sport, 53), udp(OUTSIDE, 53, sport)
    steps = [Step(INSIDE, outward, True, "opens"), Step(OUTSIDE, inward, True, "answered"),
             Step(INSIDE, outward, True, "established"), Step(OUTSIDE, inward, True, "established the other way")]
    assert differences(steps, wire.run(steps)) == []
    return outward, inward


@pytest.mark.parametrize("mode", MODES)
def test_a_rule_change_holds_for_connections_already_established(mode, rules_file, two_port):
    """The acl keeps its decision for an established connection's frames in the connection (docs/conntrack.md):
    a rule added or removed after it was established still decides its next frame, one direction or the other,
    and a rule that reads TCP flags or a VLAN tag is read on every frame."""
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(cases.STATEFUL_ACL),
                          extra=extra)
    wire = Wire(two_port)
    try:
        outward, inward = established_udp(wire, 7100)
        nf.request("rules add 5 drop udp dport 53")
        dropped = [Step(INSIDE, outward, False, "a rule added now drops it"),
                   Step(OUTSIDE, inward, True, "the other direction, which the rule does not name")]
        assert differences(dropped, wire.run(dropped)) == []
        nf.request("rules del 5 drop udp dport 53")
        nf.request("rules add 6 drop udp sport 53 vlan 7")   # reads the tag: no decision is kept
        again = [Step(INSIDE, outward, True, "the rule removed, it passes again"),
                 Step(OUTSIDE, inward, True, "untagged, the VLAN rule does not match"),
                 Step(OUTSIDE, Dot1Q(vlan=7) / inward, False, "the same connection tagged 7: the rule drops it"),
                 Step(OUTSIDE, inward, True, "untagged again")]
        assert differences(again, wire.run(again)) == []
    finally:
        wire.close()
    assert nf.stop() == 0


# Rule 30 reads TCP flags: what rule 10 decides for an established connection holds for its later frames (no rule
# before 10 reads what differs between them), what rule 30 or the default decides does not.
FLAGS_LATER = ("10 allow state established,related\n20 drop state invalid\n30 drop tcp flags fin,syn\n"
               "40 allow state new\ndefault drop\n")
KEPT_ALLOW_BOTH_WAYS = 0x44   # per direction (a nibble each): the kept bit 4, the outcome 0 (a rule allowed it)


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_hooks))
def test_a_decision_before_the_first_rule_that_reads_flags_is_kept(mode, rules_file, two_port, bpffs):
    """A rule that reads TCP flags or a VLAN tag stops the acl keeping the decisions of the rules after it, not of
    those before it (docs/conntrack.md): the connection's entry holds both directions' decisions, read through
    bpftool. The frames' fate is tests above's; this is about the search being skipped."""
    pins = bpffs / "acl"
    nf = NfInstance.start(two_port, "acl", mode, two_port.dut_ifaces, rules=rules_file(FLAGS_LATER),
                          extra=["--pin", str(pins)])
    wire = Wire(two_port)
    try:
        outward, inward = established_udp(wire, 7200)
        [entry] = bpf_maps.pinned_entries(pins / "acl_ct")
        assert entry["value"]["nf_note"] == KEPT_ALLOW_BOTH_WAYS, entry
        kept_under = entry["value"]["nf_epoch"]
        nf.request("rules add 5 drop udp sport 53 vlan 7")   # reads a tag before rule 10: nothing is kept now
        steps = [Step(INSIDE, outward, True, "established, searched"),
                 Step(OUTSIDE, Dot1Q(vlan=7) / inward, False, "tagged 7: rule 5 drops it")]
        assert differences(steps, wire.run(steps)) == []
        [entry] = bpf_maps.pinned_entries(pins / "acl_ct")
        assert entry["value"]["nf_epoch"] == kept_under, entry   # no decision kept under the new rules
    finally:
        wire.close()
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", paths.Selection(select=paths.kernel_and_user))
def test_conntrack_lists_the_connections_as_the_frames_left_them(mode, rules_file, two_port):
    """`xnf conntrack`: a TCP connection through its handshake (established, assured), one whose SYN was never
    answered (syn_sent, unreplied), a UDP flow answered (not yet a stream), one that went on after its answer within
    2 s (not yet a stream either, as in netfilter) and then after them (a stream: assured), and an IPv6 one; both
    tuples, as conntrack -L lists them; and an instance with no table says so."""
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(STATEFUL_RULES), extra=extra)
    wire = Wire(two_port)
    try:
        steps = handshake(41001, 80) + handshake(41002, 443, v6=True) + [
            Step(INSIDE, tcp(INSIDE, 41003, 22, "S", 7000), True, "a SYN never answered"),
            Step(INSIDE, udp(INSIDE, 41004, 53), True, "a UDP flow opened"),
            Step(OUTSIDE, udp(OUTSIDE, 53, 41004), True, "and answered")]
        assert differences(steps, wire.run(steps)) == []
        port, began = udp_flow_going_on_within(wire, 2.0, ports=range(41005, 41010))
        assert not assured(nf, port), "a UDP flow 2 s young is not a stream yet"
        time.sleep(max(0.0, began + 2.5 - time.monotonic()))   # the condition is the flow's age itself
        steps = [Step(INSIDE, udp(INSIDE, port, 53), True, "going on 2 s after its first frame: a stream")]
        assert differences(steps, wire.run(steps)) == []
    finally:
        wire.close()
    listed = run_xnf(["conntrack", "--name", nf.name, "--json"])
    assert listed.returncode == 0, listed.stderr
    answer = json.loads(listed.stdout)
    seen = {(c["proto"], c["opener"]["addr"], c["opener"]["port"], c["answerer"]["addr"], c["answerer"]["port"]):
            (c["tcp_state"], c["answered"], c["assured"]) for c in answer["connections"]
            if not 41005 <= c["opener"]["port"] < port}   # flows a slow machine took too long over
    assert seen == {(6, A, 41001, B, 80): ("established", True, True),
                    (6, A6, 41002, B6, 443): ("established", True, True),
                    (6, A, 41003, B, 22): ("syn_sent", False, False), (17, A, 41004, B, 53): (None, True, False),
                    (17, A, port, B, 53): (None, True, True)}, seen
    assert (answer["table"], answer["in_force"], answer["over_not_swept"]) == ("acl_ct", 5 + port - 41005, 0)
    assert all(0 <= c["idle_s"] <= c["idle_s"] + c["left_s"] for c in answer["connections"])
    text = run_xnf(["conntrack", "--name", nf.name]).stdout
    assert (f" SYN_SENT src={A} dst={B} sport=41003 dport=22 [UNREPLIED] src={B} dst={A} sport=22 dport=41003  idle"
            in text), text
    assert (f" ESTABLISHED src={A6} dst={B6} sport=41002 dport=443 src={B6} dst={A6} sport=443 dport=41002 [ASSURED]"
            in text), text
    two = json.loads(run_xnf(["conntrack", "--name", nf.name, "--json", "--limit", "2"]).stdout)
    assert (len(two["connections"]), two["listed"], two["in_force"]) == (2, 2, 5 + port - 41005), two
    for wrong in (["--limit", "0"], ["--table", "acl_rules"]):
        refused = run_xnf(["conntrack", "--name", nf.name, *wrong])
        assert refused.returncode == 1 and "Traceback" not in refused.stderr, refused.stderr
    for request in ("connections acl_ct 0", "connections acl_ct 2x", "connections acl_rules", "connections "):
        with pytest.raises(XnfError):
            nf.request(request)
    assert nf.stop() == 0
    fwd = NfInstance.start(two_port, "fwd", name, two_port.dut_ifaces, extra=extra)
    refused = run_xnf(["conntrack", "--name", fwd.name])
    assert refused.returncode == 1 and "tracks no connections" in refused.stderr and "Traceback" not in refused.stderr
    assert fwd.stop() == 0


def udp_flow_going_on_within(wire: Wire, seconds: float, ports: range) -> tuple[int, float]:
    """A UDP flow opened, answered and going on, all within `seconds` of its first frame (a slow machine tries again
    on the next port): its port and when it began."""
    for port in ports:
        began = time.monotonic()
        steps = [Step(INSIDE, udp(INSIDE, port, 53), True, "a UDP flow opened"),
                 Step(OUTSIDE, udp(OUTSIDE, 53, port), True, "answered"),
                 Step(INSIDE, udp(INSIDE, port, 53), True, "and going on")]
        assert differences(steps, wire.run(steps)) == []
        if time.monotonic() - began < seconds:
            return port, began
    raise AssertionError(f"no UDP flow went through its three frames within {seconds} s")


def assured(nf: NfInstance, port: int) -> bool:
    """Whether `xnf conntrack` calls the UDP flow from the inside's port assured."""
    listed = json.loads(run_xnf(["conntrack", "--name", nf.name, "--json"]).stdout)
    [flow] = [c for c in listed["connections"] if c["proto"] == 17 and c["opener"]["port"] == port]
    return flow["assured"]


def inside_only(inside) -> str:
    """What an edge firewall in front of a host says: answers to what it opened come back, nothing else does."""
    return (f"10 allow state established,related\n20 drop state invalid\n30 allow from {inside.ip} state new\n"
            f"31 allow from {inside.ip6} state new\n40 allow icmpv6 state untracked\ndefault drop\n")


@pytest.mark.parametrize("variant", MODES)
def test_real_applications_opened_inside_work_and_an_outside_scan_gets_nothing(variant, rules_file):
    mode, extra = MODES[variant]
    with HostsTopology(kind="wire", hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        web = apps.WebServer(t, outside.ns, outside.ip)
        inside_web = apps.WebServer(t, inside.ns, inside.ip, port=apps.HTTP_PORT + 1)
        nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(inside_only(inside)), extra=extra)
        assert apps.ping(inside.ns, outside.ip, 10) == 10 and apps.ping(inside.ns, outside.ip6, 10) == 10
        assert apps.download_sha256(inside.ns, web.url) == web.sha256
        assert apps.iperf3(t, inside.ns, outside.ns, outside.ip).received_bytes > 0
        assert apps.iperf3(t, inside.ns, outside.ns, outside.ip6, reverse=True).received_bytes > 0
        assert apps.traceroute_hops(inside.ns, outside.ip) == [outside.ip], "port unreachable is related"
        assert apps.ping(outside.ns, inside.ip, 5) == 0 and apps.ping(outside.ns, inside.ip6, 5) == 0
        ports = [22, 80, apps.HTTP_PORT + 1, 443, 5201, 8080]
        assert set(apps.tcp_scan(outside.ns, inside.ip, ports).values()) == {"filtered"}
        assert set(apps.tcp_scan(outside.ns, inside.ip6, ports).values()) == {"filtered"}
        with pytest.raises(XnfError, match="curl"):
            apps.download_sha256(outside.ns, inside_web.url, timeout_s=2)
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["ct_new"] > 0 and counters["default_drop"] > 0
        assert nf.stop() == 0


@pytest.mark.parametrize("subject", ["nftables", *paths.Selection(select=paths.kernel_hooks)])
def test_a_connection_whose_first_answer_was_lost_opens_with_the_next(subject, rules_file):
    """The client's stack loses the server's first SYN/ACK (after the firewall passed it); the server sends it again
    a second later, which netfilter's state table ignores and passes with the connection: curl connects at once
    then, through the acl as through nftables (it once failed after its whole timeout here)."""
    with HostsTopology(kind="wire", hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        web = apps.WebServer(t, outside.ns, outside.ip)
        if subject == "nftables":
            netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, inside_only(inside))
        else:
            mode, extra = MODES[subject]
            NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(inside_only(inside)), extra=extra)
        # The first SYN/ACK to reach the client is dropped there: its stack waits for the server's retransmission.
        netfilter.nft(inside.ns, "table inet lose { chain in { type filter hook input priority 0; "
                      "tcp flags & (syn | ack) == syn | ack numgen inc mod 1000 == 0 drop; }; }")
        started = time.monotonic()
        assert apps.download_sha256(inside.ns, web.url, timeout_s=10) == web.sha256
        assert time.monotonic() - started < 5, "connected only after the client's own retries"


def stateful_between(t: Topology, subject: str, rules_file) -> NfInstance | None:
    """STATEFUL_RULES between the topology's two ports: nftables with conntrack on a bridge (None), or the acl in the
    mode that subject names."""
    if subject == "nftables":
        netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, STATEFUL_RULES)
        return None
    mode, extra = MODES[subject]
    return NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=rules_file(STATEFUL_RULES), extra=extra)


def with_wrong_checksum(packet):
    """The packet with its TCP checksum off by some bits."""
    right = packet.__class__(bytes(packet))[TCP].chksum
    packet = packet.copy()
    packet[TCP].chksum = right ^ 0x00ff
    return packet


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_a_segment_with_a_wrong_checksum_moves_no_connection(subject, rules_file):
    """A RST whose checksum is wrong (forged blind, or damaged: its endpoint ignores it) is invalid and leaves the
    connection established, and a SYN whose checksum is wrong opens nothing, as in netfilter; at tc the acl cannot
    know a frame's checksum state and takes the RST (docs/conntrack.md)."""
    at_tc = subject != "nftables" and MODES[subject][0] == "tc"
    steps = handshake(40010, 80) + [
        Step(OUTSIDE, with_wrong_checksum(tcp(OUTSIDE, 80, 40010, "R", 5001)), at_tc,
             "a RST with a wrong checksum: invalid"),
        Step(INSIDE, with_wrong_checksum(tcp(INSIDE, 40011, 80, "S", 1000)), at_tc,
             "a SYN with a wrong checksum: invalid, opens nothing"),
        Step(OUTSIDE, tcp(OUTSIDE, 80, 40011, "SA", 7000, 1001), at_tc, "an answer to it: of no connection"),
    ]
    if not at_tc:
        steps.insert(4, Step(OUTSIDE, tcp(OUTSIDE, 80, 40010, "PA", 5001, 1001), True, "the connection goes on"))
    with Topology("two-port") as t:
        nf = stateful_between(t, subject, rules_file)
        assert differences(steps, through(t, steps)) == []
        if subject != "nftables":
            assert control.request_json(nf.name, "stats")["counters"]["ct_bad_checksum"] == (0 if at_tc else 2)


DATAGRAM = bytes(range(256)) * 10     # 2,568 bytes with its UDP header: three fragments of at most 1,000


def fragmented(v6: bool, src: str, dst: str, sport: int, dport: int, datagram_id: int) -> list:
    """A UDP datagram in three fragments, first to last."""
    if v6:
        return fragment6(IPv6(src=src, dst=dst) / IPv6ExtHdrFragment(id=datagram_id) / UDP(sport=sport, dport=dport) /
                         DATAGRAM, 1000)
    return fragment(IP(src=src, dst=dst, id=datagram_id) / UDP(sport=sport, dport=dport) / DATAGRAM, fragsize=1000)


def reassembled(frames: list[bytes], v6: bool) -> bytes:
    """What of the datagram came through, from its start: its fragments' bytes by offset, up to the first gap."""
    pieces = {}
    for frame in frames:
        ip = Ether(frame).payload
        if v6 and ip.haslayer(IPv6ExtHdrFragment):
            header = ip[IPv6ExtHdrFragment]
            pieces[header.offset * 8] = bytes(header.payload)[:ip.plen - 8]
        elif not v6 and isinstance(ip, IP):
            pieces[ip.frag * 8] = bytes(ip.payload)[:ip.len - ip.ihl * 4]
    data = b""
    while len(data) in pieces:
        data += pieces.pop(len(data))
    return data


@pytest.mark.parametrize("v6", [False, True], ids=["ipv4", "ipv6"])
@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_a_fragmented_datagram_goes_as_its_first_fragment_went(subject, v6, rules_file):
    """An answer in three fragments to a flow the inside opened arrives whole, through nftables (which reassembles)
    and the acl (whose later fragments take their first fragment's ports and state); an unasked one from outside
    arrives not at all. Fragments that come before their first are invalid in the acl and counted, where netfilter
    waits for the first (docs/conntrack.md)."""
    a, b = (A6, B6) if v6 else (A, B)
    with Topology("two-port") as t:
        nf = stateful_between(t, subject, rules_file)
        wire = Wire(t)
        try:
            assert wire.passes(INSIDE, (IPv6(src=a, dst=b) if v6 else IP(src=a, dst=b)) / UDP(sport=5360, dport=5360),
                               1), "the query"
            answer = reassembled(wire.carry(OUTSIDE, fragmented(v6, b, a, 5360, 5360, 0x4242)), v6)
            assert answer[8:] == DATAGRAM, f"the answer: {len(answer)} bytes"
            assert wire.carry(OUTSIDE, fragmented(v6, b, a, 5361, 5362, 0x4243)) == [], "an unasked datagram"
            late_first = reassembled(wire.carry(OUTSIDE, fragmented(v6, b, a, 5360, 5360, 0x4244)[::-1]), v6)
        finally:
            wire.close()
        if subject == "nftables":
            assert late_first[8:] == DATAGRAM
        else:
            assert 0 < len(late_first) < len(DATAGRAM), "the first fragment alone"
            assert control.request_json(nf.name, "stats")["counters"]["ct_fragment_unmatched"] == 2


TABLE_ENTRIES = contract.describe("acl")["maps"]["acl_ct"]   # the acl's own account of its table (ACL_CT_ENTRIES)


def syn_flood(t: Topology, runs: int) -> None:
    """60,000 SYNs a run, each from a source of its own (10.64.0.0/16, 10.65.0.0/16, ...), paced so that the DUT
    takes them all."""
    for run in range(runs):
        Generator(t).run("--count", "60000", "--rate", "150000", "--proto", "tcp-syn", "--flows", "60000", "--vary",
                         "saddr", "--src-ip", f"10.{64 + run}.0.0", "--dst-ip", "198.51.100.7", "--dport", "80")


def answered_flows(ports: range) -> list[Step]:
    return [step for port in ports for step in (Step(INSIDE, udp(INSIDE, port, 53), True, f"flow {port} opens"),
                                                 Step(OUTSIDE, udp(OUTSIDE, 53, port), True, f"flow {port} answered"))]


@pytest.mark.parametrize("mode", paths.Selection(select=paths.kernel_and_user))
def test_a_syn_flood_past_the_table_gives_way_to_new_connections(mode, rules_file, two_port):
    """The table's policy when full (docs/conntrack.md), as netfilter's early drop: 300,000 SYNs never answered
    into a table of 262,144 all get in, each past the table's size in the entry of the oldest unanswered one
    (counted: ct_early_drop), none refused; the answered connection from before the flood keeps passing, and a new
    connection opened after it gets in and is answered."""
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(cases.STATEFUL_ACL),
                          extra=extra)
    wire = Wire(two_port)
    try:
        before = answered_flows(range(7100, 7101))
        assert differences(before, wire.run(before)) == []
        syn_flood(two_port, 5)
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["ct_new"] > TABLE_ENTRIES and counters["ct_full"] == 0, counters
        assert counters["ct_early_drop"] == counters["ct_new"] - TABLE_ENTRIES, counters
        after = [Step(INSIDE, udp(INSIDE, 7100, 53), True, "the answered flow, after the flood"),
                 *answered_flows(range(7101, 7102))]
        assert differences(after, wire.run(after)) == []
        assert control.request_json(nf.name, "stats")["counters"]["ct_early_drop"] == counters["ct_early_drop"] + 1
    finally:
        wire.close()
    assert nf.stop() == 0


SMALL_TABLE = 8


@pytest.mark.parametrize("mode", paths.Selection(select=paths.kernel_and_user))
def test_a_table_full_of_answered_connections_refuses_new_ones_until_the_sweeper_frees(mode, rules_file, two_port):
    """A table (--map-size acl_ct=8) full of answered connections: a new connection's frame is dropped and counted
    (ct_full), the answered ones keep passing; once they are over (udp and udp_stream 2 s), the sweeper frees them
    and new connections get in."""
    name, extra = MODES[mode]
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces,
                          rules=rules_file(cases.STATEFUL_ACL + "timeout udp 2\ntimeout udp_stream 2\n"),
                          extra=[*extra, "--map-size", f"acl_ct={SMALL_TABLE}"])
    wire = Wire(two_port)
    try:
        full = answered_flows(range(7100, 7100 + SMALL_TABLE))
        assert differences(full, wire.run(full)) == []
        during = [Step(INSIDE, udp(INSIDE, 7100, 53), True, "an answered flow, table full"),
                  Step(INSIDE, udp(INSIDE, 7200, 53), False, "a new flow, table full of answered ones: refused")]
        assert differences(during, wire.run(during)) == []
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["ct_full"] == 1 and counters["ct_early_drop"] == 0, counters
        later = [Step(INSIDE, udp(INSIDE, 7201, 53), True, "a new flow once the answered ones are over")]
        wait_until(lambda: wire.run(later) == [True], timeout_s=60, what="the sweeper freeing the over entries")
    finally:
        wire.close()
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", paths.Selection(select=paths.each_build))
def test_a_smaller_table_gives_its_ring_its_size_and_keeps_making_room(mode, rules_file, two_port):
    """--map-size acl_ct=8 makes the ring of the table's newest connections 8 too, and the data path takes the
    ring's size from the map, not from the NF's source: 20 new connections never answered each get in, the 12 past
    the table's 8 by taking the oldest one's entry (netfilter's early drop), none refused. A size for the ring alone,
    the windows alone, or the table's idle times, is refused, naming the table to size."""
    name, extra = MODES[mode]
    for part, why in [("acl_ct_newest", "is the ring of acl_ct's newest connections and has its size"),
                      ("acl_ct_windows", "holds the TCP windows of acl_ct's connections and has its size"),
                      ("acl_ct_timeouts", "is a part of the connection table acl_ct and has a fixed size")]:
        refused = run_xnf(["run", "acl", "--mode", name, "--iface", two_port.dut_ifaces[0], *extra,
                           "--map-size", f"{part}={SMALL_TABLE}"], ns=two_port.dut_ns)
        assert refused.returncode == 1 and "Traceback" not in refused.stderr
        assert f"--map-size: {part} {why}: give acl_ct's size instead" in refused.stderr, refused.stderr
    nf = NfInstance.start(two_port, "acl", name, two_port.dut_ifaces, rules=rules_file(cases.STATEFUL_ACL),
                          extra=[*extra, "--map-size", f"acl_ct={SMALL_TABLE}"])
    wire = Wire(two_port)
    try:
        assert control.request_json(nf.name, "entries acl_ct_newest")["capacity"] == SMALL_TABLE
        assert control.request_json(nf.name, "entries acl_ct_windows")["capacity"] == SMALL_TABLE
        unanswered = [Step(INSIDE, udp(INSIDE, 7300 + i, 53), True, f"new connection {i + 1}, never answered")
                      for i in range(20)]
        assert differences(unanswered, wire.run(unanswered)) == []
        counters = control.request_json(nf.name, "stats")["counters"]
        assert (counters["ct_new"], counters["ct_early_drop"], counters["ct_full"]) == (20, 12, 0), counters
    finally:
        wire.close()
    assert nf.stop() == 0


def test_any_nf_tracks_connections_through_the_sdk(tmp_path):
    """tests/nfs/ctfw, docs/conntrack.md's example: frames that open, belong to or relate to a connection pass, an
    invalid or untracked one is dropped, in the XDP, tc and native builds alike (tests/nf_fixtures.py). ctfw writes
    each answered frame's entry anew (the tracker's bring-forward, every time): the other end's SYN after the close
    passes only if the close's transitions were kept through it (in ESTABLISHED it is invalid)."""
    from nf_fixtures import CLIENT_MAC, PORT_MAC, Fixture, check
    from conntrack_script import A6, B6, tcp, port_unreachable
    from scapy.layers.inet6 import ICMPv6ND_NS, IPv6

    def frame(layers) -> bytes:
        return bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / layers)

    check("ctfw", [
        Fixture("a SYN opens", frame(tcp(INSIDE, 40001, 80, "S", 1000)), "tx"),
        Fixture("its answer", frame(tcp(OUTSIDE, 80, 40001, "SA", 5000, 1001)), "tx"),
        Fixture("the last ACK", frame(tcp(INSIDE, 40001, 80, "A", 1001, 5001)), "tx"),
        # ctfw writes every answered frame's entry anew: the close's transitions must survive it
        Fixture("data from outside", frame(tcp(OUTSIDE, 80, 40001, "A", 5001, 1001)), "tx"),
        Fixture("the inside's FIN", frame(tcp(INSIDE, 40001, 80, "FA", 1001, 5001)), "tx"),
        Fixture("the outside's FIN", frame(tcp(OUTSIDE, 80, 40001, "FA", 5001, 1002)), "tx"),
        Fixture("the close's last ACK", frame(tcp(INSIDE, 40001, 80, "A", 1002, 5002)), "tx"),
        Fixture("the other end's SYN after TIME_WAIT opens anew", frame(tcp(OUTSIDE, 80, 40001, "S", 9000)), "tx"),
        Fixture("a SYN/ACK of nothing", frame(tcp(OUTSIDE, 81, 40002, "SA", 1, 1)), "drop"),
        Fixture("SYN and FIN", frame(tcp(INSIDE, 40003, 80, "SF")), "drop"),
        Fixture("a UDP probe", frame(udp(INSIDE, 5354, 33434)), "tx"),
        Fixture("port unreachable about it", frame(port_unreachable("198.51.100.7", 5354, 33434)), "tx"),
        Fixture("neighbour discovery: untracked", frame(IPv6(src=B6, dst=A6, hlim=255) / ICMPv6ND_NS(tgt=A6)),
                "drop"),
    ], tmp_path)

"""Traffic mixes in xnf-gen: several classes in one run, each with its own headers, flows and share, counted
apart by the receiver, exactly, through real NFs on veth."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Dot1AD, Dot1Q
from scapy.utils import rdpcap

from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

ATTACKERS = "203.0.113"
MIX = ["--class", "pass:dport=9,share=0.6", "--class", f"drop:saddr={ATTACKERS}.0/24,share=0.3",
       "--class", "local:dport=11211,proto=tcp,share=0.1"]


def by_name(summary: dict) -> dict[str, dict]:
    return {c["name"]: c for c in summary["classes"]}


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_each_class_is_counted_apart_exactly(mode, rules_file, bare_pair):
    """The firewall drops the attack class (256 sources, one rule each) and returns the rest: per class, what
    came back is exactly what was sent or nothing, and the firewall's drops are exactly the attack's frames."""
    link = bare_pair.links[0]
    acl = "".join(f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9\n" for i in range(256))
    nf = NfInstance.start(bare_pair, "firewall", mode, bare_pair.dut_ifaces, rules=rules_file(acl),
                          extra=paths.worker_options(mode))
    out = Generator(bare_pair, receive_on=0).run("--count", "20480", "--dst-ip", link.dut_ip, "--rate", "100000",
                                         *MIX).summary
    classes = by_name(out)
    assert sum(c["sent"] for c in classes.values()) == out["sent"] == 20480
    assert [round(c["share"], 3) for c in classes.values()] == [0.6, 0.3, 0.101]
    assert classes["drop"]["flows"] == 256 and classes["drop"]["received"] == 0
    assert classes["drop"]["loss_ratio"] == 1.0
    for name in ("pass", "local"):
        assert classes[name]["received"] == classes[name]["sent"] > 0 and classes[name]["lost"] == 0
        assert classes[name]["latency_ns"]["samples"] == classes[name]["sent"]
    assert out["received"] == classes["pass"]["sent"] + classes["local"]["sent"]
    verdicts = nf.stats()
    assert verdicts["drop"]["packets"] == classes["drop"]["sent"]
    assert nf.stop() == 0


def test_classes_may_differ_in_family_and_protocol(bare_pair):
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    out = Generator(bare_pair, receive_on=0).run("--count", "4096", "--class", "v4:share=0.5,flows=4",
                                         "--class", "v6:saddr=2001:2::1,daddr=2001:2::2,proto=tcp,share=0.5"
                                         ).summary
    classes = by_name(out)
    assert out["size"] == 94  # the largest class's smallest frame: IPv6/TCP with the probe
    assert classes["v4"]["received"] == classes["v4"]["sent"] == 2048
    assert classes["v6"]["received"] == classes["v6"]["sent"] == 2048


@pytest.mark.parametrize("classes, message", [
    (["pass:share=0.6", "drop:share=0.3"], "the classes' shares add up to 0.9: they must add up to 1"),
    (["pass:share=0.5,colour=red", "b:share=0.5"], "--class pass: unknown key 'colour'"),
    (["pass:share=0.5", "pass:share=0.5"], "--class pass is given twice"),
    (["pass:dport=9"], "--class pass: give its share of the frames"),
    (["pass:share=1,saddr=2001:2::1"], "--class pass: its source and destination must both be IPv4 or both IPv6"),
    (["pass:share=1.5"], "--class pass: share takes a fraction of the frames above 0 and at most 1"),
    (["pass:share=1,vary=ttl"], "--class pass: vary: unknown field 'ttl'"),
    (["nameless"], "--class takes NAME:key=value,..."),
    (["a:share=0.5,flows=40000", "b:share=0.5,flows=40000"], "the classes have 80000 flows together: at most 65536"),
    (["a:share=1,vlan=0"], "--class a: vlan takes VLAN ids from 1 to 4094 (0 marks a priority tag"),
    (["a:share=1,vlan=4095"], "not '4095'"),
    (["a:share=1,vlan=010"], "not '010'"),
    (["a:share=1,vlan=1.2.3"], "--class a: vlan takes a VLAN id, or OUTER.INNER for QinQ, not '1.2.3'"),
])
def test_a_wrong_mix_is_refused_with_its_reason(pair, classes, message):
    argv = [x for c in classes for x in ("--class", c)]
    result = Generator(pair).run("--count", "10", *argv, check=False)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_prefix_belongs_in_a_class(pair):
    result = Generator(pair).run("--count", "10", "--src-ip", "203.0.113.0/24", check=False)
    assert result.returncode == 2 and "--class NAME:saddr=203.0.113.0/24,share=" in result.stderr


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_tagged_classes_go_through_an_nf_and_are_counted_apart(mode, rules_file, bare_pair):
    """802.1Q and QinQ classes beside an untagged one through the firewall, which parses through the tags: the
    tagged attack class is dropped by its addresses, the others come back whole, each counted exactly."""
    link = bare_pair.links[0]
    acl = "".join(f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9\n" for i in range(16))
    nf = NfInstance.start(bare_pair, "firewall", mode, bare_pair.dut_ifaces, rules=rules_file(acl),
                          extra=paths.worker_options(mode))
    out = Generator(bare_pair, receive_on=0).run(
        "--count", "12000", "--dst-ip", link.dut_ip, "--rate", "100000",
        "--class", "plain:share=0.25,flows=4", "--class", "c_tag:share=0.25,vlan=100,flows=4",
        "--class", "qinq:share=0.25,vlan=200.300,proto=tcp,flows=4",
        "--class", f"attack:share=0.25,vlan=100,saddr={ATTACKERS}.0/28,flows=16").summary
    classes = by_name(out)
    for name in ("plain", "c_tag", "qinq"):
        assert classes[name]["received"] == classes[name]["sent"] == 3000, classes[name]
    assert classes["attack"]["sent"] == 3000 and classes["attack"]["received"] == 0
    assert nf.stats()["drop"]["packets"] == 3000
    assert nf.stop() == 0


def test_tags_are_written_as_asked_and_every_flow_keeps_its_checksums(pair, tmp_path):
    """The frames xnf-gen builds, read back by scapy: a C-tag (TPID 0x8100) or an S-tag (0x88a8) then a C-tag,
    with the ids asked, and each flow's varied source address under a right IPv4 header checksum."""
    path = tmp_path / "tagged.pcap"
    Generator(pair).run("--count", "8", "--write-pcap", str(path), "--vary", "saddr",
                        "--class", "one:share=0.5,vlan=100,flows=4", "--class", "two:share=0.5,vlan=200.300,flows=4")
    frames = rdpcap(str(path))
    singles = [f for f in frames if f.type == 0x8100]
    doubles = [f for f in frames if f.type == 0x88A8]
    assert len(singles) == len(doubles) == 4
    assert {f[Dot1Q].vlan for f in singles} == {100}
    assert {(f[Dot1AD].vlan, f[Dot1AD][Dot1Q].vlan) for f in doubles} == {(200, 300)}
    assert len({f[IP].src for f in singles}) == len({f[IP].src for f in doubles}) == 4   # one per flow
    for frame in frames:
        sent = frame[IP].chksum
        del frame[IP].chksum
        assert IP(bytes(frame[IP]))[IP].chksum == sent, frame.summary()
        assert frame[UDP].dport == 9


def test_tcp_syn_frames_open_a_connection_each_and_tcp_ones_continue_one(pair, tmp_path):
    """--proto tcp-syn (the SYN floods of the conntrack study) and proto=tcp-syn per class: SYN alone; tcp: ACK."""
    path = tmp_path / "syn.pcap"
    Generator(pair).run("--count", "8", "--write-pcap", str(path), "--class", "syn:share=0.5,proto=tcp-syn,flows=4",
                        "--class", "ack:share=0.5,proto=tcp,flows=4")
    flags = sorted(str(f[TCP].flags) for f in rdpcap(str(path)))
    assert flags == ["A"] * 4 + ["S"] * 4
    wrong = Generator(pair).run("--count", "1", "--class", "x:share=1,proto=sctp", check=False)
    assert wrong.returncode != 0 and "udp, tcp or tcp-syn" in wrong.stderr

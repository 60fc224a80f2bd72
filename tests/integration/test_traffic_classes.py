"""Traffic mixes in xnf-gen: several classes in one run, each with its own headers, flows and share, counted
apart by the receiver, exactly, through real NFs on veth."""

from __future__ import annotations

import pytest

from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

ATTACKERS = "203.0.113"
MIX = ["--class", "pass:dport=9,share=0.6", "--class", f"drop:saddr={ATTACKERS}.0/24,share=0.3",
       "--class", "local:dport=11211,proto=tcp,share=0.1"]


def by_name(summary: dict) -> dict[str, dict]:
    return {c["name"]: c for c in summary["classes"]}


@pytest.mark.parametrize("mode", ["xdp", "afxdp"])
def test_each_class_is_counted_apart_exactly(mode, rules_file, bare_pair):
    """The firewall drops the attack class (256 sources, one rule each) and returns the rest: per class, what
    came back is exactly what was sent or nothing, and the firewall's drops are exactly the attack's frames."""
    link = bare_pair.links[0]
    acl = "".join(f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9\n" for i in range(256))
    nf = NfInstance.start(bare_pair, "firewall", mode, bare_pair.dut_ifaces, rules=rules_file(acl),
                          extra=paths.worker_options(mode))
    out = Generator(bare_pair, receive_on=0).run("--count", "20480", "--dst-ip", link.dut_ip, "--rate", "400000",
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
])
def test_a_wrong_mix_is_refused_with_its_reason(pair, classes, message):
    argv = [x for c in classes for x in ("--class", c)]
    result = Generator(pair).run("--count", "10", *argv, check=False)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr


def test_a_prefix_belongs_in_a_class(pair):
    result = Generator(pair).run("--count", "10", "--src-ip", "203.0.113.0/24", check=False)
    assert result.returncode == 2 and "--class NAME:saddr=203.0.113.0/24,share=" in result.stderr

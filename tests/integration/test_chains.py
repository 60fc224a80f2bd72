"""Chains: several NFs in one program behave as those NFs run one after the other."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether

from lab_helpers import run_xnf
from differential import XDP_DROP, XDP_TX, run_differential
from test_lb import BACKENDS, VIP, VPORT, lb_rules, to_service
from test_xdp_nfs import exchange
from xnf import chain, control
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab import paths

CHAIN = "chain:firewall,lb"
MODES = paths.Modes(paths.each_build)


def fw_rules(link) -> str:
    return (f"drop tcp {link.gen_ip} 45001 {VIP} {VPORT}\n"
            f"drop udp {link.gen_ip} 45002 {VIP} {VPORT}\n")


def chain_rules(link) -> str:
    fw = "".join(f"firewall {line}\n" for line in fw_rules(link).splitlines())
    return fw + "".join(f"lb {line}\n" for line in lb_rules().splitlines())


def traffic(link) -> list[bytes]:
    frames = [to_service(link, cport, proto) for cport in range(45000, 45008) for proto in (TCP, UDP)]
    frames.append(bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=VIP)
                        / UDP(sport=45009, dport=53)))  # allowed by the firewall, no service: to the stack
    return frames


def through(nf: str, mode: str, frames: list[bytes], rules_text: str, rules_file) -> list[bytes]:
    with Topology("pair") as t:
        NfInstance.start(t, nf, mode, t.dut_ifaces, rules=rules_file(rules_text, f"{nf}.rules"))
        return exchange(t, frames)


@pytest.mark.parametrize("mode", MODES)
def test_a_chain_gives_what_its_nfs_give_in_sequence(mode, rules_file):
    with Topology("pair") as t:
        link = t.links[0]
        nf = NfInstance.start(t, CHAIN, mode, t.dut_ifaces, rules=rules_file(chain_rules(link), "chain.rules"))
        frames = traffic(link)
        chained = exchange(t, frames, expect=len(frames) - 3)
        counters = control.request_json(nf.name, "stats")["counters"]
    after_firewall = through("firewall", mode, frames, fw_rules(link), rules_file)
    in_sequence = through("lb", mode, after_firewall, lb_rules(), rules_file)
    assert sorted(chained) == sorted(in_sequence)
    assert len(chained) == len(frames) - 3          # two dropped by the firewall, one passed to the stack by lb
    assert {Ether(f)[IP].dst for f in chained} <= {b[0] for b in BACKENDS}
    assert counters["firewall.rule_drop"] == 2 and counters["firewall.default_allow"] == len(frames) - 2
    assert counters["lb.new_session"] == len(frames) - 3 and counters["lb.not_service"] == 1


def test_chain_rules_are_managed_per_member_while_running(rules_file, pair):
    link = pair.links[0]
    nf = NfInstance.start(pair, CHAIN, "xdp", pair.dut_ifaces, rules=rules_file(chain_rules(link)))
    listed = nf.request("rules list").splitlines()
    assert f"firewall drop tcp {link.gen_ip} 45001 {VIP} {VPORT}" in listed
    assert f"lb service tcp {VIP} {VPORT}" in listed
    flow = to_service(link, 46000)
    assert len(exchange(pair, [flow], expect=1)) == 1
    added = run_xnf(["rules", "add", "--name", nf.name, "firewall", "drop", "tcp", link.gen_ip, "46000", VIP,
                     str(VPORT)])
    assert added.returncode == 0, added.stderr
    assert exchange(pair, [flow]) == []


@pytest.mark.parametrize("spec,reason", [
    ("chain:firewall", "a chain needs at least two NFs"),
    ("chain:firewall,nope", "unknown NF 'nope'"),
    ("chain:lb,lb", "lb appears twice"),
])
def test_bad_chains_are_refused_clearly(pair, spec, reason):
    result = run_xnf(["run", spec, "--mode", "xdp", "--iface", "dut0"], ns=pair.dut_ns)
    assert result.returncode != 0 and reason in result.stderr and "Traceback" not in result.stderr


def test_chain_rule_for_no_member_names_the_members(pair, rules_file):
    path = rules_file("fw drop udp 1.2.3.4 1 5.6.7.8 2\n")
    result = run_xnf(["run", CHAIN, "--mode", "xdp", "--iface", "dut0", "--rules", path], ns=pair.dut_ns)
    assert result.returncode == 1 and f"{path}:1: start the line with the NF of the chain it is for: firewall, lb" \
        in result.stderr


def test_chain_kernel_and_native_agree(tmp_path):
    chain.ensure_chain(CHAIN, test_harness=True)
    frames = [(f"f{i}", bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02")
                              / IP(src="198.18.0.1", dst=VIP) / TCP(sport=45000 + i, dport=VPORT)))
              for i in range(4)]
    rules = ("firewall drop tcp 198.18.0.1 45001 10.99.0.1 80\n"
             + "".join(f"lb {line}\n" for line in lb_rules().splitlines()))
    results = run_differential("chain-firewall+lb", tmp_path, rules=rules, frames=frames)
    assert [results[f"f{i}"]["kernel"]["action"] for i in range(4)] == [XDP_TX, XDP_DROP, XDP_TX, XDP_TX]

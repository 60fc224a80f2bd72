"""Split chains (chain:firewall@xdp,lb@afxdp): the first members run in XDP, the rest in the AF_XDP workers, in
one instance. Whatever the split point, the frames that come out are the whole chain's, byte for byte, in XDP
and in afxdp; rules go to the side that runs their member, counters and verdicts add up as the whole chain's."""

from __future__ import annotations

import pytest

from lab_helpers import run_xnf
from test_chains import chain_rules, traffic
from test_lb import VIP, VPORT, to_service
from test_xdp_nfs import exchange
from xnf import control
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab import paths

# chain: the placements to try (every split point), each member's place given
SPLITS = {
    "chain:firewall,lb": ["firewall@xdp,lb@afxdp", "firewall@xdp,lb@afxdp-poll"],
    "chain:firewall,macswap,lb": ["firewall@xdp,macswap@afxdp,lb@afxdp", "firewall@xdp,macswap@xdp,lb@afxdp"],
}
WHOLE_MODES = paths.Modes(paths.kernel_and_user)
_whole: dict[tuple[str, str], tuple[list[bytes], dict]] = {}


def rules_for(chain: str, link) -> str:
    # macswap takes no rules: the firewall's and lb's lines serve every chain here
    return chain_rules(link)


def run_chain(nf: str, mode: str | None, rules_file) -> tuple[list[bytes], dict]:
    """The frames that come back from the chain, and its stats."""
    with Topology("pair") as t:
        link = t.links[0]
        instance = NfInstance.start(t, nf, mode, t.dut_ifaces, rules=rules_file(rules_for(nf, link)))
        frames = traffic(link)
        got = exchange(t, frames, expect=len(frames) - 3)
        stats = control.request_json(instance.name, "stats")
        assert instance.stop() == 0
    return got, stats


def whole(chain: str, mode: str, rules_file) -> tuple[list[bytes], dict]:
    if (chain, mode) not in _whole:
        _whole[chain, mode] = run_chain(chain, mode, rules_file)
    return _whole[chain, mode]


def verdict_packets(stats: dict) -> dict:
    return {v: c["packets"] for v, c in stats["verdicts"].items()}


@pytest.mark.parametrize("chain,placement", [(c, p) for c, places in SPLITS.items() for p in places])
def test_a_split_chain_sends_what_the_whole_chain_sends(chain, placement, rules_file):
    got, stats = run_chain(f"chain:{placement}", None, rules_file)
    kernel_members = placement.count("@xdp")
    assert stats["split"] == kernel_members
    assert len(got) == len(traffic_of_any_link()) - 3, "the chain must drop two frames and pass one"
    for mode in WHOLE_MODES:
        expected, whole_stats = whole(chain, mode, rules_file)
        assert sorted(got) == sorted(expected), mode
        assert stats["counters"] == whole_stats["counters"], mode
        assert verdict_packets(stats) == verdict_packets(whole_stats), mode
    # the firewall's two drops never left the kernel: the workers saw only what it let through
    assert sum(w["rx_packets"] for w in stats["workers"]) == len(traffic_of_any_link()) - 2


def traffic_of_any_link() -> list[bytes]:
    """The chain's test traffic has the same length whichever topology made it."""
    with Topology("pair") as t:
        return traffic(t.links[0])


def test_rules_reach_the_side_that_runs_their_member(rules_file, pair):
    """A firewall rule added while running lands in the kernel's map (its drop counted there, before any
    worker); an lb service added lands in the workers' map; both are listed as the whole chain's are."""
    link = pair.links[0]
    nf = NfInstance.start(pair, "chain:firewall@xdp,lb@afxdp", None, pair.dut_ifaces,
                          rules=rules_file(chain_rules(link)))
    listed = nf.request("rules list").splitlines()
    assert f"firewall drop tcp {link.gen_ip} 45001 {VIP} {VPORT}" in listed
    assert f"lb service tcp {VIP} {VPORT}" in listed
    flow = to_service(link, 46000)
    assert len(exchange(pair, [flow], expect=1)) == 1
    rx_before = sum(w["rx_packets"] for w in control.request_json(nf.name, "stats")["workers"])
    added = run_xnf(["rules", "add", "--name", nf.name, "firewall", "drop", "tcp", link.gen_ip, "46000", VIP,
                     str(VPORT)])
    assert added.returncode == 0, added.stderr
    assert exchange(pair, [flow]) == []
    stats = control.request_json(nf.name, "stats")
    assert sum(w["rx_packets"] for w in stats["workers"]) == rx_before
    assert stats["counters"]["firewall.rule_drop"] == 1
    removed = run_xnf(["rules", "del", "--name", nf.name, "lb", "service", "tcp", VIP, str(VPORT)])
    assert removed.returncode == 0, removed.stderr
    assert f"lb service tcp {VIP} {VPORT}" not in nf.request("rules list").splitlines()
    assert nf.stop() == 0


@pytest.mark.parametrize("nf,options,message", [
    ("chain:firewall@xdp,lb", [], "give every member a place"),
    ("chain:firewall@xdp,lb@dpdk", [], "'@dpdk' is not a place"),
    ("chain:firewall@afxdp,lb@xdp", [], "put the members @xdp first"),
    ("chain:firewall@xdp,macswap@afxdp,lb@afxdp-poll", [], "give them one mode"),
    ("chain:firewall@xdp,lb@afxdp", ["--mode", "xdp"], "leave out --mode"),
    ("chain:firewall,lb", ["--mode", "afxdp", "--split", "2"], "--split 2: chain:firewall,lb has 2 members"),
    ("chain:firewall,lb", ["--mode", "hybrid", "--split", "1"], "give a user-space mode"),
    ("chain:firewall,lb", ["--mode", "afxdp", "--split", "1", "--local", "tcp:80"],
     "--local and --split do not go together"),
    ("firewall", ["--mode", "afxdp", "--split", "1"], "run a chain"),
])
def test_a_wrong_split_is_refused(pair, nf, options, message):
    result = run_xnf(["run", nf, "--iface", "dut0", *options], ns=pair.dut_ns)
    assert result.returncode != 0 and message in result.stderr and "Traceback" not in result.stderr

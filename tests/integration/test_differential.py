"""Same bytes in, same verdict, counters and bytes out: the XDP object (run by BPF_PROG_RUN)
against the native build of each NF, over a corpus that includes malformed frames."""

from __future__ import annotations

import pytest

from differential import XDP_DROP, XDP_REDIRECT, XDP_TX, run_differential

FW_RULES = """\
drop udp 198.18.0.1 1111 198.18.0.2 53
drop tcp 2001:2::1 4000 2001:2::2 80
drop icmp 198.18.0.1 198.18.0.2
"""


def kernel_action(record: dict) -> int:
    return record["kernel"]["action"]


def test_drop_agrees_and_drops_everything(tmp_path):
    results = run_differential("drop", tmp_path)
    assert {kernel_action(r) for r in results.values()} == {XDP_DROP}


def test_macswap_agrees_and_swaps(tmp_path):
    results = run_differential("macswap", tmp_path)
    udp4 = results["udp4"]["kernel"]
    assert udp4["action"] == XDP_TX
    assert udp4["out"][:24] == "020000000001" + "020000000002"


def test_firewall_agrees_on_every_frame(tmp_path):
    results = run_differential("firewall", tmp_path, rules=FW_RULES)
    expected = {
        "udp4": XDP_DROP, "udp4-other-port": XDP_TX, "tcp6": XDP_DROP, "icmp4": XDP_DROP,
        "vlan-udp4": XDP_DROP, "qinq-udp4": XDP_DROP, "ip4-options-udp": XDP_DROP,
        "ip4-first-fragment": XDP_DROP, "ip4-later-fragment": XDP_TX,
        "ip6-hbh-dst-udp": XDP_TX, "ip6-routing-tcp": XDP_DROP, "ip6-later-fragment": XDP_TX,
        "arp": XDP_TX, "lldp-ish": XDP_TX, "padded-udp4": XDP_DROP, "tcp4": XDP_TX,
    }
    assert {name: kernel_action(results[name]) for name in expected} == expected
    malformed = [name for name, r in results.items() if r["kernel"]["malformed"]]
    for name in ("ihl-below-5", "tot-len-beyond-frame", "tcp-doff-below-5", "tcp-doff-beyond-frame",
                 "ip6-payload-len-beyond-frame", "ip6-too-many-ext", "triple-vlan", "udp4-cut-at-20",
                 "udp4-cut-at-40"):
        assert name in malformed, name
    assert "udp4" not in malformed and "ethernet-only" in malformed


@pytest.mark.parametrize("ports", [2, 3])
def test_firewall_agrees_with_several_ports(tmp_path, ports):
    results = run_differential("firewall", tmp_path, rules=FW_RULES, ports=ports)
    assert kernel_action(results["udp4-other-port"]) == XDP_REDIRECT
    assert results["udp4-other-port"]["kernel"]["slot"] == 4  # XNF_STAT_REDIRECT

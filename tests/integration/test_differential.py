"""Same bytes in, same verdict, counters and bytes out: the XDP object (run by BPF_PROG_RUN)
against the native build of each NF, over a corpus that includes malformed frames."""

from __future__ import annotations

import json
import subprocess

import pytest

from corpus import corpus, write_pcap
from differential import XDP_DROP, XDP_REDIRECT, XDP_TX, run_differential
from xnf.build import BUILD_DIR

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


def harness(nf: str, pcap, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(BUILD_DIR / "tests" / f"xnf-diff-{nf}"), str(pcap), *options], capture_output=True,
                          text=True, timeout=120)   # a guard: a capture of 2008 once made it sleep for 18 years


def test_a_real_capture_runs_whole_at_its_own_pace(tmp_path):
    """A capture as tcpdump writes it: time stamps from 2008 (run relative to the first frame, or back to back with
    --ignore-times), a zero-length record, a 4,270-byte frame (run in several buffers by the XDP build) and one
    longer than any hook carries among the others: each record gets its line, the ones the harness cannot run say
    why, and every frame after them still runs."""
    frames = [("first", corpus()[0][1]), ("empty", b""), ("jumbo", bytes(4270)), ("too-long", bytes(70000)),
              ("runt", bytes(13)), ("after", corpus()[1][1])]
    pcap = tmp_path / "capture.pcap"
    write_pcap(pcap, frames, times=[0.0, 0.1, 0.2, 0.3, 0.4, 0.5], epoch=1_210_000_000.0)
    for options in ((), ("--ignore-times",)):
        done = harness("firewall", pcap, *options)
        assert done.returncode == 0, done.stderr
        records = [json.loads(line) for line in done.stdout.splitlines()]
        assert records[-1]["summary"] == {"frames": 6, "mismatches": 0, "skipped": 3}
        assert [r.get("same") for r in records[:-1]] == [True, None, True, None, None, True]
        assert "0 bytes: shorter than an Ethernet header" in records[1]["skipped"]
        assert "70000 bytes: longer than the 65536 bytes" in records[3]["skipped"]
        assert "3 of 6 records not run" in done.stderr


def test_a_capture_whose_clock_jumps_runs_to_its_end(tmp_path):
    """Time stamps that jump 42 years forward (mobility_opt_asan_7; tcpdump's kday4 jumps 24 days), then back: the
    harness waits at most 5 s for a gap, and finishes (it once slept on, silently)."""
    frames = [("first", corpus()[0][1]), ("years", corpus()[1][1]), ("back", corpus()[0][1])]
    pcap = tmp_path / "jumps.pcap"
    write_pcap(pcap, frames, times=[0.0, 42 * 365 * 86400.0, 1.0], epoch=1_210_000_000.0)
    done = harness("firewall", pcap)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.splitlines()[-1])["summary"] == {"frames": 3, "mismatches": 0, "skipped": 0}


def test_a_capture_cut_short_or_of_another_link_type_says_so(tmp_path):
    whole = tmp_path / "whole.pcap"
    write_pcap(whole, corpus()[:2])
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(whole.read_bytes()[:-5])
    done = harness("firewall", cut)
    assert done.returncode == 1 and "record 2" in done.stderr and "cut short" in done.stderr, done.stderr
    other = tmp_path / "other.pcap"
    other.write_bytes(whole.read_bytes()[:20] + (101).to_bytes(4, "little") + whole.read_bytes()[24:])
    done = harness("firewall", other)
    assert done.returncode == 1 and "link type 101" in done.stderr, done.stderr

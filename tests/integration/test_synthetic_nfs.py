"""The synthetic NFs of the cost model: the same frames give the same bytes out in XDP and AF_XDP modes."""

from __future__ import annotations

import json
import subprocess

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

from lab_helpers import assert_rules_rejected, run_xnf
from packets import swap_macs
from test_xdp_nfs import exchange
from xnf import build, control
from xnf.lab import bpf_maps, paths
from xnf.lab.nf_process import NfInstance

MODES = paths.Modes(paths.each_build)


def l4_frames(link, payload_sizes=(18, 101, 1200)) -> list[bytes]:
    """UDP and TCP over IPv4 and IPv6, odd and even lengths, with correct checksums."""
    frames = []
    for size in payload_sizes:
        payload = bytes(range(256)) * 5
        frames.append(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=link.dut_ip)
                      / UDP(sport=1000 + size, dport=7) / payload[:size])
        frames.append(Ether(src=link.gen_mac, dst=link.dut_mac) / IPv6(src=link.gen_ip6, dst=link.dut_ip6)
                      / TCP(sport=2000 + size, dport=80, flags="PA") / payload[:size])
        frames.append(Ether(src=link.gen_mac, dst=link.dut_mac) / IPv6(src=link.gen_ip6, dst=link.dut_ip6)
                      / UDP(sport=3000 + size, dport=7) / payload[:size])
        frames.append(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=link.dut_ip)
                      / TCP(sport=4000 + size, dport=80, flags="S") / payload[:size])
    return [bytes(f) for f in frames]


def with_bad_checksum(frame: bytes) -> bytes:
    packet = Ether(frame)
    l4 = packet[UDP] if UDP in packet else packet[TCP]
    l4.chksum = 0x1234
    return bytes(packet)


@pytest.mark.parametrize("mode", MODES)
def test_checksum_rewrites_correct_checksums_and_swaps_macs(mode, rules_file, pair):
    nf = NfInstance.start(pair, "checksum", mode, pair.dut_ifaces, rules=rules_file("repeat 3\n"))
    good = l4_frames(pair.links[0])
    bad = [with_bad_checksum(f) for f in good]
    got = exchange(pair, bad, expect=len(bad))
    # every checksum recomputed from scratch: the bytes are those of the correct frames
    assert sorted(got) == sorted(swap_macs(f) for f in good)
    assert control.request_json(nf.name, "stats")["counters"] == {"recomputed": len(bad), "not_l4": 0}


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_checksum_with_no_repeat_leaves_checksums_alone(mode, pair):
    nf = NfInstance.start(pair, "checksum", mode, pair.dut_ifaces)
    bad = [with_bad_checksum(f) for f in l4_frames(pair.links[0])]
    assert sorted(exchange(pair, bad, expect=len(bad))) == sorted(swap_macs(f) for f in bad)
    assert nf.request("rules list").strip() == "repeat 0"
    assert control.request_json(nf.name, "stats")["counters"]["recomputed"] == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_memload_with_a_sized_area_forwards_every_frame(mode, pair):
    NfInstance.start(pair, "memload", mode, pair.dut_ifaces, extra=["--map-size", "ml_area=16K"])
    frames = l4_frames(pair.links[0])
    assert sorted(exchange(pair, frames, expect=len(frames))) == sorted(swap_macs(f) for f in frames)


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_taskemu_spends_and_forwards(mode, rules_file, pair):
    nf = NfInstance.start(pair, "taskemu", mode, pair.dut_ifaces, rules=rules_file("cycles 20000\n"),
                          extra=["--map-size", "te_list=4096"])
    frames = l4_frames(pair.links[0])
    assert sorted(exchange(pair, frames, expect=len(frames))) == sorted(swap_macs(f) for f in frames)
    assert nf.request("rules list").strip() == "cycles 20000\ndrop 0"


@pytest.mark.parametrize("mode", MODES)
def test_taskemu_drops_its_share_of_frames_evenly_and_forwards_the_rest(mode, rules_file, pair):
    nf = NfInstance.start(pair, "taskemu", mode, pair.dut_ifaces, rules=rules_file("cycles 100\ndrop 25\n"))
    frames = l4_frames(pair.links[0]) * 2          # 24 frames, all different within each dozen
    got = exchange(pair, frames, expect=18)
    # one frame in four dropped, spread evenly: the fourth, eighth, ... of each worker's (one worker here)
    kept = [f for i, f in enumerate(frames) if i % 4 != 3]
    assert sorted(got) == sorted(swap_macs(f) for f in kept)
    verdicts = nf.stats()
    assert verdicts["drop"]["packets"] == 6 and verdicts["tx"]["packets"] == 18
    assert nf.request("rules list").strip().splitlines() == ["cycles 100", "drop 25"]


def test_kernel_side_of_taskemu_list_is_one_cycle(pair):
    """The start step's list, read back from the kernel map: following next from 0 visits every node once."""
    nf = NfInstance.start(pair, "taskemu", "xdp", pair.dut_ifaces, extra=["--map-size", "te_list=1000"])
    nexts = {e["key"]: e["value"]["next"] for e in bpf_maps.entries("te_list", max_entries=1000)}
    seen, node = set(), 0
    while node not in seen:
        seen.add(node)
        node = nexts[node]
    assert len(seen) == 1000 and node == 0
    nf.stop()


@pytest.mark.parametrize("option,reason", [
    ("bogus=10", "memload has no map called 'bogus'"),
    ("ml_area=0", "a whole number from 1 to 4294967295 (4G less one)"),
    ("ml_area", "MAP=ENTRIES"),
    ("xnf_stats=4", "memload has no map called 'xnf_stats'"),
])
def test_map_size_errors_are_clear(pair, option, reason):
    result = run_xnf(["run", "memload", "--mode", "xdp", "--iface", "dut0", "--map-size", option], ns=pair.dut_ns)
    assert result.returncode != 0 and reason in result.stderr and "Traceback" not in result.stderr


@pytest.mark.parametrize("nf,line,reason", [
    ("checksum", "repeat 5000", "not a number from 0 to 4096 for repeat"),
    ("checksum", "repeat", "'repeat' takes one number"),
    ("taskemu", "cycle 5", "unknown setting 'cycle': use cycles"),
    ("taskemu", "drop 101", "not a number from 0 to 100 for drop"),
])
def test_settings_errors_name_the_line(pair, rules_file, nf, line, reason):
    path = rules_file(f"# settings\n{line}\n")
    assert_rules_rejected(pair.dut_ns, nf, path, 2, reason)


def test_describe_lists_maps_and_their_sizes():
    described = json.loads(subprocess.run([str(build.nf_binary("memload")), "describe"], capture_output=True,
                                          text=True, check=True).stdout)
    assert described["maps"] == {"ml_area": 64, "ml_config": 1}

"""xnf-gen at every frame size: jumbo frames through its packet socket, classes of their own sizes, the IMIX, and a
receiver that checks every payload byte."""

from __future__ import annotations

import json
import os
import signal
import struct

import pytest

from lab_helpers import gen, wait_until, xdp_attached
from xnf.lab import paths, veth_stats
from xnf.lab.frames import udp_frame
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import ETHERNET_AND_FCS, Topology

JUMBO_MTU = 9000
JUMBO_FRAME = JUMBO_MTU + ETHERNET_AND_FCS
# probe.h: the payload after the probe, word w = SEED ^ (w * STEP) in the CPU's (little-endian) order.
PAYLOAD_SEED, PAYLOAD_STEP = 0x584E462D67656E21, 0x9E3779B97F4A7C15
PROBE_MAGIC = 0x584E


def payload_as_sent(length: int) -> bytes:
    words = b"".join(struct.pack("<Q", PAYLOAD_SEED ^ ((w * PAYLOAD_STEP) & (2**64 - 1)))
                     for w in range((length + 7) // 8))
    return words[:length]


def probe(flow: int, seq: int) -> bytes:
    return struct.pack("!H", PROBE_MAGIC) + struct.pack("<HIQ", flow, seq, 0)


@pytest.fixture
def jumbo_pair():
    with Topology("pair", gen_xdp=None, mtu=JUMBO_MTU) as t:
        yield t


@pytest.mark.parametrize("path", list(paths.with_auto_tx(paths.representative)))
def test_jumbo_frames_come_back_byte_for_byte(jumbo_pair, path):
    """9,018-byte frames (MTU 9,000) through macswap on every path: the generator sends them through its packet
    socket, and the receiver finds every byte of every payload as sent."""
    mode, options = paths.with_auto_tx(paths.representative)[path]
    NfInstance.start(jumbo_pair, "macswap", mode, jumbo_pair.dut_ifaces, extra=options)
    out = gen(jumbo_pair, "--count", "5000", "--rate", "20000", "--size", str(JUMBO_FRAME), "--check-payload")
    assert out["sender"] == "socket" and out["classes"][0]["size"] == JUMBO_FRAME
    assert out["sent"] == out["received"] == out["payload_checked"] == 5000, out
    assert out["payload_wrong"] == 0 and out["not_probes"] == 0
    assert out["bps"] == pytest.approx(out["pps"] * JUMBO_FRAME * 8, rel=1e-3)


WORKER_PATHS = [path for path, (mode, _) in paths.with_auto_tx(paths.representative).items()
                if paths.runs_workers("macswap", mode)]
BACKLOG = 200   # jumbo frames of 3 buffers each: more than a worker's batch of descriptors, less than its rings


@pytest.mark.parametrize("path", WORKER_PATHS)
def test_a_backlog_of_jumbo_frames_comes_out_whole(jumbo_pair, path):
    """The worker stopped while BACKLOG jumbo frames wait on its ring, then let go: it takes them a batch of
    descriptors at a time, and a batch that ends inside a frame leaves that frame whole for the next. (The ring's
    consumer once moved past such a frame's first buffers: its last ones came out as a frame of their own.)"""
    mode, options = paths.with_auto_tx(paths.representative)[path]
    nf = NfInstance.start(jumbo_pair, "macswap", mode, jumbo_pair.dut_ifaces, extra=options)
    dut_if = jumbo_pair.dut_ifaces[0]
    redirected = (lambda: veth_stats.read(jumbo_pair.dut_ns, dut_if).get("rx_xdp_redirect", 0))
    before = redirected()
    os.kill(nf.process.pid, signal.SIGSTOP)
    try:
        sender = Generator(jumbo_pair, receive_on=0).spawn("--count", str(BACKLOG), "--rate", "20000", "--size",
                                                           str(JUMBO_FRAME), "--check-payload", "--drain-ms", "3000")
        wait_until(lambda: redirected() - before >= BACKLOG, timeout_s=30, what="the frames on the worker's ring")
    finally:
        os.kill(nf.process.pid, signal.SIGCONT)
    out, err = sender.communicate(timeout=120)
    assert sender.returncode == 0, err
    summary = json.loads(out.strip().splitlines()[-1])
    assert summary["sent"] == summary["received"] == summary["payload_checked"] == BACKLOG, summary
    assert summary["payload_wrong"] == 0 and summary["not_probes"] == 0, summary


def test_classes_of_their_own_sizes(jumbo_pair):
    """Two classes, 100 and 9,000 bytes, in one run: each arrives at its size, whole."""
    NfInstance.start(jumbo_pair, "macswap", "xdp", jumbo_pair.dut_ifaces)
    out = gen(jumbo_pair, "--count", "4000", "--rate", "20000", "--check-payload",
              "--class", "small:share=0.75,size=100", "--class", "jumbo:share=0.25,size=9000,dport=7")
    sizes = {c["name"]: (c["size"], c["sent"], c["received"]) for c in out["classes"]}
    assert sizes == {"small": (100, 3000, 3000), "jumbo": (9000, 1000, 1000)}
    assert out["payload_checked"] == 4000 and out["payload_wrong"] == 0
    assert out["bps"] * out["seconds"] / 8 == pytest.approx(3000 * 100 + 1000 * 9000, rel=1e-3)


@pytest.mark.kernel("live_frames")
def test_imix_in_live_frames(bare_pair):
    """--size imix: 7 frames of 64 bytes, 4 of 594 and 1 of 1,518 in every 12, each size a class; live frames cut to
    their class's length carry the longest class's payload, checked byte for byte."""
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    out = gen(bare_pair, "--count", "102400", "--size", "imix", "--check-payload")
    assert out["sender"] == "live"
    by_size = {c["size"]: c for c in out["classes"]}
    assert sorted(by_size) == [64, 594, 1518]
    assert [c["name"] for c in out["classes"]] == ["all@64", "all@594", "all@1518"]
    total = sum(c["sent"] for c in out["classes"])
    assert total == out["received"] == out["payload_checked"] == 102400
    for size, weight in ((64, 7), (594, 4), (1518, 1)):
        assert by_size[size]["sent"] == by_size[size]["received"]
        assert by_size[size]["sent"] / total == pytest.approx(weight / 12, abs=1 / 1024)
    assert out["payload_wrong"] == 0


def test_receiver_tells_a_wrong_payload(bare_pair):
    """Frames that carry the probe reach the receiver from elsewhere during a run: one with the payload as the
    generator writes it is checked and passes, one with a byte changed is counted wrong."""
    link = bare_pair.links[0]
    payload = payload_as_sent(200)
    wrong = bytearray(payload)
    wrong[150] ^= 0x01
    run = Generator(bare_pair, receive_on=0).spawn("--rate", "10", "--duration", "3", "--check-payload")
    wait_until(lambda: xdp_attached(bare_pair.gen_ns, link.gen_if), what="the receiver attached")
    port = PacketPort(bare_pair.dut_ns, link.dut_if)
    for body in (payload, bytes(wrong)):
        port.send([udp_frame(link, 9, 9, probe(0, 1000) + body)])
    stdout, _ = run.communicate(timeout=30)
    out = json.loads(stdout.strip().splitlines()[-1])
    assert out["payload_checked"] == 2 and out["payload_wrong"] == 1, out


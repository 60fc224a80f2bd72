"""`xnf dump` through a running firewall: tcpdump reads the pcapng file back and finds exactly the frames sent,
each with the verdict it got (in its comment), on every path; a verdict filter keeps only those frames."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from collections import Counter

import pytest
from scapy.layers.inet import UDP
from scapy.utils import PcapNgReader

from lab_helpers import run_xnf, stopped
from xnf.build import REPO_ROOT
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

FRAMES = 500          # 5 flows (dport 9 to 13), 100 frames each
DROPPED_DPORT = 13
SIDE_OF = {"xdp": {"tx": "xdp", "drop": "xdp"}, "afxdp": {"tx": "worker", "drop": "worker"},
           "hybrid": {"tx": "worker", "drop": "xdp"}, "tc": {"tx": "tc", "drop": "tc"}}


def start_dump(name: str, *options: str) -> subprocess.Popen:
    """Starts xnf dump and returns once it captures (its first line on stderr says so)."""
    proc = subprocess.Popen([sys.executable, "-m", "xnf", "dump", "--name", name, *options], stderr=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True, env={"PYTHONPATH": str(REPO_ROOT / "python"),
                                                                     "PATH": "/usr/sbin:/usr/bin:/bin"})
    first = proc.stderr.readline()
    assert "capturing" in first, first + proc.stderr.read()
    return proc


@pytest.mark.parametrize("mode", paths.Modes(paths.representative))
def test_dump_writes_every_frame_with_its_verdict_and_tcpdump_reads_it(mode, tmp_path, pair):
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces)
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    everything = tmp_path / "all.pcapng"
    dump_all = start_dump(nf.name, "--count", str(FRAMES), "-w", str(everything))
    Generator(pair).run("--count", str(FRAMES), "--rate", "10000", "--flows", "5")
    _, err = dump_all.communicate(timeout=30)
    assert dump_all.returncode == 0, err
    assert f"{FRAMES} frames captured" in err

    tcpdump = subprocess.run(["tcpdump", "-r", str(everything), "-nn", "-e"], capture_output=True, text=True)
    assert tcpdump.returncode == 0, tcpdump.stderr
    lines = tcpdump.stdout.splitlines()
    assert len(lines) == FRAMES
    # "... 198.18.0.1.9 > 198.18.0.2.13: UDP, length 18": the destination port after the last " > "
    by_dport = Counter(line.rsplit(" > ", 1)[1].split(":")[0].rsplit(".", 1)[1] for line in lines if "UDP" in line)
    assert by_dport == {str(p): FRAMES // 5 for p in range(9, 14)}

    packets = list(PcapNgReader(str(everything)))
    for packet in packets:
        note = dict(item.split("=") for item in packet.comments[0].decode().split())
        expected = "drop" if packet[UDP].dport == DROPPED_DPORT else "tx"
        assert note["verdict"] == expected and note["side"] == SIDE_OF[mode][expected], note
        assert note["iface"] == pair.links[0].dut_if and note["port"] == "0"
        assert packet.wirelen == len(packet) == 60
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_dump_of_one_verdict_keeps_only_those_frames(mode, tmp_path, pair):
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces)
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    path = tmp_path / "drop.pcapng"
    dump = start_dump(nf.name, "--verdict", "drop", "--count", str(FRAMES // 5), "-w", str(path))
    busy = run_xnf(["dump", "--name", nf.name, "--count", "1"])
    assert busy.returncode == 1 and "a capture is already running" in busy.stderr
    Generator(pair).run("--count", str(FRAMES), "--rate", "10000", "--flows", "5")
    _, err = dump.communicate(timeout=30)
    assert dump.returncode == 0, err
    packets = list(PcapNgReader(str(path)))
    assert len(packets) == FRAMES // 5
    assert all(p[UDP].dport == DROPPED_DPORT and b"verdict=drop" in p.comments[0] for p in packets)
    # the capture is over: the next one starts, and a wrong verdict is refused with the names
    wrong = run_xnf(["dump", "--name", nf.name, "--verdict", "dropped", "--count", "1"])
    assert wrong.returncode == 1 and "no verdict 'dropped' to capture" in wrong.stderr
    assert nf.stop() == 0


def test_an_instance_stops_cleanly_while_a_capture_waits(pair):
    nf = NfInstance.start(pair, "firewall", "afxdp", pair.dut_ifaces)
    dump = start_dump(nf.name)
    assert nf.stop() == 0
    _, err = dump.communicate(timeout=15)
    assert dump.returncode == 0 and "0 frames captured" in err


def test_a_paused_reader_loses_records_counted_and_the_capture_goes_on(tmp_path, pair):
    """A reader stopped for seconds (SIGSTOP; a terminal paused with Ctrl-S) does not end an unlimited capture: the
    kernel's ring drops what does not fit and counts it. Ctrl-C then ends it with the totals."""
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    dump = start_dump(nf.name, "-w", str(tmp_path / "paused.pcapng"))
    dump.send_signal(signal.SIGSTOP)
    try:
        Generator(pair).run("--count", "200000", "--rate", "100000", "--flows", "5")
        time.sleep(1)
    finally:
        dump.send_signal(signal.SIGCONT)
    time.sleep(1)
    assert dump.poll() is None, "the capture ended by itself while its reader was paused"
    dump.send_signal(signal.SIGINT)
    _, err = dump.communicate(timeout=30)
    assert dump.returncode == 0, err
    captured = int(err.split(" frames captured")[0].split()[-1])
    lost = int(err.split(" lost in the kernel's ring")[0].split()[-1])
    assert "stopped here" in err and captured > 0 and captured + lost == 200000, err
    assert nf.stop() == 0


def test_a_capture_says_how_it_ended_when_it_cannot_finish(tmp_path, pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    full = start_dump(nf.name, "-w", "/dev/full")
    Generator(pair).run("--count", "100", "--rate", "10000")
    _, err = full.communicate(timeout=30)
    assert full.returncode == 1 and "writing /dev/full failed" in err and "Traceback" not in err
    cut = start_dump(nf.name, "-w", str(tmp_path / "cut.pcapng"))
    Generator(pair).run("--count", "100", "--rate", "10000")
    nf.process.kill()
    _, err = cut.communicate(timeout=30)
    assert cut.returncode == 1 and "cut off without its totals" in err and "100 frames captured" in err
    assert "Traceback" not in err


def test_dump_refuses_a_stopped_instance_and_no_verdict(tmp_path, pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    empty = run_xnf(["dump", "--name", nf.name, "--verdict", ""])
    assert empty.returncode == 1 and "names no verdict" in empty.stderr
    with stopped(nf.process):
        refused = run_xnf(["dump", "--name", nf.name, "-w", str(tmp_path / "x.pcapng")], timeout=10)
    assert refused.returncode == 1 and "is stopped" in refused.stderr and "Traceback" not in refused.stderr
    assert nf.stop() == 0


FRAME = 1396  # xnf-gen --size 1400: the size on the wire, its 4-byte FCS included


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_dump_takes_whole_frames_at_entry_and_exit_through_a_filter(mode, tmp_path, pair):
    """What xdpdump users expect: frames whole (or cut with -s), as they came in and as they went out, and only
    those a tcpdump expression matches; tcpdump reads the file back."""
    nf = NfInstance.start(pair, "macswap", mode, pair.dut_ifaces, extra=paths.worker_options(mode))
    path = tmp_path / "both.pcapng"
    dump = start_dump(nf.name, "--at", "both", "--count", "20", "-w", str(path), "udp", "dst", "port", "7")
    Generator(pair).run("--count", "10", "--rate", "10000", "--size", "1400", "--dport", "7")
    Generator(pair).run("--count", "10", "--rate", "10000", "--size", "1400", "--dport", "8")
    _, err = dump.communicate(timeout=30)
    assert dump.returncode == 0, err
    packets = list(PcapNgReader(str(path)))
    points = Counter(dict(i.split("=") for i in p.comments[0].decode().split())["point"] for p in packets)
    assert points == {"entry": 10, "exit": 10}
    assert all(p[UDP].dport == 7 and p.wirelen == len(p) == FRAME for p in packets)  # whole, and filtered
    by_point = {}
    for p in packets:
        by_point.setdefault(dict(i.split("=") for i in p.comments[0].decode().split())["point"], p)
    entry, exit_ = by_point["entry"], by_point["exit"]
    assert (entry.src, entry.dst) == (exit_.dst, exit_.src) != (entry.dst, entry.src)  # macswap, on each side
    read = subprocess.run(["tcpdump", "-r", str(path), "-nn", "udp dst port 7"], capture_output=True, text=True)
    assert read.returncode == 0 and len(read.stdout.splitlines()) == 20
    cut = tmp_path / "cut.pcapng"
    short = start_dump(nf.name, "-s", "64", "--count", "5", "-w", str(cut))
    Generator(pair).run("--count", "5", "--rate", "10000", "--size", "1400")
    _, err = short.communicate(timeout=30)
    assert short.returncode == 0, err
    assert all(len(p) == 64 and p.wirelen == FRAME for p in PcapNgReader(str(cut)))
    bad = run_xnf(["dump", "--name", nf.name, "udp", "port", "nonsense"])
    assert bad.returncode == 1 and "does not compile" in bad.stderr
    assert nf.stop() == 0

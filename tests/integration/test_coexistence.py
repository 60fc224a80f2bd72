"""`--attach libxdp`: an NF shares a veth with another XDP program through libxdp's dispatcher, behind it or in
front of it by run priority; both run; stopping the NF leaves the other in place; a killed NF's program is
removed by the next start; and what cannot work is refused with a message."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from lab_helpers import run_xnf
from xnf import attached, build, contract, control, kernel
from xnf.lab import bpf_maps
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

FRAMES = 500            # 5 flows, dport 9 to 13; the firewall drops dport 13
DROPPED_DPORT = 13
OTHER_OBJECT = build.BUILD_DIR / "bpf" / "xnf_count_pass.bpf.o"


@pytest.fixture
def bpffs(tmp_path, monkeypatch):
    """A bpffs every process of the test shares (ip netns exec hides /sys/fs/bpf): libxdp finds it by
    LIBXDP_BPFFS."""
    folder = tmp_path / "bpffs"
    folder.mkdir()
    subprocess.run(["mount", "-t", "bpf", "bpf", str(folder)], check=True)
    monkeypatch.setenv("LIBXDP_BPFFS", str(folder))
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def start_other(pair: Topology, priority: int) -> subprocess.Popen:
    proc = pair.spawn(pair.dut_ns, [str(build.tool_binary("xnf-xdp-load")), "--object", str(OTHER_OBJECT),
                                    "--iface", pair.links[0].dut_if, "--libxdp", "--priority", str(priority)])
    line = proc.stdout.readline()
    assert "attached through libxdp" in line, line + proc.stderr.read()
    return proc


def hook_holder(pair: Topology) -> str:
    """The name of the program on the DUT's hook: libxdp's dispatcher, or a program attached alone."""
    out = pair.run(pair.dut_ns, ["ip", "-d", "link", "show", pair.links[0].dut_if]).stdout
    return out.split("prog/xdp id ")[1].split(" name ")[1].split()[0] if "prog/xdp id " in out else ""


def other_count() -> int:
    out = subprocess.run(["bpftool", "-j", "map", "dump", "name", "count_pass_frames"], capture_output=True,
                         text=True, check=True).stdout
    [entry] = json.loads(out)
    return sum(cpu["value"] for cpu in entry["values"])


def xnf_programs_in_dispatchers() -> int:
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                                      check=True).stdout)
    return sum(1 for p in progs if p.get("name") == "xnf_xdp_main" and p.get("type") == "ext")


def send(pair: Topology) -> None:
    Generator(pair).run("--count", str(FRAMES), "--rate", "10000", "--flows", "5")


def verdicts(nf: NfInstance) -> dict:
    return {v: c["packets"] for v, c in nf.stats().items() if v in ("tx", "drop")}


# libxdp builds its dispatcher from extension programs (freplace): on a kernel that refuses them there is nothing to
# test but the refusal (test_a_kernel_without_extensions_gets_a_clear_refusal).
@pytest.mark.kernel("freplace")
@pytest.mark.parametrize("mode", ["xdp", "afxdp"])
def test_an_nf_behind_another_program_both_run(mode, bpffs, pair):
    other = start_other(pair, priority=10)
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces,
                          extra=["--attach", "libxdp", "--priority", "20"])
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    send(pair)
    assert other_count() == FRAMES           # the other program saw every frame first, and passed it on
    assert verdicts(nf) == {"tx": FRAMES * 4 // 5, "drop": FRAMES // 5}   # then the NF gave its verdicts
    assert nf.stop() == 0
    assert xnf_programs_in_dispatchers() == 0
    send(pair)                               # the other program stays, alone
    assert other_count() == 2 * FRAMES
    other.terminate()
    other.wait(timeout=10)


@pytest.mark.kernel("freplace")
def test_an_nf_in_front_decides_first(bpffs, pair):
    start_other(pair, priority=50)
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces,
                          extra=["--attach", "libxdp", "--priority", "5"])
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    send(pair)
    # tx and drop end the dispatcher's run (only XDP_PASS goes on): nothing reaches the program behind it
    assert verdicts(nf) == {"tx": FRAMES * 4 // 5, "drop": FRAMES // 5}
    assert other_count() == 0
    assert nf.stop() == 0
    send(pair)
    assert other_count() == FRAMES


@pytest.mark.kernel("freplace")
def test_a_killed_nf_is_removed_from_the_dispatcher_by_the_next_start(bpffs, pair):
    start_other(pair, priority=10)
    options = ["--attach", "libxdp", "--priority", "20"]
    killed = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, extra=options)
    killed.process.kill()
    killed.process.wait()
    assert xnf_programs_in_dispatchers() == 1   # libxdp's pinned link keeps it attached
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, name=killed.name + "-2", extra=options)
    assert xnf_programs_in_dispatchers() == 1   # the new one only
    send(pair)
    assert verdicts(nf)["tx"] == FRAMES and other_count() == FRAMES
    assert nf.stop() == 0
    assert xnf_programs_in_dispatchers() == 0


def test_a_kernel_without_extensions_gets_a_clear_refusal(bpffs, pair, monkeypatch):
    """Where the kernel refuses freplace (here, or as XNF_KERNEL_WITHOUT says), --attach libxdp is refused by name
    before anything is attached."""
    monkeypatch.setenv(kernel.WITHOUT_ENV, "freplace")
    out = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", pair.links[0].dut_if, "--attach", "libxdp"],
                  ns=pair.dut_ns)
    assert out.returncode == 1
    assert "--attach libxdp" in out.stderr and "freplace" in out.stderr and "--attach link" in out.stderr
    assert out.stderr.count("xnf: error:") == 1
    assert "Traceback" not in out.stderr and "libxdp:" not in out.stderr
    assert hook_holder(pair) == ""           # nothing on the interface

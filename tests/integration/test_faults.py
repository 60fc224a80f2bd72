"""Faults an operator meets: an instance killed with SIGKILL leaves nothing behind that the next start does not
put right."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from lab_helpers import run_xnf, tcx_link_programs, wait_until, xdp_attached
from xnf import control
from xnf.lab import paths
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab.cores import DUT_CORE

BUSY_POLL_SETTINGS = ("napi_defer_hard_irqs", "gro_flush_timeout")


def settings(t, iface: str = "dut0") -> dict[str, str]:
    return {name: t.run(t.dut_ns, ["cat", f"/sys/class/net/{iface}/{name}"]).stdout.strip()
            for name in BUSY_POLL_SETTINGS}


BUSY_POLL_MODE = "afxdp-sysc"   # the mode that changes the interface's busy-poll settings


@pytest.mark.parametrize("next_mode", [paths.find("xdp").mode, BUSY_POLL_MODE])
def test_busy_poll_settings_a_killed_instance_changed_are_put_back(pair, next_mode):
    """afxdp-sysc changes two system-wide settings of its interface; killed, it cannot restore them. The next
    start on that interface, in any mode, puts them back, and a clean stop then leaves them as they were."""
    before = settings(pair)
    killed = NfInstance.start(pair, "macswap", BUSY_POLL_MODE, pair.dut_ifaces, extra=["--cores", str(DUT_CORE)])
    changed = settings(pair)
    assert changed != before
    killed.stop(signal.SIGKILL)
    assert settings(pair) == changed and not xdp_attached(pair.dut_ns, "dut0")
    following = NfInstance.start(pair, "macswap", next_mode, pair.dut_ifaces,
                                 extra=paths.worker_options(next_mode))
    if next_mode != BUSY_POLL_MODE:
        assert settings(pair) == before
    assert following.stop() == 0
    assert settings(pair) == before
    assert "put napi_defer_hard_irqs back to" in following.process.stderr.read()


def test_a_journal_is_never_put_back_on_another_namespaces_interface():
    """The kernel reuses a dead namespace's inode: a journal keyed by it once had a new namespace's interface of
    the same name "put back" from a killed instance's settings. The namespace's cookie is never reused."""
    before = set(control.run_dir().glob(".setting-*.journal"))  # another live namespace's are not ours to judge
    with Topology("pair") as first:
        killed = NfInstance.start(first, "macswap", "afxdp-sysc", first.dut_ifaces, extra=["--cores", str(DUT_CORE)])
        killed.stop(signal.SIGKILL)
    journals = set(control.run_dir().glob(".setting-*.journal")) - before
    assert journals  # the killed instance left its settings' journals
    for _ in range(3):  # new namespaces, likely on the dead one's inode, with an interface called dut0 again
        with Topology("pair") as t:
            t.run(t.dut_ns, ["sh", "-c", "echo 7 > /sys/class/net/dut0/napi_defer_hard_irqs"])
            nf = NfInstance.start(t, "macswap", "xdp", t.dut_ifaces)
            assert settings(t)["napi_defer_hard_irqs"] == "7"  # not the dead instance's old value
            assert nf.stop() == 0
    assert not journals & set(control.run_dir().glob(".setting-*.journal"))  # swept: that namespace is gone


@pytest.mark.parametrize("signal_to_send", [signal.SIGTERM, signal.SIGKILL], ids=["stopped", "killed"])
def test_an_instance_at_tc_leaves_no_program_behind(pair, signal_to_send):
    """Its TCX links go with the process however it ends: the next instance (or Linux) has the port to itself."""
    before = tcx_link_programs()
    nf = NfInstance.start(pair, "macswap", "tc", pair.dut_ifaces)
    ours = [p for p in tcx_link_programs() if p not in before]
    assert len(ours) == len(pair.dut_ifaces)   # one link per port
    nf.stop(signal_to_send)
    # A killed process's links are released as the kernel closes its files, a moment after it is reaped.
    wait_until(lambda: not set(ours) & set(tcx_link_programs()), what="the instance's TCX links gone")
    again = NfInstance.start(pair, "macswap", "tc", pair.dut_ifaces)
    assert len(tcx_link_programs()) == len(before) + len(pair.dut_ifaces) and again.stop() == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_an_interface_deleted_under_the_instance_stops_it_clearly(pair, mode):
    """Workers do not spin on a port that no longer exists, and `xnf ps` does not list the instance."""
    nf = NfInstance.start(pair, "macswap", mode, pair.dut_ifaces, extra=paths.find(mode).lab_options())
    pair.run(pair.dut_ns, ["ip", "link", "del", "dut0"])
    assert nf.process.wait(timeout=5) == 1
    assert "interface dut0 disappeared (deleted, or its veth peer's namespace removed): stopping" in \
        nf.process.stderr.read()
    assert nf.name not in control.instances()


def test_stop_leaves_alone_a_process_that_took_a_killed_instances_pid(pair):
    """xnf stop reads the owner record's start time, as xnf ps does: after the instance was killed and its pid went
    to another process, stop says the instance had stopped and signals nothing (it once killed that process)."""
    nf = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces, name=f"{pair.dut_ns}-reused")
    nf.stop(signal.SIGKILL)
    other = subprocess.Popen(["sleep", "60"])
    try:
        record = control.socket_path(nf.name).with_suffix(".owner")
        written = json.loads(record.read_text())
        record.write_text(json.dumps({**written, "pid": other.pid}))   # the killed one's pid, reused by `other`
        out = run_xnf(["stop", "--name", nf.name])
        assert out.returncode == 0 and "had stopped already" in out.stdout, out.stderr
        assert other.poll() is None, "the unrelated process was signalled"
        assert not record.exists()
    finally:
        other.kill()
        other.wait()

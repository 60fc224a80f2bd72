"""Faults an operator meets: an instance killed with SIGKILL leaves nothing behind that the next start does not
put right."""

from __future__ import annotations

import signal

import pytest

from lab_helpers import xdp_attached
from xnf import control
from xnf.lab.nf_process import NfInstance

BUSY_POLL_SETTINGS = ("napi_defer_hard_irqs", "gro_flush_timeout")


def settings(t, iface: str = "dut0") -> dict[str, str]:
    return {name: t.run(t.dut_ns, ["cat", f"/sys/class/net/{iface}/{name}"]).stdout.strip()
            for name in BUSY_POLL_SETTINGS}


@pytest.mark.parametrize("next_mode", ["xdp", "afxdp-sysc"])
def test_busy_poll_settings_a_killed_instance_changed_are_put_back(pair, next_mode):
    """afxdp-sysc changes two system-wide settings of its interface; killed, it cannot restore them. The next
    start on that interface, in any mode, puts them back, and a clean stop then leaves them as they were."""
    before = settings(pair)
    killed = NfInstance.start(pair, "macswap", "afxdp-sysc", pair.dut_ifaces, extra=["--cores", "1"])
    changed = settings(pair)
    assert changed != before
    killed.stop(signal.SIGKILL)
    assert settings(pair) == changed and not xdp_attached(pair.dut_ns, "dut0")
    following = NfInstance.start(pair, "macswap", next_mode, pair.dut_ifaces,
                                 extra=[] if next_mode == "xdp" else ["--cores", "1"])
    if next_mode == "xdp":
        assert settings(pair) == before
    assert following.stop() == 0
    assert settings(pair) == before
    assert "put napi_defer_hard_irqs back to" in following.process.stderr.read()


@pytest.mark.parametrize("mode", ["xdp", "afxdp"])
def test_an_interface_deleted_under_the_instance_stops_it_clearly(pair, mode):
    """Workers do not spin on a port that no longer exists, and `xnf ps` does not list the instance."""
    nf = NfInstance.start(pair, "macswap", mode, pair.dut_ifaces, extra=[] if mode == "xdp" else ["--cores", "1"])
    pair.run(pair.dut_ns, ["ip", "link", "del", "dut0"])
    assert nf.process.wait(timeout=5) == 1
    assert "interface dut0 disappeared (deleted, or its veth peer's namespace removed): stopping" in \
        nf.process.stderr.read()
    assert nf.name not in control.instances()

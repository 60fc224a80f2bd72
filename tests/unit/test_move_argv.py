"""xnf move's new command line: the instance's own, with the new mode, leaving behind the options only the old
mode's hook or sockets take (both read from the binaries' describe) and taking the new mode's after `--`."""

from __future__ import annotations

from xnf.service.move import moved_argv

TC_NAT = ["xnf-nat", "run", "--iface", "dut0", "--mode", "tc", "--tc-send", "device", "--state", "/b/nat"]
AFXDP_NAT = ["xnf-nat", "run", "--iface", "dut0", "--mode", "afxdp", "--workers", "1", "--cores", "1",
             "--zerocopy", "--state", "/b/nat"]


def test_leaving_tc_leaves_the_options_only_tc_takes():
    assert moved_argv(TC_NAT, "xdp") == ["xnf-nat", "run", "--iface", "dut0", "--state", "/b/nat", "--mode", "xdp"]


def test_leaving_user_space_leaves_the_socket_options_and_takes_the_new_modes():
    assert moved_argv(AFXDP_NAT, "tc", ["--tc-send", "peer"]) == [
        "xnf-nat", "run", "--iface", "dut0", "--state", "/b/nat", "--mode", "tc", "--tc-send", "peer"]


def test_moving_between_user_space_modes_keeps_the_workers_options():
    assert moved_argv(AFXDP_NAT, "afxdp-poll") == [*AFXDP_NAT[:4], *AFXDP_NAT[6:], "--mode", "afxdp-poll"]

"""Bad input: one clear message, a non-zero exit, no traceback, and nothing left attached."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from lab_helpers import run_xnf, tcx_link_programs, xdp_attached
from xnf.build import BIN_DIR, REPO_ROOT
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

NOBODY = 65534


def assert_one_clear_error(result, *fragments: str) -> None:
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith("xnf: error:")]
    assert len(errors) == 1, result.stderr
    for fragment in fragments:
        assert fragment in errors[0], errors[0]


def test_interface_that_does_not_exist(pair):
    result = run_xnf(["run", "drop", "--mode", "xdp", "--iface", "nosuch0"], ns=pair.dut_ns)
    assert_one_clear_error(result, "'nosuch0' does not exist")


def test_not_root_cli(monkeypatch, capsys):
    from xnf.commands import main as cli

    monkeypatch.setattr(cli.os, "geteuid", lambda: 1000)
    assert cli.main(["run", "drop", "--mode", "xdp", "--iface", "lo"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("xnf: error: xnf run needs root") and "sudo" in err


def test_not_root_binary(pair):
    direct = subprocess.run(["ip", "netns", "exec", pair.dut_ns, "setpriv", f"--reuid={NOBODY}",
                             f"--regid={NOBODY}", "--clear-groups", str(BIN_DIR / "xnf-drop"), "run",
                             "--mode", "xdp", "--iface", "dut0"], capture_output=True, text=True)
    assert_one_clear_error(direct, "needs root")
    assert not xdp_attached(pair.dut_ns, "dut0")


def test_unknown_nf():
    assert_one_clear_error(run_xnf(["run", "nosuchnf", "--mode", "xdp", "--iface", "lo"]), "unknown NF 'nosuchnf'",
                           "firewall")


@pytest.mark.parametrize("mode,fragment", [("warp", "unknown mode 'warp'"), ("", "unknown mode ''")])
def test_unknown_mode(pair, mode, fragment):
    result = run_xnf(["run", "drop", "--mode", mode, "--iface", "dut0"], ns=pair.dut_ns)
    assert_one_clear_error(result, fragment)
    assert not xdp_attached(pair.dut_ns, "dut0")


def test_unreadable_rules_file(pair, tmp_path):
    missing = tmp_path / "absent.txt"
    result = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", "dut0", "--rules", str(missing)], ns=pair.dut_ns)
    assert_one_clear_error(result, "cannot read rules file", str(missing))
    assert not xdp_attached(pair.dut_ns, "dut0")


@pytest.mark.parametrize("bad_line,reason", [
    ("drop udp 198.18.0.1 1 198.18.0.2", "udp takes SRC_IP SRC_PORT DST_IP DST_PORT"),
    ("block udp 198.18.0.1 1 198.18.0.2 2", "unknown action 'block'"),
    ("drop udp 198.18.0.300 1 198.18.0.2 2", "'198.18.0.300' is not an IPv4 or IPv6 address"),
    ("drop udp 198.18.0.1 70000 198.18.0.2 2", "'70000' is not a port number"),
    ("drop tcp 198.18.0.1 1 2001:2::1 2", "both be IPv4 or both IPv6"),
    ("drop gre 198.18.0.1 198.18.0.2", "unknown protocol 'gre'"),
    ("drop icmp 2001:2::1 2001:2::2", "use icmp with IPv4 and icmpv6 with IPv6"),
    ("default maybe", "unknown action 'maybe'"),
    ("drop udp 198.18.0.1 1 198.18.0.2 2 vlan 10.20", "give vlan ID, not OUTER.INNER"),
    ("drop udp 198.18.0.1 1 198.18.0.2 2 vlan 4095", "not a VLAN id"),
    ("drop icmp 198.18.0.1 198.18.0.2 vlan", "protocol icmp has no ports"),
])
def test_malformed_rules_file_names_the_line(pair, rules_file, bad_line, reason):
    path = rules_file(f"# header\ndrop udp 198.18.0.1 1 198.18.0.2 2\n\n{bad_line}\n")
    result = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", "dut0", "--rules", path], ns=pair.dut_ns)
    assert_one_clear_error(result, f"{path}:4:", reason)
    assert not xdp_attached(pair.dut_ns, "dut0")


def test_verifier_rejection_shows_the_verifier(pair):
    result = run_xnf(["run", "bad_bounds", "--mode", "xdp", "--iface", "dut0"], ns=pair.dut_ns)
    assert_one_clear_error(result, "verifier rejected")
    assert "the verifier's last lines" in result.stderr
    assert "invalid access to packet" in result.stderr
    assert not xdp_attached(pair.dut_ns, "dut0")


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_hooks))
def test_a_kernel_without_btf_is_named_as_the_reason(pair, rules_file, mode):
    """A connection table reads its size through the kernel's BTF (xnf_map_capacity): with the kernel's hidden (an
    empty file bound over it, in the run's own mount namespace), the stateful acl's load fails with that reason."""
    rules = rules_file("10 allow state established,related\n30 allow state new\ndefault drop\n")
    tc_before = tcx_link_programs()
    hidden = (f"mount --bind /dev/null /sys/kernel/btf/vmlinux && exec {BIN_DIR / 'xnf-acl'} run --mode {mode} "
              f"--iface dut0 --rules {rules}")
    result = subprocess.run(["ip", "netns", "exec", pair.dut_ns, "unshare", "--mount", "sh", "-c", hidden],
                            capture_output=True, text=True, timeout=30)
    assert_one_clear_error(result, f"cannot load the NF's {'tc' if mode == 'tc' else 'XDP'} program",
                           "/sys/kernel/btf/vmlinux", "CONFIG_DEBUG_INFO_BTF=y")
    assert not xdp_attached(pair.dut_ns, "dut0")
    assert tcx_link_programs() == tc_before


def test_a_kernel_without_btf_is_said_to_leave_late_drops_uncounted(pair):
    """An NF without a connection table runs there, and says that the egress watcher cannot, and why."""
    hidden = (f"mount --bind /dev/null /sys/kernel/btf/vmlinux && exec {BIN_DIR / 'xnf-drop'} run --mode xdp "
              "--iface dut0")
    run = subprocess.Popen(["ip", "netns", "exec", pair.dut_ns, "unshare", "--mount", "sh", "-c", hidden],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    said = []
    for line in run.stdout:
        said.append(line)
        if "running as" in line:
            run.send_signal(signal.SIGINT)
    assert run.wait(timeout=30) == 0, "".join(said)
    assert any("will not be counted" in line and "/sys/kernel/btf/vmlinux" in line for line in said), "".join(said)


def test_interface_already_has_xdp(pair):
    NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces, name=f"{pair.dut_ns}-first")
    result = run_xnf(["run", "macswap", "--mode", "xdp", "--iface", "dut0", "--name", f"{pair.dut_ns}-second"],
                     ns=pair.dut_ns)
    assert_one_clear_error(result, "already has an XDP program")


def test_instance_name_already_running(pair):
    nf = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces)
    result = run_xnf(["run", "drop", "--mode", "xdp-generic", "--iface", "lo", "--name", nf.name], ns=pair.dut_ns)
    assert_one_clear_error(result, "already running", "--name")


def test_rules_cli_errors(pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    assert_one_clear_error(run_xnf(["rules", "add", "--name", nf.name, "drop", "udp", "x"]), "udp takes")
    assert_one_clear_error(run_xnf(["rules", "del", "--name", nf.name, "drop", "udp", "198.18.0.1", "1",
                                    "198.18.0.2", "2"]), "no such rule")
    assert_one_clear_error(run_xnf(["rules", "list", "--name", "nosuchinstance"]), "no running instance")
    drop = NfInstance.start(pair, "drop", "xdp-generic", ["lo"], name=f"{pair.dut_ns}-norules")
    assert_one_clear_error(run_xnf(["rules", "list", "--name", drop.name]), "takes no rules")


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGKILL])
def test_nothing_stays_attached_after_exit(pair, sig):
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    assert xdp_attached(pair.dut_ns, "dut0")
    nf.process.send_signal(sig)
    nf.process.wait(timeout=10)
    deadline = time.monotonic() + 5
    while xdp_attached(pair.dut_ns, "dut0") and time.monotonic() < deadline:
        time.sleep(0.05)  # after SIGKILL the kernel releases the link asynchronously
    assert not xdp_attached(pair.dut_ns, "dut0")
    if sig != signal.SIGKILL:
        assert nf.process.returncode == 0


@pytest.mark.parametrize("options,fragment", [
    (["--queues", "2"], "dut0 has 1 rx queue (0-0) and --queues 2 needs queue 1"),
    (["--ring-size", "64", "--batch", "128"], "--batch 128 is larger than the ring size 64"),
    (["--ring-size", "1000"], "--ring-size 1000 must be a power of two"),
    (["--frame-size", "1500"], "--frame-size 1500: use 2048 or 4096"),
    (["--queues", "1", "--workers", "2"], "--workers 2: give between 1 and --queues (1)"),
    (["--cores", "0,1"], "--cores lists 2 cores for 1 workers"),
    (["--zerocopy"], "does not support AF_XDP zero-copy"),
    (["--copy-fallback"], "--copy-fallback only makes sense with --zerocopy"),
    (["--batch", "lots"], "--batch takes a whole number"),
    (["--cores", ""], "--cores takes a comma-separated list of cores"),
    (["--cores", "0,"], "--cores '0,': an item between commas is empty"),
    (["--cores", ",,,"], "an item between commas is empty"),
    (["--cores", ",".join(["0"] * 65)], "--cores: core 0 is given twice"),
    (["--map-size", "ml_area=4G"], "from 1 to 4294967295 (4G less one)"),
])
def test_afxdp_bad_configuration(pair, options, fragment):
    result = run_xnf(["run", "drop", "--mode", "afxdp", "--iface", "dut0", "--name", f"{pair.dut_ns}-bad"]
                     + options, ns=pair.dut_ns)
    assert_one_clear_error(result, fragment)
    assert not xdp_attached(pair.dut_ns, "dut0")


def test_afxdp_option_in_xdp_mode(pair):
    result = run_xnf(["run", "drop", "--mode", "xdp", "--iface", "dut0", "--queues", "1"], ns=pair.dut_ns)
    assert_one_clear_error(result, "--queues only applies to the AF_XDP modes")


def test_zerocopy_fallback_is_opt_in_and_says_so(pair):
    nf = NfInstance.start(pair, "drop", "afxdp", pair.dut_ifaces, extra=["--zerocopy", "--copy-fallback"])
    assert nf.stop() == 0
    assert "falling back to copy mode" in nf.process.stderr.read()


def test_ps_lists_live_instances_and_removes_stale_sockets(pair, tmp_path):
    import os
    import socket

    live = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces)
    stale = tmp_path / "killed.sock"
    with socket.socket(socket.AF_UNIX) as sock:
        sock.bind(str(stale))  # bound, never listening: what a SIGKILLed instance leaves behind
    env_dir = str(tmp_path)
    os.symlink(f"/run/xnf/{live.name}.sock", tmp_path / f"{live.name}.sock")
    (tmp_path / "notes.sock").write_text("a file of someone else's")
    (tmp_path / "folder.sock").mkdir()
    result = subprocess.run([sys.executable, "-m", "xnf", "ps"], capture_output=True, text=True,
                            env=dict(os.environ, XNF_RUN_DIR=env_dir, PYTHONPATH=str(REPO_ROOT / "python")))
    assert result.returncode == 0, result.stderr
    assert live.name in result.stdout and "killed" not in result.stdout
    assert not stale.exists()
    assert (tmp_path / "notes.sock").exists() and (tmp_path / "folder.sock").is_dir()


def test_a_run_dir_too_long_is_refused_before_it_is_made(pair, tmp_path):
    too_long = tmp_path / ("d" * 120)
    result = run_xnf(["run", "drop", "--mode", "xdp", "--iface", "dut0", "--run-dir", str(too_long)],
                     ns=pair.dut_ns)
    assert_one_clear_error(result, "is too long (a socket path holds 107 bytes): use a shorter --run-dir")
    assert not too_long.exists()


def test_too_few_frames_is_said_at_the_start(pair):
    nf = NfInstance.start(pair, "drop", "afxdp", pair.dut_ifaces, extra=["--frames", "1"])
    assert nf.stop() == 0
    assert "--frames 1 is fewer than one ring (2048) per socket" in nf.process.stderr.read()

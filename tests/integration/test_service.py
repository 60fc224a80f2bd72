"""xnf as a service: `xnf apply FILE` makes the running instances match a configuration file, and `xnf daemon FILE`
keeps them running under systemd's protocol (a harness here plays systemd: it reads sd_notify's datagrams and sends
the signals systemctl would). Real instances on real veths, traffic through them."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab_helpers import run_xnf, wait_until, xdp_attached
from xnf import control
from xnf.build import REPO_ROOT
from xnf.lab import apps, netns
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from xnf.service import daemon

UNIT = REPO_ROOT / "deploy" / "systemd" / "xnf.service"


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    """A run directory of the test's own: its instances, its applied.json."""
    folder = tmp_path / "run"
    folder.mkdir()
    monkeypatch.setenv("XNF_RUN_DIR", str(folder))
    return folder


def router_file(path: Path, t: HostsTopology, mode: str = "xdp", rules: str | None = None,
                extra: str = "") -> Path:
    rules = t.router_rules() if rules is None else rules
    path.write_text(f'[instance.edge]\nnf = "router"\nmode = "{mode}"\nifaces = {json.dumps(t.dut_ifaces)}\n'
                    f'rules_text = """\n{rules}"""\n{extra}')
    return path


def apply(t: HostsTopology, path: Path, *more: str):
    return run_xnf(["apply", str(path), *more], ns=t.dut_ns, timeout=120)


def pid_of(name: str) -> int:
    return control.request_json(name, "info")["pid"]


def test_apply_starts_changes_in_place_restarts_and_stops_what_the_file_says(run_dir, tmp_path):
    with HostsTopology(hosts=2) as t:
        path = router_file(tmp_path / "xnf.toml", t)
        first = apply(t, path)
        assert first.returncode == 0, first.stderr
        assert first.stdout.splitlines() == ["edge: start"]
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
        started = pid_of("edge")
        again = apply(t, path)
        assert again.stdout.splitlines() == ["edge: unchanged"] and pid_of("edge") == started

        # the rules alone: changed in place, the same process
        fewer = "".join(line + "\n" for line in t.router_rules().splitlines() if not line.startswith("route 2001:2:0:1::/64"))
        router_file(path, t, rules=fewer)
        checked = apply(t, path, "--check")
        assert checked.stdout.splitlines() == ["would: edge: rules changed in place (0 added, 1 removed)"]
        assert "2001:2:0:1::/64" in control.request("edge", "rules list")      # --check changed nothing
        changed = apply(t, path)
        assert changed.stdout.splitlines() == ["edge: rules changed in place (0 added, 1 removed)"], changed.stderr
        assert pid_of("edge") == started and "2001:2:0:1::/64" not in control.request("edge", "rules list")

        # the mode: a restart, said with why
        router_file(path, t, mode="tc", rules=fewer)
        moved = apply(t, path)
        assert moved.stdout.splitlines() == ["edge: restart (mode changed: cannot change in place)"], moved.stderr
        assert control.request_json("edge", "info")["mode"] == "tc" and pid_of("edge") != started
        assert not xdp_attached(t.dut_ns, "dut0")
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

        # an instance the file names that apply did not start: refused, nothing changed
        foreign = NfInstance.start(t, "macswap", "xdp", [t.dut_ifaces[0]], name="other")
        path.write_text(path.read_text() + '[instance.other]\nnf = "macswap"\nmode = "xdp"\nifaces = ["dut9"]\n')
        refused = apply(t, path)
        assert refused.returncode == 1 and "that xnf apply did not start" in refused.stderr
        assert "Traceback" not in refused.stderr and control.request_json("edge", "info")["mode"] == "tc"
        assert foreign.stop() == 0

        # gone from the file: stopped
        path.write_text("")
        emptied = apply(t, path)
        assert emptied.stdout.splitlines() == ["edge: stop (no longer in the file)"], emptied.stderr
        assert "edge" not in control.instances()


def test_a_file_that_does_not_hold_changes_nothing(run_dir, tmp_path):
    with HostsTopology(hosts=2) as t:
        path = router_file(tmp_path / "xnf.toml", t)
        assert apply(t, path).returncode == 0
        started = pid_of("edge")
        path.write_text(path.read_text().replace('mode = "xdp"', 'mode = "xdpp"'))
        bad = apply(t, path)
        assert bad.returncode == 1 and f"{path}:3: unknown mode 'xdpp'" in bad.stderr
        broken_rules = router_file(path, t, rules="route 198.18.1.0/33 via 02:00:00:00:00:01 port 1\n")
        bad_rules = apply(t, broken_rules)
        assert bad_rules.returncode == 1 and "edge: rules not changed:" in bad_rules.stderr
        assert "edge.rules:1:" in bad_rules.stderr and pid_of("edge") == started
        assert "198.18.1.0/24" in control.request("edge", "rules list")      # the rules in force as they were
        path.write_text("")
        assert apply(t, path).returncode == 0


def test_a_restart_that_would_fail_leaves_what_runs_running(run_dir, tmp_path, bpffs):
    """Options the runtime refuses, an abbreviated or glued option that gives another interface, a state folder that
    is a bpffs mount: `apply --check` says so and apply stops nothing. A restart that fails only as it starts (16
    queues on a veth that has 1) puts the instance back as it ran, and says so."""
    with HostsTopology(hosts=2) as t:
        netns.ip("link", "add", "spare0", "type", "veth", "peer", "name", "spare1", ns=t.dut_ns)
        path = router_file(tmp_path / "xnf.toml", t)
        assert apply(t, path).returncode == 0
        started = pid_of("edge")
        refusals = {
            '["--queues", "many"]': "--queues takes a whole number from 1 to 16, not 'many'",
            '["--queues", "2"]': "--queues only applies to the AF_XDP modes",
            '["--no-such"]': "unknown option --no-such",
            '["--ifa", "spare0"]': "--ifa is not an option: write it whole (--iface)",
            '["-ispare0"]': "its options give ifaces",
            '["-r/etc/hosts"]': "--rules is given twice",
        }
        for options, said in refusals.items():
            router_file(path, t, extra=f"options = {options}\n")
            for check in (("--check",), ()):
                refused = apply(t, path, *check)
                assert refused.returncode == 1 and said in refused.stderr, (options, check, refused)
                assert "Traceback" not in refused.stderr and not refused.stdout
        router_file(path, t, extra=f'state = "{bpffs}"\n')
        refused = apply(t, path)
        assert refused.returncode == 1 and "is a bpffs mount, which other tools share" in refused.stderr, refused
        assert pid_of("edge") == started and apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

        router_file(path, t, mode="afxdp", extra='options = ["--queues", "16"]\n')
        failed = apply(t, path)
        assert failed.returncode == 1 and "edge: the restart failed" in failed.stderr, failed
        assert "it runs as it was" in failed.stderr
        assert control.request_json("edge", "info")["mode"] == "xdp" and pid_of("edge") != started
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
        router_file(path, t)
        assert apply(t, path).stdout.splitlines() == ["edge: unchanged"]   # what applied.json says is what runs
        path.write_text("")
        assert apply(t, path).returncode == 0


def test_kept_state_leaves_with_what_it_was_kept_for(run_dir, tmp_path, bpffs):
    """An instance with `state` whose ports change lets go of the one it lost; given another folder, the old one
    goes; killed and then taken out of the file, its kept program goes with it and applied.json forgets it."""
    with HostsTopology(hosts=2) as t:
        netns.ip("link", "add", "spare0", "type", "veth", "peer", "name", "spare1", ns=t.dut_ns)
        for iface in ("spare0", "spare1"):
            netns.ip("link", "set", iface, "up", ns=t.dut_ns)
        state = bpffs / "edge"
        path = router_file(tmp_path / "xnf.toml", t, extra=f'state = "{state}"\n')
        assert apply(t, path).returncode == 0 and xdp_attached(t.dut_ns, "dut1")
        path.write_text(path.read_text().replace('"dut1"', '"spare0"'))
        moved = apply(t, path)
        assert moved.stdout.splitlines() == ["edge: restart (ifaces changed: cannot change in place)"], moved
        assert not xdp_attached(t.dut_ns, "dut1") and xdp_attached(t.dut_ns, "spare0")
        assert sorted(p.name for p in (state / "links").iterdir()) == ["dut0", "spare0"]

        other = bpffs / "edge-2"
        path.write_text(path.read_text().replace(f'"{state}"', f'"{other}"'))
        assert apply(t, path).returncode == 0
        assert not state.exists() and sorted(p.name for p in (other / "links").iterdir()) == ["dut0", "spare0"]

        os.kill(pid_of("edge"), signal.SIGKILL)
        wait_until(lambda: control.state("edge") == control.DEAD, what="the instance dead")
        assert xdp_attached(t.dut_ns, "dut0")   # its kept program forwards on
        path.write_text("")
        emptied = apply(t, path)
        assert emptied.stdout.splitlines() == ["edge: stop (no longer in the file; it had stopped already)"], emptied
        assert not xdp_attached(t.dut_ns, "dut0") and not other.exists()
        assert json.loads((run_dir / "applied.json").read_text())["instances"] == {}


def test_a_one_line_change_to_sixty_thousand_rules_is_in_force(run_dir, tmp_path):
    """A firewall of 60,000 rules, one added in the file: apply changes it in place and says so (rc 0), and the rule
    is in force; a second apply finds nothing to change. (The planner once compared the rules as lists, and the
    reload searched the new file once per rule in force: 70 s, past the reload's 5 s.)"""
    rules = [f"drop udp 10.{i >> 16 & 255}.{i >> 8 & 255}.{i & 255} 9 192.0.2.1 9" for i in range(60000)]
    added = "drop udp 10.200.0.1 9 192.0.2.1 9"
    with HostsTopology(hosts=2) as t:
        path = tmp_path / "xnf.toml"
        for text in ("\n".join(rules), "\n".join(rules + [added])):
            (tmp_path / "fw.rules").write_text(text + "\n")
            path.write_text(f'[instance.big]\nnf = "firewall"\nmode = "xdp"\nifaces = ["dut0"]\nrules = "fw.rules"\n')
            done = apply(t, path)
            assert done.returncode == 0, done.stderr
        assert done.stdout.splitlines() == ["big: rules changed in place (1 added, 0 removed)"]
        assert added in control.request("big", "rules list", timeout_s=60)
        assert apply(t, path).stdout.splitlines() == ["big: unchanged"]
        path.write_text("")
        assert apply(t, path).returncode == 0


def test_a_full_run_directory_is_one_message_and_leaves_nothing_unrecorded(run_dir, tmp_path):
    """The run directory on a tmpfs filled to the last byte: apply says it cannot write there, starts nothing
    (before, it died with a traceback, or started an instance it never recorded); with room again it applies."""
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "xnf-full", str(run_dir)], check=True)
    try:
        with HostsTopology(hosts=2) as t:
            path = router_file(tmp_path / "xnf.toml", t)
            filler = run_dir / "filler"
            subprocess.run(["dd", "if=/dev/zero", f"of={filler}", "bs=4k"], capture_output=True)
            full = apply(t, path)
            assert full.returncode == 1 and "No space left on device" in full.stderr, full
            assert "Traceback" not in full.stderr and control.instances() == []
            assert not xdp_attached(t.dut_ns, "dut0")
            filler.unlink()
            assert apply(t, path).returncode == 0 and control.instances() == ["edge"]
            path.write_text("")
            assert apply(t, path).returncode == 0
    finally:
        subprocess.run(["umount", "-l", str(run_dir)], check=False)


class Systemd:
    """What systemd does for a Type=notify unit, in a test: a socket for sd_notify's datagrams, the service's
    process, the signals of systemctl."""

    def __init__(self, folder: Path, ns: str, argv: list[str], watchdog_usec: int):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.path = folder / "notify.sock"
        self.sock.bind(str(self.path))
        env = dict(os.environ, NOTIFY_SOCKET=str(self.path), WATCHDOG_USEC=str(watchdog_usec),
                   PYTHONPATH=str(REPO_ROOT / "python"))
        self.process = subprocess.Popen(["ip", "netns", "exec", ns, *argv], env=env, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)

    def expect(self, wanted: str, timeout_s: float = 90.0) -> dict[str, str]:
        """The next message that sets wanted (KEY=VALUE), as a dict; fails on a timeout or the process's end."""
        self.sock.settimeout(timeout_s)
        while True:
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                out, err = self.process.communicate(timeout=5) if self.process.poll() is not None else ("", "")
                raise AssertionError(f"no {wanted} in {timeout_s} s: {err[-800:]}") from None
            fields = dict(line.split("=", 1) for line in data.splitlines() if "=" in line)
            if wanted in (f"{k}={v}" for k, v in fields.items()):
                return fields

    def expect_status(self, containing: str, timeout_s: float = 90.0) -> str:
        """The next STATUS that says containing."""
        deadline = time.monotonic() + timeout_s
        while True:
            self.sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                data = self.sock.recv(4096).decode()
            except socket.timeout:
                raise AssertionError(f"no STATUS with {containing!r} in {timeout_s} s") from None
            status = next((line[len("STATUS="):] for line in data.splitlines() if line.startswith("STATUS=")), "")
            if containing in status:
                return status

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
        self.process.communicate()
        self.sock.close()


def test_the_daemon_speaks_sd_notify_reloads_revives_and_stops(run_dir, tmp_path):
    with HostsTopology(hosts=2) as t:
        path = router_file(tmp_path / "xnf.toml", t)
        unit = Systemd(tmp_path, t.dut_ns, [sys.executable, "-m", "xnf", "daemon", str(path), "--restart-window",
                                            "3600"], 1_000_000)
        try:
            ready = unit.expect("READY=1")
            assert ready["STATUS"] == "1 instance(s) running: edge"
            assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
            unit.expect("WATCHDOG=1", timeout_s=5)

            # systemctl reload: the file again, its new rule in force
            router_file(path, t, rules=t.router_rules() + "route 198.18.77.0/24 via 02:00:00:00:00:77 port 1\n")
            unit.process.send_signal(signal.SIGHUP)
            unit.expect("RELOADING=1")
            unit.expect("READY=1")
            assert "198.18.77.0/24" in control.request("edge", "rules list")

            # a file that does not hold: said, and what runs keeps running
            path.write_text(path.read_text().replace('mode = "xdp"', 'mode = "nope"'))
            unit.process.send_signal(signal.SIGHUP)
            unit.expect("RELOADING=1")
            after = unit.expect("READY=1")
            assert "not applied" in after["STATUS"] and "unknown mode 'nope'" in after["STATUS"]
            assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

            # an instance that dies is started again
            killed = pid_of("edge")
            os.kill(killed, signal.SIGKILL)
            wait_until(lambda: "edge" in control.instances() and pid_of("edge") != killed, timeout_s=30,
                       what="the killed instance started again")
            assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

            # one that dies again after RESTARTS restarts within the window: left down and said; the watchdog goes on
            for _ in range(daemon.RESTARTS - 1):
                killed = pid_of("edge")
                os.kill(killed, signal.SIGKILL)
                wait_until(lambda: "edge" in control.instances() and pid_of("edge") != killed, timeout_s=30,
                           what="the killed instance started again")
            os.kill(pid_of("edge"), signal.SIGKILL)
            down = unit.expect_status("edge left down")
            assert "0 instance(s) running" not in down and "within 3600 s" in down, down
            unit.expect("WATCHDOG=1", timeout_s=5)
            assert control.state("edge") != control.RUNNING
            router_file(path, t)                     # mended, and systemctl reload: tried again
            unit.process.send_signal(signal.SIGHUP)
            assert unit.expect("READY=1")["STATUS"] == "1 instance(s) running: edge"
            assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

            # a second daemon on the same run directory: refused, the first one's instances untouched
            second = run_xnf(["daemon", str(path)], ns=t.dut_ns)
            assert second.returncode == 1 and "another xnf daemon (pid" in second.stderr, second
            assert control.state("edge") == control.RUNNING

            # systemctl stop: every instance stopped cleanly, exit 0
            unit.process.send_signal(signal.SIGTERM)
            unit.expect("STOPPING=1")
            assert unit.process.wait(timeout=60) == 0
            assert control.instances() == [] and not xdp_attached(t.dut_ns, "dut0")
        finally:
            unit.close()


def test_the_shipped_unit_verifies(tmp_path):
    """systemd-analyze verify on deploy/systemd/xnf.service, its commands pointed at this machine's xnf; it warns
    on stderr (and exits 0) for a line it ignores, so nothing may be said."""
    if not shutil.which("systemd-analyze"):
        pytest.skip("systemd-analyze is not installed")
    xnf = shutil.which("xnf")
    assert xnf, "the xnf command is installed by scripts/setup.sh"
    unit = tmp_path / "xnf.service"
    unit.write_text(UNIT.read_text().replace("/usr/local/bin/xnf", xnf))
    verified = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)], capture_output=True, text=True)
    assert verified.returncode == 0 and verified.stderr == "", verified.stderr
    broken = tmp_path / "broken.service"
    broken.write_text(unit.read_text().replace("Type=notify", "Type=notfy"))
    assert "notfy" in subprocess.run(["systemd-analyze", "verify", "--man=no", str(broken)], capture_output=True,
                                     text=True).stderr

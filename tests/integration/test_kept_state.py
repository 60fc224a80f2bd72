"""--state DIR: the kernel path kept in bpffs across the process's life. The NAT between two hosts, a ping every
10 ms and a TCP connection through it while the instance is stopped, started again, killed and started again:
every ping answered, the connection never reset, every mapping the same public port before and after; a build
whose maps differ refused with the difference; removing DIR takes the program off."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
import time

import pytest

from lab_helpers import run_xnf, tcx_link_programs, wait_until, xdp_attached
from xnf import control
from xnf.lab import apps, container_nf, netns
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

PINGS, PING_INTERVAL_S = 400, 0.01


@pytest.fixture
def bpffs(tmp_path):
    """A bpffs every process of the test sees (ip netns exec hides /sys/fs/bpf)."""
    folder = tmp_path / "bpffs"
    folder.mkdir()
    subprocess.run(["mount", "-t", "bpf", "bpf", str(folder)], check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def mappings(state) -> dict:
    """The NAT's mappings as kept: inside endpoint -> its public port and address slot."""
    out = subprocess.run(["bpftool", "-j", "map", "dump", "pinned", str(state / "maps" / "nat_mappings")],
                         capture_output=True, text=True, check=True).stdout
    return {json.dumps(e["formatted"]["key"], sort_keys=True):
            (e["formatted"]["value"]["public_port"], e["formatted"]["value"]["addr_index"]) for e in json.loads(out)}


def program_on(state) -> int:
    """The program the kept link on dut0 runs now."""
    out = subprocess.run(["bpftool", "-j", "link", "show", "pinned", str(state / "links" / "dut0")],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["prog_id"]


def attached(t: HostsTopology, mode: str) -> bool:
    return xdp_attached(t.dut_ns, "dut0") if mode == "xdp" else bool(tcx_link_programs())


def in_background(work) -> tuple[threading.Thread, dict]:
    result: dict = {}

    def run():
        try:
            result["value"] = work()
        except Exception as err:   # said by the test's assertion on the result
            result["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    return thread, result


@pytest.mark.parametrize("mode", ["xdp", "tc"])
def test_the_kept_nat_forwards_through_a_stop_a_kill_and_two_starts(mode, bpffs, rules_file):
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        rules = rules_file(container_nf.nat_rules(t))
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])   # only the NAT carries: a gap loses pings

        def start() -> NfInstance:
            return NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules, name="edge-nat",
                                    extra=["--state", str(state)])

        first = start()
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        assert apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=50).lost_packets == 0
        before, first_program = mappings(state), program_on(state)
        assert before

        pings, pinged = in_background(lambda: netns.run(h0.ns, [
            "ping", "-q", "-c", str(PINGS), "-i", str(PING_INTERVAL_S), "-W", "1", h1.ip], check=False).stdout)
        tcp, sent = in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=6))
        time.sleep(1)
        assert first.stop(signal.SIGTERM) == 0
        assert "stays attached" in first.process.stdout.read()
        assert attached(t, mode)                       # no process, and the NAT forwards on
        second = start()
        assert second.stop(signal.SIGKILL) == -signal.SIGKILL
        third = start()
        pings.join(timeout=30)
        tcp.join(timeout=60)

        assert f"{PINGS} received" in pinged.get("value", ""), pinged
        assert "error" not in sent and sent["value"].received_bytes > 0, sent     # never reset
        after = mappings(state)
        assert {k: v for k, v in after.items() if k in before} == before
        assert program_on(state) != first_program      # the link moved to the program the last start loaded
        assert third.stop(signal.SIGTERM) == 0

        other = run_xnf(["run", "firewall", "--mode", mode, "--iface", "dut0", "--state", str(state)],
                        ns=t.dut_ns)
        assert other.returncode == 1 and "holds the state of nat, not of firewall" in other.stderr
        resized = run_xnf(["run", "nat", "--mode", mode, "--iface", "dut0", "--iface", "dut1", "--state", str(state),
                           "--map-size", "nat_mappings=1024"], ns=t.dut_ns)
        assert resized.returncode == 1 and "its map nat_mappings has" in resized.stderr, resized.stderr
        assert attached(t, mode)                       # a refused start leaves the kept program alone

        shutil.rmtree(state)
        assert not attached(t, mode)


def test_state_is_for_the_kernel_modes(bpffs, pair):
    refused = run_xnf(["run", "nat", "--mode", "afxdp", "--iface", "dut0", "--state", str(bpffs / "x")],
                      ns=pair.dut_ns)
    assert refused.returncode == 2 and "--state keeps the kernel path's program and maps" in refused.stderr
    both = run_xnf(["run", "nat", "--mode", "xdp", "--iface", "dut0", "--state", str(bpffs / "x"), "--pin",
                    str(bpffs / "y")], ns=pair.dut_ns)
    assert both.returncode == 2 and "leave out --attach, --pin and --split" in both.stderr


def test_apply_restarts_an_instance_with_state_without_a_gap(bpffs, tmp_path, monkeypatch):
    """The service's file with `state`: an option changed restarts the NAT, and the new process takes the kept
    program over (every ping answered, the mappings kept); taken out of the file, its state goes with it."""
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        path = tmp_path / "xnf.toml"

        def write(options: list[str]) -> None:
            path.write_text(f'[instance.edge-nat]\nnf = "nat"\nmode = "tc"\nifaces = {json.dumps(t.dut_ifaces)}\n'
                            f'state = "{state}"\noptions = {json.dumps(options)}\n'
                            f'rules_text = """\n{container_nf.nat_rules(t)}"""\n')

        write([])
        assert run_xnf(["apply", str(path)], ns=t.dut_ns, timeout=120).returncode == 0
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        before = mappings(state)
        pings, pinged = in_background(lambda: netns.run(h0.ns, [
            "ping", "-q", "-c", str(PINGS), "-i", str(PING_INTERVAL_S), "-W", "1", h1.ip], check=False).stdout)
        time.sleep(1)
        write(["--tc-send", "device"])
        restarted = run_xnf(["apply", str(path)], ns=t.dut_ns, timeout=120)
        assert restarted.stdout.splitlines() == ["edge-nat: restart (options changed: cannot change in place)"], \
            restarted.stderr
        pings.join(timeout=30)
        assert f"{PINGS} received" in pinged.get("value", ""), pinged
        assert {k: v for k, v in mappings(state).items() if k in before} == before
        path.write_text("")
        assert run_xnf(["apply", str(path)], ns=t.dut_ns, timeout=120).returncode == 0
        assert not state.exists() and not attached(t, "tc")


def test_move_carries_the_nat_between_xdp_and_tc_without_a_gap(bpffs, rules_file):
    """xnf move: the same NAT from XDP to tc and back under a ping every 10 ms; every ping answered, every mapping
    the same public port, the program at the hook it was moved to."""
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        first = NfInstance.start(t, "nat", "xdp", t.dut_ifaces, rules=rules_file(container_nf.nat_rules(t)),
                                 name="edge-nat", extra=["--state", str(state)])
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        before = mappings(state)
        pings, pinged = in_background(lambda: netns.run(h0.ns, [
            "ping", "-q", "-c", str(PINGS), "-i", str(PING_INTERVAL_S), "-W", "1", h1.ip], check=False).stdout)
        time.sleep(1)
        there = run_xnf(["move", "--name", "edge-nat", "--mode", "tc"], ns=t.dut_ns, timeout=60)
        assert there.returncode == 0 and "moved edge-nat from xdp to tc" in there.stdout, there.stderr
        assert first.process.wait(timeout=10) == 0
        assert control.request_json("edge-nat", "info")["mode"] == "tc"
        assert attached(t, "tc") and not attached(t, "xdp")
        back = run_xnf(["move", "--name", "edge-nat", "--mode", "xdp"], ns=t.dut_ns, timeout=60)
        assert back.returncode == 0, back.stderr
        pings.join(timeout=30)
        assert f"{PINGS} received" in pinged.get("value", ""), pinged
        assert {k: v for k, v in mappings(state).items() if k in before} == before
        assert attached(t, "xdp") and not attached(t, "tc")

        same = run_xnf(["move", "--name", "edge-nat", "--mode", "xdp"], ns=t.dut_ns)
        assert same.returncode == 1 and "runs in xdp already" in same.stderr
        user = run_xnf(["move", "--name", "edge-nat", "--mode", "afxdp"], ns=t.dut_ns)
        assert user.returncode == 1 and "not built yet" in user.stderr
        os.kill(control.request_json("edge-nat", "info")["pid"], signal.SIGTERM)
        wait_until(lambda: "edge-nat" not in control.instances(), what="the moved instance stopped")
        shutil.rmtree(state)
        assert not attached(t, "xdp")

"""--state DIR: the kernel path kept in bpffs across the process's life. The NAT between two hosts, a ping every
10 ms and a TCP connection through it while the instance is stopped, started again, killed and started again:
every ping answered, the connection never reset, every mapping the same public port before and after; a build
whose maps differ refused with the difference, a later build with one more map taking the state over; removing DIR
takes the program off."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab_helpers import in_background, run_xnf, tcx_link_programs, wait_until, xdp_attached
from packets import udp4
from test_xdp_nfs import exchange
from xnf import contract, control
from xnf.build import REPO_ROOT
from xnf.lab import apps, container_nf, kept_state, netns, paths
from xnf.lab.cores import DUT_CORE
from xnf.lab.generator import Generator
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

PINGS, PING_INTERVAL_S = 400, 0.01


def program_on(state) -> int:
    """The program the kept link on dut0 runs now."""
    out = subprocess.run(["bpftool", "-j", "link", "show", "pinned", str(state / "links" / "dut0")],
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)["prog_id"]


def attached(t: HostsTopology, mode: str) -> bool:
    return xdp_attached(t.dut_ns, "dut0") if contract.mode(mode)["hook"] == "xdp" else bool(tcx_link_programs())


@pytest.mark.parametrize("mode", paths.Modes(paths.representative))
def test_the_kept_nat_forwards_through_a_stop_a_kill_and_two_starts(mode, bpffs, rules_file):
    """In AF_XDP the second stop is a SIGTERM too: a killed process frees its sockets only as it exits, and what
    reaches them until then is lost (the next test shows what a kill leaves there)."""
    state = bpffs / "edge-nat"
    kill = signal.SIGKILL if contract.mode(mode)["datapath"] == "kernel" else signal.SIGTERM
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        rules = rules_file(container_nf.nat_rules(t))
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])   # only the NAT carries: a gap loses pings

        def start() -> NfInstance:
            return NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules, name="edge-nat",
                                    extra=["--state", str(state), *paths.worker_options(mode)])

        first = start()
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        assert apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=50).lost_packets == 0

        pings, pinged = in_background(lambda: apps.ping(h0.ns, h1.ip, PINGS, PING_INTERVAL_S))
        tcp, sent = in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=6))
        time.sleep(1)
        running = program_on(state)
        assert first.stop(signal.SIGTERM) == 0
        assert "stays attached" in first.process.stdout.read()
        assert attached(t, mode)                       # no process, and the NAT forwards on
        before, first_program = kept_state.nat_mappings(state), program_on(state)   # the workers' tables are kept once they stop
        assert first_program == running                # a stop loads no program: the one in place runs the NF on
        assert before
        second = start()
        assert second.stop(kill) == (-kill if kill == signal.SIGKILL else 0)
        third = start()
        pings.join(timeout=30)
        tcp.join(timeout=60)

        assert pinged.get("value") == PINGS, pinged
        assert "error" not in sent and sent["value"].received_bytes > 0, sent     # never reset
        assert third.stop(signal.SIGTERM) == 0
        after = kept_state.nat_mappings(state)
        assert {k: v for k, v in after.items() if k in before} == before
        assert program_on(state) != first_program      # the link moved to the program a later start loaded

        other = run_xnf(["run", "firewall", "--mode", mode, "--iface", "dut0", "--state", str(state)],
                        ns=t.dut_ns)
        assert other.returncode == 1 and "holds the state of nat, not of firewall" in other.stderr
        resized = run_xnf(["run", "nat", "--mode", mode, "--iface", "dut0", "--iface", "dut1", "--state", str(state),
                           "--map-size", "nat_mappings=1024"], ns=t.dut_ns)
        assert resized.returncode == 1 and "its map nat_mappings has" in resized.stderr, resized.stderr
        assert attached(t, mode)                       # a refused start leaves the kept program alone

        shutil.rmtree(state)
        # The last pin of a link gone, the kernel releases it a moment later (TCX links after an RCU grace period).
        wait_until(lambda: not attached(t, mode), what="the kept program off once its folder is gone")


def afxdp_nat_kept_in(state, t: HostsTopology, rules_file, mode: str = "afxdp") -> NfInstance:
    """The NAT with workers (afxdp, hybrid) and --state, the only thing that carries between the hosts."""
    netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
    return NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(container_nf.nat_rules(t)),
                            name="edge-nat", extra=["--state", str(state), *paths.worker_options(mode)])


# Ends by itself should the test that started it be killed: nothing else on its core would run.
_SPIN_FOR_AT_MOST = "import time\nend = time.monotonic() + 60\nwhile time.monotonic() < end: pass"


def running_real_time_on(core: int) -> subprocess.Popen:
    """A spinner at real-time priority on core: what shares it gets 5 % of it (the kernel's RT throttling)."""
    spinner = subprocess.Popen(["taskset", "-c", str(core), "chrt", "-f", "50", sys.executable, "-c",
                                _SPIN_FOR_AT_MOST])
    try:
        wait_until(lambda: os.sched_getscheduler(spinner.pid) == os.SCHED_FIFO and
                   Path(f"/proc/{spinner.pid}/comm").read_text().strip().startswith("python"), timeout_s=10,
                   what="the spinner running at real-time priority")
    except BaseException:
        spinner.kill()
        spinner.wait()
        raise
    return spinner


@pytest.mark.parametrize("mode", paths.Modes(paths.worker_kinds))
def test_a_worker_starved_of_its_core_at_the_stop_still_forwards_what_its_rings_hold(mode, bpffs, rules_file):
    """A stop takes the sockets out of the program's way (it runs the NF itself then), then lets the workers
    finish what their rings hold. A worker kept off its core makes no progress for a while, with frames on its
    ring: a drain that took a quiet spell for the end closed the sockets under them (afxdp: 1, 16 and 47 of 200
    pings lost in three of six tries; hybrid: 3 and 4 in two of three). Every ping answered, and the stop says
    nothing of frames lost."""
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        nf = afxdp_nat_kept_in(state, t, rules_file, mode)
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        pings, pinged = in_background(lambda: apps.ping(h0.ns, h1.ip, 200))
        wait_until(lambda: control.request_json(nf.name, "stats")["workers"][0]["rx_packets"] >= 20, timeout_s=20,
                   what="the pings through the worker")
        spinner = running_real_time_on(DUT_CORE)
        try:
            assert nf.stop(signal.SIGTERM) == 0
        finally:
            spinner.kill()
            spinner.wait()
        pings.join(timeout=30)
        assert pinged.get("value") == 200, pinged
        assert "lost" not in nf.process.stderr.read()
        shutil.rmtree(state)


def test_a_killed_afxdp_nat_leaves_its_flows_to_the_kernel_build(bpffs, rules_file):
    """A SIGKILL hands nothing over, but the workers copied their tables on to the kernel's while they ran, and the
    redirect program, finding the sockets gone, runs the NAT itself on them: with no process at all, the mappings
    the workers made are there, new flows get through (an inward UDP stream too), and the next start takes the
    tables back."""
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        rules = rules_file(container_nf.nat_rules(t))

        def start() -> NfInstance:
            return NfInstance.start(t, "nat", "afxdp", t.dut_ifaces, rules=rules, name="edge-nat",
                                    extra=["--state", str(state), *paths.worker_options("afxdp")])

        first = start()
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        made = wait_until(lambda: kept_state.nat_mappings(state), timeout_s=20,
                          what="the workers' mapping copied to the kernel (once a second)")
        assert first.stop(signal.SIGKILL) == -signal.SIGKILL
        inward = apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=200, bitrate="1M", reverse=True)
        assert inward.lost_packets == 0 and apps.ping(h0.ns, h1.ip, 3) == 3      # no process: the fallback
        kept = kept_state.nat_mappings(state)
        assert {k: kept.get(k) for k in made} == made
        second = start()
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        assert second.stop(signal.SIGTERM) == 0
        assert {k: v for k, v in kept_state.nat_mappings(state).items() if k in kept} == kept
        shutil.rmtree(state)


def test_the_kernel_copy_of_afxdp_sessions_keeps_their_last_seen_time(bpffs, rules_file):
    """The workers' copy to the kernel's tables refreshes what it copied before: a mapping in use has a recent
    last-seen time there too, so that the kernel build after a kill does not find it idle since its first copy and
    expire it. (Copied once, new entries only, its time stayed the first.)"""
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        nf = afxdp_nat_kept_in(state, t, rules_file)

        def last_seen() -> dict:
            return {json.dumps(e["key"], sort_keys=True): e["value"]["last_seen_ns"]
                    for e in kept_state.entries(state, "nat_mappings")}

        pings, _ = in_background(lambda: netns.run(h0.ns, ["ping", "-q", "-c", "100", "-i", "0.1", h1.ip],
                                                   check=False))
        first = wait_until(last_seen, timeout_s=20, what="the pings' mapping copied to the kernel (once a second)")
        wait_until(lambda: any(last_seen().get(key, 0) > seen for key, seen in first.items()), timeout_s=20,
                   what="the mapping's last-seen time refreshed there")
        pings.join(timeout=30)
        assert nf.stop(signal.SIGTERM) == 0
        shutil.rmtree(state)


def test_a_reload_in_afxdp_is_the_kernel_builds_before_a_kill(bpffs, bare_pair, tmp_path):
    """Rules reloaded in afxdp are in the kernel's copy at once: killed right after a reload that drops a flow, the
    redirect program's fallback drops it too, and lets the other flow through. (The copy followed once a second,
    new entries only: the old generation stayed in force there until then.)"""
    link = bare_pair.links[0]
    path = tmp_path / "fw.rules"
    path.write_text("default allow\n")
    nf = NfInstance.start(bare_pair, "firewall", "afxdp", bare_pair.dut_ifaces, rules=str(path),
                          extra=["--state", str(bpffs / "fw"), *paths.worker_options("afxdp")])
    path.write_text(f"drop udp 198.51.100.1 5000 {link.dut_ip} 9\n")
    nf.request("reload")
    assert nf.stop(signal.SIGKILL) == -signal.SIGKILL
    out = Generator(bare_pair, receive_on=0).run(
        "--count", "2000", "--rate", "20000", "--dst-ip", link.dut_ip,
        "--class", "dropped:share=0.5,saddr=198.51.100.1/32,sport=5000,dport=9,flows=1",
        "--class", "other:share=0.5,saddr=198.51.100.2/32,sport=5000,dport=9,flows=1").summary
    classes = {c["name"]: c for c in out["classes"]}
    assert classes["dropped"]["received"] == 0, classes
    assert classes["other"]["lost"] == 0, classes     # the fallback forwards: no process runs
    shutil.rmtree(bpffs / "fw")


def test_state_is_for_the_modes_that_keep_it(bpffs, pair):
    refused = run_xnf(["run", "nat", "--mode", "xdp-sk", "--iface", "dut0", "--state", str(bpffs / "x")],
                      ns=pair.dut_ns)
    assert refused.returncode == 2 and "--mode xdp-sk cannot keep them yet" in refused.stderr, refused.stderr
    dispatched = run_xnf(["run", "nat", "--mode", "afxdp", "--iface", "dut0", "--state", str(bpffs / "x"),
                          "--offload-drops"], ns=pair.dut_ns)
    assert dispatched.returncode == 2 and "leave them out" in dispatched.stderr, dispatched.stderr
    both = run_xnf(["run", "nat", "--mode", "xdp", "--iface", "dut0", "--state", str(bpffs / "x"), "--pin",
                    str(bpffs / "y")], ns=pair.dut_ns)
    assert both.returncode == 2 and "leave out --attach, --pin and --split" in both.stderr


def portblock_build(folder: Path, more_source: str = "") -> Path:
    """examples/portblock built into folder/bin, with more_source added to its NF (a later version's change)."""
    source = folder / "portblock"
    shutil.copytree(REPO_ROOT / "examples" / "portblock", source, ignore=shutil.ignore_patterns("build"))
    with open(source / "portblock.c", "a") as nf:
        nf.write(more_source)
    built = run_xnf(["build", str(source), "--out", str(folder / "bin")])
    assert built.returncode == 0, built.stderr
    return folder / "bin" / "xnf-portblock"


def test_a_later_build_with_a_new_map_takes_the_state_over(bpffs, pair, tmp_path, rules_file):
    """An upgrade that adds a map to the NF (as the acl's acl_steady_below did): the kept maps are taken over, the
    rules the first build was given still decide, and the new map starts empty, said; the program is the new one."""
    state, link = bpffs / "portblock", pair.links[0]
    first = portblock_build(tmp_path / "v1")
    later = portblock_build(tmp_path / "v2", "XNF_MAP_ARRAY(portblock_since_v2, __u32, 4);\n")
    blocked, passing = [udp4(link, 1000 + i, 53, seq=i) for i in range(10)], [udp4(link, 1000, 54)]

    def start(binary: Path, **rules) -> NfInstance:
        return NfInstance.start(pair, "portblock", "xdp", pair.dut_ifaces, extra=["--state", str(state)],
                                binary=binary, **rules)

    nf = start(first, rules=rules_file("block udp 53\n"))
    assert len(exchange(pair, blocked + passing, expect=1)) == 1
    running = program_on(state)
    assert nf.stop() == 0
    nf = start(later)
    assert len(exchange(pair, blocked + passing, expect=1)) == 1   # the kept rule, from the kept map
    assert nf.stop() == 0
    said = nf.process.stdout.read() + nf.process.stderr.read()
    assert "holds no map portblock_since_v2: it starts empty" in said, said
    assert program_on(state) != running and xdp_attached(pair.dut_ns, "dut0")
    shutil.rmtree(state)
    assert not xdp_attached(pair.dut_ns, "dut0")


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
        before = kept_state.nat_mappings(state)
        pings, pinged = in_background(lambda: apps.ping(h0.ns, h1.ip, PINGS, PING_INTERVAL_S))
        time.sleep(1)
        write(["--tc-send", "device"])
        restarted = run_xnf(["apply", str(path)], ns=t.dut_ns, timeout=120)
        assert restarted.stdout.splitlines() == ["edge-nat: restart (options changed: cannot change in place)"], \
            restarted.stderr
        pings.join(timeout=30)
        assert pinged.get("value") == PINGS, pinged
        assert {k: v for k, v in kept_state.nat_mappings(state).items() if k in before} == before
        path.write_text("")
        assert run_xnf(["apply", str(path)], ns=t.dut_ns, timeout=120).returncode == 0
        assert not state.exists() and not attached(t, "tc")


def test_move_carries_the_nat_through_tc_and_user_space_without_a_gap(bpffs, rules_file, tmp_path, monkeypatch):
    """xnf move: the same NAT from XDP to tc, to AF_XDP workers, to hybrid and back, and back to XDP under a ping every 10 ms, a UDP flow
    inward (datagrams that only the kept mapping lets in: nothing goes out to make it again) and a TCP connection
    made in XDP, and a TCP connection and an inward UDP flow made in user space that live on into XDP: every ping answered, no
    datagram lost, neither connection reset (a mapping that changed would reset it), every mapping the same public
    port, the program at the hook it was moved to. Each move stops one process and starts the next: the kept
    program, or the workers' tables handed to the kernel, carry the frames in between."""
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))
    state = bpffs / "edge-nat"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        first = NfInstance.start(t, "nat", "xdp", t.dut_ifaces, rules=rules_file(container_nf.nat_rules(t)),
                                 name="edge-nat", extra=["--state", str(state)])
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        before = kept_state.nat_mappings(state)

        def move(mode: str, came_from: str, options: list[str]) -> None:
            moved = run_xnf(["move", "--name", "edge-nat", "--mode", mode, "--", *options], ns=t.dut_ns, timeout=60)
            assert moved.returncode == 0 and f"moved edge-nat from {came_from} to {mode}" in moved.stdout, \
                moved.stderr
            assert control.request_json("edge-nat", "info")["mode"] == mode

        flows = [in_background(lambda: apps.ping(h0.ns, h1.ip, 2 * PINGS, PING_INTERVAL_S)),
                 in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=800, bitrate="1M",
                                                   reverse=True)),
                 in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=8, tcp_bitrate="50M",
                                                   port=apps.IPERF_PORT + 1))]
        time.sleep(1)
        xdp, tc = paths.modes(paths.kernel_hooks)
        user, hybrid = paths.modes(paths.worker_kinds)
        move(tc, xdp, [])
        move(user, tc, paths.worker_options(user))
        move(hybrid, user, paths.worker_options(hybrid))
        move(user, hybrid, paths.worker_options(user))
        flows.append(in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=3, tcp_bitrate="50M",
                                                       port=apps.IPERF_PORT + 2)))
        flows.append(in_background(lambda: apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=300, bitrate="1M",
                                                       reverse=True, port=apps.IPERF_PORT + 3)))
        time.sleep(1)
        move(xdp, user, [])
        assert first.process.wait(timeout=10) == 0
        (_, pinged), (_, flowed), (_, sent_xdp), (_, sent_user), (_, flowed_user) = flows
        for thread, _ in flows:
            thread.join(timeout=60)
        assert pinged.get("value") == 2 * PINGS, pinged
        for udp in (flowed, flowed_user):
            assert "error" not in udp and udp["value"].lost_packets == 0, udp
        for sent in (sent_xdp, sent_user):    # never reset
            assert "error" not in sent and sent["value"].received_bytes > 0, sent
        assert {k: v for k, v in kept_state.nat_mappings(state).items() if k in before} == before
        assert attached(t, "xdp") and not attached(t, "tc")

        same = run_xnf(["move", "--name", "edge-nat", "--mode", "xdp"], ns=t.dut_ns)
        assert same.returncode == 1 and "runs in xdp already" in same.stderr
        generic = run_xnf(["move", "--name", "edge-nat", "--mode", "xdp-generic"], ns=t.dut_ns)
        assert generic.returncode == 1 and "cannot take state over yet" in generic.stderr
        os.kill(control.request_json("edge-nat", "info")["pid"], signal.SIGTERM)
        wait_until(lambda: "edge-nat" not in control.instances(), what="the moved instance stopped")
        shutil.rmtree(state)
        assert not attached(t, "xdp")


def test_a_move_runs_where_the_instance_runs_and_a_failed_one_leaves_it_running(tmp_path):
    """The router started in a shell of its own (`ip netns exec`, bpffs mounted there alone, its rules and state
    its rules by a path relative to its folder), moved from another shell in another folder: the new process runs
    where the old one did. A move whose options a start refuses stops nothing; one that fails as it starts (16
    queues on a veth that has 1) starts the old command line again, where it ran."""
    from xnf import programs

    with HostsTopology(hosts=2) as t:
        folder = tmp_path / "edge"
        folder.mkdir()
        (folder / "router.rules").write_text(t.router_rules())
        ports = " ".join(f"--iface {iface}" for iface in t.dut_ifaces)
        t.spawn(t.dut_ns, ["sh", "-c", f"mount -t bpf bpf /sys/fs/bpf && mkdir /sys/fs/bpf/kept && cd {folder} && "
                                       f"exec {programs.nf_binary('router')} run --mode xdp {ports} --name edge-moved "
                                       f"--rules router.rules --state /sys/fs/bpf/kept"])
        wait_until(lambda: control.state("edge-moved") == control.RUNNING, timeout_s=30, what="the router started")
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3

        def move(mode: str, *options: str) -> subprocess.CompletedProcess:
            return run_xnf(["move", "--name", "edge-moved", "--mode", mode, "--", *options], ns=t.dut_ns, timeout=60)

        moved = move("tc")
        assert moved.returncode == 0 and "moved edge-moved from xdp to tc" in moved.stdout, moved.stderr
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
        running = control.request_json("edge-moved", "info")["pid"]
        refused = move("afxdp", "--queues", "many")
        assert refused.returncode == 1 and "cannot move to afxdp: --queues takes a whole number" in refused.stderr
        assert "it runs in tc as before" in refused.stderr and control.request_json("edge-moved", "info")["pid"] == running
        failed = move("afxdp", "--queues", "16", *paths.worker_options("afxdp"))
        assert failed.returncode == 1 and "it runs in tc again, on its kept state" in failed.stderr, failed.stderr
        assert control.request_json("edge-moved", "info")["mode"] == "tc"
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
        back = move("xdp")
        assert back.returncode == 0, back.stderr
        os.kill(control.request_json("edge-moved", "info")["pid"], signal.SIGTERM)
        wait_until(lambda: "edge-moved" not in control.instances(), what="the moved instance stopped")
    (control.run_dir() / "edge-moved.log").unlink()   # the moved process's output, kept for the user after it ends


def test_a_state_folder_holds_only_what_xnf_keeps_there(bpffs, rules_file, tmp_path, monkeypatch):
    """A folder holding another party's pinned map, or a bpffs mount itself, is refused as --state; a map another
    party pins into an instance's folder while it runs stays through `xnf stop --drop-state`, said, while what xnf
    kept goes and takes the program off."""
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))

    def pin_a_map(path):
        path.parent.mkdir(exist_ok=True)
        subprocess.run(["bpftool", "map", "create", str(path), "type", "array", "key", "4", "value", "4", "entries",
                        "1", "name", "theirs"], check=True)

    with HostsTopology(hosts=2) as t:
        pin_a_map(bpffs / "shared" / "theirs")
        for state, said in ((bpffs / "shared", "holds theirs, which xnf does not keep there"),
                            (bpffs, "is a bpffs mount, which other tools share")):
            refused = run_xnf(["run", "router", "--mode", "xdp", *[w for i in t.dut_ifaces for w in ("--iface", i)],
                               "--state", str(state)], ns=t.dut_ns)
            assert refused.returncode != 0 and said in refused.stderr, refused.stderr
            assert not xdp_attached(t.dut_ns, "dut0")
        state = bpffs / "mine"
        NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()), name="edge-kept",
                         extra=["--state", str(state)])
        pin_a_map(state / "theirs")
        dropped = run_xnf(["stop", "--name", "edge-kept", "--drop-state"], ns=t.dut_ns, timeout=60)
        assert dropped.returncode == 0 and "theirs left in" in dropped.stdout, dropped
        assert sorted(p.name for p in state.iterdir()) == ["theirs"] and (bpffs / "shared" / "theirs").exists()
        assert not xdp_attached(t.dut_ns, "dut0")


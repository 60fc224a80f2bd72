"""The port checks (lib/runtime/port_checks.c) on hosts attached as containers are (plain veths): each problem
named with its fix by `xnf doctor` and at start, `--peers check` refusing what would lose frames, `--peers fix`
changing the peer and putting it back (after a SIGKILL too, by the next start, never while the owner lives),
unfinished checksums finished in every mode and kept for the stack where a frame keeps its skb, and frames the
kernel refuses after the verdict counted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from lab_helpers import run_xnf, wait_until, xdp_attached
from xnf import control, process_id, programs
from xnf.lab import apps, netns, paths
from xnf.lab.cores import DUT_CORE
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance


def features(ns: str, iface: str = "eth0") -> dict[str, bool]:
    out = netns.run(ns, ["ethtool", "-k", iface]).stdout
    return {name.strip(): value.split()[0] == "on" for name, _, value in
            (line.partition(":") for line in out.splitlines()[1:]) if value.strip()}


def offloads(ns: str) -> tuple[bool, bool]:
    """(GRO, checksum offload) of a host's eth0."""
    f = features(ns)
    return f["generic-receive-offload"], f["tx-checksum-ip-generic"]


def journals() -> list[str]:
    return sorted(p.name for p in control.run_dir().glob(".setting-*.journal"))


def test_doctor_names_both_problems_of_a_plain_veth_and_their_fixes():
    with HostsTopology(hosts=2) as t:
        h0 = t.host(0)
        result = run_xnf(["doctor", "dut0", "dut1", "--json"], ns=t.dut_ns)
        assert result.returncode == 1, result.stderr  # in xdp mode (the default) frames would be lost
        report = json.loads(result.stdout)
        port = report["ports"][0]
        assert not report["ok"] and port["peer"]["enter"] == f"ip netns exec {h0.ns}"
        assert port["peer"]["gro"] is False and port["peer"]["tx_checksum_offload"] is True
        problems = {p["code"]: p for p in port["problems"]}
        assert problems["peer-takes-no-xdp-frames"]["level"] == "error"
        assert problems["peer-takes-no-xdp-frames"]["fix"] == f"ip netns exec {h0.ns} ethtool -K eth0 gro on"
        assert "drops every frame" in problems["peer-takes-no-xdp-frames"]["why"]
        assert problems["peer-unfinished-checksums"]["fix"] == f"ip netns exec {h0.ns} ethtool -K eth0 tx off"
        text = run_xnf(["doctor", "dut0"], ns=t.dut_ns)
        assert f"fix: ip netns exec {h0.ns} ethtool -K eth0 gro on" in text.stdout
        # where the workers send, a port without XDP frames only slows them: nothing that loses frames
        assert run_xnf(["doctor", "dut0", "--mode", "afxdp"], ns=t.dut_ns).returncode == 0
        netns.run(h0.ns, ["ethtool", "-K", "eth0", "gro", "on", "tx", "off"])
        fixed = json.loads(run_xnf(["doctor", "dut0", "--json"], ns=t.dut_ns).stdout)
        assert fixed["ok"] and fixed["ports"][0]["problems"] == []


def test_doctor_at_tc_judges_nothing_of_the_peers_and_says_what_tc_needs():
    """The same plain veths that lose every frame in xdp: at tc nothing of theirs matters. A peer with a jumbo MTU
    is no problem in any mode: the port is said to bring jumbo frames, which XDP and the sockets then take."""
    with HostsTopology(hosts=2) as t:
        h0 = t.host(0)
        netns.run(h0.ns, ["ip", "link", "set", "eth0", "mtu", "9000"])
        for mode in paths.modes(paths.kernel_and_user):
            report = json.loads(run_xnf(["doctor", "dut0", "--mode", mode, "--json"], ns=t.dut_ns).stdout)
            assert report["ports"][0]["jumbo_frames"] and "peer-mtu-too-large" not in codes(t, "dut0", "--mode", mode)[0]
        result = run_xnf(["doctor", "dut0", "dut1", "--mode", "tc", "--json"], ns=t.dut_ns)
        assert result.returncode == 0, result.stderr
        report = json.loads(result.stdout)
        assert report["ok"]
        for port in report["ports"]:
            assert [(p["code"], p["level"]) for p in port["problems"]] == [("tc-ingress", "note")]
            assert "TCX" in port["problems"][0]["what"] and "left as they are" in port["problems"][0]["why"]


def codes(t: HostsTopology, *args: str) -> list[set[str]]:
    report = json.loads(run_xnf(["doctor", *args, "--json"], ns=t.dut_ns).stdout)
    return [{p["code"] for p in port["problems"]} for port in report["ports"]]


def test_doctor_names_queue_mtu_and_state_problems():
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        for h in t.host_list:
            netns.run(h.ns, ["ethtool", "-K", "eth0", "gro", "on", "tx", "off"])  # the problems above, fixed
        netns.ip("link", "set", "dut1", "down", ns=t.dut_ns)
        netns.ip("link", "set", "eth0", "mtu", "4000", ns=h0.ns)
        assert codes(t, "dut0", "dut1") == [set(), {"port-down"}]   # frames past a page are taken in any mode
        assert codes(t, "dut0", "--mode", "xdp-generic") == [set()]
        # a pair of two queues within the DUT's namespace: q0 receives on one while its peer sends on two
        netns.ip("link", "add", "q0", "numrxqueues", "2", "numtxqueues", "2", "type", "veth", "peer", "name", "q1",
                 "numrxqueues", "2", "numtxqueues", "2", ns=t.dut_ns)
        for iface in ("q0", "q1"):
            netns.ip("link", "set", iface, "up", ns=t.dut_ns)
        netns.run(t.dut_ns, ["ethtool", "-K", "q1", "gro", "on", "tx", "off"])
        netns.run(t.dut_ns, ["ethtool", "-L", "q0", "rx", "1"])
        assert "queues-fewer-than-peer" in codes(t, "q0")[0]  # (and the kernel takes its XDP frames away)
        netns.run(t.dut_ns, ["ethtool", "-L", "q0", "rx", "2"])
        assert codes(t, "q0", "--mode", "afxdp", "--queues", "1") == [{"queues-not-served"}]
        netns.ip("link", "set", "dut1", "up", ns=t.dut_ns)
        netns.ip("link", "set", "eth0", "mtu", "3500", ns=h1.ns)
        netns.ip("link", "set", "dut1", "mtu", "3500", ns=t.dut_ns)
        assert codes(t, "dut1", "--mode", "afxdp") == [{"frames-longer-than-live"}]


def test_peers_check_refuses_a_port_that_would_lose_frames_and_changes_nothing(rules_file):
    with HostsTopology(hosts=2) as t:
        result = run_xnf(["run", "router", "--mode", "xdp", "--iface", "dut0", "--iface", "dut1", "--rules",
                          rules_file(t.router_rules()), "--peers", "check"], ns=t.dut_ns)
        assert result.returncode == 1
        assert f"fix: ip netns exec {t.host(1).ns} ethtool -K eth0 gro on" in result.stderr
        assert "not started" in result.stderr and "Traceback" not in result.stderr
        assert not xdp_attached(t.dut_ns, "dut0")
        assert offloads(t.host(0).ns) == offloads(t.host(1).ns) == (False, True)


def test_peers_fix_changes_the_peers_for_as_long_as_it_runs(rules_file):
    with HostsTopology(hosts=2) as t:
        before = journals()
        nf = NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()))
        assert offloads(t.host(0).ns) == offloads(t.host(1).ns) == (True, False)
        assert len(set(journals()) - set(before)) == 4  # GRO and checksum offload of two peers
        assert apps.ping(t.host(0).ns, t.host(1).ip, 3) == 3
        assert nf.stop() == 0
        assert offloads(t.host(0).ns) == offloads(t.host(1).ns) == (False, True)
        assert set(journals()) <= set(before)


def test_a_killed_instance_has_its_peers_put_back_by_the_next_start_and_never_a_live_ones(rules_file):
    with HostsTopology(hosts=2) as t:
        rules = rules_file(t.router_rules())
        first = NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules)
        second = run_xnf(["run", "router", "--mode", "xdp", "--iface", "dut0", "--rules", rules, "--name", "two"],
                         ns=t.dut_ns)
        assert second.returncode != 0  # the port is taken; its peer's settings are the live owner's: kept
        assert offloads(t.host(0).ns) == (True, False)
        before = journals()
        first.stop(signal.SIGKILL)
        assert offloads(t.host(0).ns) == (True, False) and journals() == before  # nobody could put them back
        result = run_xnf(["run", "router", "--mode", "xdp", "--iface", "dut0", "--iface", "dut1", "--rules", rules,
                          "--peers", "check"], ns=t.dut_ns)
        assert result.returncode == 1  # put back, then refused as a plain veth
        assert "as it was before an instance that did not stop changed it" in result.stderr
        assert offloads(t.host(0).ns) == offloads(t.host(1).ns) == (False, True)
        assert len(set(before) - set(journals())) == 4


_NO_REAPER = """
import subprocess, sys, time
child = subprocess.Popen(sys.argv[1:])
print(child.pid, flush=True)
time.sleep(3600)   # never waits for it: killed, it stays a zombie, its pid taken and its work over
"""


def test_an_instance_killed_into_a_zombie_has_its_peers_put_back_by_the_next_start(rules_file):
    """An instance whose parent does not reap it is a zombie once killed: its pid and start time still read as its
    own, but it runs no more. The next start puts its peers' settings back, as after any SIGKILL."""
    with HostsTopology(hosts=2) as t:
        rules, name = rules_file(t.router_rules()), f"{t.dut_ns}-zombie"
        parent = t.spawn(t.dut_ns, [sys.executable, "-c", _NO_REAPER, str(programs.nf_binary("router")), "run",
                                    "--mode", "xdp", "--iface", "dut0", "--iface", "dut1", "--rules", rules,
                                    "--name", name])
        pid = int(parent.stdout.readline())
        try:
            deadline = time.monotonic() + 30
            while control.state(name) != control.RUNNING:
                assert time.monotonic() < deadline and parent.poll() is None, "the router did not start"
                time.sleep(0.05)
            assert offloads(t.host(0).ns) == (True, False)
            os.kill(pid, signal.SIGKILL)
            while process_id.stat_fields(str(pid))[0] != "Z":
                time.sleep(0.01)
            assert control.state(name) == control.DEAD
            result = run_xnf(["run", "router", "--mode", "xdp", "--iface", "dut0", "--iface", "dut1", "--rules",
                              rules, "--peers", "check"], ns=t.dut_ns)
            assert result.returncode == 1 and "as it was before an instance that did not stop changed it" in \
                result.stderr, result.stderr
            assert offloads(t.host(0).ns) == offloads(t.host(1).ns) == (False, True)
        finally:
            control.remove_records(name)


def test_the_settings_of_a_namespace_that_is_gone_are_forgotten(rules_file):
    before = set(journals())  # another live namespace's are not ours to judge
    with HostsTopology(hosts=2) as t:
        nf = NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()))
        ours = set(journals()) - before
        nf.stop(signal.SIGKILL)
    assert ours and ours <= set(journals())  # the namespaces went with the topology, the journals stayed
    with HostsTopology(hosts=2) as t:
        NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()), name="sweeper")
        assert not ours & set(journals())


# The XDP paths, where xnf finishes what the hosts' checksum offload leaves unfinished (tc keeps the skb's state), and
# the workers on each transmit path.
MODES = paths.Selection(select=lambda: {**paths.kinds_at_xdp(), **paths.transmit_paths()})


@pytest.mark.parametrize("variant", MODES)
def test_unfinished_checksums_are_finished_before_they_are_forwarded(variant, rules_file):
    """The hosts keep checksum offload on (--peers check; GRO on by hand so that XDP frames reach them): TCP
    crosses only because xnf finishes every segment, in each direction."""
    mode, extra = MODES[variant]
    with HostsTopology(hosts=2) as t:
        for h in t.host_list:
            netns.run(h.ns, ["ethtool", "-K", "eth0", "gro", "on"])
        nf = NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=extra + ["--peers", "check"])
        assert offloads(t.host(0).ns) == (True, True)
        for ip in (t.host(1).ip, t.host(1).ip6):
            assert apps.iperf3(t, t.host(0).ns, t.host(1).ns, ip).received_bytes > 0
        udp = apps.iperf3(t, t.host(0).ns, t.host(1).ns, t.host(1).ip, udp_datagrams=2000)
        assert udp.lost_packets == 0
        assert [apps.checksum_errors(h.ns) for h in t.host_list] == [0, 0]
        assert nf.stop() == 0


def test_a_passed_segment_keeps_what_its_unfinished_checksum_needs(rules_file):
    """Host 2's prefix is the DUT stack's to forward (router: local), through a DUT port without checksum offload,
    so the stack finishes each passed segment from the field XDP gave back: right only if that is the pseudo-
    header's sum again."""
    with HostsTopology(hosts=3) as t:
        for h in t.host_list:
            netns.run(h.ns, ["ethtool", "-K", "eth0", "gro", "on"])
        netns.run(t.dut_ns, ["ethtool", "-K", "dut2", "tx", "off"])
        h0, h1 = t.host(0), t.host(1)
        rules = (f"route 198.18.0.0/24 via {h0.mac} port 0\nroute 198.18.1.0/24 via {h1.mac} port 1\n"
                 f"local 198.18.2.0/24\nlocal {h0.dut_ip}/32\nport 0 mac {h0.dut_mac}\nport 1 mac {h1.dut_mac}\n")
        nf = NfInstance.start(t, "router", "xdp", t.dut_ifaces[:2], rules=rules_file(rules), extra=["--peers", "check"])
        assert apps.iperf3(t, t.host(0).ns, t.host(2).ns, t.host(2).ip).received_bytes > 0
        web = apps.WebServer(t, t.host(2).ns, t.host(2).ip)
        assert apps.download_sha256(t.host(0).ns, web.url) == web.sha256
        assert apps.checksum_errors(t.host(2).ns) == 0
        assert control.request_json(nf.name, "stats")["counters"]["local"] > 0
        assert nf.stop() == 0


def test_a_frame_the_kernel_refuses_after_the_verdict_is_counted(rules_file):
    with HostsTopology(hosts=2) as t:
        nf = NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()))
        assert apps.ping(t.host(0).ns, t.host(1).ip, 5) == 5
        netns.run(t.host(1).ns, ["ethtool", "-K", "eth0", "gro", "off"])  # behind xnf's back: XDP frames refused
        assert apps.ping(t.host(0).ns, t.host(1).ip, 7) == 0
        stats = control.request_json(nf.name, "stats")
        egress = {p["iface"]: p for p in stats["egress"]["ports"]}
        assert egress["dut1"]["refused"] == 7 and egress["dut1"]["sent"] == 5
        assert egress["dut0"]["sent"] == 5 and egress["dut0"]["refused"] == 0
        sent_on = stats["verdicts"]["tx"]["packets"] + stats["verdicts"]["redirect"]["packets"]
        assert sent_on == stats["egress"]["sent"] + stats["egress"]["dropped"] + stats["egress"]["refused"]
        nf.process.send_signal(signal.SIGINT)
        _, err = nf.process.communicate(timeout=10)
        assert "7 sent frames lost after the verdict" in err
        assert "dut1 no longer takes XDP frames" in err


def test_a_redirect_the_kernel_refuses_at_tc_is_counted(rules_file):
    """At tc the kernel carries a redirect out after the program returns: into a peer that went down it frees the
    skb, and the watcher counts it on the port the frame came in by."""
    mode, extra = paths.options_by_key("tc")["tc"]
    with HostsTopology(hosts=2) as t:
        nf = NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(t.router_rules()), extra=extra)
        assert apps.ping(t.host(0).ns, t.host(1).ip, 5) == 5
        netns.ip("link", "set", "eth0", "down", ns=t.host(1).ns)
        assert apps.ping(t.host(0).ns, t.host(1).ip, 7) == 0
        stats = control.request_json(nf.name, "stats")
        egress = {p["iface"]: p for p in stats["egress"]["ports"]}
        assert egress["dut0"]["refused"] == 7 and egress["dut1"]["refused"] == 0
        assert stats["egress"]["dropped"] == 0
        nf.process.send_signal(signal.SIGINT)
        _, err = nf.process.communicate(timeout=10)
        assert "7 sent frames lost after the verdict" in err


def test_egress_is_counted_only_where_the_kernel_sends(rules_file):
    with HostsTopology(hosts=2) as t:
        nf = NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=["--cores", str(DUT_CORE)])
        assert "egress" not in control.request_json(nf.name, "stats")
        assert nf.stop() == 0


def _own_net_namespace(pid: int) -> bool:
    """Whether process pid is in a network namespace other than this one's."""
    try:
        return os.readlink(f"/proc/{pid}/ns/net") != os.readlink("/proc/self/ns/net")
    except OSError:
        return False


def test_an_unreachable_peer_is_said_and_its_checksums_finished(rules_file):
    """A peer whose namespace only a file descriptor holds: no name in /run/netns, no process inside."""
    with HostsTopology(hosts=2) as t:
        holder = subprocess.Popen(["unshare", "--net", "sleep", "30"])
        held = None
        try:
            # The peer goes where the holder's namespace is when it moves: wait for unshare to have made its own.
            wait_until(lambda: _own_net_namespace(holder.pid), what="the holder's network namespace")
            netns.ip("link", "add", "lone", "type", "veth", "peer", "name", "lonepeer", ns=t.dut_ns)
            netns.ip("link", "set", "lonepeer", "netns", str(holder.pid), ns=t.dut_ns)
            held = os.open(f"/proc/{holder.pid}/ns/net", os.O_RDONLY)
            holder.kill()
            holder.wait()
            report = json.loads(run_xnf(["doctor", "lone", "--json"], ns=t.dut_ns).stdout)
        finally:
            if holder.poll() is None:
                holder.kill()
                holder.wait()
            if held is not None:
                os.close(held)
        port = report["ports"][0]
        assert "peer-unreachable" in {p["code"] for p in port["problems"]}
        assert port["peer"]["reachable"] is False and port["unfinished_checksums"] is True
        # Nothing is said of the peer that was not looked at: what its port's features show, said as such.
        told = [p["what"] for p in port["problems"] if p["code"] == "peer-takes-no-xdp-frames"]
        assert all("cannot be reached" in what and "neither an XDP program nor GRO" not in what for what in told)


def tx_dropped(ns: str, iface: str = "eth0") -> int:
    stats = json.loads(netns.run(ns, ["ip", "-s", "-j", "link", "show", iface]).stdout)[0]["stats64"]
    return stats["tx"]["dropped"]


def test_frames_a_peer_drops_before_xdp_are_counted(rules_file):
    """A veth with an XDP program receives through a 256-slot ring; a TCP sender without segmentation offload
    (XDP takes it away from the peer) bursts past it, and the peer drops what does not fit: xnf reports the
    peer's own count, since it started."""
    with HostsTopology(hosts=2) as t:
        nf = NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=["--cores", str(DUT_CORE)])
        before = tx_dropped(t.host(0).ns)
        apps.iperf3(t, t.host(0).ns, t.host(1).ns, t.host(1).ip, streams=8)
        ports = {p["iface"]: p for p in control.request_json(nf.name, "stats")["ports"]}
        assert ports["dut0"]["peer"] == "eth0"
        assert ports["dut0"]["dropped_before_xdp"] == tx_dropped(t.host(0).ns) - before
        assert nf.stop() == 0


def ip_in_receives(ns: str) -> int:
    out = netns.run(ns, ["nstat", "-az", "IpInReceives"]).stdout
    return int(next(line.split()[1] for line in out.splitlines() if line.startswith("IpInReceives")))


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_frames_sent_back_to_a_plain_container_arrive(mode):
    """An XDP_TX out of a veth wakes no peer that has GRO but no XDP program: its frames would wait in the ring
    while the NF counted them sent. The NF's TX reaches such a peer (as a redirect), frame for frame."""
    with HostsTopology(hosts=2) as t:
        host = t.host(0)
        netns.ip("neigh", "replace", "198.18.0.99", "lladdr", "02:00:00:00:09:09", "dev", host.iface,
                 "nud", "permanent", ns=host.ns)
        extra = paths.worker_options(mode)
        with NfInstance.start(t, "macswap", mode, [host.dut_if], extra=extra) as nf:
            before = ip_in_receives(host.ns)
            apps.ping(host.ns, "198.18.0.99", 20)   # each comes back to the host, which drops what is not its own
            sent_back = nf.stats()["tx"]["packets"]
            assert sent_back >= 20
            assert ip_in_receives(host.ns) - before >= 20

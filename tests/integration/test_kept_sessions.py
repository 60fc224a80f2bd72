"""The lb's and the upf's sessions moved with them, and a router's table handed over exactly: xnf move from XDP into AF_XDP workers and back under traffic.
The lb's sessions of finished HTTP downloads see no frame during the moves, so only a table carried over can still
hold them after; the upf's session is added at run time (`xnf rules add`, as the PFCP endpoint does), so it is in
no rules file a new process could read again: only the carried tables keep the UE's tunnel up."""

from __future__ import annotations

import json
import shutil

from lab_helpers import in_background, run_xnf, wait_until
from test_upf import ue_behind_a_gnb, upf_rules
from xnf import control
from xnf.lab import apps, container_nf, kept_state, netns, paths
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

TO_USER_SPACE_AND_BACK = [("afxdp", paths.worker_options("afxdp")), ("xdp", [])]
PINGS, PING_INTERVAL_S = 600, 0.01


def move(t: HostsTopology, name: str, mode: str, options: list[str]) -> None:
    moved = run_xnf(["move", "--name", name, "--mode", mode, "--", *options], ns=t.dut_ns, timeout=60)
    assert moved.returncode == 0 and f"to {mode}" in moved.stdout, moved.stderr
    assert control.request_json(name, "info")["mode"] == mode


def lb_sessions(state) -> dict:
    """Each kept session's flow -> where it goes (its idle clock left out)."""
    return {json.dumps(e["key"], sort_keys=True): json.dumps({k: v for k, v in e["value"].items()
                                                              if k != "last_seen_ns"}, sort_keys=True)
            for e in kept_state.entries(state, "lb_sessions")}


def test_the_lbs_sessions_move_into_user_space_and_back(bpffs, rules_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))
    state = bpffs / "edge-lb"
    with HostsTopology(hosts=3) as t:
        client = t.host(0)
        servers = [apps.WebServer(t, host.ns, host.ip, size=64 << 10) for host in (t.host(1), t.host(2))]
        nf = NfInstance.start(t, "lb", "xdp", t.dut_ifaces, rules=rules_file(container_nf.lb_rules(t)),
                              name="edge-lb", extra=["--state", str(state)])
        url = f"http://{container_nf.VIP}:{apps.HTTP_PORT}/file"
        for _ in range(6):
            assert apps.download_sha256(client.ns, url) in {server.sha256 for server in servers}
        before = lb_sessions(state)
        assert len(before) >= 6
        stream, streamed = in_background(lambda: apps.iperf3(t, client.ns, t.host(1).ns, t.host(1).ip, seconds=5,
                                                             tcp_bitrate="50M", connect_to=container_nf.VIP))
        for mode, options in TO_USER_SPACE_AND_BACK:
            move(t, "edge-lb", mode, options)
        stream.join(timeout=60)
        assert nf.process.wait(timeout=10) == 0
        assert "error" not in streamed and streamed["value"].received_bytes > 0, streamed   # never reset
        after = lb_sessions(state)
        assert {k: after.get(k) for k in before} == before
        assert apps.download_sha256(client.ns, url) in {server.sha256 for server in servers}
        stopped = run_xnf(["stop", "--name", "edge-lb"], ns=t.dut_ns, timeout=60)
        assert stopped.returncode == 0 and "forwards on with the tables kept" in stopped.stdout, stopped.stderr
        assert apps.download_sha256(client.ns, url) in {server.sha256 for server in servers}   # no process now
        assert lb_sessions(state).keys() >= before.keys()


def test_the_upfs_sessions_move_into_user_space_and_back(bpffs, rules_file, tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))
    state = bpffs / "edge-upf"
    with HostsTopology(hosts=2) as t:
        ue_behind_a_gnb(t)
        server = t.host(1)
        interfaces, session = upf_rules(t).splitlines()[:2], upf_rules(t).splitlines()[2:]
        nf = NfInstance.start(t, "upf", "xdp", t.dut_ifaces, rules=rules_file("\n".join(interfaces) + "\n"),
                              name="edge-upf", extra=["--state", str(state)])
        for line in session:
            nf.request(f"rules add {line}")
        assert apps.ping(t.host(0).ns, server.ip, 3) == 3
        pings, pinged = in_background(lambda: apps.ping(t.host(0).ns, server.ip, PINGS, PING_INTERVAL_S))
        udp, flowed = in_background(lambda: apps.iperf3(t, t.host(0).ns, server.ns, server.ip, udp_datagrams=500,
                                                        bitrate="1M", reverse=True))
        for mode, options in TO_USER_SPACE_AND_BACK:
            move(t, "edge-upf", mode, options)
        pings.join(timeout=60)
        udp.join(timeout=60)
        assert nf.process.wait(timeout=10) == 0
        assert pinged.get("value") == PINGS, pinged
        assert "error" not in flowed and flowed["value"].lost_packets == 0, flowed
        listed = control.request("edge-upf", "rules list")
        assert all(line.split(" #")[0] in listed for line in session), listed
        dropped = run_xnf(["stop", "--name", "edge-upf", "--drop-state"], ns=t.dut_ns, timeout=60)
        assert dropped.returncode == 0 and "removed its kept state" in dropped.stdout, dropped.stderr
        assert not state.exists() and apps.ping(t.host(0).ns, server.ip, 2) == 0   # nothing carries the tunnel


def test_a_route_deleted_in_user_space_stays_deleted_in_the_kernel(bpffs, rules_file):
    """The router in afxdp: a /32 route added at run time (copied on to the kernel's table while the workers run)
    and deleted again; at the stop the kernel's table is made equal to the workers', so the NF in the kernel that takes
    over routes by the /24 as the workers did. An LPM lookup would have found the /24 for the /32 and kept it."""
    state = bpffs / "edge-router"
    with HostsTopology(hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
        nf = NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                              name="edge-router", extra=["--state", str(state), *paths.worker_options("afxdp")])
        detour = f"route {h1.ip}/32 via 02:00:00:00:00:99 port 1"
        nf.request(f"rules add {detour}")
        assert apps.ping(h0.ns, h1.ip, 2) == 0                    # the /32 sends it nowhere
        address = [int(byte) for byte in h1.ip.split(".")]

        def routes() -> list[dict]:
            return [e for e in kept_state.entries(state, "rt4") if e["key"] == {"prefixlen": 32, "addr": address}]

        wait_until(routes, timeout_s=20, what="the /32 copied on to the kernel's table (once a second)")
        nf.request(f"rules del {detour}")
        assert apps.ping(h0.ns, h1.ip, 3) == 3
        assert nf.stop() == 0
        assert not routes() and apps.ping(h0.ns, h1.ip, 3) == 3   # the kernel build, with no process
        shutil.rmtree(state)

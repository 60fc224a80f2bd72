"""`xnf exporter` scraped by a real Prometheus (Debian's, started here on a loopback port in a temporary folder
and always stopped) while traffic flows: its HTTP API answers the instance's packet counter with the value
`xnf stats` gives."""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from lab_helpers import run_xnf, stopped, wait_until
from packets import udp4
from xnf import contract, control
from xnf.build import REPO_ROOT
from xnf.lab.generator import Generator
from xnf.lab.nf_setup import lb_sessions
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology
from xnf.lab.cores import DUT_CORE
from xnf.lab import paths

FRAMES = 60000
SCRAPE_CONFIG = """global:
  scrape_interval: 1s
scrape_configs:
  - job_name: xnf
    honor_labels: true
    static_configs:
      - targets: ["{target}"]
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_http(url: str, seconds: float = 30) -> str:
    deadline = time.monotonic() + seconds
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as answer:
                return answer.read().decode()
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class Server:
    """A background process that is always stopped."""

    def __init__(self, argv: list[str], cwd: Path | None = None):
        self.process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                                        env={"PATH": "/usr/sbin:/usr/bin:/bin", "PYTHONPATH": str(REPO_ROOT / "python")})

    def __enter__(self):
        return self

    def __exit__(self, *_):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


def query(prometheus: str, promql: str) -> list[dict]:
    url = f"{prometheus}/api/v1/query?" + urllib.parse.urlencode({"query": promql})
    answer = json.loads(wait_http(url))
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def wait_for_first_scrape(prometheus: str) -> None:
    """From its first scrape on, Prometheus scrapes every second, traffic or not; a fresh machine takes a while."""
    deadline = time.monotonic() + 60
    while not query(prometheus, 'up{job="xnf"}'):
        assert time.monotonic() < deadline, "Prometheus never scraped the exporter"
        time.sleep(0.5)


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_prometheus_scrapes_the_counters_xnf_stats_shows(mode, tmp_path, pair):
    prometheus_bin = shutil.which("prometheus", path="/usr/bin:/usr/sbin")
    assert prometheus_bin, "Debian's prometheus package is missing: scripts/setup.sh installs it"
    exporter_port, prometheus_port = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(SCRAPE_CONFIG.format(target=f"127.0.0.1:{exporter_port}"))
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces)
    nf.request("rules add drop udp 198.18.0.1 9 198.18.0.2 13")
    prometheus = f"http://127.0.0.1:{prometheus_port}"
    with Server([sys.executable, "-m", "xnf", "exporter", "--listen", f"127.0.0.1:{exporter_port}"]) as exporter, \
            Server([prometheus_bin, f"--config.file={tmp_path / 'prometheus.yml'}",
                    f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prometheus_port}"],
                   cwd=tmp_path) as server:
        metrics = wait_http(f"http://127.0.0.1:{exporter_port}/metrics")
        assert f'xnf_packets_total{{instance="{nf.name}",mode="{mode}",nf="firewall",verdict="tx"}}' in metrics
        wait_http(f"{prometheus}/-/ready")
        wait_for_first_scrape(prometheus)
        # 5 flows, one of them (dport 13) dropped by the rule: 1 in 5 frames
        Generator(pair).run("--count", str(FRAMES), "--rate", "20000", "--flows", "5")
        stats = control.request_json(nf.name, "stats")
        expected = {v: stats["verdicts"][v]["packets"] for v in ("tx", "drop")}
        assert expected == {"tx": FRAMES * 4 // 5, "drop": FRAMES // 5}
        scraped = {}
        deadline = time.monotonic() + 30
        while scraped != expected and time.monotonic() < deadline:
            time.sleep(1)
            for verdict in expected:
                found = query(prometheus, f'xnf_packets_total{{instance="{nf.name}",verdict="{verdict}"}}')
                scraped[verdict] = int(float(found[0]["value"][1])) if found else None
        assert scraped == expected, (scraped, server.process.stderr)
        up = query(prometheus, 'up{job="xnf"}')
        assert up and up[0]["value"][1] == "1"
        history = query(prometheus, f'count_over_time(xnf_packets_total{{instance="{nf.name}",verdict="tx"}}[1m])')
        assert int(history[0]["value"][1]) >= 3  # scraped again and again while the traffic flowed
        rule_drops = query(prometheus, f'xnf_nf_events_total{{instance="{nf.name}",counter="rule_drop"}}')
        assert int(rule_drops[0]["value"][1]) == FRAMES // 5
        if mode == "afxdp":
            rx = query(prometheus, f'xnf_worker_events_total{{instance="{nf.name}",worker="0",counter="rx_packets"}}')
            assert int(rx[0]["value"][1]) == FRAMES
        assert exporter.process.poll() is None
    assert nf.stop() == 0


def test_the_exporter_refuses_a_bad_address_or_a_taken_port():
    out = run_xnf(["exporter", "--listen", "localhost"])
    assert out.returncode == 1 and "give ADDRESS:PORT" in out.stderr
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        out = run_xnf(["exporter", "--listen", f"127.0.0.1:{taken.getsockname()[1]}"])
    assert out.returncode == 1 and "cannot listen on" in out.stderr and "Traceback" not in out.stderr


def test_an_instance_that_does_not_answer_is_exported_as_down(two_port):
    """Every scrape says of each instance whether it answered (xnf_up), at once for a stopped one, and keeps the
    series of the others."""
    up = NfInstance.start(two_port, "macswap", "xdp", ["dut0"], name=f"{two_port.dut_ns}-up")
    down = NfInstance.start(two_port, "drop", "xdp", ["dut1"], name=f"{two_port.dut_ns}-down")
    port = free_port()
    with stopped(down.process), \
            Server([sys.executable, "-m", "xnf", "exporter", "--listen", f"127.0.0.1:{port}"]):
        metrics = wait_http(f"http://127.0.0.1:{port}/metrics")
        # At once: the stopped instance was known stopped and never asked (a request would wait out its timeout
        # in the socket's queue of connections not yet accepted).
        waiting = pending_connections(two_port.dut_ns, control.socket_path(down.name))
    assert f'xnf_up{{instance="{up.name}",mode="xdp",nf="macswap"}} 1.0' in metrics
    assert f'xnf_up{{instance="{down.name}",mode="xdp",nf="drop"}} 0.0' in metrics
    assert f'xnf_uptime_seconds{{instance="{up.name}"' in metrics
    assert f'xnf_uptime_seconds{{instance="{down.name}"' not in metrics
    assert waiting == 0
    assert up.stop() == 0 and down.stop() == 0


def test_a_connection_table_is_exported_with_its_limit(two_port, rules_file):
    """The stateful acl's table: its entries (as `xnf entries acl_ct` counts them) and its size, per instance."""
    nf = NfInstance.start(two_port, "acl", "xdp", two_port.dut_ifaces,
                          rules=rules_file("10 allow state established,related\n20 allow state new\ndefault drop\n"))
    link = two_port.links[0]
    with PacketPort(two_port.gen_ns, link.gen_if) as port:
        port.send([udp4(link, 3000 + i, 53) for i in range(5)])
    wait_until(lambda: control.request_json(nf.name, "entries acl_ct")["entries"] == 5, timeout_s=10,
               what="five connections in the table")
    port_number = free_port()
    with Server([sys.executable, "-m", "xnf", "exporter", "--listen", f"127.0.0.1:{port_number}"]):
        metrics = wait_http(f"http://127.0.0.1:{port_number}/metrics")
    who = f'instance="{nf.name}",mode="xdp",nf="acl",table="acl_ct"'
    assert f"xnf_conntrack_entries{{{who}}} 5.0" in metrics, metrics
    assert f"xnf_conntrack_entries_limit{{{who}}} {contract.describe('acl')['maps']['acl_ct']}.0" in metrics
    assert nf.stop() == 0


def pending_connections(ns: str, socket: Path) -> int:
    """Connections to a listening Unix socket that its owner has not accepted yet (ss's Recv-Q for a listener)."""
    out = subprocess.run(["ip", "netns", "exec", ns, "ss", "-xlnH"], capture_output=True, text=True,
                         check=True).stdout
    [row] = [line.split() for line in out.splitlines() if str(socket) in line.split()]
    return int(row[2])


def scrape(url: str) -> str:
    """One scrape, given as long as Prometheus would wait for many (it must be answered, not be quick)."""
    with urllib.request.urlopen(url, timeout=60) as answer:
        return answer.read().decode()


def test_a_thousand_scrapes_at_once_and_idle_half_sent_requests_are_all_answered(pair):
    """1,000 parallel scrapes each get the metrics (they share the rounds of asking the instance); 800 connections
    that send half a request and wait are closed by the exporter, and a scrape behind them is answered."""
    nf = NfInstance.start(pair, "macswap", "xdp", ["dut0"])
    port = free_port()
    url = f"http://127.0.0.1:{port}/metrics"
    with Server([sys.executable, "-m", "xnf", "exporter", "--listen", f"127.0.0.1:{port}"]):
        wait_http(url)
        with ThreadPoolExecutor(max_workers=200) as pool:
            pages = list(pool.map(lambda _: scrape(url), range(1000)))
        assert all(f'xnf_up{{instance="{nf.name}"' in page for page in pages)
        idle = []
        for _ in range(800):
            held = socket.create_connection(("127.0.0.1", port))
            held.sendall(b"GET /metr")
            idle.append(held)
        try:
            assert f'xnf_up{{instance="{nf.name}"' in scrape(url)   # once: a retry would queue behind them again
            for held in idle:
                held.settimeout(60)
                assert held.recv(1) == b""   # closed by the exporter, not left waiting
        finally:
            for held in idle:
                held.close()
    assert nf.stop() == 0


DASHBOARD = REPO_ROOT / "deploy" / "grafana" / "xnf-dashboard.json"
# What Grafana puts in place of the dashboard's variables: every instance, a window of several scrapes.
GRAFANA_VARIABLES = {"$instance": ".*", "$__rate_interval": "30s"}


def dashboard_queries() -> list[tuple[str, str]]:
    panels = json.loads(DASHBOARD.read_text())["panels"]
    out = []
    for panel in panels:
        for target in panel["targets"]:
            expr = target["expr"]
            for variable, value in GRAFANA_VARIABLES.items():
                expr = expr.replace(variable, value)
            out.append((panel["title"], expr))
    return out


def test_every_query_of_the_grafana_dashboard_answers_from_prometheus(tmp_path, rules_file):
    """The dashboard (deploy/grafana) over what a real Prometheus scraped of three instances: a firewall in user space
    offloading its drop rules, and lb in XDP opening sessions. Every panel's query answers with series."""
    prometheus_bin = shutil.which("prometheus", path="/usr/bin:/usr/sbin")
    exporter_port, prometheus_port = free_port(), free_port()
    (tmp_path / "prometheus.yml").write_text(SCRAPE_CONFIG.format(target=f"127.0.0.1:{exporter_port}"))
    prometheus = f"http://127.0.0.1:{prometheus_port}"
    with Topology("pair") as fw_pair, Topology("pair") as lb_pair:
        firewall = NfInstance.start(fw_pair, "firewall", "afxdp", fw_pair.dut_ifaces,
                                    extra=["--cores", str(DUT_CORE), "--offload-drops", "--offload-above", "1000",
                                           "--offload-below", "100", "--offload-interval-ms", "100"])
        firewall.request("rules add drop udp 198.18.0.1 9 198.18.0.2 13")
        balancer = NfInstance.start(lb_pair, "lb", "xdp", lb_pair.dut_ifaces,
                                    rules=rules_file(lb_sessions(1, lb_pair.links[0].gen_mac).rules))
        with Server([sys.executable, "-m", "xnf", "exporter", "--listen", f"127.0.0.1:{exporter_port}"]), \
                Server([prometheus_bin, f"--config.file={tmp_path / 'prometheus.yml'}",
                        f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prometheus_port}"],
                       cwd=tmp_path):
            wait_http(f"{prometheus}/-/ready")
            wait_for_first_scrape(prometheus)
            for _ in range(3):   # traffic over several scrapes, so that every rate has two samples in its window
                Generator(fw_pair).run("--count", "20000", "--rate", "20000", "--flows", "5")
                Generator(lb_pair).run("--count", "20000", "--rate", "20000", "--flows", "100", "--vary", "sport")
            queries = dashboard_queries()
            deadline = time.monotonic() + 30
            while True:   # the last traffic reaches Prometheus with its next scrapes, a second or two later
                empty = [title for title, expr in queries if not query(prometheus, expr)]
                if not empty or time.monotonic() > deadline:
                    break
                time.sleep(1)
            assert not empty, empty
        assert firewall.stop() == 0 and balancer.stop() == 0

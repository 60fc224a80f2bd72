"""`xnf exporter --listen ADDR:PORT`: every running instance's counters as Prometheus metrics.

Each scrape asks every instance in the run directory for its stats (nothing is cached, so a scrape sees what
`xnf stats` would); scrapes that arrive while one is asking share its answers, so a thousand at once ask each instance
once, not a thousand times. A client gets REQUEST_TIMEOUT_S to send its request, and at most MAX_CONNECTIONS are
served at once (the others wait in the listen queue): half-sent requests hold the exporter for seconds at most. The metric names and their labels are written here only; docs/operations.md lists them.
The label `instance` is the xnf instance's name: Prometheus must keep it (honor_labels: true in the scrape job),
or it renames it to exported_instance beside its own target label."""

from __future__ import annotations

import signal
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

from xnf import conntrack_list, control
from xnf.errors import XnfError

# How long one scrape waits for an instance: Prometheus's own scrape timeout is 10 s by default, and every
# instance is asked at once.
ASK_TIMEOUT_S = 2.0
MAX_ASKED_AT_ONCE = 32
REQUEST_TIMEOUT_S = 3.0
MAX_CONNECTIONS = 512

IDENTITY = ["instance", "nf", "mode"]
# name (without _total): (help, extra labels)
COUNTERS = {
    "xnf_packets": ("frames given each verdict (malformed: a reason counted beside the verdict)", ["verdict"]),
    "xnf_bytes": ("bytes of the frames given each verdict", ["verdict"]),
    "xnf_worker_packets": ("frames given each verdict by one AF_XDP worker", ["worker", "verdict"]),
    "xnf_worker_events": ("an AF_XDP worker's own counters (rx_packets, tx_ring_full, kernel_rx_dropped ...)",
                          ["worker", "counter"]),
    "xnf_nf_events": ("the NF's own counters (rule_drop, new_session ...)", ["counter"]),
    "xnf_dropped_before_xdp_packets": ("frames a port's veth peer could not hand to it (its receive ring full), before "
                                       "any program of the port saw them", ["port", "peer"]),
    "xnf_egress_packets": ("frames the NF sent out of a port from XDP, by what the kernel did with them after the "
                           "verdict: sent, dropped (by the device), refused (never queued)", ["port", "outcome"]),
    "xnf_offload_changes": ("pure-drop rules moved into XDP (install) or back to user space (removal) by "
                            "--offload-drops", ["change"]),
    "xnf_offload_rule_hits": ("hits of the pure-drop rules, by where they were dropped (kernel: the XDP pre-filter, "
                              "user: the NF in user space)", ["side"]),
}
GAUGES = {"xnf_uptime_seconds": ("seconds since the instance started", []),
          "xnf_offloaded_rules": ("pure-drop rules in XDP now (--offload-drops)", []),
          "xnf_up": ("1 when the instance answered this scrape; 0 when it did not (stopped, hung, or busy past the "
                     "scrape's wait): its other series are missing from this scrape", []),
          "xnf_conntrack_entries": ("entries in a connection table now, those over but not freed yet too (as "
                                    "netfilter's nf_conntrack_count)", ["table"]),
          "xnf_conntrack_entries_limit": ("the most entries a connection table holds (as nf_conntrack_max)",
                                          ["table"])}


def _families():
    from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

    families = {name: CounterMetricFamily(name, text, labels=IDENTITY + extra) for name, (text, extra) in COUNTERS.items()}
    families.update({name: GaugeMetricFamily(name, text, labels=IDENTITY + extra) for name, (text, extra) in GAUGES.items()})
    return families


def add_instance(families: dict, stats: dict) -> None:
    who = [stats["name"], stats["nf"], stats["mode"]]
    families["xnf_up"].add_metric(who, 1)
    families["xnf_uptime_seconds"].add_metric(who, stats["uptime_s"])
    for verdict, counter in stats["verdicts"].items():
        families["xnf_packets"].add_metric(who + [verdict], counter["packets"])
        families["xnf_bytes"].add_metric(who + [verdict], counter["bytes"])
    for name, value in stats.get("counters", {}).items():
        families["xnf_nf_events"].add_metric(who + [name], value)
    for port in stats.get("ports", []):
        families["xnf_dropped_before_xdp_packets"].add_metric(who + [port["iface"], port["peer"]],
                                                              port["dropped_before_xdp"])
    for port in stats.get("egress", {}).get("ports", []):
        for outcome, value in port.items():  # the runtime names the outcomes (lib/xdp/egress_watch.c)
            if isinstance(value, int):
                families["xnf_egress_packets"].add_metric(who + [port["iface"], outcome], value)
    if "offload" in stats:
        add_offload(families, who, stats["offload"])
    for table in stats.get("conntrack", []):
        held = table["in_force"] + table["over_not_swept"]
        families["xnf_conntrack_entries"].add_metric(who + [table["table"]], held)
        families["xnf_conntrack_entries_limit"].add_metric(who + [table["table"]], table["capacity"])
    for w in stats.get("workers", []):
        worker = str(w["worker"])
        for verdict, value in w["verdicts"].items():
            families["xnf_worker_packets"].add_metric(who + [worker, verdict], value)
        for name, value in w.items():
            if isinstance(value, int) and name != "worker":
                families["xnf_worker_events"].add_metric(who + [worker, name], value)


def add_offload(families: dict, who: list[str], offload: dict) -> None:
    families["xnf_offload_changes"].add_metric(who + ["install"], offload["installs"])
    families["xnf_offload_changes"].add_metric(who + ["removal"], offload["removals"])
    for side in ("kernel", "user"):
        families["xnf_offload_rule_hits"].add_metric(who + [side], sum(r[f"{side}_hits"] for r in offload["rules"]))
    families["xnf_offloaded_rules"].add_metric(who, sum(r["where"] == "kernel" for r in offload["rules"]))


class SharedRound:
    """One round of asking at a time: a caller that arrives while a round runs waits for it and takes its answer."""

    def __init__(self, ask):
        self.ask, self.lock, self.running = ask, threading.Lock(), None

    def answer(self):
        with self.lock:
            leads = self.running is None
            if leads:
                self.running = (threading.Event(), [])
            done, box = self.running
        if not leads:
            done.wait()
            return box[0] if box else None
        try:
            box.append(self.ask())
        finally:
            with self.lock:
                self.running = None
            done.set()
        return box[0]


class InstancesCollector:
    """A prometheus_client collector over the control sockets of one run directory."""

    def __init__(self, run_dir: str | None = None):
        self.run_dir = run_dir
        self.round = SharedRound(self._ask_all)

    def _ask_all(self) -> list:
        present = control.listing(self.run_dir)
        with ThreadPoolExecutor(max_workers=max(1, min(MAX_ASKED_AT_ONCE, len(present)))) as pool:
            return list(zip(present, pool.map(self._ask, present)))

    def _ask(self, item: control.Listed):
        try:
            stats = control.request_json(item.name, "stats", self.run_dir, timeout_s=ASK_TIMEOUT_S)
            return stats | {"conntrack": [self._count(item, table) for table in stats.get("conntrack_tables", [])]}
        except XnfError:
            return None

    def _count(self, item: control.Listed, table: str) -> dict:
        """A connection table's count line (xnf conntrack's, one connection listed: it reads the table in batches,
        where `entries` takes a system call an entry)."""
        return conntrack_list.connections(item.name, table, 1, self.run_dir, ASK_TIMEOUT_S)[1]

    def collect(self):
        families = _families()
        for item, stats in self.round.answer() or []:
            if stats:
                add_instance(families, stats)
            elif item.owner:  # it did not answer: said, with what its owner record tells
                families["xnf_up"].add_metric([item.name, item.owner.nf, item.owner.mode], 0)
        yield from families.values()


def parse_listen(text: str) -> tuple[str, int]:
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 < int(port) < 65536:
        raise XnfError(f"--listen {text!r}: give ADDRESS:PORT, e.g. 127.0.0.1:9417 or 0.0.0.0:9417")
    return host.strip("[]") or "0.0.0.0", int(port)


def _start_server(host: str, port: int, registry):
    """prometheus_client's WSGI app on a threading server that closes idle connections and bounds its threads (its
    own start_http_server waits for a half-sent request forever, a thread each)."""
    import socket
    from wsgiref.simple_server import WSGIRequestHandler, make_server

    from prometheus_client import make_wsgi_app
    from prometheus_client.exposition import ThreadingWSGIServer

    class Handler(WSGIRequestHandler):
        timeout = REQUEST_TIMEOUT_S   # socketserver sets it on the connection: a silent client is closed

        def log_message(self, *args):
            pass

    class Server(ThreadingWSGIServer):
        address_family = socket.AF_INET6 if ":" in host else socket.AF_INET
        request_queue_size = 4 * MAX_CONNECTIONS
        slots = threading.BoundedSemaphore(MAX_CONNECTIONS)

        def process_request(self, request, client_address):
            self.slots.acquire()   # past MAX_CONNECTIONS, the next ones wait in the listen queue
            super().process_request(request, client_address)

        def handle_error(self, request, client_address):
            if not isinstance(sys.exc_info()[1], OSError):   # a client that timed out or went away: nothing to say
                super().handle_error(request, client_address)

        def process_request_thread(self, request, client_address):
            try:
                super().process_request_thread(request, client_address)
            finally:
                self.slots.release()

    server = make_server(host, port, make_wsgi_app(registry), Server, handler_class=Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    return server, thread


def serve(listen: str, run_dir: str | None = None) -> int:
    """Serves /metrics until SIGINT or SIGTERM."""
    try:
        from prometheus_client import CollectorRegistry
    except ImportError:
        raise XnfError("the exporter needs prometheus_client: run scripts/setup.sh, or pip install "
                       "prometheus_client") from None
    host, port = parse_listen(listen)
    registry = CollectorRegistry()
    registry.register(InstancesCollector(run_dir))
    try:
        server, thread = _start_server(host, port, registry)
    except OSError as e:
        raise XnfError(f"cannot listen on {host}:{port}: {e.strerror}; choose another port") from None
    done = threading.Event()
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda *_: done.set())
    url_host = f"[{host}]" if ":" in host else host
    print(f"xnf exporter: metrics of the instances in {control.run_dir(run_dir)} at http://{url_host}:{port}/metrics",
          flush=True)
    done.wait()
    server.shutdown()
    thread.join()
    return 0

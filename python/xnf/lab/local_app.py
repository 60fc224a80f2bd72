"""A real local application on the edge server: memcached in an application namespace behind the DUT, loaded
by memcaslap (libmemcached-tools: memaslap's Debian name) from the generator's side, its requests crossing
the DUT's port, where the NF runs, and the DUT's own stack, which forwards them to the application."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import time
from dataclasses import dataclass, field

from xnf.errors import XnfError
from xnf.lab import netns, pace
from xnf.lab.apps import START_TIMEOUT_S
from xnf.lab.topology import App, Topology

MEMCACHED_PORT = 11211


@dataclass
class MemcachedLoad:
    """What memcaslap measured: requests per second and latency in microseconds. Percentiles come from its
    log2 histogram: the upper edge of the bucket the percentile falls in (a factor-2 resolution, never
    optimistic)."""
    seconds: float
    ops: int
    tps: float
    get_misses: int
    latency_us: dict = field(default_factory=dict)   # min, mean, max, p50, p90, p99


def _log2_buckets(block: str) -> list[tuple[int, int]]:
    """(lower edge in us, count) from memcaslap's "Log2 Dist" rows: "  4:  a  b  c  d" counts 2^4 .. 2^7."""
    buckets = []
    for row in re.finditer(r"^\s+(\d+):((?:\s+\d+)+)\s*$", block, re.M):
        first = int(row.group(1))
        buckets += [(1 << (first + i), int(n)) for i, n in enumerate(row.group(2).split())]
    return buckets


def _percentile_us(buckets: list[tuple[int, int]], q: float) -> int | None:
    total = sum(n for _, n in buckets)
    seen = 0
    for lower, n in buckets:
        seen += n
        if total and seen >= q * total:
            return lower * 2
    return None


def parse_memcaslap(text: str) -> MemcachedLoad:
    """The run's totals (the last "Run time" line) and the "Total Statistics (N events)" block."""
    run = re.findall(r"Run time: ([\d.]+)s Ops: (\d+) TPS: (\d+)", text)
    block = re.search(r"Total Statistics \(\d+ events\)(.*?)(?:\n\s*\n|\Z)", text, re.S)
    if not run or not block:
        raise XnfError(f"memcaslap said nothing measurable:\n{text.strip()[-600:]}")
    seconds, ops, tps = run[-1]
    misses = re.findall(r"^Global\s+\S+\s+\d+\s+\S+\s+\S+\s+(\d+)", text, re.M)
    stats = dict(re.findall(r"^\s+(Min|Max|Avg):\s+([\d.]+)", block.group(1), re.M))
    buckets = _log2_buckets(block.group(1))
    latency = {"min": float(stats["Min"]), "mean": float(stats["Avg"]), "max": float(stats["Max"])}
    latency |= {name: _percentile_us(buckets, q) for name, q in (("p50", 0.5), ("p90", 0.9), ("p99", 0.99))}
    return MemcachedLoad(float(seconds), int(ops), float(tps), int(misses[-1]) if misses else 0, latency)


APPS_PREFIX = "198.19.0.0/16"           # every application namespace of the edge topology
PASS_THROUGH_PREFIX = "198.18.100.0/24"  # traffic the router sends back out: the port's load besides the apps


def edge_router_rules(t: Topology) -> str:
    """The router of the edge topology: the applications and the DUT itself are local; pass-through traffic
    is routed back out of the port it came in on."""
    link = t.links[0]
    return (f"local {APPS_PREFIX}\nlocal {link.dut_ip}/32\n"
            f"route {PASS_THROUGH_PREFIX} via {link.gen_mac} port 0\n")


def pass_through_traffic() -> list[str]:
    """xnf-gen options for the pass-through load: 64 flows across the pass-through prefix."""
    return ["--dst-ip", str(ipaddress.ip_network(PASS_THROUGH_PREFIX)[1]), "--flows", "64", "--vary", "daddr"]


def reach_apps_from_generator(t: Topology) -> None:
    """Makes the applications reachable from the generator through the DUT's port and stack: a route on the
    generator's side, forwarding in the DUT's namespace, and static neighbours on both sides of the port (in
    the user-space modes passed frames reach the stack through a TAP device, where ARP replies would not
    resolve the port's neighbours: docs/afxdp.md)."""
    link = t.links[0]
    netns.ip("route", "replace", APPS_PREFIX, "via", link.dut_ip, ns=t.gen_ns)
    netns.ip("neigh", "replace", link.dut_ip, "lladdr", link.dut_mac, "dev", link.gen_if, "nud", "permanent",
             ns=t.gen_ns)
    netns.ip("neigh", "replace", link.gen_ip, "lladdr", link.gen_mac, "dev", link.dut_if, "nud", "permanent",
             ns=t.dut_ns)
    # veth fact: a stack's TCP/UDP checksums leave veth unfinished (CHECKSUM_PARTIAL: the "hardware" would
    # finish them). XDP_PASS keeps that state with the frame; a copy through AF_XDP into the TAP device does
    # not, and the application drops every such segment as corrupt. A real NIC puts whole checksums on the
    # wire: so does the generator's side, with checksum offload off.
    netns.run(t.gen_ns, ["ethtool", "-K", link.gen_if, "tx", "off"])
    # Passed frames may come in through the TAP device: no reverse-path check against the port.
    netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.conf.all.rp_filter=0",
                         "net.ipv4.conf.default.rp_filter=0"])


def start_memcached(t: Topology, app: App, core: int | None = None) -> subprocess.Popen:
    """memcached on the application's address, one worker thread, stopped with the topology."""
    argv = ["memcached", "-u", "root", "-l", app.app_ip, "-p", str(MEMCACHED_PORT), "-U", "0", "-t", "1",
            "-m", "64"]
    if core is not None:
        argv = ["taskset", "-c", str(core)] + argv
    proc = t.spawn(app.ns, argv)
    limit = pace.timeout(START_TIMEOUT_S)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise XnfError(f"memcached exited with {proc.returncode}: {proc.stderr.read().strip()}")
        if netns.run(app.ns, ["memcping", f"--servers={app.app_ip}:{MEMCACHED_PORT}"], check=False).returncode == 0:
            return proc
        time.sleep(0.05)
    raise XnfError(f"memcached did not answer on {app.app_ip}:{MEMCACHED_PORT} within {limit:.0f} s")


def load_memcached(t: Topology, app: App, seconds: float, concurrency: int = 16, core: int | None = None,
                   tps: int | None = None) -> MemcachedLoad:
    """memcaslap from the generator's namespace: 90 % gets, 10 % sets, concurrency connections on one thread,
    for seconds (tps: at most that many requests per second, else as many as come back)."""
    argv = ["memcaslap", "-s", f"{app.app_ip}:{MEMCACHED_PORT}", "-t", f"{max(int(seconds), 1)}s", "-T", "1",
            "-c", str(concurrency), "-S", f"{max(int(seconds), 1)}s"]
    if tps:
        argv += ["-P", str(tps)]
    if core is not None:
        argv = ["taskset", "-c", str(core)] + argv
    try:
        result = netns.run(t.gen_ns, argv, check=False, timeout=seconds + 30)
    except subprocess.TimeoutExpired:
        raise XnfError(f"memcaslap got no answers from {app.app_ip}:{MEMCACHED_PORT} within {seconds + 30:.0f} s: "
                       "memcached is not reachable through the DUT") from None
    if result.returncode != 0:
        raise XnfError(f"memcaslap failed ({result.returncode}): {(result.stderr or result.stdout).strip()[-600:]}")
    return parse_memcaslap(result.stdout)

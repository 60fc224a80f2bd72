"""NF-side parameters of a benchmark: what a case's rules, map sizes, traffic and warm-up are.

A benchmark sweeps these beside the traffic parameters (Benchmark.nf_params):
  acl_entries      firewall: N exact-match rules; the traffic's flows (up to 65,536) each hit an allow rule,
                   the rest are drop rules for other hosts
  lb_sessions      lb: N sessions established before the measurement by warm-up runs of the generator (65,536
                   new flows per run, from a new client address each time); the measured traffic is the first
                   min(N, 65,536) of them, so the table holds N sessions while that many are hit
  memload_bytes    memload: an area of M bytes (M / 64 lines)
  checksum_repeat  checksum: L4 checksum computations per packet
  nf_batch         the AF_XDP workers' batch (--batch)
  ring_size        the AF_XDP rings' size (--ring-size)
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field

from xnf.lab.generator import Generator
from xnf.lab.topology import Topology

GEN_MAX_FLOWS = 65536
GEN_SRC, GEN_DST, GEN_PORT = "198.18.0.1", "198.18.0.2", 9   # xnf-gen's defaults (tools/gen)
LB_BACKENDS = 4


@dataclass
class NfSetup:
    rules: str | None = None
    extra: list[str] = field(default_factory=list)
    traffic: dict = field(default_factory=dict)         # TrafficSpec fields
    warmup_clients: list[str] = field(default_factory=list)  # lb: one warm-up run per client address


def _flows(n: int) -> dict:
    flows = min(n, GEN_MAX_FLOWS)
    return {"flows": flows, "vary": "sport"} if flows > 1 else {}


def firewall_acl(n: int) -> NfSetup:
    hit = min(n, GEN_MAX_FLOWS)
    lines = [f"allow udp {GEN_SRC} {(GEN_PORT + i) & 0xffff} {GEN_DST} {GEN_PORT}" for i in range(hit)]
    other = ipaddress.ip_address("10.0.0.0")
    lines += [f"drop udp {other + i // 1000} {1000 + i % 1000} {GEN_DST} {GEN_PORT}" for i in range(n - hit)]
    return NfSetup(rules="\n".join(lines + ["default drop"]) + "\n", traffic=_flows(n))


def lb_sessions(n: int, gen_mac: str) -> NfSetup:
    rules = [f"service udp {GEN_DST} {GEN_PORT}", "timeout 3600"]
    rules += [f"backend udp {GEN_DST} {GEN_PORT} slot {i} 198.19.0.{10 + i} {GEN_PORT} mac {gen_mac} port 0"
              for i in range(LB_BACKENDS)]
    runs = -(-n // GEN_MAX_FLOWS)
    clients = [str(ipaddress.ip_address(GEN_SRC) + 256 * r) for r in range(1, runs)]
    entries = max(2 * n + 2 * GEN_MAX_FLOWS, 1 << 18)   # two per session, and room for the measured flows
    return NfSetup(rules="\n".join(rules) + "\n", extra=["--map-size", f"lb_sessions={entries}"],
                   traffic=_flows(n), warmup_clients=clients)


ACL_SHAPES = ("exact", "prefixes", "ranges")


def acl_rules(count: int, shape: str) -> str:
    """count drop rules for the acl, of one shape (ACL_SHAPES), over 10.0.0.0/8, none of which xnf-gen's traffic
    (198.18.0.0/15) meets, and the default allow: what the packet pays for a list it is checked against in full."""
    lines = []
    for i in range(count):
        a, b, c = (i >> 16) & 0xff, (i >> 8) & 0xff, i & 0xff
        if shape == "exact":
            lines.append(f"{10 * (i + 1)} drop udp from 10.{a}.{b}.{c} to 10.{c}.{b}.{a} sport {1024 + i % 60000} "
                         f"dport {80 + i % 1000}")
        elif shape == "prefixes":
            lines.append(f"{10 * (i + 1)} drop from 10.{a}.{b}.0/24 to 10.{b}.{c}.0/24")
        else:
            lines.append(f"{10 * (i + 1)} drop udp from 10.{a}.{b}.0/24 dport {100 * (i % 600)}-{100 * (i % 600) + 99}")
    return "\n".join(lines + ["default allow"]) + "\n"


def setup_for(case: dict, topology: Topology) -> NfSetup:
    if "acl_entries" in case:
        return firewall_acl(case["acl_entries"])
    if "lb_sessions" in case:
        return lb_sessions(case["lb_sessions"], topology.links[0].gen_mac)
    if "memload_bytes" in case:
        return NfSetup(extra=["--map-size", f"ml_area={max(case['memload_bytes'] // 64, 1)}"])
    if "checksum_repeat" in case:
        return NfSetup(rules=f"repeat {case['checksum_repeat']}\n")
    if "nf_batch" in case:
        return NfSetup(extra=["--batch", str(case["nf_batch"])])
    if "ring_size" in case:
        return NfSetup(extra=["--ring-size", str(case["ring_size"])])
    return NfSetup()


def warm_up(topology: Topology, setup: NfSetup, flows: int) -> None:
    """Opens the lb's extra sessions: one generator run of `flows` new flows per client address."""
    for client in setup.warmup_clients:
        Generator(topology).run("--src-ip", client, "--count", str(flows), "--rate", "500000", "--flows", str(flows),
                                "--vary", "sport")

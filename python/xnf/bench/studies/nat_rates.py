"""The NAT against Linux's (nftables masquerade with conntrack): frames of established flows translated per second,
and new sessions opened per second, with all of the DUT's work on one core.

A two-port topology: xnf-gen sends from core 0 into dut0 (the inside), UDP to gen1's address (198.18.1.1); the DUT
translates the source to dut1's address (198.18.1.2, the public one) and sends out of dut1 to gen1, where veth's XDP
sink counts what arrives. The DUT's veth receive runs in NAPI threads pinned to core 1, with the AF_XDP worker.
Subjects, in rounds whose order turns around every round:
  nftables   ip_forward, masquerade out of dut1, conntrack letting back only answers (python/xnf/lab/netfilter.py):
             the yardstick of each scenario (ratios are to it, in the same round)
  xdp, afxdp, afxdp-poll, hybrid   `xnf run nat` (the user-space modes with their worker on core 1, beside the
             NAPI threads: a worker that spins leaves them little of the core, one that sleeps in poll() does not)
Scenarios:
  established   1,000 flows (source ports varied), flat out for --seconds: after their first frames, every frame
                finds its mapping and session
  new           60,000 flows, one frame each, flat out: every frame opens a mapping and a session (conntrack: an
                entry and a masquerade binding); within one public address's pool of ports

    xnf bench run nat-rates [--rounds 5] [--seconds 2] [--scenarios established,new] [--paths xdp,afxdp,afxdp-poll,hybrid,tc]
"""

from __future__ import annotations

import argparse

from xnf import control
from xnf.bench.study import Place, RoundsStudy, ScenariosOnPaths, paths_described
from xnf.lab import netfilter, veth_stats
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab import paths
from xnf.lab.paths import Selection
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "nat-rates"
DESCRIPTION = "the NAT against nftables masquerade: established flows and new sessions per second, the DUT on one core"
PATHS = Selection(select=paths.each_mode)
YARDSTICK = "nftables"
SCENARIOS = ("established", "new")
SUBJECTS = ScenariosOnPaths(SCENARIOS, PATHS, YARDSTICK)
ESTABLISHED_FLOWS = 1000
NEW_FLOWS = 60000
# Every flow's source port in the pool (1024-65535), so that each keeps its own, in xnf as in Linux.
FIRST_SPORT = 2000


def traffic(scenario: str, out_ip: str) -> list[str]:
    flows = ESTABLISHED_FLOWS if scenario == "established" else NEW_FLOWS
    return ["--proto", "udp", "--flows", str(flows), "--vary", "sport", "--sport", str(FIRST_SPORT),
            "--dst-ip", out_ip, "--size", "64"]


def _nat(t: Topology, path: str, place: Place) -> NfInstance:
    out = t.links[1]
    rules = place.folder / "nat.rules"
    rules.write_text(f"inside port 0\noutside port 1 gateway {out.gen_mac}\npublic {out.dut_ip}\n")
    mode, extra = PATHS[path]
    return NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=str(rules), extra=extra)


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    scenario, path = subject
    with Topology("two-port", gen_xdp="drop") as t:
        out = t.links[1]
        if path == YARDSTICK:
            netfilter.linux_forwards_to(t, out)
            netfilter.masquerade(t.dut_ns, t.links[0].dut_if, out.dut_if)
            nf = None
        else:
            nf = _nat(t, path, place)
        t.pin_dut_receive(DUT_CORE)
        arrived = (lambda: veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"])
        # new: every new flow's one frame, flat out
        run = flood(t, args.seconds, GEN_CORE, traffic(scenario, out.gen_ip), completed=arrived,
                    count=NEW_FLOWS if scenario == "new" else None)
        counters = control.request_json(nf.name, "stats")["counters"] if nf else {}
        if nf:
            nf.stop()
    return {"subject": f"{path} {scenario}", "path": path, "scenario": scenario, "sent": run.sent,
            "translated": run.returned, "seconds": round(run.seconds, 4), "mpps": round(run.mpps(run.returned), 4),
            "offered_mpps": round(run.offered_mpps, 4), "core1_busy_share": run.cpu[DUT_CORE]["busy_share"],
            "new_mappings": counters.get("new_mapping"), "pool_full": counters.get("pool_full"),
            "table_full": counters.get("table_full")}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per scenario and path: the median rate, and its median same-round ratio to nftables in that scenario."""
    return SUBJECTS.rows(samples, "ratio_to_nftables")


def _line(sample: dict) -> str:
    return (f"{sample['path']:10s} {sample['scenario']:11s} {sample['mpps']:6.3f} Mpps translated (offered "
            f"{sample['offered_mpps']:.3f}), core {DUT_CORE} {sample['core1_busy_share']:.0%} busy")


def _report(row: dict) -> str:
    return f"{row['path']:10s} {row['scenario']:11s} {row['mpps']:.3f} Mpps, {row['ratio_to_nftables']}x nftables"


def _fields(args: argparse.Namespace) -> dict:
    return {"generator_core": GEN_CORE, "dut_core": DUT_CORE,
            "yardstick": f"{YARDSTICK} {SUBJECTS.chosen(args)[0][0]}",
            "established_flows": ESTABLISHED_FLOWS, "new_flows": NEW_FLOWS, "paths": paths_described(PATHS)}


STUDY = RoundsStudy(NAME, "nat_rates", subjects=SUBJECTS.subjects, trial=trial, summarise=summarise, rounds=5,
                    seconds=2.0, options=SUBJECTS.options, check=SUBJECTS.check, line=_line, report=_report,
                    fields=_fields)
add_arguments, run = STUDY.add_arguments, STUDY.run

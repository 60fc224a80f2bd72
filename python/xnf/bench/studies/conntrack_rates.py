"""The stateful acl against Linux's conntrack (nftables `ct state`): frames of established flows per second, new
connections per second, and a SYN flood that fills the table, with all of the DUT's work on one core.

A two-port topology: xnf-gen sends from core 0 into dut0 (the inside), to gen1's address (198.18.1.1); the DUT
forwards what its rules admit out of dut1 to gen1, where veth's XDP sink counts what arrives. The DUT's veth
receive runs in NAPI threads pinned to core 1, with the AF_XDP worker. The rules (RULES): established and related
frames pass, invalid ones are dropped, new connections are admitted; every frame is looked up in the connection
table, every new connection enters it. A trial of flows flat out records the DUT core's busy time per frame passed
(its cost of a frame, beside the rate). Subjects, in rounds whose order turns around every round:
  nftables   Linux forwarding between the ports, the same rules as an inet forward chain with conntrack
             (python/xnf/lab/netfilter.py: TCP windows checked, as the acl): the yardstick of each scenario
  xdp, afxdp, hybrid, tc   `xnf run acl` with the rules, between the ports
  and, on established flows, bounds of what a program can do on each kernel path here (--no-bounds leaves them
  out):
  xdp-redirect   bpf/hand_redirect.bpf.c: one header byte read, every frame redirected: veth's and the redirect's floor
  xdp-stateless  the acl in XDP with one stateless rule of the same shape (STATELESS_RULES): no connection table;
                 also beside the SYN flood, where it drops the SYNs and keeps nothing of them: its after/before is
                 what the host's own drift over the same seconds does to an XDP path
  tc-stateless   the same at tc, where tc is among the paths: what the skb's path costs without the table
Scenarios:
  established   1,000 UDP flows, each opened from inside and answered once from outside before the clock starts,
                paced, every frame seen through (so each is established in both), then flat out from inside for
                --seconds
  established-tcp  the same with TCP ACK segments of 74 bytes (xnf-gen's tcp): each connection picked up from inside and
                answered, then every segment judged by its window as well (netfilter's tcp_in_window, and the
                acl's, run for a picked-up connection as for any: it is only liberal about what fails)
  new           60,000 UDP flows, one frame each, flat out: every frame opens a connection
  syn-flood     the established flows measured, then 1,000,000 SYNs from 1,000,000 sources, each a new connection,
                flat out (more than the table holds: the acl's holds 262,144; netfilter's nf_conntrack_max), then
                the established flows measured again: the ratio after/before, what entered the table, what the full
                table refused, the unanswered entries it gave to new ones, and the table's memory

    xnf bench run conntrack-rates [--rounds 5] [--seconds 2] [--scenarios established,new,syn-flood]
                                  [--paths xdp,afxdp,hybrid,tc] [--no-bounds]
"""

from __future__ import annotations

import argparse
import statistics
import time

from xnf import control
from xnf.bench.study import Place, RoundsStudy, ScenariosOnPaths, paths_described
from xnf.errors import XnfError
from xnf.lab import bpf_maps, netfilter, netns, paths, veth_stats
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.paths import Selection
from xnf.lab.topology import Topology
from xnf.lab.xdp_subject import attach, detach
from xnf.model import cases

NAME = "conntrack-rates"
DESCRIPTION = ("the stateful acl against nftables with conntrack: established flows and new connections per "
               "second, and a SYN flood past the table's size, the DUT on one core")
PATHS = Selection(select=paths.representative)
YARDSTICK = "nftables"
SCENARIOS = ("established", "established-tcp", "new", "syn-flood")
SUBJECTS = ScenariosOnPaths(SCENARIOS, PATHS, YARDSTICK)
ESTABLISHED_FLOWS = 1000
NEW_FLOWS = 60000
FLOOD_SYNS = 1_000_000
FLOOD_RUNS = 16              # xnf-gen runs of 62,500 flows (it sends at most 65,536 flows a run), one /16 each
FLOOD_PPS = 200000           # below every subject's rate of new connections: the SYNs reach the table, not a ring
FIRST_SPORT = 2000
RULES = cases.STATEFUL_ACL
STATELESS_RULES = "10 allow udp\ndefault drop\n"   # one tuple, as RULES' three rules make one
REDIRECT_FLOOR, STATELESS, TC_STATELESS = "xdp-redirect", "xdp-stateless", "tc-stateless"
BOUNDS = (REDIRECT_FLOOR, STATELESS, TC_STATELESS)
# The acl with STATELESS_RULES, on the path each stateless bound names.
STATELESS_PATH = {STATELESS: "xdp", TC_STATELESS: "tc"}
# The flood's bound keeps no table for the flood to fill: its after/before is the host's drift over the same span.
BOUNDS_OF = {"established": BOUNDS, "syn-flood": (STATELESS,)}


# The smallest frames xnf-gen sends with its probe: UDP's 64 bytes, TCP's 74.
FRAME_SIZE = {"udp": 64, "tcp": 74}


def _flows(count: int, out_ip: str, proto: str = "udp") -> list[str]:
    return ["--proto", proto, "--flows", str(count), "--vary", "sport", "--sport", str(FIRST_SPORT),
            "--dst-ip", out_ip, "--size", str(FRAME_SIZE[proto])]


def _proto(scenario: str) -> str:
    return "tcp" if scenario == "established-tcp" else "udp"


def _syn_flood(out_ip: str, run: int) -> list[str]:
    """One run's SYNs to port 80 of out_ip, each from a source of its own in 10.(64 + run).0.0/16: over the runs,
    FLOOD_SYNS connections from FLOOD_SYNS sources."""
    return ["--rate", str(FLOOD_PPS), "--proto", "tcp-syn", "--flows", str(FLOOD_SYNS // FLOOD_RUNS), "--vary",
            "saddr", "--src-ip", f"10.{64 + run}.0.0", "--dst-ip", out_ip, "--dport", "80"]


# The established flows' openers and answers go paced, far below every subject's rate, so that none is lost in a
# full receive ring (sent flat out, most of the answers were: most flows stayed new). A try in which any frame
# did not arrive is made again, whole.
ESTABLISH_PPS = 20000
ESTABLISH_TRIES = 5
ARRIVAL_WAIT_S = 2.0     # after the last frame of a try went out, for the rest to come through the DUT


def _arrived_at(t: Topology, link: int):
    return lambda: veth_stats.read(t.gen_ns, t.links[link].gen_if)["rx_xdp_drops"]


def _all_arrive(t: Topology, sender: int, gen_args: list[str]) -> int:
    """Sends one frame of each established flow from link `sender`'s generator end, paced, until every one of a try
    arrives at the other link's; returns the tries it took."""
    arrived = _arrived_at(t, 1 - sender)
    for attempt in range(1, ESTABLISH_TRIES + 1):
        before = arrived()
        Generator(t, link=sender).run("--cores", str(GEN_CORE), "--count", str(ESTABLISHED_FLOWS), "--rate",
                                      str(ESTABLISH_PPS), *gen_args)
        deadline = time.monotonic() + ARRIVAL_WAIT_S
        while arrived() - before < ESTABLISHED_FLOWS and time.monotonic() < deadline:
            time.sleep(0.01)
        if arrived() - before >= ESTABLISHED_FLOWS:
            return attempt
    raise XnfError(f"conntrack-rates: {ESTABLISHED_FLOWS} frames sent from link {sender} did not all come through "
                   f"the DUT in {ESTABLISH_TRIES} tries: the flows cannot be established")


def _establish(t: Topology, proto: str) -> int:
    """Each established flow opened from inside and answered once from outside (from gen1's address and port 9 to
    the flow's port), every frame seen through; returns the tries it took, both ways together."""
    inside, out = t.links[0], t.links[1]
    opened = _all_arrive(t, 0, _flows(ESTABLISHED_FLOWS, out.gen_ip, proto))
    answered = _all_arrive(t, 1, ["--proto", proto, "--flows", str(ESTABLISHED_FLOWS), "--vary", "dport", "--dport",
                                  str(FIRST_SPORT), "--src-ip", out.gen_ip, "--dst-ip", inside.gen_ip, "--size",
                                  str(FRAME_SIZE[proto])])
    return opened + answered


def _subjects(args: argparse.Namespace) -> list[tuple[str, str]]:
    """Each scenario's subjects together; the bounds right after the established flows' paths, so that a slow
    spell of the host moves them with the yardstick they are compared to, and the flood's right after xdp's flood
    (where xdp is chosen), the trial whose drift it measures."""
    chosen, subjects = SUBJECTS.chosen(args)[1], []
    for scenario, path in SUBJECTS.subjects(args):
        subjects.append((scenario, path))
        anchor = "xdp" if scenario == "syn-flood" and "xdp" in chosen else chosen[-1]
        if path == anchor and args.bounds:
            subjects += [(scenario, bound) for bound in BOUNDS_OF.get(scenario, ()) if _bound_runs(bound, chosen)]
    return subjects


def _bound_runs(bound: str, chosen: list[str]) -> bool:
    """XDP's bounds always (the established flows' target is XDP's); tc's where tc is measured."""
    return STATELESS_PATH.get(bound) != "tc" or "tc" in chosen


def _options(parser: argparse.ArgumentParser) -> None:
    SUBJECTS.options(parser)
    parser.add_argument("--no-bounds", dest="bounds", action="store_false",
                        help=f"leave out {' and '.join(BOUNDS)} (the bounds beside established flows; "
                             f"{STATELESS} beside the flood too)")


def _acl_path(path: str) -> str:
    """The data path the acl runs on for a subject (a stateless bound's is the one it names)."""
    return STATELESS_PATH.get(path, path)


def _dut(t: Topology, path: str, place: Place):
    """The subject between the ports: None for Linux itself, else a handle for detach."""
    if path == YARDSTICK:
        for link in t.links[:2]:
            netfilter.linux_forwards_to(t, link)
        netfilter.conntrack_like_the_acl(t.dut_ns, {})
        netfilter.nft(t.dut_ns, netfilter.acl_ruleset(RULES))
        return None
    if path == REDIRECT_FLOOR:
        # on both ports as the acl is (XDP on a veth gives it the NAPI its receive is pinned by); dut1's frames,
        # the answers, go back out of dut1
        return attach(t, ("object", "hand_redirect"), ifaces=t.dut_ifaces[:2], redirect_to=t.links[1].dut_if)
    rules = place.folder / "acl.rules"
    rules.write_text(STATELESS_RULES if path in STATELESS_PATH else RULES)
    mode, extra = PATHS[_acl_path(path)]
    return NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=str(rules), extra=extra)


def _table(t: Topology, nf: NfInstance | None, path: str) -> dict:
    """The connection table's entries and memory: conntrack's count and limit, or the acl's counters, its table's
    bytes with the ring of its newest keys where the NF runs in the kernel (the maps' own account of their memory)
    and the process's resident set (which holds them where the NF runs in user space)."""
    if nf is None:
        read = lambda name: int(netns.run(t.dut_ns, ["cat", f"/proc/sys/net/netfilter/{name}"]).stdout)
        return {"entries": read("nf_conntrack_count"), "limit": read("nf_conntrack_max")}
    counters = control.request_json(nf.name, "stats")["counters"]
    in_kernel = paths.find(_acl_path(path)).nf_in_kernel
    return {"entries_created": counters["ct_new"], "refused_full": counters["ct_full"],
            "early_drops": counters["ct_early_drop"],
            "table_bytes": _maps_bytes(("acl_ct", "acl_ct_newest")) if in_kernel else None,
            "dut_rss_kib": _rss_kib(nf)}


def _map_bytes(name: str) -> int | None:
    """The kernel's account of a BPF map's memory (map_mem_usage: what its entries take), the newest of that name."""
    shown = bpf_maps.newest(name)
    return shown.get("bytes_memlock") if shown else None


def _maps_bytes(names: tuple[str, ...]) -> int | None:
    sizes = [_map_bytes(name) for name in names]
    return None if None in sizes else sum(sizes)


def _rss_kib(nf: NfInstance) -> int | None:
    for line in open(f"/proc/{nf.process.pid}/status"):   # ip netns exec execs the NF: one pid
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return None


def _ns_per_frame(run, scenario: str) -> float | None:
    """The DUT core's busy time per frame passed, where the frames fill the trial: flows flat out for --seconds. Not
    for the burst of new connections (tens of milliseconds): over so short a window the core's busy time is mostly
    what surrounds the burst (the trial's start and end, the kernel's own work on the core), not its frames."""
    if scenario == "new":
        return None
    cost = run.core_ns_per_frame(DUT_CORE, run.returned)
    return round(cost, 1) if cost is not None else None


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    scenario, path = subject
    with Topology("two-port", gen_xdp="drop") as t:
        out = t.links[1]
        nf = _dut(t, path, place)
        t.pin_dut_receive(DUT_CORE)
        arrived = _arrived_at(t, 1)
        sample = {"subject": f"{path} {scenario}", "path": path, "scenario": scenario}
        if scenario == "new":
            run = flood(t, args.seconds, GEN_CORE, _flows(NEW_FLOWS, out.gen_ip), completed=arrived, count=NEW_FLOWS)
        else:
            if path not in BOUNDS:   # they keep no state (and the redirect floor carries one way only)
                sample["establish_tries"] = _establish(t, _proto(scenario))
            run = flood(t, args.seconds, GEN_CORE, _flows(ESTABLISHED_FLOWS, out.gen_ip, _proto(scenario)),
                        completed=arrived)
        if scenario == "syn-flood":
            syns = [flood(t, args.seconds, GEN_CORE, _syn_flood(out.gen_ip, k), completed=arrived,
                          count=FLOOD_SYNS // FLOOD_RUNS) for k in range(FLOOD_RUNS)]
            after = flood(t, args.seconds, GEN_CORE, _flows(ESTABLISHED_FLOWS, out.gen_ip), completed=arrived)
            sample.update({"syns_sent": sum(r.sent for r in syns), "syns_passed": sum(r.returned for r in syns),
                           **_table(t, nf, path),
                           "mpps_after_flood": round(after.mpps(after.returned), 4),
                           "offered_mpps_after_flood": round(after.offered_mpps, 4),
                           "core1_busy_share_after_flood": after.cpu[DUT_CORE]["busy_share"],
                           "core1_ns_per_frame_after_flood": _ns_per_frame(after, scenario)})
        sample.update({"sent": run.sent, "passed": run.returned, "seconds": round(run.seconds, 4),
                       "mpps": round(run.mpps(run.returned), 4), "offered_mpps": round(run.offered_mpps, 4),
                       "core1_busy_share": run.cpu[DUT_CORE]["busy_share"],
                       "core1_ns_per_frame": _ns_per_frame(run, scenario)})
        if scenario == "syn-flood":
            sample["after_over_before"] = round(sample["mpps_after_flood"] / sample["mpps"], 3) if sample["mpps"] \
                else None
        if nf:
            detach(nf)
    return sample


FLOOD_FIELDS = ("after_over_before", "syns_passed", "entries", "limit", "entries_created", "refused_full",
                "early_drops", "table_bytes", "dut_rss_kib")


def _medians(scenario: str, mine: list[dict]) -> dict:
    """The core's time per frame in every scenario; what the table did in the SYN flood."""
    fields = ("core1_ns_per_frame",) + (FLOOD_FIELDS if scenario == "syn-flood" else ())
    return {key: statistics.median(s[key] for s in mine if s.get(key) is not None) for key in fields
            if any(s.get(key) is not None for s in mine)}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per scenario and path: the median rate, its median same-round ratio to nftables in that scenario, and for
    the SYN flood what the table did."""
    return SUBJECTS.rows(samples, "ratio_to_nftables", _medians)


def _line(sample: dict) -> str:
    flood_said = (f", after {FLOOD_SYNS:,} SYNs {sample['after_over_before']}x"
                  if sample.get("after_over_before") is not None else "")
    return (f"{sample['path']:9s} {sample['scenario']:11s} {sample['mpps']:6.3f} Mpps passed (offered "
            f"{sample['offered_mpps']:.3f}), core {DUT_CORE} {_cost_said(sample)}{flood_said}")


def _cost_said(sample: dict) -> str:
    cost = sample.get("core1_ns_per_frame")
    return f"{cost:.0f} ns a frame ({sample['core1_busy_share']:.0%} busy)" if cost else \
        f"{sample['core1_busy_share']:.0%} busy"


def _report(row: dict) -> str:
    said = f"{row['path']:9s} {row['scenario']:11s} {row['mpps']:.3f} Mpps, {row['ratio_to_nftables']}x nftables"
    if row.get("core1_ns_per_frame"):
        said += f", core {DUT_CORE} {row['core1_ns_per_frame']:.0f} ns a frame"
    if "after_over_before" in row:
        said += f"; after the flood {row['after_over_before']}x the rate before"
    return said


def _fields(args: argparse.Namespace) -> dict:
    return {"generator_core": GEN_CORE, "dut_core": DUT_CORE,
            "yardstick": f"{YARDSTICK} {SUBJECTS.chosen(args)[0][0]}",
            "rules": RULES, "stateless_rules": STATELESS_RULES, "established_flows": ESTABLISHED_FLOWS,
            "new_flows": NEW_FLOWS, "flood_syns": FLOOD_SYNS, "paths": paths_described(PATHS)}


STUDY = RoundsStudy(NAME, "conntrack_rates", subjects=_subjects, trial=trial, summarise=summarise, rounds=5,
                    seconds=2.0, options=_options, check=SUBJECTS.check, line=_line, report=_report,
                    fields=_fields)
add_arguments, run = STUDY.add_arguments, STUDY.run

"""Where should a 5G user plane's tunnel work run: in the kernel or in user space? The upf NF on every path,
uplink (G-PDUs whose tunnel comes off) and downlink (packets that get one), against the number of sessions, and
the edge chain upf,firewall wherever it is split; the advisor's pick for each case beside the measured winner.

A two-port topology: xnf-gen on core 0 sends into dut0; the UPF sends out of dut1 to gen1, whose XDP sink counts
what arrives (for downlink, N3 is port 1: tunnelled packets leave there too). Where the DUT's work runs
(--placement): "lab", the advisor's lab platform (the DUT's receive, and an XDP NF, in softirq on the generator's
core 0; the AF_XDP workers on core 1), so that its pick is checked where its profile was measured; or "one-core",
every bit of the DUT's work on core 1 (its receive in NAPI threads pinned there, beside the worker), as nat-rates
measures. Flows are sessions: flow n is session n's UE and TEID
(python/xnf/lab/upf_sessions.py); the UPF holds --sessions sessions and the traffic spreads over them (at most
65,535: xnf-gen's flows). Subjects, per direction and session count, in rounds whose order turns around:
  xdp                  `xnf run upf --mode xdp`: the yardstick of its case (ratios are to it, in the same round)
  afxdp, afxdp-sysc, afxdp-poll, hybrid, tc   the other modes of the runtime's table (workers on core 1; hybrid
                       runs the NF in XDP; tc at the skb hook)
  chain-xdp            chain:upf,firewall, both in XDP
  chain-split          the tunnel off in XDP, the firewall in the AF_XDP workers (upf@xdp,firewall@afxdp)
  chain-afxdp          both in the workers: the tunnel work in user space
The firewall holds FIREWALL_RULES exact rules no frame matches: a lookup per frame, as an operator's firewall
after the UPF. --breakout-share sends that share of the uplink to an edge application's address, which the UPF
breaks out locally (decapsulated, out of port 1 as well, so the sink counts it). Before the rounds, `xnf advise` is asked about each case (the upf alone, on one port, with the
same sessions and traffic); the summary says whether its pick held (measured within 5 % of the fastest path).

    xnf bench run upf-paths [--rounds 3] [--seconds 2] [--directions uplink,downlink] [--sessions 10,10000]
                            [--inner-size 64] [--breakout-share 0] [--paths xdp,afxdp,...] [--placement lab|one-core]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import subprocess
import sys

from xnf import control
from xnf.bench.figures import upf_plots
from xnf.bench.study import Place, RoundsStudy, of_summary
from xnf.lab import paths, upf_sessions, veth_stats
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.rounds import median_ratio
from xnf.lab.topology import ETHERNET_AND_FCS, Topology

NAME = "upf-paths"
DESCRIPTION = ("the 5G user plane (GTP-U) on every path and the edge chain split at each point, uplink and "
               "downlink, against sessions: where the tunnel work should run; the advisor's pick checked")
# The chain's placements, name -> (chain, mode (None: the chain's places say)); the upf alone runs on every mode the
# runtime carries frames in (upf_paths()).
CHAINS = {"chain-xdp": ("chain:upf@xdp,firewall@xdp", None),
          "chain-split": ("chain:upf@xdp,firewall@afxdp", None),
          "chain-afxdp": ("chain:upf,firewall", "afxdp")}
YARDSTICK = "xdp"
DIRECTIONS = ("uplink", "downlink")
FIREWALL_RULES = 1000
HOLDS_WITHIN = 0.05
PLACEMENTS = ("lab", "one-core")


def upf_paths() -> dict[str, tuple[str, str | None, list[str]]]:
    """name -> (NF or chain, mode, options): the upf alone in each carrying mode of the runtime's table (by the mode's
    name, with its default transmit path), then the chain's placements."""
    modes = dict.fromkeys(p.mode for p in paths.carrying().values())
    alone = {m: ("upf", m, paths.worker_options(m)) for m in modes}
    return alone | {name: (nf, mode, paths.worker_options(mode, nf)) for name, (nf, mode) in CHAINS.items()}


def upf_alone(path: str) -> bool:
    return path not in CHAINS


def frame_size(direction: str, inner: int) -> int:
    """The frame xnf-gen sends for an inner IP packet of inner bytes (a G-PDU uplink: 44 bytes more)."""
    return inner + ETHERNET_AND_FCS + (upf_sessions.TUNNEL_BYTES if direction == "uplink" else 0)


def sides(t: Topology, direction: str) -> upf_sessions.Sides:
    """What leaves the UPF leaves by port 1 either way: N6 for uplink, N3 for downlink."""
    into, out = t.links
    n3, n6 = (into, out) if direction == "uplink" else (out, into)
    return upf_sessions.Sides(n3_port=n3.index, n3_gateway=n3.gen_mac, n3_addr=into.dut_ip, n6_port=n6.index,
                              n6_gateway=n6.gen_mac, gnb=into.gen_ip)


def traffic(s: upf_sessions.Sides, direction: str, sessions: int, breakout: float = 0.0) -> list[str]:
    """xnf-gen's classes: uplink G-PDUs (breakout: the share of them to the edge application), or downlink."""
    if direction == "downlink":
        return ["--class", upf_sessions.downlink_class(sessions)]
    if not breakout:
        return ["--class", upf_sessions.uplink_class(s, sessions)]
    return ["--class", upf_sessions.uplink_class(s, sessions, round(1 - breakout, 6)),
            "--class", upf_sessions.uplink_class(s, sessions, breakout, "edge", upf_sessions.EDGE_APP)]


def rules_text(nf: str, s: upf_sessions.Sides, sessions: int) -> str:
    """The sessions, and the edge application's breakout out of port 1 (where the sink counts it too)."""
    upf = upf_sessions.rules(s, sessions) + f"breakout {upf_sessions.EDGE_APP}/32 port 1 mac {s.n6_gateway}\n"
    if not nf.startswith("chain:"):
        return upf
    return ("".join(f"upf {line}\n" for line in upf.splitlines()) +
            "".join(f"firewall drop udp 203.0.113.{i // 250} {1000 + i % 250} {upf_sessions.SERVER} 9\n"
                    for i in range(FIREWALL_RULES)))


def trial(subject: tuple[str, int, str], args: argparse.Namespace, place: Place) -> dict:
    direction, sessions, path = subject
    nf_name, mode, options = upf_paths()[path]
    with Topology("two-port", gen_xdp="drop") as t:
        s = sides(t, direction)
        rules = place.folder / f"{direction}-{sessions}-{path}.rules"
        rules.write_text(rules_text(nf_name, s, sessions))
        nf = NfInstance.start(t, nf_name, mode, t.dut_ifaces, rules=str(rules), extra=options)
        if args.placement == "one-core":
            t.pin_dut_receive(DUT_CORE)
        out = t.links[1]
        arrived = (lambda: veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"])
        gen = traffic(s, direction, sessions, args.breakout_share) + ["--size", str(frame_size(direction, args.inner_size))]
        run = flood(t, args.seconds, GEN_CORE, gen, completed=arrived)
        counters = control.request_json(nf.name, "stats")["counters"]
        prefix = "upf." if nf_name.startswith("chain:") else ""
        nf.stop()
    return {"subject": f"{direction} {sessions} {path}", "direction": direction, "sessions": sessions, "path": path,
            "sent": run.sent, "forwarded": run.returned, "seconds": round(run.seconds, 4),
            "mpps": round(run.mpps(run.returned), 4), "offered_mpps": round(run.offered_mpps, 4),
            "core1_busy_share": run.cpu[DUT_CORE]["busy_share"],
            "tunnelled": counters.get(f"{prefix}uplink", 0) + counters.get(f"{prefix}downlink", 0),
            "broken_out": counters.get(f"{prefix}breakout", 0)}


def _advice(direction: str, sessions: int, args: argparse.Namespace, folder) -> dict:
    """`xnf advise upf` on the case: the upf on one port (what xnf cost measures) with the case's sessions and
    traffic. Its pick and every candidate's predicted rate, by the study's path names."""
    one_port = upf_sessions.Sides(n3_port=0, n3_gateway="02:00:00:00:00:01", n3_addr="198.18.0.2", n6_port=0,
                                  n6_gateway="02:00:00:00:00:01", gnb="198.18.0.1")
    rules = folder / f"advise-{direction}-{sessions}.rules"
    rules.write_text(upf_sessions.rules(one_port, sessions) +
                     f"breakout {upf_sessions.EDGE_APP}/32 port 0 mac {one_port.n6_gateway}\n")
    mix = " ".join(traffic(one_port, direction, sessions, args.breakout_share) +
                   ["--size", str(frame_size(direction, args.inner_size))])
    result = subprocess.run([sys.executable, "-m", "xnf", "advise", "upf", "--rules", str(rules), "--mix", mix,
                             "--json"], capture_output=True, text=True, timeout=900)
    try:
        said = json.loads(result.stdout)
    except json.JSONDecodeError:
        return {"error": (result.stderr or result.stdout).strip()[-300:]}
    if "recommendation" not in said:
        return {"error": said.get("error", "no recommendation")}
    predicted = {c["label"].split("/")[0]: c["mpps"] for c in said["candidates"]}
    return {"pick": said["recommendation"]["label"].split("/")[0], "confidence": said["recommendation"]["confidence"],
            "predicted_mpps": predicted, "quick_profile": said["profile"].get("quick", False)}


@contextlib.contextmanager
def _ask_the_advisor(args: argparse.Namespace, folder):
    """Before the rounds: the advisor's answer per case, kept with the options for the summary (unless
    --no-advice)."""
    args.advice = {f"{d} {n}": _advice(d, n, args, folder) for d in _directions(args) for n in _sessions(args)
                   if args.advice_asked}
    yield None


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per case and path: the median rate and its same-round ratio to xdp; per case, the fastest upf path, the
    advisor's pick, whether it held, and each predicted rate's error against the measured one."""
    rows = []
    for case in dict.fromkeys(f"{s['direction']} {s['sessions']}" for s in samples):
        mine_case = [s for s in samples if f"{s['direction']} {s['sessions']}" == case]
        medians = {}
        for path in dict.fromkeys(s["path"] for s in mine_case):
            mine = [s for s in mine_case if s["path"] == path]
            medians[path] = statistics.median(s["mpps"] for s in mine)
            rows.append({"subject": f"{case} {path}", "case": case, "path": path, "mpps": round(medians[path], 4),
                         "ratio_to_xdp": median_ratio(samples, mine, "mpps", f"{case} {YARDSTICK}"),
                         "core1_busy_share": statistics.median(s["core1_busy_share"] for s in mine),
                         "rounds": len(mine)})
        rows.append(_verdict(case, medians, getattr(args, "advice", {}).get(case, {})))
    return rows


def _verdict(case: str, medians: dict, advice: dict) -> dict:
    alone = {p: r for p, r in medians.items() if upf_alone(p)}
    fastest = max(alone, key=alone.get)
    chain = {p: r for p, r in medians.items() if not upf_alone(p)}
    row = {"subject": f"{case} verdict", "case": case, "fastest": fastest, "fastest_mpps": round(alone[fastest], 4),
           "fastest_chain_placement": max(chain, key=chain.get) if chain else None, "advice": advice}
    pick = advice.get("pick")
    if pick in alone:
        row["pick_holds"] = alone[pick] >= (1 - HOLDS_WITHIN) * alone[fastest]
        row["prediction_errors"] = {p: round(advice["predicted_mpps"][p] / alone[p] - 1, 3)
                                    for p in advice["predicted_mpps"] if p in alone and alone[p]}
    return row


def _directions(args: argparse.Namespace) -> list[str]:
    return [d for d in args.directions.split(",") if d]


def _sessions(args: argparse.Namespace) -> list[int]:
    return [int(n) for n in args.sessions.split(",") if n]


def _paths(args: argparse.Namespace) -> list[str]:
    return [p for p in args.paths.split(",") if p] or list(upf_paths())


def _check(args: argparse.Namespace) -> str | None:
    try:
        sessions = _sessions(args)
    except ValueError:
        sessions = []
    if (not _directions(args) or any(d not in DIRECTIONS for d in _directions(args)) or not sessions
            or any(not 1 <= n <= 100_000 for n in sessions) or any(p not in upf_paths() for p in _paths(args))
            or YARDSTICK not in _paths(args) or not 44 <= args.inner_size <= 1400
            or not 0 <= args.breakout_share < 1):
        return (f"--directions among {', '.join(DIRECTIONS)}; --sessions 1 to 100000, comma-separated; --paths "
                f"among {', '.join(upf_paths())}, {YARDSTICK} (the yardstick) included; --inner-size 44 to 1400; "
                "--breakout-share from 0 up to (not including) 1")
    return None


def _subjects(args: argparse.Namespace) -> list[tuple[str, int, str]]:
    return [(d, n, p) for d in _directions(args) for n in _sessions(args) for p in _paths(args)]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--directions", default=",".join(DIRECTIONS), help="uplink, downlink or both")
    parser.add_argument("--sessions", default="10,10000", help="sessions the UPF holds, comma-separated")
    parser.add_argument("--inner-size", type=int, default=64,
                        help="the inner IP packet's bytes (a frame has 18 more, an uplink G-PDU 62)")
    parser.add_argument("--paths", default="", help="a subset of the modes xnf carries frames in (`xnf describe`) and "
                        + ", ".join(CHAINS) + " (default: all)")
    parser.add_argument("--breakout-share", type=float, default=0.0,
                        help="uplink: the share of G-PDUs to the edge application (local breakout, out of port 1)")
    parser.add_argument("--no-advice", dest="advice_asked", action="store_false",
                        help="do not ask xnf advise first (its quick profile takes a minute on a machine without one)")
    parser.add_argument("--placement", choices=PLACEMENTS, default=PLACEMENTS[0],
                        help="lab: the advisor's platform (the DUT's receive on the generator's core); one-core: all "
                             "of the DUT's work on core 1")


def _line(sample: dict) -> str:
    return (f"{sample['direction']:8s} {sample['sessions']:6d} sessions {sample['path']:11s} {sample['mpps']:6.3f} Mpps "
            f"(offered {sample['offered_mpps']:.3f}), core {DUT_CORE} {sample['core1_busy_share']:.0%} busy")


def _report(row: dict) -> str:
    if "path" in row:
        return f"{row['case']:15s} {row['path']:11s} {row['mpps']:.3f} Mpps, {row['ratio_to_xdp']}x xdp"
    pick = row["advice"].get("pick", row["advice"].get("error", "no advice"))
    held = {True: "held", False: "did not hold"}.get(row.get("pick_holds"), "not checked")
    return (f"{row['case']:15s} fastest: {row['fastest']}; chain best split: {row['fastest_chain_placement']}; "
            f"advisor picked {pick}: {held}")


def _fields(args: argparse.Namespace) -> dict:
    cases = [f"{d} {n}" for d in _directions(args) for n in _sessions(args)]
    return {"generator_core": GEN_CORE, "dut_core": DUT_CORE, "placement": args.placement,
            "yardstick": f"{cases[0]} {YARDSTICK}", "yardsticks": {case: f"{case} {YARDSTICK}" for case in cases}, "inner_size": args.inner_size, "breakout_share": args.breakout_share,
            "firewall_rules": FIREWALL_RULES, "holds_within": HOLDS_WITHIN,
            "paths": {name: {"nf": nf, "mode": mode, "options": options} for name, (nf, mode, options) in upf_paths().items()}}


STUDY = RoundsStudy(NAME, "upf_paths", subjects=_subjects, trial=trial, summarise=summarise, rounds=3, seconds=2.0,
                    options=_options, check=_check, line=_line, report=_report, fields=_fields, lab=_ask_the_advisor,
                    plot=of_summary(upf_plots.paths_by_case))
add_arguments, run = STUDY.add_arguments, STUDY.run

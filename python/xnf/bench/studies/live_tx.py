"""The live-frames transmit path (--tx-path live) beside the xsk ring, DPDK testpmd's net_af_xdp and XDP mode.

Part 1, forwarding rate. Every subject forwards what xnf-gen sends flat out from core 0 (1,000 UDP flows,
64-byte frames) for --seconds; the frames that come back are counted by veth on gen0, whose XDP program
drops them (the same counter for every subject). AF_XDP workers and testpmd's forwarding lcore run on
core 1. On veth the DUT port's receive (the redirect into the AF_XDP socket and its copy into the UMEM) runs
in softirq on core 0 with the generator; the receive of returned frames runs on the core that sent them.
Subjects run in rounds, the order reversed every round; the ratios the targets name are taken per round and
their median reported:
  live macswap / DPDK net_af_xdp macswap     (target >= 4)
  live macswap / xnf's own AF_XDP rx-drop     (target >= 0.9: forwarding as fast as receiving)
  live macswap / rx-swap-drop (receive, swap the MACs, drop: everything macswap does but the transmit)
Part 2, latency (--latency): RFC 2544 throughput of macswap on the live path and on the xsk ring (loss
< 0.1 %, xnf-gen's receiver on gen0), then latency at 10/50/90 % of each path's own throughput.
Part 3, profile (--profile): perf cpu-clock samples of both cores while live and xsk macswap forward flat out.
Part 4, the path's own cost (--cost): xnf-live-tx-cost sends one frame over and over through the runtime's
transmit program, out of dut0 on core 1, in calls of 16 to 4,096 frames (60- and 1,514-byte frames); a line
through ns per call against frames per call gives the fixed cost of a call and the cost of a frame.
--study adds live macswap with 64, 256 and 4,096 frames per call beside the default 1,024.

    xnf bench run live-tx [--rounds 5] [--seconds 3] [--latency] [--profile] [--study] [--cost] [--no-dpdk]
                          [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from xnf import build, say
from xnf.bench.study import Place, RoundsStudy
from xnf.bench.subject import TESTPMD, Subject, flooded
from xnf.lab import nf_setup
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.generator import Generator, flat_out
from xnf.lab.measure import TrafficSpec
from xnf.lab.nf_process import NfInstance
from xnf.lab.rfc2544 import measure_throughput
from xnf.lab.rounds import interleaved
from xnf.lab.topology import Topology

NAME = "live-tx"
DESCRIPTION = ("the live-frames transmit path beside the xsk ring, DPDK testpmd's net_af_xdp and XDP; "
               "--latency, --profile, --cost, --study add parts")
FLOWS = 1000
GEN_TRAFFIC = ["--flows", str(FLOWS), "--vary", "sport", "--stamp-every", "64"]


def nf_setup_for(nf: str):
    """The firewall allows the traffic's 1,000 flows with 1,000 exact rules; lb sends the service's flows to
    four backends behind port 0 (back to the generator); macswap and drop need nothing."""
    if nf == "firewall":
        return lambda t: nf_setup.firewall_acl(FLOWS)
    if nf == "lb":
        return lambda t: nf_setup.lb_sessions(FLOWS, t.links[0].gen_mac)
    return None


def subjects(dpdk: bool, study: bool) -> list[Subject]:
    # rx-drop: receive only; rx-swap-drop (tests/nfs/swap_drop): receive and write each frame as macswap does,
    # then drop it: forwarding's cost without the transmit
    out = [Subject("afxdp rx-drop", "drop", "afxdp"), Subject("afxdp rx-swap-drop", "swap_drop", "afxdp")]
    if study:  # frames per live call: the default (1,024) is "afxdp live macswap"
        out += [Subject(f"afxdp live macswap batch={n}", "macswap", "afxdp",
                        ["--tx-path", "live", "--live-batch", str(n)]) for n in (64, 256, 4096)]
    for nf in ("macswap", "firewall", "lb"):
        out += [Subject(f"xdp {nf}", nf, "xdp", setup=nf_setup_for(nf)),
                Subject(f"afxdp xsk {nf}", nf, "afxdp", ["--tx-path", "xsk"], setup=nf_setup_for(nf)),
                Subject(f"afxdp live {nf}", nf, "afxdp", ["--tx-path", "live"], setup=nf_setup_for(nf))]
    if dpdk:
        out += [Subject("dpdk af_xdp rx-drop", "drop", kind=TESTPMD),
                Subject("dpdk af_xdp macswap", "macswap", kind=TESTPMD)]
    return out


def forwarding_trial(subject: Subject, args: argparse.Namespace, place: Place) -> dict:
    tsc_hz = place.tsc_hz
    got = flooded(place.lab, subject, args.seconds, GEN_TRAFFIC, place.folder)
    run, done, workers = got.run, got.done, got.workers
    ns = run.ns_per_frame(done)
    live_calls = sum(w.get("live_calls", 0) for w in workers)
    live_frames = sum(w.get("live_frames", 0) for w in workers)
    return {"subject": subject.label, "nf": subject.nf, "offered_mpps": run.offered_mpps, "mpps": run.mpps(done),
            "completed": done, "seconds": run.seconds, "ns_per_packet": ns,
            "cycles_per_packet": ns * tsc_hz / 1e9 if ns and tsc_hz else None,
            "frames_per_live_call": live_frames / live_calls if live_calls else None, "cpu": run.cpu}


def ratios(samples: list[dict]) -> dict[str, dict]:
    """Per round, each named ratio; then their median, min and max."""
    by_round = {}
    for s in samples:
        by_round.setdefault(s["round"], {})[s["subject"]] = s["mpps"]
    wanted = {"live macswap / dpdk af_xdp macswap": ("afxdp live macswap", "dpdk af_xdp macswap"),
              "live macswap / afxdp rx-drop": ("afxdp live macswap", "afxdp rx-drop"),
              "live macswap / afxdp rx-swap-drop": ("afxdp live macswap", "afxdp rx-swap-drop"),
              "live macswap / xdp macswap": ("afxdp live macswap", "xdp macswap")}
    for nf in ("macswap", "firewall", "lb"):
        wanted[f"live {nf} / xsk {nf}"] = (f"afxdp live {nf}", f"afxdp xsk {nf}")
    out = {}
    for name, (top, bottom) in wanted.items():
        values = [r[top] / r[bottom] for r in by_round.values() if r.get(bottom) and top in r]
        if values:
            out[name] = {"median": statistics.median(values), "min": min(values), "max": max(values),
                         "per_round": values}
    return out


def per_subject(samples: list[dict]) -> list[dict]:
    groups = {}
    for s in samples:
        groups.setdefault(s["subject"], []).append(s)
    table = []
    for subject, group in groups.items():
        mpps = [g["mpps"] for g in group]
        costs = [g["ns_per_packet"] for g in group if g["ns_per_packet"]]
        per_call = [g["frames_per_live_call"] for g in group if g["frames_per_live_call"]]
        table.append({"subject": subject, "median_mpps": statistics.median(mpps), "mean_mpps": statistics.mean(mpps),
                      "stdev_mpps": statistics.stdev(mpps) if len(mpps) > 1 else 0.0,
                      "offered_mpps": statistics.mean(g["offered_mpps"] for g in group),
                      "ns_per_packet": statistics.mean(costs) if costs else None,
                      "frames_per_live_call": statistics.mean(per_call) if per_call else None,
                      "samples": len(group)})
    return table


def latency(repetitions: int, seconds: float, tsc_hz: float | None) -> list[dict]:
    """RFC 2544 throughput and latency at 10/50/90 % of it, macswap on each transmit path, interleaved."""
    out = []
    for rep, path in interleaved(["live", "xsk"], repetitions):
        with Topology("pair", gen_xdp=None) as t:
            nf = NfInstance.start(t, "macswap", "afxdp", t.dut_ifaces,
                                  extra=["--cores", str(DUT_CORE), "--tx-path", path])
            try:
                result = measure_throughput(t, seconds, 1, TrafficSpec(flows=FLOWS, vary="sport"), tsc_hz=tsc_hz)
            finally:
                nf.stop()
        at = {f: {k: tr.latency_ns.get(k) for k in ("p50", "p90", "p99", "max", "samples")}
              | {"offered_mpps": tr.offered_pps / 1e6, "loss_ratio": tr.loss_ratio}
              for f, tr in result.latency_at.items()}
        out.append({"path": path, "repetition": rep, "throughput_mpps": result.mean_pps / 1e6,
                    "generator_limited": result.generator_limited, "latency_at": at})
        say.info(f"latency {path:4s} rep {rep}: throughput {result.mean_pps / 1e6:.3f} Mpps; p99 at "
                 + ", ".join(f"{int(f * 100)} %: {v['p99'] / 1000:.1f} us" for f, v in at.items()))
    return out


def profile(seconds: float, rules_dir: Path) -> dict:
    """perf cpu-clock samples per core (no hardware counters here) while macswap forwards flat out."""
    out = {}
    for path in ("live", "xsk"):
        with Topology("pair", gen_xdp="drop") as t, tempfile.TemporaryDirectory() as tmp:
            subject = Subject(f"afxdp {path} macswap", "macswap", "afxdp", ["--tx-path", path])
            subject.start(t, rules_dir)
            data = Path(tmp) / "perf.data"
            gen = Generator(t).spawn(*flat_out(seconds + 2, GEN_CORE), *GEN_TRAFFIC)
            time.sleep(1)
            subprocess.run(["perf", "record", "-e", "cpu-clock", "-C", "0,1", "-o", str(data), "--", "sleep",
                            str(seconds)], capture_output=True, check=True)
            gen.communicate(timeout=seconds + 30)
            subject.stop()
            out[path] = {f"core {c}": top_symbols(data, c) for c in (0, 1)}
    return out


def path_cost(seconds: float) -> dict:
    """ns per call against frames per call, for a short and a full-size frame; the fit's intercept and slope."""
    out = {}
    with Topology("pair", gen_xdp="drop") as t:
        for frame_len in (60, 1514):
            run = t.run(t.dut_ns, [str(build.tool_binary("xnf-live-tx-cost")), "--iface", "dut0", "--frame-len",
                                   str(frame_len), "--seconds", str(seconds), "--core", str(DUT_CORE)])
            results = json.loads(run.stdout)["results"]
            fixed, per_frame = fit([(r["size"], r["ns_per_call"]) for r in results])
            out[str(frame_len)] = {"calls": results, "ns_fixed_per_call": fixed, "ns_per_frame": per_frame}
            say.info(f"cost {frame_len:5d}-byte frames: {fixed / 1000:.1f} us per call + {per_frame:.0f} ns per frame")
    return out


def fit(points: list[tuple[float, float]]) -> tuple[float, float]:
    """Least-squares intercept and slope."""
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    slope = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)
    return my - slope * mx, slope


def top_symbols(data: Path, core: int, limit: float = 1.0) -> list[list]:
    report = subprocess.run(["perf", "report", "-i", str(data), "--cpu", str(core), "--no-children", "--sort",
                             "symbol", "--stdio", "--percent-limit", str(limit)],
                            capture_output=True, text=True, check=True).stdout
    rows = []
    for line in report.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[0].endswith("%") and not line.startswith("#"):
            rows.append([float(parts[0][:-1]), parts[2]])
    return rows


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--no-dpdk", action="store_true", help="leave out DPDK testpmd")
    parser.add_argument("--latency", action="store_true", help="add RFC 2544 throughput and latency per path")
    parser.add_argument("--latency-repetitions", type=int, default=3)
    parser.add_argument("--profile", action="store_true", help="add perf profiles of both cores")
    parser.add_argument("--study", action="store_true", help="add macswap with 64, 256 and 4,096 frames per call")
    parser.add_argument("--cost", action="store_true", help="add the transmit path's own cost per call and frame")


def parts(args: argparse.Namespace, place: Place) -> dict:
    """The parts asked for beside the forwarding rounds, after them."""
    return {"latency": latency(args.latency_repetitions, 1.0, place.tsc_hz) if args.latency else [],
            "profile": profile(args.seconds, place.folder) if args.profile else {},
            "path_cost": path_cost(1.0) if args.cost else {}}


STUDY = RoundsStudy(
    NAME, "live_tx", subjects=lambda args: subjects(not args.no_dpdk, args.study), trial=forwarding_trial,
    seconds=3.0, options=options, parts=parts, lab=lambda args, folder: Topology("pair", gen_xdp="drop"),
    summarise=lambda samples, args: {"subjects": per_subject(samples), "ratios": ratios(samples)},
    table=lambda summary: summary["subjects"],
    line=lambda s: f"{s['subject']:22s} offered {s['offered_mpps']:6.3f}  done {s['mpps']:6.3f} Mpps  "
                   f"{s['ns_per_packet'] or 0:6.0f} ns/pkt",
    report=lambda row: f"{row['subject']:22s} {row['median_mpps']:6.3f} Mpps (mean {row['mean_mpps']:.3f} ± "
                       f"{row['stdev_mpps']:.3f})  {row['ns_per_packet'] or 0:6.0f} ns/pkt",
    said_last=lambda summary: [f"{name:38s} median {r['median']:5.2f}  (min {r['min']:.2f}, max {r['max']:.2f})"
                               for name, r in summary["ratios"].items()],
    fields=lambda args: {"generator_core": GEN_CORE, "worker_core": DUT_CORE})
add_arguments, run = STUDY.add_arguments, STUDY.run

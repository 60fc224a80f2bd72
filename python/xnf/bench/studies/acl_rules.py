"""The acl against Linux's netfilter as the rule list grows: the rate of frames that cross a two-port DUT.

Subjects, for each rule count and shape, in rounds whose order turns around every round:
  nftables   the rules on a bridge of the two ports (python/xnf/lab/netfilter.py), each run of rules of one shape
             as one rule over a set of their values, as an operator writes a long list: the yardstick of its
             count and shape (ratios are to it, in the same round)
  xdp, afxdp, hybrid   `xnf run acl` on the two ports in that mode (afxdp and hybrid with their worker on core 1)
Shapes (every rule a drop that the traffic does not meet, so that every frame is judged against all of them and
passes by the default):
  exact      one source and destination address and ports (udp, /32 to /32, one source and destination port)
  prefixes   a /24 source and a /24 destination
  ranges     udp from a /24 source to a destination port range of 100
The traffic: xnf-gen flat out from core 0 into port 0, 1,000 UDP flows (source ports varied) of
64-byte frames, addressed to the generator side of port 1, where an XDP program counts what arrives.

    xnf bench run acl-rules [--rounds 3] [--seconds 2] [--counts 10,1000,10000] [--shapes exact,prefixes,ranges]
                            [--paths xdp,afxdp,hybrid,tc]
"""

from __future__ import annotations

import argparse
import statistics

from xnf.bench.study import Place, RoundsStudy, add_paths_option, paths_described
from xnf.lab import netfilter, nf_setup, veth_stats
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab import paths
from xnf.lab.paths import Selection
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.rounds import median_ratio
from xnf.lab.topology import Topology

NAME = "acl-rules"
DESCRIPTION = "the acl against nftables (a bridge, sets) as the rules grow: 10 to 100,000 exact, prefix, range rules"
SHAPES = nf_setup.ACL_SHAPES
PATHS = Selection(select=paths.representative)
YARDSTICK = "nftables"
FLOWS = 1000
TRAFFIC = ["--proto", "udp", "--flows", str(FLOWS), "--vary", "sport", "--src-ip", "198.18.0.1",
           "--dst-ip", "198.19.0.1", "--size", "64"]


def trial(subject: tuple[int, str, str], args: argparse.Namespace, place: Place) -> dict:
    count, shape, path = subject
    text = nf_setup.acl_rules(count, shape)
    with Topology("two-port", gen_xdp="drop") as t:
        out = t.links[1]
        nf = None
        if path == YARDSTICK:
            netfilter.acl_on_bridge(t.dut_ns, t.dut_ifaces, text, sets=True)
            netfilter.gro_on(t.dut_ns, t.dut_ifaces)
        else:
            file = place.folder / f"acl-{count}-{shape}.rules"
            file.write_text(text)
            mode, extra = PATHS[path]
            nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=str(file), extra=extra)
        arrived = (lambda: veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"])
        run = flood(t, args.seconds, GEN_CORE, TRAFFIC + ["--dst-mac", out.gen_mac], completed=arrived)
        if nf:
            nf.stop()
    return {"subject": f"{path} {count} {shape}", "path": path, "count": count, "shape": shape, "sent": run.sent,
            "crossed": run.returned, "seconds": round(run.seconds, 4), "mpps": round(run.mpps(run.returned), 4),
            "offered_mpps": round(run.offered_mpps, 4), "core0_busy_share": run.cpu[GEN_CORE]["busy_share"],
            "core1_busy_share": run.cpu[DUT_CORE]["busy_share"]}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per count, shape and path: the median rate, and its median same-round ratio to nftables at that count and
    shape."""
    rows = []
    for count in dict.fromkeys(s["count"] for s in samples):
        for shape in dict.fromkeys(s["shape"] for s in samples):
            for path in dict.fromkeys(s["path"] for s in samples):
                mine = [s for s in samples if (s["count"], s["shape"], s["path"]) == (count, shape, path)]
                if not mine:
                    continue
                yard = f"{YARDSTICK} {count} {shape}"
                rows.append({"subject": f"{path} {count} {shape}", "count": count, "shape": shape, "path": path,
                             "mpps": statistics.median(s["mpps"] for s in mine),
                             "ratio_to_nftables": median_ratio(samples, mine, "mpps", yard)
                             if path != YARDSTICK else 1.0, "rounds": len(mine)})
    return rows


def _chosen(args: argparse.Namespace) -> tuple[list[int], list[str], list[str]]:
    return ([int(c) for c in args.counts.split(",") if c.strip()], [s for s in args.shapes.split(",") if s],
            [p for p in args.paths.split(",") if p])


def _check(args: argparse.Namespace) -> str | None:
    try:
        counts, shapes, paths = _chosen(args)
    except ValueError:
        counts, shapes, paths = [], [], []
    if not counts or any(not 1 <= c <= 200000 for c in counts) or not shapes or \
            any(s not in SHAPES for s in shapes) or any(p not in PATHS for p in paths):
        return f"--counts from 1 to 200,000; --shapes among {', '.join(SHAPES)}; --paths among {', '.join(PATHS)}"
    return None


def _subjects(args: argparse.Namespace) -> list[tuple[int, str, str]]:
    counts, shapes, paths = _chosen(args)
    return [(c, s, p) for c in counts for s in shapes for p in [YARDSTICK] + paths]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--counts", default="10,1000,10000", help="rule counts, comma-separated")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="a subset of " + ", ".join(SHAPES))
    add_paths_option(parser, PATHS)


STUDY = RoundsStudy(
    NAME, "acl_rules", subjects=_subjects, trial=trial, summarise=summarise, rounds=3, seconds=2.0,
    options=_options, check=_check,
    line=lambda s: f"{s['path']:8s} {s['count']:6d} {s['shape']:8s} {s['mpps']:6.3f} Mpps crossed "
                   f"(offered {s['offered_mpps']:.3f})",
    report=lambda row: f"{row['path']:8s} {row['count']:6d} {row['shape']:8s} {row['mpps']:.3f} Mpps, "
                       f"{row['ratio_to_nftables']}x nftables",
    fields=lambda args: {"generator_core": GEN_CORE, "dut_core": DUT_CORE,
                         "yardstick": "{2} {0} {1}".format(*_subjects(args)[0]),   # the first case's nftables
                         "traffic": TRAFFIC, "paths": paths_described(PATHS)})
add_arguments, run = STUDY.add_arguments, STUDY.run

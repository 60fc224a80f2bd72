"""The aggregate rate of an NF on 1, 2 and 3 nodes behind ECMP (python/xnf/lab/nodes.py), and what limits it.

Each subject is a nodes topology with that many nodes, the lb in XDP on each (the same rules everywhere, four
backends); xnf-gen sends flat out from core 0 to the VIP, 1,024 flows; the router spreads them by its L4 hash and
forwards what the nodes send back to the backends' namespace, where an XDP sink counts what arrives (their stack
would answer each frame with an ICMP error: a third of the core in a first run). Reported: what arrived
per second, each node's share (its lb's tx verdicts), and how busy each core was. The generator has core 0; the
router's receive from it runs in a NAPI thread pinned to core 1, and with it everything after (on veth a frame is
received on the core that sent it): the router's forwarding twice per frame and every node's XDP share core 1, which
is what this measures on two cores. The yardstick is the one-node subject of the same round.

    xnf bench run nodes [--rounds 5] [--seconds 2] [--nodes 1,2,3]
"""

from __future__ import annotations

import argparse
import statistics

from xnf import control
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import veth_stats
from xnf.lab.rounds import rate_rows
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.nodes import MAX_NODES, VIP, NodesTopology

NAME = "nodes"
DESCRIPTION = "the lb on 1, 2 and 3 nodes behind a Linux ECMP router: aggregate rate, each node's share, each core"
FLOWS = 1024
YARDSTICK = "1 node"


def arrived(t: NodesTopology) -> int:
    return veth_stats.read(t.backends_ns, "be0")["rx_xdp_drops"]


def trial(nodes: int, args: argparse.Namespace, place: Place) -> dict:
    seconds, folder = args.seconds, place.folder
    with NodesTopology(nodes=nodes) as t:
        t.sink_at_backends()
        rules = folder / "lb.rules"
        rules.write_text(t.lb_rules())
        instances = [NfInstance.start(t, "lb", "xdp", ["eth0"], rules=str(rules), ns=t.node_ns(i),
                                      name=f"{t.gen_ns}-node{i}") for i in range(nodes)]
        t.pin_dut_receive(DUT_CORE)       # the router's side: the generator keeps core 0 to itself
        tx = lambda n: control.request_json(n.name, "stats")["verdicts"]["tx"]["packets"]
        before = [tx(n) for n in instances]
        run = flood(t, seconds, GEN_CORE, ["--dst-ip", VIP, "--flows", str(FLOWS), "--vary", "sport"],
                    completed=lambda: arrived(t))
        shares = [tx(n) - b for n, b in zip(instances, before)]
        for n in instances:
            n.stop()
    return {"subject": f"{nodes} node{'s' if nodes > 1 else ''}", "nodes": nodes, "sent": run.sent,
            "arrived": run.returned, "mpps": round(run.mpps(run.returned), 4), "offered_mpps": round(run.offered_mpps, 4),
            "node_shares": [round(s / max(sum(shares), 1), 3) for s in shares],
            "busy_share": {str(core): c["busy_share"] for core, c in run.cpu.items()}}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """rate_rows, with each node's share in the last round and each core's median busy share."""
    rows = rate_rows(samples, YARDSTICK, "ratio_to_one_node")
    for row in rows:
        mine = [s for s in samples if s["subject"] == row["subject"]]
        row["node_shares"] = mine[-1]["node_shares"]
        row["busy_share"] = {c: statistics.median(s["busy_share"][c] for s in mine) for c in mine[0]["busy_share"]}
    return rows


def _counts(args: argparse.Namespace) -> list[int]:
    return [int(n) for n in args.nodes.split(",") if n.strip().isdigit()]


def _check(args: argparse.Namespace) -> str | None:
    counts = _counts(args)
    if 1 not in counts or any(not 1 <= n <= MAX_NODES for n in counts):
        return f"--nodes from 1 to {MAX_NODES}, 1 (the yardstick) among them"
    return None


STUDY = RoundsStudy(
    NAME, "nodes", subjects=_counts, trial=trial, summarise=summarise, check=_check,
    options=lambda parser: parser.add_argument("--nodes", default="1,2,3", help=f"node counts to measure (1 to "
                                               f"{MAX_NODES}), 1 among them"),
    line=lambda s: f"{s['subject']:8s} {s['mpps']:6.3f} Mpps arrived (offered {s['offered_mpps']:.3f}), shares "
                   f"{s['node_shares']}, busy {s['busy_share']}",
    report=lambda row: f"{row['subject']:8s} {row['mpps']:.3f} ± {row['stdev']:.3f} Mpps, {row['ratio_to_one_node']}x "
                       f"one node, shares {row['node_shares']}, cores busy {row['busy_share']}",
    fields=lambda args: {"generator_core": GEN_CORE, "yardstick": YARDSTICK, "flows": FLOWS})
add_arguments, run = STUDY.add_arguments, STUDY.run

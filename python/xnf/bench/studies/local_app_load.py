"""A real local application behind the NF: memcached's requests/s and p99 latency with the router in each mode,
idle and while pass-through traffic loads the same port, and the CPU time both cores spend per request.

The edge topology: memcached (one thread) in an application namespace behind the DUT, memcaslap (concurrency
16, 90 % get) in the generator's namespace, both on core 0; the router passes the applications' prefix to the
DUT's stack and routes 198.18.100.0/24 back out. Subjects:
  xdp        the router in XDP: requests reach the stack with XDP_PASS on the port
  afxdp      the router in user space: requests cross to the worker (core 1) and are re-injected through a TAP
  hybrid     the router in XDP, its forwarding by the workers
  dispatch   the router in user space with --local tcp:11211: memcached's requests go to the stack in XDP,
             before the worker
'load' adds xnf-gen sending pass-through traffic at --load-kpps from core 0 during the measurement.
Subjects run in rounds whose order turns around every round; the yardstick is xdp in the same round and
load. memcaslap's percentiles are the upper edges of its log2 buckets (a factor of two).

    xnf bench run local-app [--rounds 3] [--seconds 3] [--load-kpps 300] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from xnf.bench.figures import mix_plots
from xnf.bench.study import Place, RoundsStudy, of_summary
from xnf.lab import cpu, local_app
from xnf.lab.rounds import median_ratio, medians
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "local-app"
DESCRIPTION = ("memcached behind the router in xdp, afxdp, hybrid and afxdp with the dispatcher: requests/s "
               "and p99, idle and under pass-through load")
SUBJECTS = {
    "xdp": ("xdp", []),
    "afxdp": ("afxdp", ["--cores", str(DUT_CORE)]),
    "hybrid": ("hybrid", ["--cores", str(DUT_CORE)]),
    "dispatch": ("afxdp", ["--cores", str(DUT_CORE), "--local", f"tcp:{local_app.MEMCACHED_PORT}"]),
}
LOADS = ["idle", "load"]
YARDSTICK = "xdp"
CONCURRENCY = 16


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    """The edge topology with memcached on its app host, reachable from the generator, kept over every round:
    (topology, the router's rules file)."""
    with Topology("edge", apps=1) as t:
        local_app.reach_apps_from_generator(t)
        rules = folder / "router.rules"
        rules.write_text(local_app.edge_router_rules(t))
        local_app.start_memcached(t, t.app_list[0], core=GEN_CORE)
        yield t, str(rules)


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    (t, rules), (label, load) = place.lab, subject
    seconds, load_kpps = args.seconds, args.load_kpps
    mode, extra = SUBJECTS[label]
    app = t.app_list[0]
    nf = NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules, extra=extra)
    flood = None
    try:
        if load == "load":
            flood = Generator(t).spawn("--duration", str(seconds + 2), "--rate", str(load_kpps * 1000),
                                       *local_app.pass_through_traffic(), "--cores", str(GEN_CORE))
        before = cpu.snapshot()
        result = local_app.load_memcached(t, app, seconds=seconds, concurrency=CONCURRENCY, core=GEN_CORE)
        cores = cpu.split(before, cpu.snapshot())
    finally:
        if flood:
            flood.wait(timeout=seconds + 60)
        nf.stop()
    return {"subject": label, "load": load, "ops": result.ops, "tps": result.tps,
            "get_misses": result.get_misses, "p50_us": result.latency_us.get("p50"),
            "p90_us": result.latency_us.get("p90"), "p99_us": result.latency_us.get("p99"),
            "mean_us": result.latency_us.get("mean"), "core0_busy_share": cores[GEN_CORE]["busy_share"],
            "core1_busy_share": cores[DUT_CORE]["busy_share"],
            "cpu_us_per_request": round(sum(c["busy"] for c in cores.values()) / result.ops * 1e6, 2)
            if result.ops else None}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for load in LOADS:
        for label in SUBJECTS:
            mine = [s for s in samples if s["subject"] == label and s["load"] == load]
            if not mine:
                continue
            rows.append({"subject": label, "load": load,
                         **medians(mine, ("tps", "p99_us", "mean_us", "core1_busy_share", "cpu_us_per_request")),
                         "tps_ratio_to_xdp": median_ratio(samples, mine, "tps", YARDSTICK, ("load",)),
                         "rounds": len(mine)})
    return rows


STUDY = RoundsStudy(
    NAME, "local_app", subjects=lambda args: [(s, ld) for ld in LOADS for s in SUBJECTS], trial=trial,
    summarise=summarise, lab=_lab, rounds=3, seconds=3.0, plot=of_summary(mix_plots.memcached_by_mode),
    options=lambda parser: parser.add_argument("--load-kpps", type=int, default=300,
                                               help="pass-through traffic during 'load' trials"),
    line=lambda s: f"{s['subject']:8s} {s['load']:4s}: {s['tps']:9.0f} req/s, p99 <= {s['p99_us']} us",
    report=lambda row: f"{row['subject']:8s} {row['load']:4s}: {row['tps']:9.0f} req/s ({row['tps_ratio_to_xdp']} of "
                       f"xdp), p99 <= {row['p99_us']} us",
    fields=lambda args: {"generator_core": GEN_CORE, "dut_core": DUT_CORE, "load_kpps": args.load_kpps,
                         "concurrency": CONCURRENCY, "yardstick": YARDSTICK,
                         "subjects": {k: {"mode": v[0], "options": v[1]} for k, v in SUBJECTS.items()}})
add_arguments, run = STUDY.add_arguments, STUDY.run

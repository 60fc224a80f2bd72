"""A benchmark is a declared grid: NFs x modes x traffic parameters, measured the same way.

Cases run in interleaved order: every repetition goes through all cases, and the order turns around each
repetition, so slow drift of the machine spreads over all of them instead of favouring the first. Every
sample is kept; the summary is computed from them.
"""

from __future__ import annotations

import itertools
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Callable

from xnf import contract, results_file
from xnf.lab import nf_setup
from xnf.lab.rounds import interleaved
from xnf.lab import environment
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.measure import TrafficSpec, run_trial
from xnf.lab.nf_process import NfInstance
from xnf.lab.rfc2544 import DEFAULT_LOSS_THRESHOLD, measure_throughput
from xnf.lab.topology import ETHERNET_AND_FCS, STANDARD_MTU, Topology
from xnf.model import lab_rate

# The yardstick's place among a benchmark's cases in the interleaved order.
YARDSTICK_CASE = {"yardstick": lab_rate.YARDSTICK}
# Where a search is generator-bound (even the generator's maximum passed: its rate is the generator's, not the NF's),
# the case is also measured by what the DUT spends per frame at this rate, which every path of the lab carries
# whatever sender xnf-gen has (docs/methodology.md, "Generator-bound searches"): the exact busy time of the DUT's core,
# its receive moved there (threaded NAPI), per frame offered. The paths are then ranked by it.
COMMON_RATE_PPS = 200_000


@dataclass
class Benchmark:
    name: str
    description: str
    nfs: list[str]
    modes: list[str]
    # traffic parameters to sweep: TrafficSpec field -> values (gen_cores as tuples)
    params: dict[str, list] = field(default_factory=dict)
    # NF-side parameters to sweep (bench/nf_setup.py): acl_entries, lb_sessions, memload_bytes, checksum_repeat
    nf_params: dict[str, list] = field(default_factory=dict)
    # "throughput": RFC 2544 search (+ latency at 10/50/90 %); "max-rate": one unpaced trial
    measure: str = "throughput"
    seconds: float = 2.0
    repetitions: int = 3
    search_repetitions: int = 1
    rules: dict[str, str] = field(default_factory=dict)  # nf -> rules text
    # NFs that send nothing back: loss is what they never processed (their verdict counters)
    sinks: tuple[str, ...] = ("drop",)
    # XDP modes: run the DUT's receive (and so the NF) in NAPI threads on this core instead of in softirq
    # on the generator's core (veth's default; docs/lab.md)
    dut_receive_core: int | None = None
    # Modes whose workers send: one case per transmit path (--tx-path); empty: the NF's default (auto)
    tx_paths: list[str] = field(default_factory=list)
    # "throughput": the loss the rate may have (the PDR's); the NDR (no loss) is searched and reported beside it
    loss_threshold: float = DEFAULT_LOSS_THRESHOLD
    # measure the hand-written XDP yardstick once every repetition, among the cases, so that each case's rate can
    # be quoted as a same-repetition ratio to it (machines here differ by up to 2.6x from one session to the next)
    yardstick: bool = False

    def cases(self) -> list[dict]:
        swept = {**self.params, **self.nf_params}
        keys = list(swept)
        combos = list(itertools.product(*(swept[k] for k in keys))) or [()]
        return [{"nf": nf, "mode": mode, **path, **dict(zip(keys, combo))}
                for nf in self.nfs for mode in self.modes for path in self._paths(mode) for combo in combos]

    def _paths(self, mode: str) -> list[dict]:
        if not self.tx_paths or not contract.mode(mode)["workers_send"]:
            return [{}]
        return [{"tx_path": path} for path in self.tx_paths]


def _traffic(case: dict) -> TrafficSpec:
    spec = {k: v for k, v in case.items() if k in TrafficSpec.__dataclass_fields__}
    if "gen_cores" in spec:
        spec["gen_cores"] = tuple(spec["gen_cores"])
    return TrafficSpec(**spec)


def _cost_at_throughput(result, loss_threshold: float) -> float | None:
    """The DUT's cost per packet in the passing trial offered the most: the one closest to saturation,
    where the cores are busiest and the cost least diluted by fixed per-trial work."""
    passed = [tr for run in result.runs for tr in run.trials if tr.passes(loss_threshold) and tr.dut_ns_per_packet]
    return max(passed, key=lambda tr: tr.offered_pps or float("inf")).dut_ns_per_packet if passed else None


def _mtu_for(traffic: TrafficSpec) -> int:
    """The MTU of the case's veths: the standard one, or a jumbo one just large enough for the case's frames."""
    return max(STANDARD_MTU, (traffic.size or 0) - ETHERNET_AND_FCS)


def _gbps(mpps: float, trials) -> float | None:
    """A rate in frames as bits on the wire (FCS included): the frames' size as the trials sent them."""
    sizes = [tr.frame_bytes for tr in trials if tr.frame_bytes]
    return mpps * statistics.mean(sizes) * 8 / 1e3 if sizes else None


def _measure_case(bench: Benchmark, case: dict, tsc_hz: float | None, rules_dir: Path) -> dict:
    traffic = _traffic(case)
    queues = len(traffic.gen_cores)
    with Topology("pair", queues=queues, gen_xdp=None, mtu=_mtu_for(traffic)) as t:
        setup = nf_setup.setup_for(case, t)
        traffic = replace(traffic, **setup.traffic)
        rules_text = setup.rules if setup.rules is not None else bench.rules.get(case["nf"])
        rules = None
        if rules_text is not None:
            rules = str(rules_dir / f"{case['nf']}.rules")
            Path(rules).write_text(rules_text)
        extra = list(setup.extra)
        if contract.mode(case["mode"])["sockets"]:
            extra += _worker_options(queues)
        if "tx_path" in case:
            extra += ["--tx-path", case["tx_path"]]
        instance = NfInstance.start(t, case["nf"], case["mode"], t.dut_ifaces, rules=rules, extra=extra)
        sink = instance if case["nf"] in bench.sinks else None
        try:
            if bench.dut_receive_core is not None and contract.mode(case["mode"])["datapath"] != "user":
                t.pin_dut_receive(bench.dut_receive_core)
            nf_setup.warm_up(t, setup, traffic.flows)
            if bench.measure == "max-rate":
                trial = run_trial(t, 0, bench.seconds, traffic, tsc_hz, nf=sink)
                # built per second, counting the frames the peer's full ring refused: the generator's own pace
                built_mpps = (trial.sent + trial.send_errors) / trial.seconds / 1e6 if trial.seconds else None
                return {"mpps": trial.achieved_pps / 1e6, "gbps": trial.achieved_gbps, "built_mpps": built_mpps,
                        "dut_ns_per_packet": trial.dut_ns_per_packet, "trial": trial.as_dict()}
            result = measure_throughput(t, bench.seconds, bench.search_repetitions, traffic, tsc_hz=tsc_hz,
                                        nf=sink, loss_threshold=bench.loss_threshold, ndr=True)
            latency = {str(f): tr.as_dict() for f, tr in result.latency_at.items()}
            trials = [tr for run in result.runs for tr in run.trials]
            found = {"mpps": result.mean_pps / 1e6, "gbps": _gbps(result.mean_pps / 1e6, trials),
                     "ndr_mpps": result.ndr_pps / 1e6,
                     "loss_threshold": bench.loss_threshold, "generator_limited": result.generator_limited,
                     "sender": trials[0].sender if trials else None,
                     "dut_ns_per_packet": _cost_at_throughput(result, bench.loss_threshold),
                     "search": [[tr.as_dict() for tr in run.trials] for run in result.runs],
                     "latency_at": latency}
            if result.generator_limited:
                found["common_rate_ns_per_frame"] = _cost_at_common_rate(t, bench.seconds, traffic, tsc_hz, sink)
            return found
        finally:
            instance.stop()


def _cost_at_common_rate(t: Topology, seconds: float, traffic: TrafficSpec, tsc_hz: float | None, sink) -> float | None:
    """The DUT core's busy time per frame offered at COMMON_RATE_PPS, with the DUT's receive on that core."""
    t.pin_dut_receive(DUT_CORE)
    trial = run_trial(t, COMMON_RATE_PPS, seconds, traffic, tsc_hz, nf=sink)
    return trial.cpu[DUT_CORE]["busy"] / trial.sent * 1e9 if trial.sent else None


def _worker_options(queues: int) -> list[str]:
    """A worker per queue: the first on the DUT's core, the next on the generator's (a two-core machine)."""
    cores = [DUT_CORE, GEN_CORE][:queues]
    options = ["--cores", ",".join(map(str, cores))]
    return options if queues == 1 else ["--queues", str(queues), "--workers", str(queues)] + options


def _summarise(samples: list[dict], yardstick: list[dict]) -> list[dict]:
    groups: dict[str, list[dict]] = {}
    for s in samples:
        groups.setdefault(json.dumps(s["case"], sort_keys=True), []).append(s)
    rows = []
    for key, group in groups.items():
        mpps = [g["result"]["mpps"] for g in group]
        row = dict(json.loads(key))
        row.update(mean_mpps=statistics.mean(mpps), stdev_mpps=statistics.stdev(mpps) if len(mpps) > 1 else 0.0,
                   samples=len(mpps))
        gbps = [g["result"]["gbps"] for g in group if g["result"].get("gbps") is not None]
        row["mean_gbps"] = statistics.mean(gbps) if gbps else None
        costs = [g["result"].get("dut_ns_per_packet") for g in group if g["result"].get("dut_ns_per_packet")]
        row["dut_ns_per_packet"] = statistics.mean(costs) if costs else None
        row["generator_limited"] = any(g["result"].get("generator_limited") for g in group)
        common = [g["result"]["common_rate_ns_per_frame"] for g in group if g["result"].get("common_rate_ns_per_frame")]
        if common:
            row["common_rate_ns_per_frame"] = statistics.median(common)
        ndr = [g["result"]["ndr_mpps"] for g in group if g["result"].get("ndr_mpps") is not None]
        if ndr:
            row["ndr_mean_mpps"] = statistics.mean(ndr)
        built = [g["result"]["built_mpps"] for g in group if g["result"].get("built_mpps")]
        if built:
            row["built_mpps"] = statistics.mean(built)
        if yardstick:
            row["yardstick_ratio"] = _yardstick_ratio(group, yardstick)
        rows.append(row)
    return rows


def run_benchmark(bench: Benchmark, out_dir: Path, progress: Callable[[str], None] | None = None) -> Path:
    """Runs every case bench.repetitions times, interleaved (with the yardstick among them if the benchmark has
    one); writes NAME-STAMP.json and .csv; returns the JSON."""
    bench = replace(bench, modes=list(bench.modes))   # a named selection (paths.Modes), read now
    env = environment.describe()
    subjects = bench.cases() + ([YARDSTICK_CASE] if bench.yardstick else [])
    samples, yardstick = [], []
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as rules_dir:   # each case's rules: the results record the case, not the file
        for rep, case in interleaved(subjects, bench.repetitions):
            if progress:
                progress(f"rep {rep + 1}/{bench.repetitions} {case}")
            started = time.time()
            if case is YARDSTICK_CASE:
                yardstick.append({"repetition": rep, "started": started,
                                  "mpps": lab_rate.yardstick(bench.seconds, env["tsc_hz"])})
                continue
            result = _measure_case(bench, case, env["tsc_hz"], Path(rules_dir))
            samples.append({"case": case, "repetition": rep, "started": started, "result": result})
    summary = _summarise(samples, yardstick)
    doc = {"benchmark": asdict(bench), "environment": env, "generator_core": GEN_CORE, "worker_core": DUT_CORE,
           **_generator_bound(summary), "summary": summary, "samples": samples}
    if bench.yardstick:
        doc["yardstick"] = {"subject": lab_rate.YARDSTICK, "samples": yardstick}
    return results_file.write(out_dir, bench.name, doc, [_csv_order(row) for row in summary])


def _generator_bound(summary: list[dict]) -> dict:
    """What the results file says where searches were generator-bound: which cases, and every case measured so
    ranked by the DUT's cost per frame at the common rate (cheapest first): the rates of those cases are the
    generator's, and say nothing of which path is faster."""
    bound = [row for row in summary if row.get("generator_limited")]
    if not bound:
        return {"generator_bound": False}
    costed = sorted((row for row in summary if row.get("common_rate_ns_per_frame")),
                    key=lambda row: row["common_rate_ns_per_frame"])
    return {"generator_bound": True, "common_rate_pps": COMMON_RATE_PPS,
            "ranked_by_cost": [{"nf": r["nf"], "mode": r["mode"], **({"tx_path": r["tx_path"]} if "tx_path" in r else {}),
                                "ns_per_frame": round(r["common_rate_ns_per_frame"], 1)} for r in costed]}


def _yardstick_ratio(group: list[dict], yardstick: list[dict]) -> float | None:
    """The median over repetitions of a case's rate over the yardstick's in the same repetition."""
    yard = {y["repetition"]: y["mpps"] for y in yardstick}
    ratios = [g["result"]["mpps"] / yard[g["repetition"]] for g in group if yard.get(g["repetition"])]
    return statistics.median(ratios) if ratios else None


def _csv_order(row: dict) -> dict:
    """The case's NF and mode first, the rest by name."""
    return dict(sorted(row.items(), key=lambda kv: (kv[0] not in ("nf", "mode"), kv[0])))

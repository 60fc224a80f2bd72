"""The measured side of the cost model: the RFC 2544 rate of one NF on one data path of the lab, as the fit
(`model-fit`), its check (`model-check`, `advisor-check`) and `xnf advise --verify` all measure it, and the
hand-written XDP yardstick measured beside it.

A pair topology per measurement; the NF is started with the path's mode, transmit path and the lab's worker core
(python/xnf/model/lab_paths.py); a second of the same traffic runs first unmeasured (sessions open, caches fill,
the offload controller moves its rules in); then the RFC 2544 search on the mix, where frames the NF keeps back by
its own verdict (drop, pass) count as done, not lost (python/xnf/lab/measure.py).
"""

from __future__ import annotations

import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xnf.lab.xdp_subject import attach, detach
from xnf.lab import paths, placement
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.generator import Generator, flat_out
from xnf.lab.measure import TrafficSpec, run_trial
from xnf.lab.nf_process import NfInstance
from xnf.lab.rfc2544 import measure_throughput
from xnf.lab.topology import Topology

WARM_UP_S = 1.0
# The loss a rate may have here: 1 %, not the grids' 0.1 %. AF_XDP in copy mode on veth loses sporadic bursts of
# 0.1-0.5 % at any rate while per-CPU kernel threads put the worker aside (docs/methodology.md, "The DUT's core"),
# so a 0.1 % search lands at random on a fraction of what the path forwards; the model predicts what it forwards.
LOSS_THRESHOLD = 0.01
YARDSTICK = "hand-written XDP macswap"
# A trial of the RFC 2544 search as the fit, its checks and `xnf advise --verify` run it: its length by default
TRIAL_SECONDS = 0.5
TRIAL_SECONDS_HELP = "seconds per trial of the RFC 2544 search"
YARDSTICK_KEY = "hand_macswap_mpps"


@dataclass
class NfCase:
    """An NF as a user would run it: its rules (text), its traffic (xnf-gen options), its map sizes."""
    label: str
    nf: str
    rules: str | None = None
    gen_options: list[str] = field(default_factory=list)
    map_sizes: list[str] = field(default_factory=list)

    def write_rules(self, folder: Path) -> str | None:
        if self.rules is None:
            return None
        path = folder / f"{self.label.replace('/', '-')}.rules"   # labels say "firewall-16/attack-50"
        path.write_text(self.rules)
        return str(path)


def needs_workers(nf: str, options: list[str]) -> bool:
    """Whether the run has AF_XDP workers, which the lab pins to its worker core."""
    return paths.runs_workers(nf, options[options.index("--mode") + 1] if "--mode" in options else None)


def _warm_up(t: Topology, traffic: TrafficSpec) -> None:
    Generator(t).run(*flat_out(WARM_UP_S, GEN_CORE), *traffic.options)


def _search(t: Topology, seconds: float, traffic: TrafficSpec, tsc_hz: float | None, nf=None) -> dict:
    _warm_up(t, traffic)
    result = measure_throughput(t, seconds, 1, traffic, tsc_hz=tsc_hz, nf=nf, loss_threshold=LOSS_THRESHOLD)
    run = result.runs[0]
    saturated = [tr for tr in run.trials if tr.passes(LOSS_THRESHOLD) and tr.dut_ns_per_packet]
    top = max(saturated, key=lambda tr: tr.offered_pps or float("inf")) if saturated else None
    return {"mpps": result.mean_pps / 1e6, "generator_limited": run.generator_limited,
            "dut_ns_per_packet": top.dut_ns_per_packet if top else None,
            "generator_ns_per_packet": top.generator_ns_per_packet if top else None,
            "trials": len(run.trials)}


@contextmanager
def _running(case: NfCase, run_nf: str, options: list[str], binary: Path | None):
    """A pair topology with the case's NF started on it as run_nf with options, its map sizes and, when it has
    AF_XDP workers, the lab's worker core: yields (topology, instance, the case's traffic); stops the NF after."""
    extra = list(options) + [a for size in case.map_sizes for a in ("--map-size", size)]
    if needs_workers(run_nf, options):
        extra += ["--cores", str(DUT_CORE)]
    traffic = TrafficSpec(size=None, options=tuple(case.gen_options))
    with Topology("pair", gen_xdp=None) as t, tempfile.TemporaryDirectory() as folder:
        rules = case.write_rules(Path(folder))
        instance = NfInstance.start(t, run_nf, None, t.dut_ifaces, rules=rules, extra=extra, binary=binary)
        try:
            yield t, instance, traffic
        finally:
            instance.stop()


def measure(case: NfCase, run_nf: str, options: list[str], seconds: float, tsc_hz: float | None,
            binary: Path | None = None) -> dict:
    """The case's NF run as run_nf (a split chain names its members' places) with options (mode, transmit path,
    offload): its RFC 2544 rate in Mpps and the DUT's and the generator's CPU per frame at it, and the cores' round
    trip just before and after the search (where the host had put the vCPUs: xnf.lab.placement). binary: another
    build of the NF (a benchmark's variant)."""
    with _running(case, run_nf, options, binary) as (t, instance, traffic):
        before = placement.round_trip_ns()
        rate = _search(t, seconds, traffic, tsc_hz, nf=instance)
        return {**rate, "round_trip_ns": [round(before, 1), round(placement.round_trip_ns(), 1)]}


def worker_cost(case: NfCase, options: list[str], rate_pps: float, seconds: float, tsc_hz: float | None,
                binary: Path | None = None) -> dict:
    """The case's NF on a path whose workers sleep when idle (afxdp-poll), offered rate_pps for seconds after the
    same warm-up: the worker core's busy time per frame offered (ns), and the loss. Below the path's rate the
    worker's busy time is what the frames cost it, which a rate measurement shows only through its spread."""
    with _running(case, case.nf, options, binary) as (t, instance, traffic):
        _warm_up(t, traffic)
        trial = run_trial(t, rate_pps, seconds, traffic, tsc_hz, nf=instance)
    return {"worker_ns_per_frame": trial.cpu[DUT_CORE]["busy"] / trial.sent * 1e9 if trial.sent else None,
            "loss_ratio": trial.loss_ratio, "sent": trial.sent}


def yardstick(seconds: float, tsc_hz: float | None) -> float:
    """The hand-written XDP macswap's RFC 2544 rate in Mpps, measured the same way: what a profile's times are
    scaled by when the machine's speed moved (Profile.scaled)."""
    with Topology("pair", gen_xdp=None) as t:
        handle = attach(t, ("object", "hand_macswap"))
        try:
            return _search(t, seconds, TrafficSpec(), tsc_hz)["mpps"]
        finally:
            detach(handle)

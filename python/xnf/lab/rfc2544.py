"""RFC 2544 throughput: the highest offered rate whose loss stays below a threshold.

A binary search on the offered rate between 0 and the generator's own maximum (measured first), until the
bracket is narrower than the precision; repeated, with mean and standard deviation; then latency at fixed
fractions of the throughput. If even the generator's maximum passes, the result says so: the DUT was not
the limit and the number is the generator's.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from typing import Callable

from xnf.lab.measure import Trial, TrafficSpec, run_trial
from xnf.lab.topology import Topology

DEFAULT_LOSS_THRESHOLD = 0.001   # 0.1 %: the partial drop rate (PDR)
NO_LOSS = 1e-12                  # the no-drop rate (NDR): not one frame lost
DEFAULT_PRECISION = 0.01         # stop when the bracket is within 1 % of the generator's maximum
LATENCY_FRACTIONS = (0.1, 0.5, 0.9)
# The search only needs loss: one send time in 64 frames keeps the generator fast. Latency trials stamp all.
SEARCH_STAMP_EVERY = 64


@dataclass
class SearchResult:
    throughput_pps: float
    generator_limited: bool        # the generator's maximum passed: the DUT may be faster still
    generator_max_pps: float
    trials: list[Trial] = field(default_factory=list)


def search_once(trial: Callable[[float], Trial], loss_threshold: float = DEFAULT_LOSS_THRESHOLD,
                precision: float = DEFAULT_PRECISION) -> SearchResult:
    """trial(rate) runs one measurement; rate 0 means as fast as the generator can."""
    flat_out = trial(0)
    trials = [flat_out]
    top = flat_out.achieved_pps
    if flat_out.passes(loss_threshold):
        return SearchResult(top, True, top, trials)
    low, high, best = 0.0, top, 0.0
    while high - low > precision * top:
        rate = (low + high) / 2
        t = trial(rate)
        trials.append(t)
        if t.passes(loss_threshold):
            low = rate
            best = max(best, _went_through(t))
        else:
            high = rate
    return SearchResult(best, False, top, trials)


def _went_through(t: Trial) -> float:
    """The rate a passing paced trial is credited with: the one offered, or what the generator managed where it
    fell behind (it shares its core with the DUT's receive on veth, and a late generator sends the trial's frames
    over a longer time instead of in a burst)."""
    return min(t.offered_pps, t.achieved_pps)


@dataclass
class Throughput:
    mean_pps: float                 # at the loss threshold (the PDR, or the NDR when the threshold is 0)
    stdev_pps: float
    runs: list[SearchResult]
    latency_at: dict[float, Trial]
    ndr: list[SearchResult] = field(default_factory=list)   # with ndr=True: searches for no loss at all

    @property
    def ndr_pps(self) -> float | None:
        return statistics.mean(r.throughput_pps for r in self.ndr) if self.ndr else None

    @property
    def generator_limited(self) -> bool:
        return any(r.generator_limited for r in self.runs)


def measure_throughput(topology: Topology, seconds: float = 2.0, repetitions: int = 10,
                       traffic: TrafficSpec | None = None, loss_threshold: float = DEFAULT_LOSS_THRESHOLD,
                       precision: float = DEFAULT_PRECISION, tsc_hz: float | None = None,
                       progress: Callable[[str], None] | None = None, nf=None, ndr: bool = False) -> Throughput:
    """With ndr, each repetition also searches the rate that loses no frame at all (RFC 2544's own criterion),
    reported beside the rate at loss_threshold. nf: as run_trial takes it (frames the NF keeps back are no loss)."""
    traffic = traffic or TrafficSpec()

    def trial(rate: float, spec: TrafficSpec) -> Trial:
        t = run_trial(topology, rate, seconds, spec, tsc_hz, nf=nf)
        if progress:
            progress(f"offered {rate / 1e6:.3f} Mpps: loss {t.offered_loss_ratio:.4%}")
        return t

    search_spec = traffic.with_stamps(SEARCH_STAMP_EVERY)
    runs = [search_once(lambda rate: trial(rate, search_spec), loss_threshold or NO_LOSS, precision)
            for _ in range(repetitions)]
    no_loss = [search_once(lambda rate: trial(rate, search_spec), NO_LOSS, precision)
               for _ in range(repetitions if ndr and loss_threshold > 0 else 0)]
    values = [r.throughput_pps for r in runs]
    mean = statistics.mean(values)
    latency = {f: trial(mean * f, traffic) for f in LATENCY_FRACTIONS if mean > 0}
    return Throughput(mean, statistics.stdev(values) if len(values) > 1 else 0.0, runs, latency,
                      no_loss or (runs if ndr else []))

"""The quick profile: what `xnf advise` fits on first use and `xnf bench run model-fit
--quick` fits alone. The paths that win most cases and the skb path (lab_paths.quick_paths()), the baseline, one dear point and
drop, measured in ROUNDS interleaved rounds with the yardstick in each (python/xnf/model/profile_fit.py): about three
and a half minutes here, twice that when it must fit again.

A user's machine is often busy. So the fit also measures how steady the host was while it fitted: the yardstick's
spread over the rounds, and the share of each core other programs took while the lab stood idle just before and
just after. A fit on a host that moved more than STEADY_SPREAD, or with another program taking more than BUSY_SHARE
of a core, is made again (ATTEMPTS in all); a profile still unsteady is installed marked so ("host": steady false):
its answers are of low confidence, and the next `xnf advise` measures the host first (host_now) and fits again once
it is quiet. The advisor also lowers its confidence where the host moved more during the fit than the lead of its
pick.
"""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable

from xnf.lab import cpu
from xnf.lab.rounds import interleaved, spread
from xnf.model import lab_paths, lab_rate, profile_fit
from xnf.model.profile import Profile

POINTS = (profile_fit.BASELINE_LABEL, "cycles-3000", profile_fit.DROP_LABEL)
ROUNDS = 3
SECONDS = 0.3
ATTEMPTS = 2
# The yardstick's spread (max - min over median) over the rounds a steady host stays within: the quick profile's
# paths differ by more than this at every point (docs/cost-model.md), so a host within it cannot swap them.
STEADY_SPREAD = 0.10
# Other programs' share of one core, with the lab idle, above which the host is busy.
BUSY_SHARE = 0.25
IDLE_PROBE_S = 0.5


@dataclass
class Steadiness:
    yardstick_mpps: list[float]
    spread: float                      # (max - min) / median of the yardstick over the rounds
    others_busy: dict[int, float]      # per core, the largest share other programs took while the lab was idle
    attempts: int = 1

    @property
    def steady(self) -> bool:
        return self.spread <= STEADY_SPREAD and max(self.others_busy.values(), default=0.0) <= BUSY_SHARE

    def why_not(self) -> str:
        """One line: what made the host unsteady."""
        moved = f"the yardstick moved {self.spread:.0%} over the rounds" if self.spread > STEADY_SPREAD else ""
        busy = [f"core {c} {share:.0%}" for c, share in sorted(self.others_busy.items()) if share > BUSY_SHARE]
        took = f"other programs took {', '.join(busy)}" if busy else ""
        return "; ".join(w for w in (moved, took) if w)

    @classmethod
    def of(cls, host: dict) -> "Steadiness":
        """Back from a profile's "host" (as_dict)."""
        return cls(host["yardstick_mpps"], host["spread"], {int(c): s for c, s in host["others_busy"].items()},
                   host["attempts"])

    def as_dict(self) -> dict:
        return {"steady": self.steady, "yardstick_mpps": self.yardstick_mpps, "spread": round(self.spread, 3),
                "others_busy": {str(c): round(s, 3) for c, s in self.others_busy.items()},
                "attempts": self.attempts, "limits": {"spread": STEADY_SPREAD, "others_busy": BUSY_SHARE}}


def others_busy(seconds: float = IDLE_PROBE_S) -> dict[int, float]:
    """Each core's busy share while the lab does nothing: what other programs take (the host's steal is not
    counted busy: python/xnf/lab/cpu.py)."""
    before = cpu.snapshot()
    time.sleep(seconds)
    return {core: c["busy_share"] for core, c in cpu.split(before, cpu.snapshot()).items()}


def measure(tsc_hz: float | None, say: Callable[[str], None]) -> tuple[list[dict], Steadiness]:
    """One attempt: the rounds, and how steady the host was around and during them."""
    idle_before = others_busy()
    samples = []
    with tempfile.TemporaryDirectory() as folder:
        # c_task depends on the point alone: measured once for each (the full fit measures it in every round).
        costs = {label: profile_fit.c_task(profile_fit.points()[label][1], Path(folder)) for label in POINTS}
        for round_no, subject in interleaved(profile_fit.subjects(list(lab_paths.quick_paths()), list(POINTS)),
                                             ROUNDS):
            sample = profile_fit.measure(subject, SECONDS, tsc_hz, Path(folder), cost=costs.get(subject[0]))
            sample["round"] = round_no
            samples.append(sample)
            say(f"round {round_no} {sample['point']:12s} {sample['path'] or '':12s} {sample['mpps']:6.3f} Mpps")
    idle_after = others_busy()
    return samples, judge(samples, idle_before, idle_after)


def judge(samples: list[dict], *idle: dict[int, float]) -> Steadiness:
    """The host's steadiness from the yardstick's rounds and the idle probes around them."""
    return steadiness([s["mpps"] for s in samples if s["point"] == profile_fit.YARDSTICK_SUBJECT[0]], *idle)


def steadiness(yard: list[float], *idle: dict[int, float]) -> Steadiness:
    busy = {core: max(probe.get(core, 0.0) for probe in idle) for core in set().union(*idle)}
    return Steadiness([round(r, 3) for r in yard], spread(yard), busy)


def host_now(tsc_hz: float | None) -> Steadiness:
    """How steady the host is now, without a fit: the idle probe, the yardstick ROUNDS times, the probe again."""
    before = others_busy()
    yard = [lab_rate.yardstick(SECONDS, tsc_hz) for _ in range(ROUNDS)]
    return steadiness(yard, before, others_busy())


def fit(env: dict, tsc_hz: float | None, say: Callable[[str], None]) -> tuple[Profile, Steadiness]:
    """The quick profile, made again while the host is unsteady (ATTEMPTS in all); the steadiest attempt's when
    none was steady. Its "host" says how steady it was."""
    tried = []
    for attempt in range(1, ATTEMPTS + 1):
        samples, host = measure(tsc_hz, say)
        host.attempts = attempt
        tried.append((samples, host))
        if host.steady:
            break
        say(f"the host was unsteady during the quick fit ({host.why_not()})"
            + ("; fitting again" if attempt < ATTEMPTS else ""))
    samples, host = min(tried, key=lambda t: (not t[1].steady, t[1].spread))
    host.attempts = len(tried)
    return profile_of(samples, env, host), host


def profile_of(samples: list[dict], env: dict, host: Steadiness) -> Profile:
    profile, _, _ = profile_fit.profile_from(samples, env, study="quick fit")
    return replace(profile, quick=True, host=host.as_dict())

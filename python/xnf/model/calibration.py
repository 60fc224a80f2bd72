"""A profile brought to this machine as it runs now.

A profile's times hold on the machine and in the hour of its fit. Here machines differ by up to 2.6x between
sessions, and not every path alike: a host that runs XDP twice as fast may speed the user-space paths up by a
third. So the calibration reads each path's line again: per path of the profile, three points interleaved in
rounds with the yardstick (python/xnf/lab/rounds.py), each taken as the profile's fit took its rounds
(rate_statistic): taskemu spending LIGHT_CYCLES and DEAR_CYCLES a frame (their c_task measured by `xnf cost` in
the same rounds, as an NF's is) and the drop NF. The line through the two taskemu points, time per frame against
c_task, gives the path's scale now (its slope over the profile's, the path's task_scale follows) and its fixed
times (its intercept over the profile's, the path's forward times follow); the drop NF's rate the drop times.
Two points that do work, and not the baseline that does none: on afxdp-sysc the NF's work also holds up the
busy-poll receive, so a path can forward an NF that does nothing at twice the rate of one that does a little
(4.2 against 2.0 Mpps, 2026-11-26), which a line from the baseline cannot see. The yardstick's rounds say how much
the host moved while it was measured (`host_spread`), which the advice sets against the lead of its pick.

`one_factor` is the calibration before this one, kept for comparison (advisor-check --calibrations): every path
scaled by the yardstick alone.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from xnf.lab.rounds import interleaved, spread
from xnf.model import lab_paths, lab_rate, rate_statistic, task
from xnf.model.fit import point_load
from xnf.model.predict import predict
from xnf.model.profile import DROP_TIMES, FORWARD_TIMES, TASK_SCALE, Profile

ROUNDS = 3
SECONDS = 0.3
YARDSTICK = "yardstick"
LIGHT, DEAR = "light", "dear"   # taskemu spending LIGHT_CYCLES and DEAR_CYCLES a frame
TASK_COSTS = "task_costs"       # their c_task, measured by xnf cost in the same round
POINT_CYCLES = {LIGHT: 250, DEAR: 3000}
# Within this of 1 a path's factor is its measurement's own spread, not the machine moving: left at 1.
DEADBAND = 0.05
KINDS = (LIGHT, DEAR, DROP_TIMES)


@dataclass(frozen=True)
class Subject:
    kind: str                  # YARDSTICK, FORWARD_TIMES or DROP_TIMES
    path: str | None = None


def subjects(profile: Profile) -> list[Subject]:
    """The yardstick and the taskemu points' c_task, then each path of the profile that the lab can run, with its
    three points."""
    return [Subject(YARDSTICK), Subject(TASK_COSTS)] + [Subject(kind, key) for key in measurable(profile)
                                                        for kind in KINDS]


def measurable(profile: Profile) -> list[str]:
    """The profile's paths the lab knows how to run (a published profile may describe others)."""
    return [key for key in profile.paths if key in lab_paths.PATHS]


def case_of(kind: str) -> lab_rate.NfCase:
    if kind in POINT_CYCLES:
        return lab_rate.NfCase(kind, "taskemu", f"cycles {POINT_CYCLES[kind]}\n")
    return lab_rate.NfCase("drop", "drop")


def task_costs(profile: Profile) -> dict:
    """The taskemu points' c_task over the profile's baseline, natively and in XDP, as xnf advise measures an
    NF's."""
    out = {"kind": TASK_COSTS, "path": None, "mpps": None}
    with tempfile.TemporaryDirectory() as folder:
        for kind in POINT_CYCLES:
            case = case_of(kind)
            cost = task.measure(case.nf, case.write_rules(Path(folder)), profile.baseline,
                                task.Measurement([], rounds=1), members=False)
            out |= {f"{kind}_native_ns": cost.whole.native_ns, f"{kind}_xdp_ns": cost.whole.xdp_ns}
    return out


def predicted_mpps(profile: Profile, key: str, x_ns: float = 0.0, drop: bool = False) -> float:
    """What the profile predicts for taskemu costing x_ns on the path (every frame forwarded), or for the drop NF."""
    path = profile.path(key)
    return predict(path, point_load(path, lab_paths.find(key).drops_in, x_ns, 1.0 if drop else 0.0)).mpps


def trial(profile: Profile, subject: Subject, seconds: float, tsc_hz: float | None) -> dict:
    if subject.kind == YARDSTICK:
        return {"kind": YARDSTICK, "path": None, "mpps": lab_rate.yardstick(seconds, tsc_hz)}
    if subject.kind == TASK_COSTS:
        return task_costs(profile)
    case = case_of(subject.kind)
    rate = lab_rate.measure(case, case.nf, lab_paths.find(subject.path).run_options(), seconds, tsc_hz)
    return {"kind": subject.kind, "path": subject.path, "mpps": rate["mpps"]}


def measure(profile: Profile, tsc_hz: float | None, rounds: int = ROUNDS, seconds: float = SECONDS,
            progress=lambda sample: None) -> list[dict]:
    samples = []
    for round_no, subject in interleaved(subjects(profile), rounds):
        sample = {**trial(profile, subject, seconds, tsc_hz), "round": round_no}
        samples.append(sample)
        progress(sample)
    return samples


def host_spread(samples: list[dict]) -> float:
    """How much the yardstick moved over the rounds: (highest - lowest) / median; 0 with one round."""
    return spread([s["mpps"] for s in samples if s["kind"] == YARDSTICK])


def _rate(profile: Profile, samples: list[dict], key: str, kind: str) -> float:
    return rate_statistic.of([s["mpps"] for s in samples if s["path"] == key and s["kind"] == kind],
                             profile.statistic)


def _near_one(factor: float) -> float:
    return round(factor, 4) if abs(factor - 1) > DEADBAND else 1.0


def _line(t_light: float, t_dear: float, x_light: float, x_dear: float) -> tuple[float, float]:
    """(intercept, slope) of time per frame against c_task through the two points."""
    slope = (t_dear - t_light) / (x_dear - x_light)
    return t_light - slope * x_light, slope


def path_factors(profile: Profile, samples: list[dict], key: str) -> dict[str, float]:
    """The path's factors: forward times (the line's intercept measured now over the profile's), scale (its
    slope), drop times (the drop NF's predicted over measured rate); 1 within DEADBAND, and where a line cannot
    be drawn (no c_task measured, or the points do not rise)."""
    side = profile.path(key).task_side
    costs = [s for s in samples if s["kind"] == TASK_COSTS]
    out = {FORWARD_TIMES: 1.0, TASK_SCALE: 1.0,
           DROP_TIMES: _near_one(predicted_mpps(profile, key, drop=True) / _rate(profile, samples, key, DROP_TIMES))}
    if not costs:
        return out
    x = {kind: statistics.median(s[f"{kind}_{side}_ns"] for s in costs) for kind in POINT_CYCLES}
    if x[DEAR] <= x[LIGHT]:
        return out
    now = _line(1e3 / _rate(profile, samples, key, LIGHT), 1e3 / _rate(profile, samples, key, DEAR), x[LIGHT], x[DEAR])
    then = _line(1e3 / predicted_mpps(profile, key, x[LIGHT]), 1e3 / predicted_mpps(profile, key, x[DEAR]),
                 x[LIGHT], x[DEAR])
    if min(now + then) > 0:
        out[FORWARD_TIMES], out[TASK_SCALE] = _near_one(now[0] / then[0]), _near_one(now[1] / then[1])
    return out


def factors(profile: Profile, samples: list[dict]) -> dict[str, dict[str, float]]:
    """Per path measured: its factors (path_factors)."""
    return {key: path_factors(profile, samples, key) for key in dict.fromkeys(s["path"] for s in samples if s["path"])}


def per_path(profile: Profile, samples: list[dict]) -> tuple[Profile, dict]:
    """The profile with each path's times scaled by its own factors, and what the calibration found."""
    found = factors(profile, samples)
    calibrated = profile.rescaled(found, "each path's baseline and drop measured now")
    return calibrated, summary(profile, samples, found, "per path")


def one_factor(profile: Profile, samples: list[dict]) -> tuple[Profile, dict]:
    """The profile with every path scaled by the yardstick measured now against the one at the fit."""
    then = profile.yardsticks.get(lab_rate.YARDSTICK_KEY)
    now = rate_statistic.of([s["mpps"] for s in samples if s["kind"] == YARDSTICK], profile.statistic)
    if not then:
        return profile, summary(profile, samples, {}, "one factor: the profile stores no yardstick")
    factor = then / now
    found = {key: {FORWARD_TIMES: round(factor, 4), DROP_TIMES: round(factor, 4)} for key in profile.paths}
    return profile.scaled(factor, f"{lab_rate.YARDSTICK} {now:.2f} Mpps now, {then:.2f} at the fit"), \
        summary(profile, samples, found, "one factor (the yardstick)")


def summary(profile: Profile, samples: list[dict], found: dict, how: str) -> dict:
    yard = [s["mpps"] for s in samples if s["kind"] == YARDSTICK]
    then = profile.yardsticks.get(lab_rate.YARDSTICK_KEY)
    return {"how": how, "factors": found, "rounds": 1 + max(s["round"] for s in samples),
            "yardstick_mpps_now": [round(r, 4) for r in yard], "yardstick_mpps_at_fit": then,
            "host_spread": round(host_spread(samples), 4)}


def calibrate(profile: Profile, tsc_hz: float | None, say=lambda text: None) -> tuple[Profile, dict]:
    """Measures and calibrates per path, saying how long it took and how much each path moved."""
    started = time.monotonic()
    say(f"calibrating per path: {', '.join(measurable(profile))} ({ROUNDS} rounds of taskemu at "
        f"{' and '.join(str(c) for c in POINT_CYCLES.values())} cycles and the drop NF each, and the yardstick)")
    samples = measure(profile, tsc_hz)
    calibrated, info = per_path(profile, samples)
    info["seconds"] = round(time.monotonic() - started, 1)
    return calibrated, info

"""A profile brought to this machine as it runs now.

A profile's times hold on the machine and in the hour of its fit. Here machines differ by up to 2.6x between
sessions, and not every path alike: a host that runs XDP twice as fast may speed the user-space paths up by a
third. So the calibration reads each path's line again: per path of the profile, three points interleaved in
rounds with the yardstick (python/xnf/lab/rounds.py), each taken as the profile's fit took its rounds
(rate_statistic): the baseline NF (taskemu spending nothing: its rate is the path's own forward time), a dear one
(taskemu spending DEAR_CYCLES a frame, whose c_task `xnf cost` measures in the same run: with the baseline, the
slope of the path's time against c_task, its scale), and the drop NF (a dropped frame's time). A path's forward
times are scaled by how far its baseline's predicted rate is from the rate measured now, its scale set to the
slope measured now, its drop times scaled by the drop NF's. A path's rate is not the same function of c_task on
every machine (on afxdp-sysc the NF's work also holds up the busy-poll receive), which one point alone cannot see.
The yardstick's rounds say how much the host moved while it was measured (`host_spread`), which the advice sets
against the lead of its pick.

`one_factor` is the calibration before this one, kept for comparison (advisor-check --calibration): every path
scaled by the yardstick alone.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from xnf.lab.rounds import interleaved
from xnf.model import lab_paths, lab_rate, rate_statistic, task
from xnf.model.fit import point_load
from xnf.model.predict import predict
from xnf.model.profile import DROP_TIMES, FORWARD_TIMES, TASK_SCALE, Profile

ROUNDS = 3
SECONDS = 0.3
YARDSTICK = "yardstick"
DEAR = "dear"              # taskemu spending DEAR_CYCLES: the scale of the path's time against c_task
DEAR_COST = "dear_cost"    # that point's c_task, measured by xnf cost in the same round
DEAR_CYCLES = 3000
# Within this of 1 a path's factor is its measurement's own spread, not the machine moving: left at 1.
DEADBAND = 0.05
KINDS = (FORWARD_TIMES, DEAR, DROP_TIMES)


@dataclass(frozen=True)
class Subject:
    kind: str                  # YARDSTICK, FORWARD_TIMES or DROP_TIMES
    path: str | None = None


def subjects(profile: Profile) -> list[Subject]:
    """The yardstick and the dear point's c_task, then each path of the profile that the lab can run, with its
    three points."""
    return [Subject(YARDSTICK), Subject(DEAR_COST)] + [Subject(kind, key) for key in measurable(profile)
                                                       for kind in KINDS]


def measurable(profile: Profile) -> list[str]:
    """The profile's paths the lab knows how to run (a published profile may describe others)."""
    return [key for key in profile.paths if key in lab_paths.PATHS]


def case_of(profile: Profile, kind: str) -> lab_rate.NfCase:
    if kind == FORWARD_TIMES:
        return lab_rate.NfCase("baseline", profile.baseline["nf"], profile.baseline.get("rules"))
    if kind == DEAR:
        return lab_rate.NfCase("dear", "taskemu", f"cycles {DEAR_CYCLES}\n")
    return lab_rate.NfCase("drop", "drop")


def dear_cost(profile: Profile) -> dict:
    """The dear point's c_task over the profile's baseline, natively and in XDP, as xnf advise measures an NF's."""
    with tempfile.TemporaryDirectory() as folder:
        case = case_of(profile, DEAR)
        cost = task.measure(case.nf, case.write_rules(Path(folder)), profile.baseline,
                            task.Measurement([], rounds=1), members=False)
    return {"kind": DEAR_COST, "path": None, "mpps": None, "native_ns": cost.whole.native_ns,
            "xdp_ns": cost.whole.xdp_ns}


def predicted_mpps(profile: Profile, key: str, kind: str) -> float:
    """What the profile predicts for the point: c_task 0 (the baseline is its zero), every frame of one fate."""
    path = profile.path(key)
    drops_in = lab_paths.find(key).drops_in
    return predict(path, point_load(path, drops_in, 0.0, 1.0 if kind == DROP_TIMES else 0.0)).mpps


def trial(profile: Profile, subject: Subject, seconds: float, tsc_hz: float | None) -> dict:
    if subject.kind == YARDSTICK:
        return {"kind": YARDSTICK, "path": None, "mpps": lab_rate.yardstick(seconds, tsc_hz)}
    if subject.kind == DEAR_COST:
        return dear_cost(profile)
    case = case_of(profile, subject.kind)
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
    rates = [s["mpps"] for s in samples if s["kind"] == YARDSTICK]
    return (max(rates) - min(rates)) / statistics.median(rates) if len(rates) > 1 else 0.0


def _rate(profile: Profile, samples: list[dict], key: str, kind: str) -> float:
    return rate_statistic.of([s["mpps"] for s in samples if s["path"] == key and s["kind"] == kind],
                             profile.statistic)


def _near_one(factor: float) -> float:
    return round(factor, 4) if abs(factor - 1) > DEADBAND else 1.0


def _scale_factor(profile: Profile, samples: list[dict], key: str) -> float:
    """How far the path's scale moved: the growth of its time per frame from the baseline to the dear point
    measured now, over the growth the profile predicts (1 when the dear point was not measured, or none shows)."""
    costs = [s for s in samples if s["kind"] == DEAR_COST]
    if not costs or not any(s["path"] == key and s["kind"] == DEAR for s in samples):
        return 1.0
    path = profile.path(key)
    x = statistics.median(s[f"{path.task_side}_ns"] for s in costs)
    if x <= 0:
        return 1.0
    measured = 1e3 / _rate(profile, samples, key, DEAR) - 1e3 / _rate(profile, samples, key, FORWARD_TIMES)
    dear = predict(path, point_load(path, lab_paths.find(key).drops_in, x)).mpps
    predicted = 1e3 / dear - 1e3 / predicted_mpps(profile, key, FORWARD_TIMES)
    return _near_one(measured / predicted) if measured > 0 and predicted > 0 else 1.0


def factors(profile: Profile, samples: list[dict]) -> dict[str, dict[str, float]]:
    """Per path: the factors of its forward and drop times (predicted over measured rate) and of its scale (the
    slope measured now over the profile's); 1 within DEADBAND."""
    out: dict[str, dict[str, float]] = {}
    for key in dict.fromkeys(s["path"] for s in samples if s["path"]):
        out[key] = {kind: _near_one(predicted_mpps(profile, key, kind) / _rate(profile, samples, key, kind))
                    for kind in (FORWARD_TIMES, DROP_TIMES)}
        out[key][TASK_SCALE] = _scale_factor(profile, samples, key)
    return out


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
    say(f"calibrating per path: {', '.join(measurable(profile))} ({ROUNDS} rounds of the baseline, taskemu at "
        f"{DEAR_CYCLES} cycles and the drop NF each, and the yardstick)")
    samples = measure(profile, tsc_hz)
    calibrated, info = per_path(profile, samples)
    info["seconds"] = round(time.monotonic() - started, 1)
    return calibrated, info

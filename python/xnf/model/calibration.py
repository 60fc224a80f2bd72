"""A profile brought to this machine as it runs now.

A profile's times hold on the machine and in the hour of its fit. Here machines differ by up to 2.6x between
sessions, and not every path alike: a host that runs XDP twice as fast may speed the user-space paths up by a
third. So the calibration reads each path's own c_IO again: per path of the profile, the two points whose rates
its fixed times alone decide (the baseline NF, which forwards and spends nothing, and the drop NF), interleaved in
rounds with the yardstick (python/xnf/lab/rounds.py), each taken as the profile's fit took its rounds
(rate_statistic). A path's forward times are scaled by how far its baseline's predicted rate is from the rate
measured now, its drop times by the drop NF's; c_task stays what `xnf cost` measures on the day. The yardstick's
rounds say how much the host moved while it was measured (`host_spread`), which the advice sets against the lead
of its pick.

`one_factor` is the calibration before this one, kept for comparison (advisor-check --calibration): every path
scaled by the yardstick alone.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass

from xnf.lab.rounds import interleaved
from xnf.model import lab_paths, lab_rate, rate_statistic
from xnf.model.fit import point_load
from xnf.model.predict import predict
from xnf.model.profile import DROP_TIMES, FORWARD_TIMES, Profile

ROUNDS = 3
SECONDS = 0.3
YARDSTICK = "yardstick"
# Within this of 1 a path's factor is its measurement's own spread, not the machine moving: left at 1.
DEADBAND = 0.05
KINDS = (FORWARD_TIMES, DROP_TIMES)


@dataclass(frozen=True)
class Subject:
    kind: str                  # YARDSTICK, FORWARD_TIMES or DROP_TIMES
    path: str | None = None


def subjects(profile: Profile) -> list[Subject]:
    """The yardstick, then each path of the profile that the lab can run, with its two points."""
    return [Subject(YARDSTICK)] + [Subject(kind, key) for key in measurable(profile) for kind in KINDS]


def measurable(profile: Profile) -> list[str]:
    """The profile's paths the lab knows how to run (a published profile may describe others)."""
    return [key for key in profile.paths if key in lab_paths.PATHS]


def case_of(profile: Profile, kind: str) -> lab_rate.NfCase:
    if kind == FORWARD_TIMES:
        return lab_rate.NfCase("baseline", profile.baseline["nf"], profile.baseline.get("rules"))
    return lab_rate.NfCase("drop", "drop")


def predicted_mpps(profile: Profile, key: str, kind: str) -> float:
    """What the profile predicts for the point: c_task 0 (the baseline is its zero), every frame of one fate."""
    path = profile.path(key)
    drops_in = lab_paths.find(key).drops_in
    return predict(path, point_load(path, drops_in, 0.0, 1.0 if kind == DROP_TIMES else 0.0)).mpps


def trial(profile: Profile, subject: Subject, seconds: float, tsc_hz: float | None) -> dict:
    if subject.kind == YARDSTICK:
        return {"kind": YARDSTICK, "path": None, "mpps": lab_rate.yardstick(seconds, tsc_hz)}
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


def factors(profile: Profile, samples: list[dict]) -> dict[str, dict[str, float]]:
    """Per path, per kind of time, predicted over measured rate: the factor its times take (1 within DEADBAND)."""
    out: dict[str, dict[str, float]] = {}
    for key in dict.fromkeys(s["path"] for s in samples if s["path"]):
        out[key] = {}
        for kind in KINDS:
            now = rate_statistic.of([s["mpps"] for s in samples if s["path"] == key and s["kind"] == kind],
                                    profile.statistic)
            factor = predicted_mpps(profile, key, kind) / now
            out[key][kind] = round(factor, 4) if abs(factor - 1) > DEADBAND else 1.0
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
    found = {key: {kind: round(factor, 4) for kind in KINDS} for key in profile.paths}
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
    say(f"calibrating per path: {', '.join(measurable(profile))} ({ROUNDS} rounds of the baseline and the drop NF "
        f"each, and the yardstick)")
    samples = measure(profile, tsc_hz)
    calibrated, info = per_path(profile, samples)
    info["seconds"] = round(time.monotonic() - started, 1)
    return calibrated, info

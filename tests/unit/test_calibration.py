"""Bringing a profile to another machine (python/xnf/model/calibration.py, provenance.py) on a synthetic profile
whose answers are known: each path scaled by its own readings, the yardstick alone scaling every path alike, and a
profile of another machine or of long ago called so."""

from __future__ import annotations

import pytest

from test_cost_model import synthetic_profile
from xnf.model import advisor, calibration, lab_rate, provenance
from xnf.model.profile import DROP_TIMES, FORWARD_TIMES, TASK_SCALE


def readings(profile, speed: dict[str, tuple[float, float]], yardstick: list[float]) -> list[dict]:
    """Samples as calibration.measure returns them: each path's baseline and drop at speed x what the profile
    predicts (two rounds, the second a little lower), and the yardstick's rounds."""
    samples = []
    for round_no in range(2):
        slower = 1 - 0.02 * round_no
        samples.append({"kind": calibration.YARDSTICK, "path": None, "mpps": yardstick[round_no], "round": round_no})
        for key, (forward, drop) in speed.items():
            for kind, factor in ((FORWARD_TIMES, forward), (DROP_TIMES, drop)):
                mpps = calibration.predicted_mpps(profile, key, kind) * factor * slower
                samples.append({"kind": kind, "path": key, "mpps": mpps, "round": round_no})
    return samples


def test_each_path_takes_its_own_factor_and_predicts_what_was_measured():
    profile = synthetic_profile()
    profile.statistic = "best"
    # XDP twice as fast as at the fit, the live path a third faster, hybrid as it was (inside the deadband)
    samples = readings(profile, {"xdp": (2.0, 2.0), "afxdp/live": (1.33, 1.1), "hybrid/live": (1.03, 0.98)},
                       [9.9, 9.7])
    brought, found = calibration.per_path(profile, samples)
    assert found["factors"]["xdp"] == {FORWARD_TIMES: 0.5, DROP_TIMES: 0.5, TASK_SCALE: 1.0}
    assert found["factors"]["hybrid/live"] == {FORWARD_TIMES: 1.0, DROP_TIMES: 1.0, TASK_SCALE: 1.0}
    for key, kind, speed in (("xdp", FORWARD_TIMES, 2.0), ("afxdp/live", FORWARD_TIMES, 1.33),
                             ("afxdp/live", DROP_TIMES, 1.1)):
        measured_best = calibration.predicted_mpps(profile, key, kind) * speed
        assert calibration.predicted_mpps(brought, key, kind) == pytest.approx(measured_best, rel=1e-3)
    assert found["host_spread"] == pytest.approx(0.2 / 9.8, rel=1e-3)


def test_the_dear_point_gives_each_path_its_scale_now():
    """The live path's NF now costs twice the time per ns of c_task it did at the fit: its dear point falls
    short of the line, and the scale follows; XDP's did not move."""
    profile = synthetic_profile()
    profile.statistic = "best"
    x = 500.0   # the dear point's c_task, natively and in XDP
    samples = [{"kind": calibration.DEAR_COST, "path": None, "mpps": None, "native_ns": x, "xdp_ns": x, "round": 0}]
    for key, slowdown in (("xdp", 1.0), ("afxdp/live", 2.0)):
        path = profile.path(key)
        base_ns = 1e3 / calibration.predicted_mpps(profile, key, FORWARD_TIMES)
        dear_ns = base_ns + slowdown * path.task_scale * x
        samples += [{"kind": FORWARD_TIMES, "path": key, "mpps": 1e3 / base_ns, "round": 0},
                    {"kind": calibration.DEAR, "path": key, "mpps": 1e3 / dear_ns, "round": 0},
                    {"kind": DROP_TIMES, "path": key, "mpps": calibration.predicted_mpps(profile, key, DROP_TIMES),
                     "round": 0}]
    brought, found = calibration.per_path(profile, samples)
    assert found["factors"]["afxdp/live"][TASK_SCALE] == pytest.approx(2.0, rel=1e-3)
    assert found["factors"]["xdp"][TASK_SCALE] == 1.0
    assert brought.path("afxdp/live").task_scale == pytest.approx(2 * profile.path("afxdp/live").task_scale)


def test_one_factor_scales_every_path_by_the_yardstick_alone():
    profile = synthetic_profile()
    profile.statistic = "best"
    profile.yardsticks = {lab_rate.YARDSTICK_KEY: 5.0}
    samples = readings(profile, {"xdp": (2.0, 2.0), "afxdp/live": (1.0, 1.0)}, [10.0, 9.0])
    brought, found = calibration.one_factor(profile, samples)
    assert found["factors"]["afxdp/live"][FORWARD_TIMES] == 0.5
    # the live path did not speed up, but one factor says it did: predicted twice what it forwards
    live = calibration.predicted_mpps(brought, "afxdp/live", FORWARD_TIMES)
    assert live == pytest.approx(2 * calibration.predicted_mpps(profile, "afxdp/live", FORWARD_TIMES))


def test_a_factor_no_machine_gives_is_refused():
    profile = synthetic_profile()
    samples = readings(profile, {"xdp": (50.0, 50.0)}, [5.0, 5.0])
    with pytest.raises(Exception, match="not a machine's drift"):
        calibration.per_path(profile, samples)


HERE = {"cpu_model": "AMD EPYC", "cores": 2, "kernel": "6.18.44"}


def test_a_profile_of_another_cpu_or_kernel_is_foreign_and_an_old_one_stale():
    profile = synthetic_profile()
    profile.environment = {**HERE, "started_utc": "2026-11-20T10:00:00Z"}
    fitted = 1795168800.0  # 2026-11-20T10:00:00Z
    same = provenance.judge(profile, HERE, now=fitted + 86400)
    assert not same["foreign"] and not same["stale"] and same["age_days"] == 1.0
    assert provenance.advice_note(same) is None
    other = provenance.judge(profile, {**HERE, "cpu_model": "Intel Xeon", "kernel": "6.1.0"}, now=fitted + 86400)
    assert other["foreign"] and len(other["differences"]) == 2
    assert "CPU: AMD EPYC at the fit, Intel Xeon here" in provenance.advice_note(other)
    old = provenance.judge(profile, HERE, now=fitted + 30 * 86400)
    assert old["stale"] and not old["foreign"] and "--calibrate" in provenance.advice_note(old)


def test_confidence_is_only_ever_lowered_and_says_why():
    answer = {"recommendation": {"confidence": "high", "why": "lead"}}
    advisor.lower_confidence(answer, "medium", "foreign")
    advisor.lower_confidence(answer, "high", "nothing")
    assert answer["recommendation"] == {"confidence": "medium", "why": "lead; foreign; nothing"}

"""Bringing a profile to another machine (python/xnf/model/calibration.py, provenance.py) on a synthetic profile
whose answers are known: each path scaled by its own readings, the yardstick alone scaling every path alike, and a
profile of another machine or of long ago called so."""

from __future__ import annotations

import pytest

from test_cost_model import synthetic_profile
from xnf.model import advisor, calibration, lab_rate, provenance
from xnf.model.profile import DROP_TIMES, FORWARD_TIMES, TASK_SCALE


X = {calibration.LIGHT: 100.0, calibration.DEAR: 1200.0}   # the taskemu points' c_task, natively and in XDP


def readings(profile, change: dict[str, tuple[float, float, float]], yardstick: list[float]) -> list[dict]:
    """Samples as calibration.measure returns them, for a machine on which each path's fixed times, scale and drop
    times are the profile's times the factors given (two rounds, the second a little slower)."""
    costs = {"kind": calibration.TASK_COSTS, "path": None, "mpps": None, "round": 0}
    costs |= {f"{k}_{side}_ns": x for k, x in X.items() for side in ("native", "xdp")}
    samples = [costs]
    for round_no in range(2):
        slower = 1 - 0.02 * round_no
        samples.append({"kind": calibration.YARDSTICK, "path": None, "mpps": yardstick[round_no], "round": round_no})
        for key, (fixed, scale, drop) in change.items():
            machine = profile.rescaled({key: {FORWARD_TIMES: fixed, DROP_TIMES: drop, TASK_SCALE: scale}}, "test")
            for kind, x in X.items():
                samples.append({"kind": kind, "path": key, "round": round_no,
                                "mpps": calibration.predicted_mpps(machine, key, x) * slower})
            samples.append({"kind": DROP_TIMES, "path": key, "round": round_no,
                            "mpps": calibration.predicted_mpps(machine, key, drop=True) * slower})
    return samples


def test_each_path_takes_its_own_line_and_predicts_what_was_measured():
    """XDP twice as fast as at the fit, the live path's NF twice as dear per ns of c_task, hybrid as it was."""
    profile = synthetic_profile()
    profile.statistic = "best"
    change = {"xdp": (0.5, 0.5, 0.5), "afxdp/live": (1.0, 2.0, 1.3), "hybrid/live": (1.02, 1.0, 0.98)}
    brought, found = calibration.per_path(profile, readings(profile, change, [9.9, 9.7]))
    assert found["factors"]["hybrid/live"] == {FORWARD_TIMES: 1.0, DROP_TIMES: 1.0, TASK_SCALE: 1.0}
    assert found["factors"]["afxdp/live"][TASK_SCALE] == pytest.approx(2.0, rel=0.02)
    for key, (fixed, scale, drop) in change.items():
        machine = profile.rescaled({key: {FORWARD_TIMES: fixed, DROP_TIMES: drop, TASK_SCALE: scale}}, "test")
        for x in (0.0, 50.0, 600.0, 3000.0):   # between, below and beyond the two points
            assert calibration.predicted_mpps(brought, key, x) == \
                pytest.approx(calibration.predicted_mpps(machine, key, x), rel=0.03), (key, x)
    assert found["host_spread"] == pytest.approx(0.2 / 9.8, rel=1e-3)


def test_one_factor_scales_every_path_by_the_yardstick_alone():
    profile = synthetic_profile()
    profile.statistic = "best"
    profile.yardsticks = {lab_rate.YARDSTICK_KEY: 5.0}
    samples = readings(profile, {"xdp": (0.5, 0.5, 0.5), "afxdp/live": (1.0, 1.0, 1.0)}, [10.0, 9.0])
    brought, found = calibration.one_factor(profile, samples)
    assert found["factors"]["afxdp/live"][FORWARD_TIMES] == 0.5
    # the live path did not speed up, but one factor says it did
    assert calibration.predicted_mpps(brought, "afxdp/live") > 1.5 * calibration.predicted_mpps(profile, "afxdp/live")


def test_a_factor_no_machine_gives_is_refused():
    profile = synthetic_profile()
    samples = readings(profile, {"xdp": (1.0, 1.0, 1.0)}, [5.0, 5.0])
    for sample in samples:
        if sample["path"] == "xdp":
            sample["mpps"] *= 50   # fifty times the machine it was
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


def test_a_profile_fitted_under_other_mitigations_is_foreign_and_says_which():
    """The same CPU and kernel booted with other mitigations (or microcode) is another machine to the profile's
    times; a fit that kept none is judged without them."""
    fitted_under = {"spectre_v2": "Mitigation: Retpolines", "spec_rstack_overflow": "Vulnerable: Safe RET"}
    profile = synthetic_profile()
    profile.environment = {**HERE, "cpu_mitigations": fitted_under, "started_utc": "2026-11-20T10:00:00Z"}
    fitted = 1795168800.0
    same = provenance.judge(profile, {**HERE, "cpu_mitigations": dict(fitted_under)}, now=fitted + 86400)
    assert not same["foreign"]
    here = {**HERE, "cpu_mitigations": {"spectre_v2": "Mitigation: Enhanced IBRS", "mds": "Mitigation: Clear CPU"}}
    other = provenance.judge(profile, here, now=fitted + 86400)
    assert other["foreign"] and other["differences"] == [
        "the CPU's mitigation of mds: none at the fit, Mitigation: Clear CPU here",
        "the CPU's mitigation of spec_rstack_overflow: Vulnerable: Safe RET at the fit, none here",
        "the CPU's mitigation of spectre_v2: Mitigation: Retpolines at the fit, Mitigation: Enhanced IBRS here"]
    assert "spectre_v2" in provenance.advice_note(other)
    profile.environment.pop("cpu_mitigations")
    assert not provenance.judge(profile, here, now=fitted + 86400)["foreign"]


def test_confidence_is_only_ever_lowered_and_says_why():
    answer = {"recommendation": {"confidence": "high", "why": "lead"}}
    advisor.lower_confidence(answer, "medium", "foreign")
    advisor.lower_confidence(answer, "high", "nothing")
    assert answer["recommendation"] == {"confidence": "medium", "why": "lead; foreign; nothing"}

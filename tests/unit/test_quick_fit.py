"""The quick fit's judgement of the host: a yardstick that moved, another program on a core; an unsteady fit made
again, installed marked so, and fitted again by a later advise once the host is quiet."""

from __future__ import annotations

import json

import pytest

from xnf.model import advise_command, quick_fit
from xnf.model.profile import from_dict, quick_path

ENV = {"started_utc": "2026-11-27T06:00:00Z"}
XDP_NS = {"cycles-0": 10.0, "cycles-3000": 1010.0, "drop": 5.0}


def samples(yardstick: list[float]) -> list[dict]:
    """Rounds of the xdp path taking 200 ns per frame plus the NF's time, the yardstick as given."""
    out = []
    for rnd, yard in enumerate(yardstick):
        out.append({"point": "yardstick", "path": None, "mpps": yard, "round": rnd})
        for point, ns in XDP_NS.items():
            out.append({"point": point, "path": "xdp", "round": rnd, "mpps": 1e3 / (200.0 + ns - 10.0),
                        "xdp_ns": ns, "native_ns": ns, "generator_ns_per_packet": 100.0})
    return out


QUIET = {0: 0.02, 1: 0.01}


def test_a_yardstick_that_moved_more_than_the_limit_is_unsteady():
    host = quick_fit.judge(samples([2.54, 3.48, 2.72]), QUIET)
    assert not host.steady and host.spread == pytest.approx(0.94 / 2.72)
    assert host.why_not() == "the yardstick moved 35% over the rounds"


def test_another_program_on_a_core_is_unsteady_however_still_the_yardstick():
    host = quick_fit.judge(samples([2.7, 2.71, 2.69]), QUIET, {0: 0.97, 1: 0.01})
    assert not host.steady and host.why_not() == "other programs took core 0 97%"


def test_a_quiet_host_is_steady():
    host = quick_fit.judge(samples([2.7, 2.8, 2.75]), QUIET, QUIET)
    assert host.steady and host.why_not() == ""


def attempts(monkeypatch, *yardsticks: list[float]) -> list[int]:
    """quick_fit.fit with each attempt's rounds as given (the lab's measurement replaced); returns how many ran."""
    ran = []

    def measure(tsc_hz, say):
        yard = yardsticks[len(ran)]
        ran.append(1)
        rounds = samples(yard)
        return rounds, quick_fit.judge(rounds, QUIET)

    monkeypatch.setattr(quick_fit, "measure", measure)
    return ran


def test_an_unsteady_attempt_is_made_again_and_the_steady_one_kept(monkeypatch):
    ran = attempts(monkeypatch, [2.5, 3.5, 2.7], [2.7, 2.75, 2.8])
    profile, host = quick_fit.fit(ENV, None, lambda line: None)
    assert len(ran) == 2 and host.steady and host.attempts == 2
    assert profile.quick and profile.host["steady"] and profile.host["yardstick_mpps"] == [2.7, 2.75, 2.8]


def test_a_host_unsteady_throughout_gives_the_steadiest_attempt_marked_unsteady(monkeypatch):
    attempts(monkeypatch, [2.5, 3.5, 2.7], [2.5, 3.0, 2.7])
    profile, host = quick_fit.fit(ENV, None, lambda line: None)
    assert not host.steady and host.attempts == quick_fit.ATTEMPTS
    assert profile.host["yardstick_mpps"] == [2.5, 3.0, 2.7] and not profile.host["steady"]
    again = from_dict(json.loads(profile.to_json()))   # the mark survives the file
    assert again.host == profile.host


def test_an_unsteady_quick_profile_is_installed_marked(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    attempts(monkeypatch, [2.5, 3.5, 2.7], [2.5, 3.0, 2.7])
    profile = advise_command.chosen_profile(None, ENV, None)
    assert not profile.host["steady"] and quick_path().exists()
    assert "on a host unsteady over 2 attempts (the yardstick moved 19% over the rounds): installed marked so" in \
        capsys.readouterr().out


@pytest.mark.parametrize("quiet_now", [True, False])
def test_a_marked_profile_is_fitted_again_once_the_host_is_quiet(monkeypatch, tmp_path, capsys, quiet_now):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    ran = attempts(monkeypatch, [2.5, 3.5, 2.7], [2.5, 3.0, 2.7], [2.7, 2.75, 2.8])
    advise_command.chosen_profile(None, ENV, None)
    now = quick_fit.steadiness([2.7, 2.7, 2.7] if quiet_now else [2.0, 2.7, 2.7], QUIET)
    monkeypatch.setattr(quick_fit, "host_now", lambda tsc_hz: now)
    profile = advise_command.chosen_profile(None, ENV, None)
    said = capsys.readouterr().out
    assert "measuring whether the host is quiet now" in said
    if quiet_now:
        assert len(ran) == 3 and profile.host["steady"] and "the host is quiet now: fitting a quick one" in said
    else:
        assert len(ran) == 2 and not profile.host["steady"] and "the host is still unsteady" in said


def test_a_steady_quick_profile_is_installed_and_taken_as_it_is(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    ran = attempts(monkeypatch, [2.7, 2.75, 2.8])
    advise_command.chosen_profile(None, ENV, None)
    assert quick_path().exists()
    assert advise_command.chosen_profile(None, ENV, None).host["steady"] and len(ran) == 1

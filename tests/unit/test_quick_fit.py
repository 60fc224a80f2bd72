"""The quick fit's judgement of the host: a yardstick that moved, another program on a core; an unsteady fit made
again, and never installed as the machine's profile."""

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


def test_an_unsteady_quick_profile_is_not_installed(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    attempts(monkeypatch, [2.5, 3.5, 2.7], [2.5, 3.0, 2.7])
    profile = advise_command.quick_fit(ENV, None)
    assert not profile.host["steady"] and not quick_path().exists()
    assert "for this answer only: the host stayed unsteady over 2 attempts" in capsys.readouterr().out


def test_a_steady_quick_profile_is_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    attempts(monkeypatch, [2.7, 2.75, 2.8])
    advise_command.quick_fit(ENV, None)
    assert quick_path().exists()

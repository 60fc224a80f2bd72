"""A new user's first `xnf advise`: no profile of the machine is installed, so it fits a quick one (about a minute),
installs it, says so on stderr and answers on stdout in JSON; the next call finds it and fits nothing. And an
error under --json comes out as JSON too."""

from __future__ import annotations

import json

from lab_helpers import run_xnf


def test_the_first_advice_fits_a_quick_profile_then_reuses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    first = run_xnf(["advise", "macswap", "--rounds", "1", "--json"], timeout=400)
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["profile"]["quick"] is True
    assert answer["recommendation"]["confidence"] in ("medium", "low")
    assert {row["path"] for row in answer["candidates"]} <= {"xdp", "afxdp/live", "hybrid/live"}
    assert "fitting a quick one" in first.stderr and (tmp_path / "profile-quick.json").is_file()
    assert not (tmp_path / "profile.json").exists()

    again = run_xnf(["advise", "macswap", "--rounds", "1", "--json"], timeout=120)
    assert again.returncode == 0 and "fitting" not in again.stderr
    assert json.loads(again.stdout)["profile"]["name"] == answer["profile"]["name"]


def test_an_error_under_json_is_json(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    wrong = run_xnf(["advise", "macswap", "--profile", str(tmp_path / "nowhere.json"), "--json"])
    assert wrong.returncode == 1
    assert "no machine profile" in json.loads(wrong.stdout)["error"]
    assert "no machine profile" in wrong.stderr and "Traceback" not in wrong.stderr

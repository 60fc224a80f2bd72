"""A new user's first `xnf advise`: no profile of the machine is installed, so it fits a quick one and installs it
(marked, with low confidence and a line why, when the host was unsteady), says so on stderr and answers on stdout
in JSON; the next call takes a steady one as it is, and measures the host before it takes a marked one. Another
program on a core is seen by the fit's probe. And an error under --json comes out as JSON too."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

from lab_helpers import run_xnf
from xnf.model import lab_paths
from xnf.model import quick_fit


def test_the_first_advice_fits_a_quick_profile_then_reuses_it(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    first = run_xnf(["advise", "macswap", "--rounds", "1", "--json"], timeout=900)
    assert first.returncode == 0, first.stderr
    answer = json.loads(first.stdout)
    assert answer["profile"]["quick"] is True
    assert answer["recommendation"]["confidence"] in ("medium", "low")
    assert {row["path"] for row in answer["candidates"]} <= set(lab_paths.quick_paths())
    assert "fitting a quick one" in first.stderr and not (tmp_path / "profile.json").exists()
    host = answer["profile"]["host"]
    assert len(host["yardstick_mpps"]) == quick_fit.ROUNDS and 1 <= host["attempts"] <= quick_fit.ATTEMPTS
    assert (tmp_path / "profile-quick.json").is_file()
    if not host["steady"]:   # a slow spell of this host throughout: said, and marked
        assert "installed marked so" in first.stderr and answer["recommendation"]["confidence"] == "low"
    # The next call takes a steady profile as it is; a marked one it takes once it has found the host still busy
    # (a program spinning on core 1 here, so that it answers at once rather than fit again on a host gone quiet).
    with busy_core(1) if not host["steady"] else contextlib.nullcontext():
        again = run_xnf(["advise", "macswap", "--rounds", "1", "--json"], timeout=900)
    assert again.returncode == 0, again.stderr
    assert "fitting" not in again.stderr
    assert json.loads(again.stdout)["profile"]["name"] == answer["profile"]["name"]
    if not host["steady"]:
        assert "measuring whether the host is quiet now" in again.stderr and "still unsteady" in again.stderr


@contextlib.contextmanager
def busy_core(core: int):
    """A program spinning on core while the block runs."""
    spinner = subprocess.Popen(["taskset", "-c", str(core), sys.executable, "-c", "while True: pass"])
    try:
        yield
    finally:
        spinner.kill()
        spinner.wait()


def test_the_fit_sees_another_program_on_a_core():
    """A program spinning on core 1 while the lab is idle: the probe finds the core taken, and the host unsteady."""
    with busy_core(1):
        busy = quick_fit.others_busy()
    assert busy[1] > quick_fit.BUSY_SHARE, busy
    host = quick_fit.Steadiness([2.7, 2.7, 2.7], 0.0, busy)
    said = host.why_not()   # core 0 too, where something else of the host's ran meanwhile
    assert not host.steady and "other programs took" in said and "core 1 " in said, said


def test_an_error_under_json_is_json(tmp_path, monkeypatch):
    monkeypatch.setenv("XNF_PROFILE", str(tmp_path / "profile.json"))
    wrong = run_xnf(["advise", "macswap", "--profile", str(tmp_path / "nowhere.json"), "--json"])
    assert wrong.returncode == 1
    assert "no machine profile" in json.loads(wrong.stdout)["error"]
    assert "no machine profile" in wrong.stderr and "Traceback" not in wrong.stderr

"""xnf-core-pair and the core-pair study: the probe's reading and the study's per-round table, on real runs."""

from __future__ import annotations

import json
import subprocess

from lab_helpers import run_xnf
from xnf import build


def probe(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(build.tool_binary("xnf-core-pair")), *args], capture_output=True, text=True,
                          timeout=30)


def test_the_probe_times_the_loop_alone_beside_a_spinner_and_a_round_trip():
    done = probe("--cpu", "0", "--partner", "1", "--ms", "100")
    assert done.returncode == 0, done.stderr
    reading = json.loads(done.stdout)
    assert reading["alone_ns"] > 0 and reading["beside_spinner_ns"] > 0 and reading["partner_alone_ns"] > 0
    assert reading["round_trip_ns"] > 0
    assert abs(reading["slowdown"] - reading["beside_spinner_ns"] / reading["alone_ns"]) < 0.01


def test_the_round_trip_alone_runs_no_loop_and_no_spinner():
    done = probe("--cpu", "0", "--partner", "1", "--ms", "50", "--round-trip-only")
    assert done.returncode == 0, done.stderr
    reading = json.loads(done.stdout)
    assert set(reading) == {"cpu", "partner", "round_trip_ns"} and reading["round_trip_ns"] > 0


def test_the_probe_refuses_a_cpu_it_cannot_use_with_what_to_do():
    same = probe("--cpu", "1", "--partner", "1")
    assert same.returncode == 2 and "two different CPUs" in same.stderr
    absent = probe("--cpu", "0", "--partner", "999")
    assert absent.returncode == 2 and "is not one of this machine's cores" in absent.stderr
    assert probe("--version").stdout.split()[0] == "xnf-core-pair"


def test_the_study_sets_each_rounds_rates_beside_its_probe(tmp_path):
    ran = run_xnf(["bench", "run", "core-pair", "--rounds", "3", "--seconds", "0.3", "--probe-ms", "100",
                   "--out", str(tmp_path)], timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("core_pair-*.json")
    doc = json.loads(results.read_text())
    assert [r["round"] for r in doc["rounds"]] == [0, 1, 2]
    for row in doc["rounds"]:
        assert row["slowdown"] > 0 and row["round_trip_ns"] > 0 and row["yardstick_mpps"] > 0
        assert row["xdp_over_yardstick"] > 0 and row["afxdp/live_over_yardstick"] > 0
    assert set(doc["correlation"]) == {"slowdown", "round_trip_ns"}
    assert set(doc["correlation"]["round_trip_ns"]) == {"xdp", "afxdp/live"}
    too_few = run_xnf(["bench", "run", "core-pair", "--rounds", "2", "--out", str(tmp_path)])
    assert too_few.returncode != 0 and "--rounds at least 3" in too_few.stderr

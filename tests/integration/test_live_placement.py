"""The live-placement study on a real run: bursts through the live path and the yardstick, a probe between each."""

from __future__ import annotations

import json

import pytest

from lab_helpers import run_xnf


@pytest.mark.kernel("live_frames")
def test_every_burst_is_bracketed_by_two_probes(tmp_path):
    ran = run_xnf(["bench", "run", "live-placement", "--seconds", "3", "--burst", "0.2", "--out", str(tmp_path)],
                  timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("live_placement-*.json")
    doc = json.loads(results.read_text())
    bursts = doc["bursts"]
    probes = [bursts[0]["round_trip_before_ns"]] + [b["round_trip_after_ns"] for b in bursts]
    assert len(bursts) >= 6 and len(probes) == len(bursts) + 1
    assert [b["probe_before"] for b in bursts] == list(range(len(bursts)))
    assert [b["round_trip_before_ns"] for b in bursts[1:]] == [b["round_trip_after_ns"] for b in bursts[:-1]]
    assert doc["summary"]["levels"] and doc["seconds"] == 3
    for burst in bursts:
        assert burst["live_mpps"] > 0 and burst["yardstick_mpps"] > 0
        assert abs(burst["live_over_yardstick"] - burst["live_mpps"] / burst["yardstick_mpps"]) < 0.01
    assert all(p > 0 for p in probes)
    assert doc["environment"]["dut_core_kept"]


def test_a_burst_too_short_to_measure_is_refused_with_what_to_do(tmp_path):
    ran = run_xnf(["bench", "run", "live-placement", "--burst", "0.01", "--out", str(tmp_path)])
    assert ran.returncode != 0 and "--burst at least 0.1" in ran.stderr

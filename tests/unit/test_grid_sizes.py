"""A grid benchmark over frame sizes: each case's veths sized for its frames, and its rate in Gbit/s beside Mpps."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from xnf.bench import grid
from xnf.lab.measure import TrafficSpec


def test_a_case_of_jumbo_frames_gets_an_mtu_that_carries_them():
    assert grid._mtu_for(TrafficSpec(size=9000)) == 8982
    assert grid._mtu_for(TrafficSpec(size=1518)) == 1500
    assert grid._mtu_for(TrafficSpec(size=64)) == 1500
    assert grid._mtu_for(TrafficSpec()) == 1500


def test_gbit_per_second_from_the_frames_the_trials_sent():
    trials = [SimpleNamespace(frame_bytes=9000.0), SimpleNamespace(frame_bytes=None), SimpleNamespace(frame_bytes=9000.0)]
    assert grid._gbps(0.2, trials) == pytest.approx(14.4)
    assert grid._gbps(0.2, [SimpleNamespace(frame_bytes=None)]) is None


def test_the_summary_averages_gbit_per_second():
    samples = [{"case": {"nf": "router", "mode": "xdp", "size": 9000}, "repetition": r,
                "result": {"mpps": 0.2, "gbps": g}} for r, g in ((0, 14.0), (1, 16.0))]
    row, = grid._summarise(samples, [])
    assert row["mean_gbps"] == pytest.approx(15.0)

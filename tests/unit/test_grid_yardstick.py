"""A grid benchmark with a yardstick: each case's same-repetition ratio to it, and the report saying so."""

from __future__ import annotations

import pytest

from xnf.analysis import report
from xnf.bench import grid


def sample(rep: int, mpps: float, case: dict | None = None) -> dict:
    return {"case": case or {"nf": "checksum", "mode": "xdp"}, "repetition": rep, "result": {"mpps": mpps}}


def test_the_ratio_is_taken_within_each_repetition():
    # the machine runs at half speed in repetition 1: the case's rate halves and its ratio does not move
    samples = [sample(0, 3.0), sample(1, 1.5), sample(2, 2.9)]
    yardstick = [{"repetition": 0, "mpps": 4.0}, {"repetition": 1, "mpps": 2.0}, {"repetition": 2, "mpps": 4.0}]
    row, = grid._summarise(samples, yardstick)
    assert row["yardstick_ratio"] == pytest.approx(0.75)
    assert row["mean_mpps"] == pytest.approx(7.4 / 3)


def test_a_repetition_without_a_yardstick_rate_is_left_out():
    samples = [sample(0, 3.0), sample(1, 1.0)]
    row, = grid._summarise(samples, [{"repetition": 0, "mpps": 4.0}])
    assert row["yardstick_ratio"] == pytest.approx(0.75)


def test_without_a_yardstick_there_is_no_ratio_column():
    row, = grid._summarise([sample(0, 3.0)], [])
    assert "yardstick_ratio" not in row


def test_the_report_names_the_yardstick_and_its_rates():
    doc = {"yardstick": {"subject": "hand-written XDP macswap",
                         "samples": [{"repetition": 0, "mpps": 4.71}, {"repetition": 1, "mpps": 4.62}]}}
    line, = report._yardstick_lines(doc)
    assert "hand-written XDP macswap" in line and "4.71, 4.62" in line
    assert report._yardstick_lines({}) == []

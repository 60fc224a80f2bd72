"""live-placement's reading of its probes: where two levels of round trip split, and which bursts a level
brackets on both sides."""

from __future__ import annotations

import math
import random
import statistics

import pytest

from xnf.bench.studies import live_placement
from xnf.lab import placement


def test_two_levels_split_in_the_gap_between_them():
    near, far = [180, 250, 310, 270, 200], [1150, 1400, 1800]
    cut = placement.two_levels(near + far)
    assert max(near) < cut < min(far)


def test_the_split_follows_the_gap_not_the_middle_of_the_range():
    # one slow outlier among two close levels must not pull the cut above the upper level
    cut = placement.two_levels([60, 70, 80, 330, 340, 345])
    assert 80 < cut < 330


def test_the_running_sums_find_the_cut_that_the_spreads_computed_directly_find():
    rng = random.Random(7)
    for _ in range(20):
        values = [rng.lognormvariate(5.3, 0.3) for _ in range(rng.randint(2, 40))] + \
            [rng.lognormvariate(7.2, 0.2) for _ in range(rng.randint(1, 40))]
        logs = sorted(math.log(v) for v in values)

        def spread(group):
            return sum((x - statistics.fmean(group)) ** 2 for x in group)
        direct = min(range(1, len(logs)), key=lambda i: spread(logs[:i]) + spread(logs[i:]))
        assert placement._best_cut(logs)[0] == direct


def test_one_value_or_one_level_has_no_split():
    assert placement.two_levels([250.0]) is None
    assert placement.two_levels([250.0, 250.0, 250.0]) is None
    assert placement.two_levels([180, 220, 250, 300, 390]) is None   # spread, but one level


def test_a_measurement_is_at_a_level_when_both_probes_read_it():
    assert placement.level(200, 250, 700) == placement.NEAR
    assert placement.level(1200, 1500, 700) == placement.FAR
    assert placement.level(200, 1500, 700) == placement.MIXED
    assert placement.level(200, 1500, None) == placement.NEAR


def test_samples_are_labelled_over_the_whole_runs_probes():
    samples = [{"round_trip_ns": [200, 230]}, {"round_trip_ns": [1300, 1250]}, {"round_trip_ns": [240, 1400]},
               {"mpps": 5.0}]
    cut = placement.label(samples)
    assert 240 < cut < 1250
    assert [s.get("placement") for s in samples] == [placement.NEAR, placement.FAR, placement.MIXED, None]


def test_a_burst_counts_for_a_level_only_when_both_its_probes_read_it():
    probes = [200, 210, 1300, 1400, 220]
    bursts = [{"probe_before": i, "live_over_yardstick": r} for i, r in enumerate([1.0, 0.9, 0.75, 0.8])]
    levels = live_placement.bracketed(bursts, probes, cut=700)
    assert [b["probe_before"] for b in levels["near"]] == [0]
    assert [b["probe_before"] for b in levels["far"]] == [2]


def test_the_summary_sets_each_levels_ratio_beside_its_round_trip():
    probes = [200, 210, 1300, 1400, 1350, 220, 230]
    ratios = [1.02, 0.9, 0.76, 0.78, 0.95, 1.01]
    bursts = [{"probe_before": i, "live_over_yardstick": r, "yardstick_mpps": 3.6} for i, r in enumerate(ratios)]
    summary = live_placement._summary(bursts, probes)
    assert 230 < summary["cut_ns"] < 1300
    assert summary["levels"]["near"]["live_over_yardstick_median"] == pytest.approx(1.015)
    assert summary["levels"]["far"]["live_over_yardstick_median"] == pytest.approx(0.77)
    assert summary["far_share_of_probes"] == pytest.approx(3 / 7, abs=1e-3)
    assert summary["correlation_round_trip_ratio"] < -0.5


def test_keeping_one_level_keeps_the_yardsticks_unprobed_samples():
    samples = [{"subject": "nf", "round_trip_ns": [200, 230]}, {"subject": "nf", "round_trip_ns": [1300, 1250]},
               {"subject": "nf", "round_trip_ns": [240, 1400]}, {"subject": "yardstick"}]
    kept, about = placement.keep(samples, placement.NEAR, "model-check")
    assert [s.get("round_trip_ns") for s in kept] == [[200, 230], None]
    assert about["kept"] == placement.NEAR and about["measurements"] == {"near": 1, "far": 1, "mixed": 1}
    everything, _ = placement.keep(samples, "all", "model-check")
    assert everything == samples


def test_keeping_one_level_of_samples_without_probes_says_what_to_do():
    with pytest.raises(SystemExit, match="carry no round-trip probes.*--placement all"):
        placement.keep([{"mpps": 3.0}], placement.NEAR, "model-check")

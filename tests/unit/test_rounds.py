"""The benchmarks' order: every round covers every subject, and the order turns around each round."""

import statistics

from xnf.lab import rounds
from xnf.lab.rounds import beside_yardstick, interleaved


def test_rounds_alternate_direction():
    assert list(interleaved(["a", "b", "c"], 3)) == [(0, "a"), (0, "b"), (0, "c"), (1, "c"), (1, "b"), (1, "a"),
                                                      (2, "a"), (2, "b"), (2, "c")]


def test_no_rounds_no_trials():
    assert list(interleaved(["a"], 0)) == []


def test_a_value_meets_the_yardstick_of_its_own_round_and_keys():
    samples = [{"subject": "xdp", "round": 0, "load": "idle", "tps": 100},
               {"subject": "xdp", "round": 0, "load": "busy", "tps": 50},
               {"subject": "xdp", "round": 1, "load": "idle", "tps": 80},
               {"subject": "afxdp", "round": 0, "load": "idle", "tps": 90},
               {"subject": "afxdp", "round": 1, "load": "idle", "tps": 88},
               {"subject": "afxdp", "round": 2, "load": "idle", "tps": 70}]  # round 2 has no yardstick
    mine = [s for s in samples if s["subject"] == "afxdp"]
    assert beside_yardstick(samples, mine, "tps", "xdp", ("load",)) == [(90, 100), (88, 80)]


def test_rate_rows_give_medians_spreads_and_same_round_ratios():
    samples = [{"subject": s, "round": r, "mpps": m, "busy": b}
               for s, r, m, b in (("a", 0, 1.0, 0.5), ("b", 0, 4.0, 0.9), ("a", 1, 2.0, 0.7), ("b", 1, 4.0, 1.0),
                                  ("b", 2, 9.0, 1.0))]
    a, b = rounds.rate_rows(samples, "a", "of_a", ("busy",))
    assert (a["subject"], a["mpps"], a["of_a"], a["rounds"], a["busy"]) == ("a", 1.5, 1.0, 2, 0.6)
    assert b["mpps"] == 4.0 and b["of_a"] == 3.0          # round 2 has no yardstick: no ratio from it
    assert b["stdev"] == round(statistics.stdev([4.0, 4.0, 9.0]), 4)

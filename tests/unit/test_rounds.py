"""The benchmarks' order: every round covers every subject, and the order turns around each round."""

from xnf.bench.rounds import beside_yardstick, interleaved


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

"""The benchmarks' order: every round covers every subject, and the order turns around each round."""

from xnf.bench.rounds import interleaved


def test_rounds_alternate_direction():
    assert list(interleaved(["a", "b", "c"], 3)) == [(0, "a"), (0, "b"), (0, "c"), (1, "c"), (1, "b"), (1, "a"),
                                                      (2, "a"), (2, "b"), (2, "c")]


def test_no_rounds_no_trials():
    assert list(interleaved(["a"], 0)) == []

"""advisor-check's verdict: candidates judged against their own round's block, so that the machine moving between
rounds does not decide which candidate looks fastest."""

from __future__ import annotations

import statistics

import pytest

from xnf.bench.studies import advisor_check
from xnf.model import advisor


def sample(candidate: str, round_no: int, mpps: float) -> dict:
    return {"case": "c", "candidate": candidate, "round": round_no, "mpps": mpps}


def rows(samples: list[dict], predicted: dict[str, float], shortfalls: dict[str, float] | None = None) -> list[dict]:
    out = []
    for name, prediction in predicted.items():
        mine = [s for s in samples if s["candidate"] == name]
        shortfall = (shortfalls or {}).get(name, 0.05)
        out.append({"candidate": name, "predicted_mpps": prediction, "shortfall": shortfall, "spread": 0.05,
                    "counted_mpps": advisor.counted_on(prediction, shortfall),
                    "measured_mpps": statistics.median(s["mpps"] for s in mine),
                    "relative": statistics.median(s["relative"] for s in mine)})
    return out


def test_a_machine_that_slows_between_rounds_does_not_pick_the_fastest():
    # a is 10 % faster than b in every round; the machine runs at 1.0, 0.5, 0.55 of its speed, and the noise of
    # the slow rounds lands a on the slower side of b's median
    speeds = [1.0, 0.5, 0.55]
    samples = [sample("a", r, 2.2 * v) for r, v in enumerate(speeds)] + \
              [sample("b", r, 2.0 * v) for r, v in enumerate([1.0, 0.9, 0.55])]
    samples.append({"case": "c", "candidate": None, "round": 0, "mpps": 4.0})   # the yardstick stays out
    advisor_check.block_relative(samples)
    here = rows(samples, {"a": 3.0, "b": 2.5})
    judged = advisor_check.verdict("c", here, "relative")
    plain = advisor_check.verdict("c", here, "measured_mpps")
    assert plain["fastest"] == "b" and not plain["holds"]
    assert judged["fastest"] == "a" and judged["holds"] and judged["pick"] == "a"


def test_a_pick_slower_than_the_fastest_in_every_block_does_not_hold():
    samples = [sample("a", r, 1.0 * v) for r, v in enumerate([1.0, 0.6, 0.8])] + \
              [sample("b", r, 1.3 * v) for r, v in enumerate([1.0, 0.6, 0.8])]
    advisor_check.block_relative(samples)
    assert {round(s["relative"], 3) for s in samples if s["candidate"] == "b"} == {round(1.3 / 1.15, 3)}
    judged = advisor_check.verdict("c", rows(samples, {"a": 3.0, "b": 2.0}), "relative")
    assert judged["pick"] == "a" and judged["fastest"] == "b" and not judged["holds"]
    assert judged["pick_over_fastest"] == pytest.approx(1.0 / 1.3, abs=1e-3)


def test_the_pick_is_the_candidate_the_advisor_counts_on_for_most_not_the_fastest_predicted():
    # a is predicted 5 % ahead of b, but on a path that was off by 15 %; b's was off by 3 %
    samples = [sample("a", r, 1.0) for r in range(3)] + [sample("b", r, 1.2) for r in range(3)]
    advisor_check.block_relative(samples)
    judged = advisor_check.verdict("c", rows(samples, {"a": 4.2, "b": 4.0}, {"a": 0.15, "b": 0.03}), "relative")
    assert judged["pick"] == "b" and judged["holds"]


def test_each_verdict_carries_the_confidence_xnf_advise_would_have_given_its_pick():
    samples = [sample("a", r, 1.0) for r in range(3)] + [sample("b", r, 1.0) for r in range(3)]
    advisor_check.block_relative(samples)
    # rows() gives every candidate a spread of 5 %: a lead of 50 % is over twice 10 %, one of 3 % is under it
    clear, close = rows(samples, {"a": 3.0, "b": 2.0}), rows(samples, {"a": 3.0, "b": 2.9})
    assert advisor_check.verdict("c", clear, "relative")["confidence"] == "high"
    assert advisor_check.verdict("c", close, "relative")["confidence"] == "low"
    assert advisor.level_of([(3.45, 0.05), (3.0, 0.05)]) == "medium"   # a lead of 15 %: over 10 %, under twice it


def test_a_prediction_is_judged_against_the_statistic_it_predicts():
    # a best-of-rounds profile predicts 4.0 for a path whose rounds read 4.0, 3.0 and 2.0 (the host slowed two):
    # the prediction is right about the best round, and the rate counted on (less a 25 % shortfall) about the median
    judged = {"pick_predicted_mpps": 4.0, f"pick_{advisor_check.STATISTIC_MEASURED}": 4.0,
              "pick_counted_mpps": advisor.counted_on(4.0, 0.25), "pick_measured_mpps": 3.0}
    advisor_check.judge_prediction(judged)
    assert judged["pick_predicted_error"] == 0.0 and judged["predicted_within"]
    assert judged["pick_counted_error"] == pytest.approx(3.2 / 3.0 - 1, abs=1e-4) and judged["counted_within"]
    judged[f"pick_{advisor_check.STATISTIC_MEASURED}"] = 3.0
    advisor_check.judge_prediction(judged)
    assert judged["pick_predicted_error"] == pytest.approx(1 / 3, abs=1e-4) and not judged["predicted_within"]

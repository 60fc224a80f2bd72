"""Which of a subject's rounds the cost model takes as its rate (python/xnf/model/rate_statistic.py): the fit takes
the statistic asked for and the profile keeps it; model-check, the yardstick's drift and a profile read back take the
profile's."""

from __future__ import annotations

import json
from dataclasses import replace

import pytest

from xnf.bench.studies import model_check
from xnf.model import profile_fit
from xnf.errors import XnfError
from xnf.model import check_rounds, rate_statistic
from xnf.model.profile import from_dict

SENDER_NS = 200.0
XDP_NS = {"cycles-0": 10.0, "cycles-250": 110.0, "cycles-750": 310.0, "drop": 5.0}
ENV = {"started_utc": "2026-11-26T06:00:00Z"}
# Three rounds: the host left the cores alone in one and slowed the path by a quarter in two.
SLOWED = (1.0, 0.75, 0.75)


def fit_samples() -> list[dict]:
    """Rounds of XDP measurements on a path that takes exactly 200 ns per frame plus the NF's XDP time, when the
    host leaves it alone."""
    out = []
    for rnd, speed in enumerate(SLOWED):
        out.append({"point": "yardstick", "path": None, "mpps": 4.0 * speed, "round": rnd})
        for point, xdp_ns in XDP_NS.items():
            out.append({"point": point, "path": "xdp", "round": rnd,
                        "mpps": speed * 1e3 / (SENDER_NS + xdp_ns - XDP_NS["cycles-0"]),
                        "xdp_ns": xdp_ns, "native_ns": xdp_ns, "generator_ns_per_packet": 100.0})
    return out


@pytest.mark.parametrize("name,expected", [(rate_statistic.BEST, 5.0), (rate_statistic.MEDIAN, 3.0)])
def test_the_statistic_takes_the_highest_or_the_median(name, expected):
    assert rate_statistic.of([3.0, 5.0, 2.0], name) == expected


def test_the_best_of_the_rounds_fits_the_path_the_host_left_alone():
    profile, table = profile_fit.fit_profile(fit_samples(), ["xdp"], ENV, statistic=rate_statistic.BEST)
    assert profile.statistic == rate_statistic.BEST and "best of the rounds" in profile.description
    assert profile.paths["xdp"].roles["sender"].fixed_ns["forward"] == pytest.approx(SENDER_NS, rel=1e-3)
    assert profile.yardsticks["hand_macswap_mpps"] == pytest.approx(4.0)


def test_the_median_of_the_rounds_fits_the_slowed_path():
    profile, _ = profile_fit.fit_profile(fit_samples(), ["xdp"], ENV, statistic=rate_statistic.MEDIAN)
    assert profile.statistic == rate_statistic.MEDIAN
    assert profile.paths["xdp"].roles["sender"].fixed_ns["forward"] == pytest.approx(SENDER_NS / 0.75, rel=1e-3)
    assert profile.yardsticks["hand_macswap_mpps"] == pytest.approx(3.0)


def check_samples(rates: list[float]) -> list[dict]:
    return [{"case": "lb", "path": "xdp", "mpps": r, "round": i, "native_ns": 60.0, "xdp_ns": 60.0,
             "verdicts": {"tx": 1024}} for i, r in enumerate(rates)] + \
           [{"case": "yardstick", "path": None, "mpps": 4.0 * s, "round": i} for i, s in enumerate(SLOWED)]


@pytest.mark.parametrize("name", rate_statistic.CHOICES)
def test_model_check_judges_the_rounds_as_the_profile_was_fitted(name):
    profile, _ = profile_fit.fit_profile(fit_samples(), ["xdp"], ENV, statistic=name)
    samples = check_samples([2.0, 4.0, 3.0])
    row, = model_check.summarise([s for s in samples if s["path"]], profile)[0]
    measured = 4.0 if name == rate_statistic.BEST else 3.0
    assert row["measured_mpps"] == measured and row["measured_median_mpps"] == 3.0
    assert row["error"] == pytest.approx(row["predicted_mpps"] / measured - 1, abs=1e-3)
    drift = check_rounds.drift(samples, profile)
    assert drift["statistic"] == name and drift["ratio"] == pytest.approx(1.0)


def test_a_profile_keeps_its_statistic_and_an_older_one_reads_as_medians():
    profile, _ = profile_fit.fit_profile(fit_samples(), ["xdp"], ENV, statistic=rate_statistic.BEST)
    doc = json.loads(profile.to_json())
    assert from_dict(doc).statistic == rate_statistic.BEST
    del doc["statistic"]
    assert from_dict(doc).statistic == rate_statistic.MEDIAN


def test_a_profile_with_an_unknown_statistic_is_refused():
    profile, _ = profile_fit.fit_profile(fit_samples(), ["xdp"], ENV)
    doc = json.loads(replace(profile, statistic="mean").to_json())
    with pytest.raises(XnfError, match="statistic must be one of best, median"):
        from_dict(doc)


def test_the_advisors_shortfall_counts_what_the_path_typically_did():
    # judged on the best rounds the path is on its predictions; its median rounds fell a fifth short
    rows = [{"case": f"case-{i}", "path": "afxdp/live", "predicted_mpps": 4.0, "measured_mpps": 4.0,
             "measured_median_mpps": 3.2, "error": 0.0} for i in range(4)]
    checked = model_check.validation(rows)
    assert checked["median_error"] == 0.0 and checked["within_10_percent"] == 4
    assert checked["paths"]["afxdp/live"]["shortfall"] == pytest.approx(0.25)

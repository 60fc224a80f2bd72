"""Rates between two stats answers: the instance's own uptime is the interval, a restart is noticed."""

from __future__ import annotations

from xnf import live_rates


def stats(uptime: float, tx: int, drop: int, hits: int, worker_rx: int) -> dict:
    return {"name": "fw", "nf": "firewall", "mode": "afxdp", "uptime_s": uptime,
            "verdicts": {"tx": {"packets": tx, "bytes": tx * 60}, "drop": {"packets": drop, "bytes": drop * 60},
                         "malformed": {"packets": 7, "bytes": 420}},
            "counters": {"rule_drop": hits},
            "workers": [{"worker": 0, "tx_path": {"eth0": "live"}, "rx_packets": worker_rx,
                         "verdicts": {"tx": tx, "drop": drop}}]}


def test_rates_are_differences_over_the_instances_own_interval():
    r = live_rates.rates(stats(10.0, 1000, 100, 100, 1100), stats(12.0, 5000, 300, 300, 5300))
    assert r["seconds"] == 2.0
    assert r["verdicts"]["tx"] == {"pps": 2000.0, "bps": 8 * 2000.0 * 60}
    assert r["verdicts"]["drop"]["pps"] == 100.0 and r["counters"]["rule_drop"] == 100.0
    assert r["workers"][0]["rx_packets"] == 2100.0 and r["workers"][0]["verdicts"]["tx"] == 2000.0
    assert "tx_path" not in r["workers"][0]
    assert live_rates.handled_pps(r) == 2100.0  # malformed is a reason, not a verdict


def test_a_restarted_instance_is_not_a_negative_rate():
    assert live_rates.restarted(stats(50.0, 9, 0, 0, 9), stats(1.0, 2, 0, 0, 2))
    assert not live_rates.restarted(stats(1.0, 2, 0, 0, 2), stats(2.0, 9, 0, 0, 9))

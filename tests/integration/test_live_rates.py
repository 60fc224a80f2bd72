"""`xnf stats --interval` and `xnf top` while paced traffic flows: the rates they print are the generator's."""

from __future__ import annotations

import json

import pytest

from lab_helpers import run_xnf
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

RATE = 50000


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_stats_interval_and_top_show_the_offered_rate(mode, pair):
    nf = NfInstance.start(pair, "macswap", mode, pair.dut_ifaces)
    sender = Generator(pair).spawn("--rate", str(RATE), "--duration", "6")
    try:
        stats = run_xnf(["stats", "--name", nf.name, "--interval", "1", "--count", "2", "--json"])
        top = run_xnf(["top", "--interval", "1", "--count", "1", "--json"])
    finally:
        sender.wait(timeout=30)
    assert stats.returncode == 0, stats.stderr
    intervals = [json.loads(line) for line in stats.stdout.splitlines()]
    assert len(intervals) == 2
    for r in intervals:
        assert 0.9 < r["seconds"] < 1.5
        assert 0.5 * RATE < r["verdicts"]["tx"]["pps"] < 1.5 * RATE, r
        assert r["verdicts"]["drop"]["pps"] == 0
        assert r["verdicts"]["tx"]["bps"] == pytest.approx(8 * 60 * r["verdicts"]["tx"]["pps"], rel=0.01)
        if mode == "afxdp":
            assert 0.5 * RATE < r["workers"][0]["rx_packets"] < 1.5 * RATE
    assert top.returncode == 0, top.stderr
    [mine] = [r for r in json.loads(top.stdout) if r["name"] == nf.name]
    assert mine["mode"] == mode and 0.5 * RATE < mine["verdicts"]["tx"]["pps"] < 1.5 * RATE
    assert nf.stop() == 0


def test_live_views_refuse_a_silly_interval():
    out = run_xnf(["top", "--interval", "0", "--count", "1"])
    assert out.returncode == 2 and "'0' is not a number of seconds from 0.1" in out.stderr
    for silly in ("nan", "inf", "1e300", "-1"):
        out = run_xnf(["stats", "--interval", silly])
        assert out.returncode == 2 and "is not a number of seconds" in out.stderr and "Traceback" not in out.stderr
    out = run_xnf(["top", "--count", "0"])
    assert out.returncode == 2 and "'0' is not a whole number from 1" in out.stderr

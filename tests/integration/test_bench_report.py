"""A benchmark run end to end (search, latency, results files) and its report."""

from __future__ import annotations

import csv
import json

from lab_helpers import run_xnf


def test_smoke_benchmark_and_report(tmp_path):
    result = run_xnf(["bench", "run", "smoke", "--out", str(tmp_path)], timeout=600)
    assert result.returncode == 0, result.stderr
    [results] = list(tmp_path.glob("smoke-*.json"))
    doc = json.loads(results.read_text())
    assert {"kernel", "cpu_model", "tsc_hz", "commit", "command_line"} <= set(doc["environment"])
    assert len(doc["samples"]) == 4  # 2 sizes x 2 repetitions, interleaved
    assert [s["case"]["size"] for s in doc["samples"]] == [64, 128, 128, 64]
    for sample in doc["samples"]:
        assert sample["result"]["mpps"] > 0
        assert set(sample["result"]["latency_at"]) == {"0.1", "0.5", "0.9"}
        for trial in sample["result"]["latency_at"].values():
            assert trial["lost"] == 0 and trial["latency_ns"]["samples"] == trial["sent"]
    rows = list(csv.DictReader(results.with_suffix(".csv").open()))
    assert {r["size"] for r in rows} == {"64", "128"}

    report = run_xnf(["report", str(results), "--out", str(tmp_path / "report")])
    assert report.returncode == 0, report.stderr
    page = (tmp_path / "report" / "report.md").read_text()
    for figure in ("throughput.png", "cpu.png", "latency.png"):
        assert f"]({figure})" in page
        assert (tmp_path / "report" / figure).stat().st_size > 5000
    assert "| macswap xdp size=64 | 90% |" in page


def test_bench_and_report_errors(tmp_path):
    unknown = run_xnf(["bench", "run", "nosuch"])
    assert unknown.returncode == 1 and "unknown benchmark 'nosuch'" in unknown.stderr
    bad = tmp_path / "bad.json"
    bad.write_text("{}")
    result = run_xnf(["report", str(bad)])
    assert result.returncode == 1 and "not a results file" in result.stderr and "Traceback" not in result.stderr
    missing = run_xnf(["report", str(tmp_path / "none.json")])
    assert missing.returncode == 1 and "no results file" in missing.stderr

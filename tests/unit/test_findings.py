"""The reproduction's judges and page on synthetic results whose verdicts are known, and how the newest results of
each benchmark are found."""

from __future__ import annotations

import json

from xnf.analysis import findings, reproduce
from xnf.analysis.findings import HOLDS, NOT, PARTLY, UNKNOWN


def fit_doc(rates: dict[tuple[str, str], float], user_paths=("afxdp/live",), fits=None) -> dict:
    """A model-fit results document: one sample per (point, path) rate."""
    paths = {"xdp": {"task_side": "xdp", "task_scale": 1.0, "fit": fits or {"rms_error": 0.02, "max_error": 0.04}}}
    paths.update({k: {"task_side": "native", "task_scale": 1.1, "fit": fits or {"rms_error": 0.03, "max_error": 0.05}}
                  for k in user_paths})
    return {"benchmark": "model_fit", "profile": {"paths": paths},
            "samples": [{"point": p, "path": k, "mpps": v, "round": 0} for (p, k), v in rates.items()]}


def test_drop_belongs_in_xdp_when_xdp_drops_faster():
    doc = fit_doc({("drop", "xdp"): 6.0, ("drop", "afxdp/live"): 2.0})
    assert findings.drop_in_xdp({"model-fit": doc}).outcome == HOLDS
    doc = fit_doc({("drop", "xdp"): 2.0, ("drop", "afxdp/live"): 3.0})
    assert findings.drop_in_xdp({"model-fit": doc}).outcome == NOT


def test_user_space_wins_needs_a_clear_lead_at_both_points():
    rates = {("cycles-0", "xdp"): 3.0, ("cycles-0", "afxdp/live"): 3.6,
             ("memory-256M", "xdp"): 2.0, ("memory-256M", "afxdp/live"): 2.5, ("memory-16M", "xdp"): 1.0}
    assert findings.user_space_pass_through({"model-fit": fit_doc(rates)}).outcome == HOLDS
    rates[("cycles-0", "afxdp/live")] = 3.05          # a tie at one point, a win at the other
    assert findings.user_space_pass_through({"model-fit": fit_doc(rates)}).outcome == PARTLY
    rates[("memory-256M", "afxdp/live")] = 1.0
    rates[("cycles-0", "afxdp/live")] = 2.0
    assert findings.user_space_pass_through({"model-fit": fit_doc(rates)}).outcome == NOT


def test_the_gap_narrows_when_the_ratio_moves_towards_one():
    rates = {("cycles-0", "xdp"): 4.0, ("cycles-0", "afxdp/live"): 2.0,
             ("cycles-5000", "xdp"): 0.5, ("cycles-5000", "afxdp/live"): 0.45}
    verdict = findings.gap_narrows({"model-fit": fit_doc(rates)})
    assert verdict.outcome == HOLDS and verdict.series["lines"]["afxdp/live"][0] == [0, 5000]
    rates[("cycles-5000", "afxdp/live")] = 0.1
    assert findings.gap_narrows({"model-fit": fit_doc(rates)}).outcome == NOT


def test_cio_is_constant_only_where_the_line_fits():
    good = fit_doc({}, fits={"rms_error": 0.03, "max_error": 0.05, "cycles": {"rms_error": 0.03, "max_error": 0.05}})
    assert findings.cio_constant({"model-fit": good}).outcome == HOLDS
    bad = fit_doc({}, fits={"rms_error": 0.2, "max_error": 0.4, "cycles": {"rms_error": 0.2, "max_error": 0.4}})
    assert findings.cio_constant({"model-fit": bad}).outcome == NOT


def grid_doc(x: str, points: dict[tuple[str, object], list[float]], latency_us=None) -> dict:
    samples = []
    for (mode, value), rates in points.items():
        for rate in rates:
            result = {"mpps": rate}
            if latency_us:
                result["latency_at"] = {"0.5": {"latency_ns": {"p50": latency_us[value] * 1e3}}}
            samples.append({"case": {"mode": mode, x: value}, "result": result})
    return {"benchmark": {"name": "grid"}, "samples": samples}


def test_latency_grows_with_the_batch():
    doc = grid_doc("nf_batch", {("afxdp", b): [1.0] for b in (8, 64, 256)}, latency_us={8: 10, 64: 14, 256: 30})
    verdict = findings.batch_latency({"batch-latency": doc})
    assert verdict.outcome == HOLDS and verdict.rows[0] == {"batch": 8, "p50_latency_us": 10.0}
    flat = grid_doc("nf_batch", {("afxdp", b): [1.0] for b in (8, 64, 256)}, latency_us={8: 30, 64: 20, 256: 10})
    assert findings.batch_latency({"batch-latency": flat}).outcome == NOT


def test_grid_effects_take_the_median_of_repetitions_per_path():
    doc = grid_doc("acl_entries", {("xdp", 10): [4.0, 4.2, 3.8], ("xdp", 1000000): [1.0, 1.2, 9.0]})
    verdict = findings.table_size({"firewall-acl": doc})
    assert verdict.outcome == HOLDS and "0.30x" in verdict.why
    queues = grid_doc("gen_cores", {("xdp", (0,)): [3.0], ("xdp", (0, 1)): [3.1]})
    assert findings.queues({"queues": queues}).outcome == NOT


def test_baselines_are_judged_from_their_ratios():
    stack = {"summary": [{"subject": "linux", "mpps": 0.4, "ratio_to_linux": 1.0},
                         {"subject": "xdp", "mpps": 3.6, "ratio_to_linux": 9.0}]}
    assert findings.frameworks_vs_linux({"stack-forwarding": stack}).outcome == HOLDS
    packet = {"summary": [{"subject": "af_packet-v3", "per_core_mpps": 1.1}, {"subject": "xdp", "per_core_mpps": 6},
                          {"subject": "af_xdp", "per_core_mpps": 3}]}
    assert findings.af_packet_per_core({"af-packet": packet}).outcome == HOLDS


def upf_doc(ratios: dict[str, dict[str, float]], placement: str = "lab") -> dict:
    """An upf-paths results document: per case, each path's ratio to xdp."""
    rows = [{"case": case, "path": path, "mpps": ratio, "ratio_to_xdp": ratio}
            for case, paths in ratios.items() for path, ratio in paths.items()]
    return {"benchmark": "upf_paths", "placement": placement, "summary": rows}


def test_the_tunnel_work_wins_in_user_space_only_with_a_clear_lead_in_every_case():
    ratios = {"uplink 10": {"xdp": 1.0, "afxdp": 1.4, "hybrid": 1.0}, "downlink 10": {"xdp": 1.0, "afxdp-poll": 1.3}}
    assert findings.tunnel_work({"upf-paths": upf_doc(ratios)}).outcome == HOLDS
    ratios["downlink 10"]["afxdp-poll"] = 1.02         # a tie
    assert findings.tunnel_work({"upf-paths": upf_doc(ratios)}).outcome == PARTLY
    ratios["uplink 10"]["afxdp"] = 0.3
    assert findings.tunnel_work({"upf-paths": upf_doc(ratios)}).outcome == NOT
    assert findings.tunnel_work({"upf-paths": upf_doc(ratios, "one-core")}).outcome == UNKNOWN


def test_the_page_names_every_finding_and_says_what_is_missing(tmp_path):
    results = tmp_path / "results"
    results.mkdir()
    older = fit_doc({("drop", "xdp"): 1.0, ("drop", "afxdp/live"): 5.0})
    newer = fit_doc({("drop", "xdp"): 6.0, ("drop", "afxdp/live"): 2.0})
    (results / "model_fit-20260101-000000.json").write_text(json.dumps(older))
    (results / "model_fit-20260102-000000.json").write_text(json.dumps(newer))
    (results / "profile-20260102-000000.json").write_text(json.dumps({"xnf_profile": 1}))
    found = reproduce.newest_results([results])
    assert found["model-fit"][0].name == "model_fit-20260102-000000.json"
    page = reproduce.reproduce([results], tmp_path / "out", only=["drop-in-xdp", "batch-latency"])
    text = page.read_text()
    assert "**Verdict: holds.**" in text and "drop-in-xdp.png" in text
    assert f"**Verdict: {UNKNOWN}.** no results of batch-latency" in text
    assert (tmp_path / "out" / "drop-in-xdp.png").exists()


def test_the_command_writes_the_page_and_refuses_reproduce_options_elsewhere(tmp_path, capsys):
    from xnf.commands import main as cli

    results = tmp_path / "results"
    results.mkdir()
    (results / "model_fit-20260102-000000.json").write_text(json.dumps(
        fit_doc({("drop", "xdp"): 6.0, ("drop", "afxdp/live"): 2.0})))
    out = tmp_path / "page"
    assert cli.main(["report", "reproduce", "--results-dir", str(results), "--out", str(out),
                     "--only", "drop-in-xdp,gap-narrows"]) == 0
    text = (out / "reproduce.md").read_text()
    assert "## drop-in-xdp" in text and "## gap-narrows" in text and "## batch-latency" not in text
    assert cli.main(["report", "reproduce", "--results-dir", str(results), "--out", str(out), "--only", "nope"]) == 1
    assert "unknown finding" in capsys.readouterr().err
    assert cli.main(["report", str(results / "model_fit-20260102-000000.json"), "--only", "drop-in-xdp"]) == 1

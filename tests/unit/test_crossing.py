"""Where two modes cross: the winner per value, ties inside the spread, and the extrapolated meeting point."""

from __future__ import annotations

from xnf.analysis import crossing


def row(mode: str, value: int, mpps: float, cost: float, stdev: float = 0.01) -> dict:
    return {"nf": "x", "mode": mode, "n": value, "mean_mpps": mpps, "stdev_mpps": stdev, "dut_ns_per_packet": cost}


def test_winner_changes_between_the_values_it_is_measured_at():
    summary = [row("xdp", 1, 3.0, 300), row("afxdp", 1, 1.0, 1000), row("xdp", 2, 1.5, 600, stdev=0.05),
               row("afxdp", 2, 1.45, 700), row("xdp", 3, 0.5, 2000), row("afxdp", 3, 0.9, 1100)]
    result = crossing.compare(summary, "n")
    assert [r["winner"] for r in result["table"]] == ["xdp", "tie", "afxdp"]   # 1.5 vs 1.45 is within spread
    assert result["crossings"] == [{"between": (1, 3), "from": "xdp", "to": "afxdp"}]
    assert "xdp wins below, afxdp from between n = 1 and 3" in crossing.sentence(result)


def test_cost_lines_meet_where_their_extrapolations_do():
    # xdp: 100 + 50 n, afxdp: 1000 + 20 n  ->  meet at n = 30
    summary = [row(m, n, 1.0, (100 + 50 * n) if m == "xdp" else (1000 + 20 * n)) for m in ("xdp", "afxdp")
               for n in (0, 5, 10)]
    result = crossing.compare(summary, "n")
    assert abs(result["cost_crossing"][0]["meets_at"] - 30) < 1e-9
    assert "would meet near n = 30" in crossing.cost_sentence(result)


def test_each_transmit_path_is_its_own_subject_measured_against_the_kernel():
    # xdp: 100 + 50 n; afxdp on the xsk ring: 1000 + 20 n (meets at 30); live: 400 + 20 n (meets at 10)
    base = {"xdp": 100, "xsk": 1000, "live": 400}
    summary = [dict(row("xdp" if p == "xdp" else "afxdp", n, 1.0, base[p] + (50 if p == "xdp" else 20) * n),
                    **({} if p == "xdp" else {"tx_path": p})) for p in base for n in (0, 5, 10, 20)]
    result = crossing.compare(summary, "n")
    assert result["modes"] == ["afxdp live", "afxdp xsk", "xdp"]
    meets = {" / ".join(cc["slopes_ns"]): cc["meets_at"] for cc in result["cost_crossing"]}
    assert abs(meets["xdp / afxdp live"] - 10) < 1e-9 and abs(meets["xdp / afxdp xsk"] - 30) < 1e-9


def test_no_crossing_is_said_plainly():
    summary = [row(m, n, 3.0 if m == "xdp" else 0.5, 100) for m in ("xdp", "afxdp") for n in (1, 2)]
    assert crossing.sentence(crossing.compare(summary, "n")).startswith("No crossing over the measured range: xdp")

"""Where XDP and AF_XDP cross: which mode wins at each value of the swept parameter, and where that changes.

Only means are compared, and a difference inside both standard deviations is called a tie: a crossing is
reported where the winner changes between two measured values (the true point lies between them). A mode
measured with more than one transmit path (--tx-path) counts as one subject per path ("afxdp live").
"""

from __future__ import annotations

import math

KERNEL_MODE = "xdp"


def subject(row: dict) -> str:
    """What a summary row measured: its mode, with the transmit path when the benchmark chose one."""
    return f"{row['mode']} {row['tx_path']}" if row.get("tx_path") else row["mode"]


def _winner(by_mode: dict[str, dict]) -> str:
    ranked = sorted(by_mode.items(), key=lambda kv: kv[1]["mean_mpps"], reverse=True)
    (first, a), (_, b) = ranked[0], ranked[1]
    if a["mean_mpps"] - b["mean_mpps"] <= a["stdev_mpps"] + b["stdev_mpps"]:
        return "tie"
    return first


def compare(summary: list[dict], param: str) -> dict:
    """Per value of param: each mode's Mpps, the winner; and the crossings between neighbouring values."""
    modes = sorted({subject(row) for row in summary})
    values = sorted({row[param] for row in summary})
    table = []
    for value in values:
        by_mode = {subject(row): row for row in summary if row[param] == value}
        if len(by_mode) < 2:
            continue
        table.append({param: value, **{f"{m} Mpps": by_mode[m]["mean_mpps"] for m in modes if m in by_mode},
                      **{f"{m} Gbit/s": by_mode[m].get("mean_gbps") for m in modes if m in by_mode},
                      **{f"{m} ns/pkt": by_mode[m].get("dut_ns_per_packet") for m in modes if m in by_mode},
                      "winner": _winner(by_mode)})
    crossings = []
    decided = [row for row in table if row["winner"] != "tie"]
    for before, after in zip(decided, decided[1:]):
        if before["winner"] != after["winner"]:
            crossings.append({"between": (before[param], after[param]), "from": before["winner"],
                              "to": after["winner"]})
    return {"param": param, "modes": modes, "table": table, "crossings": crossings,
            "cost_crossing": _cost_crossing(summary, param, modes),
            "capacity_crossing": _capacity_crossing(summary, param, modes)}


def _fit(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """Least-squares line (intercept, slope) through (x, y) points."""
    if len(points) < 2:
        return None
    n = len(points)
    mx, my = sum(x for x, _ in points) / n, sum(y for _, y in points) / n
    sxx = sum((x - mx) ** 2 for x, _ in points)
    if sxx == 0:
        return None
    slope = sum((x - mx) * (y - my) for x, y in points) / sxx
    return my - slope * mx, slope


def _line_crossings(summary: list[dict], param: str, modes: list[str], metric) -> list[dict]:
    """Each other subject's line against the kernel mode's (all pairs when there is no kernel mode)."""
    if KERNEL_MODE in modes:
        pairs = [[KERNEL_MODE, m] for m in modes if m != KERNEL_MODE]
    else:
        pairs = [[a, b] for i, a in enumerate(modes) for b in modes[i + 1:]]
    found = [_line_crossing(summary, param, pair, metric) for pair in pairs]
    return [f for f in found if f]


def _line_crossing(summary: list[dict], param: str, modes: list[str], metric) -> dict | None:
    """Where metric(row) of two subjects would meet, from a straight line through each one's values (against
    log2 of the parameter when it spans more than two decades). meets_at is None when the lines do not meet
    above the smallest measured value."""
    values = [row[param] for row in summary if isinstance(row[param], (int, float))]
    if len(modes) != 2 or not values or min(values) < 0:
        return None
    log = min(values) > 0 and max(values) / min(values) > 100
    scale = (lambda v: math.log2(v)) if log else (lambda v: float(v))
    fits = {}
    for mode in modes:
        points = [(scale(r[param]), metric(r)) for r in summary if subject(r) == mode and metric(r)]
        fits[mode] = _fit(points)
    if not fits[modes[0]] or not fits[modes[1]] or fits[modes[0]][1] == fits[modes[1]][1]:
        return None
    (a1, b1), (a2, b2) = fits[modes[0]], fits[modes[1]]
    x = (a2 - a1) / (b1 - b2)
    low, high = scale(min(values)), scale(max(values))
    # A straight line says little far from its points: beyond ten more doublings (or ten more spans) it is "far".
    far = x > high + (10 if log else 10 * (high - low))
    return {"slopes_ns": {modes[0]: b1, modes[1]: b2}, "per": f"doubling of {param}" if log else param,
            "meets_at": None if x <= low or far else (2 ** x if log else x), "far": far}


def _cost_crossing(summary: list[dict], param: str, modes: list[str]) -> list[dict]:
    """The DUT's CPU time per packet."""
    return _line_crossings(summary, param, modes, lambda r: r.get("dut_ns_per_packet"))


def _capacity_crossing(summary: list[dict], param: str, modes: list[str]) -> list[dict]:
    """Time per packet at the measured capacity (1 / throughput): where the throughput curves would cross."""
    return _line_crossings(summary, param, modes, lambda r: 1e3 / r["mean_mpps"] if r.get("mean_mpps") else None)


def _line_sentence(cc: dict | None, param: str, what: str) -> str:
    if not cc:
        return ""
    slopes = ", ".join(f"{m} {s:+.1f} ns" for m, s in cc["slopes_ns"].items())
    if cc.get("far"):
        meet = "the lines would meet only far beyond the measured range, where a straight line predicts nothing"
    elif cc["meets_at"]:
        meet = f"the lines would meet near {param} = {cc['meets_at']:.3g}"
    else:
        meet = "the lines do not meet above the measured range"
    return f"{what} added per {cc['per']}: {slopes}; {meet} (a straight-line extrapolation)."


def cost_sentence(result: dict) -> str:
    """What the lines say: each subject's added ns per packet, and where they would meet the kernel's."""
    sentences = [_line_sentence(cc, result["param"], "Time per packet at capacity (1/throughput)")
                 for cc in result.get("capacity_crossing") or []]
    sentences += [_line_sentence(cc, result["param"], "DUT CPU time per packet")
                  for cc in result.get("cost_crossing") or []]
    return " ".join(filter(None, sentences))


def sentence(result: dict) -> str:
    """One line for a report: where the winner changes, or that it never does."""
    param = result["param"]
    if not result["table"]:
        return "Fewer than two modes measured: nothing to compare."
    if result["crossings"]:
        parts = [f"{c['from']} wins below, {c['to']} from between {param} = {c['between'][0]} and "
                 f"{c['between'][1]}" for c in result["crossings"]]
        return "; ".join(parts) + "."
    winners = {row["winner"] for row in result["table"]}
    if winners == {"tie"}:
        return f"No mode is ahead by more than the spread of the samples at any {param}."
    winner = (winners - {"tie"}).pop() if len(winners - {"tie"}) == 1 else "neither"
    return f"No crossing over the measured range: {winner} is ahead (or tied) at every {param}."

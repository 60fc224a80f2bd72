"""The figures of a report, drawn from a results file with matplotlib (PNG, no display needed)."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xnf.analysis.crossing import subject  # noqa: E402
from xnf.bench.figures.figure_file import finish  # noqa: E402

CASE_KEYS = ("nf", "mode", "tx_path")
# Keys of a summary row that are results, not parameters of the case.
RESULT_KEYS = ("mean_mpps", "stdev_mpps", "mean_gbps", "ndr_mean_mpps", "samples", "dut_ns_per_packet",
               "generator_limited", "built_mpps", "yardstick_ratio")


def swept_parameter(summary: list[dict]) -> str | None:
    """The traffic parameter that takes more than one value, if any (the x axis)."""
    for key in summary[0] if summary else []:
        if key in CASE_KEYS or key in RESULT_KEYS:
            continue
        if len({str(row[key]) for row in summary}) > 1:
            return key
    return None


def label(row: dict, param: str | None = None) -> str:
    extra = [f"{k}={row[k]}" for k in row if k not in CASE_KEYS and k != param and k in _traffic_keys(row)]
    return " ".join([row["nf"], subject(row), *extra])


def _traffic_keys(row: dict) -> set[str]:
    return {k for k in row if k not in (*RESULT_KEYS, *CASE_KEYS)}


def throughput(summary: list[dict], path: Path) -> Path:
    param = swept_parameter(summary)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    if param:
        lines: dict[str, list[dict]] = {}
        for row in summary:
            lines.setdefault(label(row, param), []).append(row)
        for name, rows in sorted(lines.items()):
            rows.sort(key=lambda r: str(r[param]) if isinstance(r[param], (list, tuple)) else r[param])
            xs = [str(r[param]) for r in rows]
            ax.errorbar(xs, [r["mean_mpps"] for r in rows], yerr=[r["stdev_mpps"] for r in rows],
                        marker="o", capsize=3, label=name)
        ax.set_xlabel(param)
        ax.legend(fontsize=8)
    else:
        names = [label(r) for r in summary]
        ax.bar(names, [r["mean_mpps"] for r in summary], yerr=[r["stdev_mpps"] for r in summary], capsize=3)
        ax.tick_params(axis="x", rotation=30, labelsize=8)
    ax.set_ylabel("Mpps (mean ± stdev)")
    ax.set_title("Throughput")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def cost(summary: list[dict], path: Path) -> Path | None:
    """The DUT's CPU time per packet against the swept parameter, one line per NF and mode."""
    param = swept_parameter(summary)
    rows = [r for r in summary if r.get("dut_ns_per_packet")]
    if not param or not rows:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    lines: dict[str, list[dict]] = {}
    for row in rows:
        lines.setdefault(label(row, param), []).append(row)
    for name, group in sorted(lines.items()):
        group.sort(key=lambda r: r[param])
        ax.plot([str(r[param]) for r in group], [r["dut_ns_per_packet"] for r in group], marker="o", label=name)
    ax.set_xlabel(param)
    ax.set_ylabel("DUT CPU ns per packet")
    ax.set_yscale("log")
    return finish(fig, ax, "Cost per packet (at the highest loss-free rate)", path)


def _cpu_of(sample: dict) -> dict | None:
    result = sample["result"]
    if "trial" in result:
        return result["trial"]["cpu"]
    top = result.get("latency_at", {}).get("0.9")
    return top["cpu"] if top else None


def cpu_split(samples: list[dict], path: Path) -> Path:
    """Stacked seconds per core and kind, for each case's busiest measured trial."""
    seen: dict[str, dict] = {}
    for s in samples:
        cpu = _cpu_of(s)
        if cpu:
            seen.setdefault(label(s["case"]), cpu)
    fig, ax = plt.subplots(figsize=(8, 4.5))
    names = list(seen)
    bottoms = [0.0] * len(names)
    for core in sorted({int(c) for cpu in seen.values() for c in cpu}):
        for kind in ("user", "system", "softirq"):
            values = [seen[n].get(str(core), seen[n].get(core, {})).get(kind, 0.0) for n in names]
            ax.bar(names, values, bottom=bottoms, label=f"core {core} {kind}")
            bottoms = [b + v for b, v in zip(bottoms, values)]
    ax.set_ylabel("CPU seconds in the trial")
    ax.set_title("Who did the work (trial at 90 % of throughput, or the unpaced trial)")
    ax.tick_params(axis="x", rotation=30, labelsize=8)
    ax.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


def latency_cdf(samples: list[dict], path: Path, fraction: str = "0.5") -> Path | None:
    curves = {}
    for s in samples:
        trial = s["result"].get("latency_at", {}).get(fraction)
        if trial and trial["latency_ns"].get("histogram"):
            curves.setdefault(label(s["case"]), trial["latency_ns"]["histogram"])
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for name, hist in curves.items():
        total = sum(count for _, count in hist)
        xs, ys, acc = [], [], 0
        for floor_ns, count in hist:
            acc += count
            xs.append(floor_ns / 1000)
            ys.append(acc / total)
        ax.step(xs, ys, where="post", label=name)
    ax.set_xscale("log")
    ax.set_xlabel("one-way latency (µs, bucket floor)")
    ax.set_ylabel("fraction of frames")
    return finish(fig, ax, f"Latency CDF at {float(fraction):.0%} of throughput", path)

"""The figures of the traffic-mix studies (docs/traffic-mixes.md), drawn from their summaries: legitimate
throughput against drop share, memcached per mode, and the dispatcher's cost."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xnf.analysis.plots import finish  # noqa: E402


def legit_vs_drop_share(summary: list[dict], path: Path) -> Path:
    """One line per subject: the legitimate class's rate (Mpps) against the share of frames to drop."""
    fig, ax = plt.subplots(figsize=(8, 4.5))
    for subject in dict.fromkeys(row["subject"] for row in summary):
        rows = sorted((r for r in summary if r["subject"] == subject), key=lambda r: r["drop_share"])
        ax.plot([r["drop_share"] * 100 for r in rows], [r["legit_mpps"] for r in rows], marker="o", label=subject)
    ax.set_xlabel("share of frames dropped by the firewall's rules (%)")
    ax.set_ylabel("legitimate frames forwarded (Mpps)")
    ax.set_ylim(bottom=0)
    return finish(fig, ax, "Legitimate throughput under a growing attack (firewall, veth, 64 B)", path)


def memcached_by_mode(summary: list[dict], path: Path) -> Path:
    """Requests/s and p99 latency per subject, idle and under pass-through load, side by side."""
    subjects = list(dict.fromkeys(r["subject"] for r in summary))
    loads = list(dict.fromkeys(r["load"] for r in summary))
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    width = 0.8 / len(loads)
    for i, load in enumerate(loads):
        rows = {r["subject"]: r for r in summary if r["load"] == load}
        xs = [k + i * width for k in range(len(subjects))]
        left.bar(xs, [rows[s]["tps"] / 1000 if s in rows else 0 for s in subjects], width, label=load)
        right.bar(xs, [rows[s]["p99_us"] if s in rows else 0 for s in subjects], width, label=load)
    for ax, ylabel in ((left, "memcached requests/s (thousands)"), (right, "p99 latency (us, upper bound)")):
        ax.set_xticks([k + width * (len(loads) - 1) / 2 for k in range(len(subjects))], subjects, fontsize=8)
        ax.set_ylabel(ylabel)
    finish(fig, right, "p99 latency", path)
    return path


def dispatch_cost(summary: list[dict], path: Path) -> Path:
    """Forwarded rate and whole-machine CPU per frame, per way of dispatching."""
    labels = [r["subject"] for r in summary]
    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4.5))
    left.bar(labels, [r["mpps"] for r in summary])
    left.set_ylabel("frames forwarded by the workers (Mpps)")
    right.bar(labels, [r["ns_per_frame"] for r in summary], color="tab:orange")
    right.set_ylabel("CPU per frame, both cores (ns)")
    for ax in (left, right):
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(alpha=0.3)
    fig.suptitle("The dispatcher's cost on traffic it does not dispatch (macswap, afxdp, veth, 64 B)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

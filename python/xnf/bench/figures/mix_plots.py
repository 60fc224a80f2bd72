"""The figures of the traffic-mix studies (docs/traffic-mixes.md), drawn from their summaries: legitimate
throughput against drop share, memcached per mode, and the dispatcher's cost."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xnf.bench.figures.figure_file import finish  # noqa: E402


def legit_vs_drop_share(summary: list[dict], path: Path) -> Path:
    """One panel per placement of the workers, one line per subject: the legitimate class's rate (Mpps)
    against the share of frames to drop."""
    placements = list(dict.fromkeys(row["placement"] for row in summary))
    fig, axes = plt.subplots(1, len(placements), figsize=(6 * len(placements), 4.5), squeeze=False)
    for ax, placement in zip(axes[0], placements):
        rows_here = [r for r in summary if r["placement"] == placement]
        for subject in dict.fromkeys(row["subject"] for row in rows_here):
            rows = sorted((r for r in rows_here if r["subject"] == subject), key=lambda r: r["drop_share"])
            ax.plot([r["drop_share"] * 100 for r in rows], [r["legit_mpps"] for r in rows], marker="o",
                    label=subject)
        ax.set_xlabel("share of frames dropped by the firewall's rules (%)")
        ax.set_ylabel("legitimate frames forwarded (Mpps)")
        ax.set_yscale("log")
        ax.set_title(f"workers on {'their own core' if placement == 'own' else 'the generator core'}")
        ax.grid(alpha=0.3, which="both")
        ax.legend(fontsize=8)
    return _save_panels(fig, "Legitimate throughput under a growing attack (firewall, veth, 64 B)", path)


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
    """Per way of dispatching: the forwarded rate, core 0's time per frame, and the kernel program's own time
    on a forwarded and on a local frame (BPF_PROG_RUN)."""
    labels = [r["subject"] for r in summary]
    fig, (rate, core0, program) = plt.subplots(1, 3, figsize=(13, 4.5))
    rate.bar(labels, [r["mpps"] for r in summary])
    rate.set_ylabel("frames forwarded by the workers (Mpps)")
    core0.bar(labels, [r["core0_ns_per_frame"] for r in summary], color="tab:orange")
    core0.set_ylabel("core 0 (generator + receive) per frame (ns)")
    xs = range(len(labels))
    program.bar([x - 0.2 for x in xs], [r["program_ns_forwarded"] for r in summary], 0.4, label="forwarded frame")
    program.bar([x + 0.2 for x in xs], [r["program_ns_local"] for r in summary], 0.4, label="local frame")
    program.set_xticks(list(xs), labels)
    program.set_ylabel("kernel program per frame, BPF_PROG_RUN (ns)")
    program.legend(fontsize=8)
    for ax in (rate, core0, program):
        ax.tick_params(axis="x", labelsize=8)
        ax.grid(alpha=0.3)
    return _save_panels(fig, "The dispatcher's cost (macswap, afxdp, veth, 64 B)", path)


def _save_panels(fig, title: str, path: Path) -> Path:
    """A figure of several panels under one title, written as PNG."""
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

"""The soak's figure (docs/robustness.md): per subject over time, the p99 latency, the NF's RSS and its main
map's entries, and the frames no counter explains."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PANELS = (("latency_p99_us", "p99 latency (us)"), ("rss_kib", "RSS of the NF process (KiB)"),
          ("entries", "entries in the NF's main map"), ("unexplained", "frames no counter explains"))


def over_time(rows: list[dict], path: Path) -> Path:
    fig, axes = plt.subplots(len(PANELS), 1, figsize=(9, 2.6 * len(PANELS)), sharex=True)
    for ax, (field, label) in zip(axes, PANELS):
        for subject in dict.fromkeys(r["subject"] for r in rows):
            mine = [r for r in rows if r["subject"] == subject and field in r]
            ax.plot([r["t_s"] / 60 for r in mine], [r[field] for r in mine], marker=".", label=subject)
        ax.set_ylabel(label, fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=8)
    axes[0].set_title("Soak at 90 % of the loss-free rate with rule churn (veth)")
    axes[-1].set_xlabel("minutes")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path

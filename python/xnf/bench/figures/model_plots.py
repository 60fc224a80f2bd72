"""The cost model's figures (docs/cost-model.md): each path's fit over the points it was fitted on, and predicted
against measured rates."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from xnf.bench.figures.figure_file import finish  # noqa: E402
from xnf.model.fit import CYCLES, DROP, DROP_MIX, MEMORY, LineFit  # noqa: E402

# series of the fit table: marker, legend
MARKERS = {CYCLES: ("o", "cycles series"), MEMORY: ("s", "memory series"), DROP: ("x", "drop NF"),
           DROP_MIX: ("+", "drop mix")}


def fit_lines(profile, table: list[dict], path: Path) -> Path:
    """Time per frame (1 / rate) against c_task, one colour per path: the measured points by series, and the fitted
    max(F + s x, G) as a line."""
    fig, ax = plt.subplots(figsize=(8, 5.5))
    for i, (key, p) in enumerate(profile.paths.items()):
        colour = f"C{i % 10}"
        rows = [r for r in table if r["path"] == key]
        for series, (marker, _) in MARKERS.items():
            mine = [r for r in rows if r["series"] == series]
            ax.scatter([r["x_ns"] for r in mine], [r["y_ns"] for r in mine], marker=marker, color=colour, s=22)
        others = [r.fixed_ns["forward"] for name, r in p.roles.items() if name != p.task_role]
        line = LineFit(p.roles[p.task_role].fixed_ns["forward"], p.task_scale, max(others, default=0.0))
        xs = np.linspace(min(0.0, *(r["x_ns"] for r in rows)), max(r["x_ns"] for r in rows), 200)
        ax.plot(xs, [line.y(x) for x in xs], color=colour, label=f"{key} (rms {p.fit['rms_error']:.0%})")
    ax.set_xlabel("c_task: the NF's time over the baseline, as xnf cost measures it (ns)")
    ax.set_ylabel("time per frame in the run, 1 / RFC 2544 rate (ns)")
    for marker, legend in MARKERS.values():
        ax.scatter([], [], marker=marker, color="grey", label=legend)
    return finish(fig, ax, f"c_IO fitted per path ({profile.name})", path)


def predicted_vs_measured(rows: list[dict], path: Path) -> Path:
    """Every (NF, path) case: predicted against measured Mpps, the diagonal and a ±10 % band."""
    fig, ax = plt.subplots(figsize=(6.5, 6))
    keys = list(dict.fromkeys(r["path"] for r in rows))
    for i, key in enumerate(keys):
        mine = [r for r in rows if r["path"] == key]
        ax.scatter([r["measured_mpps"] for r in mine], [r["predicted_mpps"] for r in mine], color=f"C{i % 10}",
                   label=key, s=26)
    top = max(max(r["measured_mpps"], r["predicted_mpps"]) for r in rows) * 1.1
    xs = np.linspace(0, top, 50)
    ax.plot(xs, xs, color="black", linewidth=0.8)
    ax.fill_between(xs, xs * 0.9, xs * 1.1, color="grey", alpha=0.2, label="±10 %")
    ax.set_xlim(0, top)
    ax.set_ylim(0, top)
    ax.set_xlabel("measured RFC 2544 rate (Mpps)")
    ax.set_ylabel("predicted rate (Mpps)")
    return finish(fig, ax, "The cost model against measured rates", path)

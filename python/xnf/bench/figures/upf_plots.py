"""The figure of the 5G user plane study (xnf bench run upf-paths): each path's forwarded rate per case
(direction and sessions), as a ratio to the upf in XDP in the same round."""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xnf.bench.figures.figure_file import finish  # noqa: E402


def paths_by_case(summary: list[dict], path: Path) -> Path:
    rows = [r for r in summary if "path" in r]
    cases = list(dict.fromkeys(r["case"] for r in rows))
    paths = list(dict.fromkeys(r["path"] for r in rows))
    fig, ax = plt.subplots(figsize=(11, 4.5))
    width = 0.8 / len(paths)
    for i, name in enumerate(paths):
        ratio = {r["case"]: r["ratio_to_xdp"] or 0 for r in rows if r["path"] == name}
        ax.bar([k + i * width for k in range(len(cases))], [ratio.get(c, 0) for c in cases], width, label=name)
    ax.axhline(1.0, color="grey", linewidth=0.8)
    ax.set_xticks([k + width * (len(paths) - 1) / 2 for k in range(len(cases))],
                  [f"{c} sessions" for c in cases])
    ax.set_ylabel("forwarded rate / the upf in xdp, same round")
    return finish(fig, ax, "upf: where the tunnel work runs (veth, 2-core VM)", path)

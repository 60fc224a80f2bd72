"""`xnf report reproduce`: every finding of python/xnf/analysis/findings.py judged from the newest results of the
benchmarks it needs (found in the results folders; with --run-missing, the missing ones are run first, with their
own defaults), each with a plot and its verdict, on one Markdown page."""

from __future__ import annotations

import argparse
import lzma
import re
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from xnf.analysis.findings import FINDINGS, UNKNOWN, Finding, Verdict  # noqa: E402
from xnf.analysis.plots import finish  # noqa: E402
from xnf import results_file  # noqa: E402
from xnf.errors import XnfError  # noqa: E402

STAMP = re.compile(r"-(\d{8}-\d{6})\.json(\.xz)?$")
STUDY_NAMES = {"xdp-afxdp": "the XDP vs AF_XDP study", "packet-io": "the packet-I/O frameworks comparison",
               "edge": "the edge-server study", "container": "the container-networking study"}


def _benchmark_of(doc: dict) -> str | None:
    """A study's name, or a grid's; a grid run with the DUT's receive moved (--dut-receive-core) is another
    experiment, kept apart."""
    bench = doc.get("benchmark")
    if not isinstance(bench, dict):
        return bench.replace("_", "-") if isinstance(bench, str) else None   # a study's file name: model_fit
    moved = bench.get("dut_receive_core")
    return bench.get("name") + (f" (DUT receive on core {moved})" if moved is not None else "")


def newest_results(folders: list[Path]) -> dict[str, tuple[Path, dict]]:
    """benchmark name -> (its newest results file, the document), over every results file below the folders.
    Studies write their files under an underscored name (model_fit-...), grids under their own."""
    found: dict[str, tuple[str, Path, dict]] = {}
    for folder in folders:
        for path in sorted(folder.rglob("*.json*")) if folder.is_dir() else []:
            match = STAMP.search(path.name)
            if not match:
                continue
            try:
                doc = results_file.load_json(path)
            except (OSError, ValueError, lzma.LZMAError):
                continue
            name = _benchmark_of(doc) if isinstance(doc, dict) else None
            if name and (name not in found or match.group(1) > found[name][0]):
                found[name] = (match.group(1), path, doc)
    return {name: (path, doc) for name, (_, path, doc) in found.items()}


def run_missing(names: list[str], out: Path) -> None:
    """Runs each benchmark with its defaults into out (a grid as declared, a study with no options)."""
    from xnf import build
    from xnf.bench import catalog
    from xnf.bench.grid import run_benchmark

    build.ensure_built()
    for name in names:
        bench = catalog.find(name)
        print(f"reproduce: running {name}", flush=True)
        if isinstance(bench, catalog.Benchmark):
            run_benchmark(bench, out)
        else:
            parser = argparse.ArgumentParser()
            bench.add_arguments(parser)
            bench.run(parser.parse_args([]), out)


def judge(finding: Finding, found: dict[str, tuple[Path, dict]]) -> tuple[Verdict, list[Path]]:
    missing = [n for n in finding.needs if n not in found]
    if missing:
        return Verdict(UNKNOWN, f"no results of {', '.join(missing)}: run 'xnf bench run {missing[0]}', or "
                                "'xnf report reproduce --run-missing'"), []
    docs = {n: found[n][1] for n in finding.needs}
    try:
        return finding.judge(docs), [found[n][0] for n in finding.needs]
    except (KeyError, ValueError, ZeroDivisionError, TypeError) as err:
        return Verdict(UNKNOWN, f"the results of {', '.join(finding.needs)} lack what this needs ({err!r}): "
                                "they may be from an older xnf; run the benchmark again"), []


def plot(verdict: Verdict, path: Path) -> Path | None:
    series = verdict.series
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(6.5, 4))
    if "bars" in series:
        labels = list(series["bars"])
        ax.bar(labels, [series["bars"][k] for k in labels], label=series.get("ylabel", ""))
        ax.tick_params(axis="x", labelrotation=20, labelsize=8)
    for name, (xs, ys) in series.get("lines", {}).items():
        order = sorted(range(len(xs)), key=lambda i: xs[i])
        ax.plot([xs[i] for i in order], [ys[i] for i in order], marker="o", label=name)
    if series.get("logx"):
        ax.set_xscale("log")
    ax.set_xlabel(series.get("xlabel", ""))
    ax.set_ylabel(series.get("ylabel", ""))
    return finish(fig, ax, series["title"], path)


def _table(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    columns = list(dict.fromkeys(k for row in rows for k in row))
    lines = ["| " + " | ".join(columns) + " |", "| " + " | ".join("---" for _ in columns) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(c, "")) for c in columns) + " |")
    return lines


def _cell(value) -> str:
    if isinstance(value, float):
        return f"{value:.3g}" if abs(value) < 1000 else f"{value:,.0f}"
    return str(value)


def write_page(out: Path, judged: list[tuple[Finding, Verdict, list[Path], Path | None]]) -> Path:
    counts: dict[str, int] = {}
    for _, v, _, _ in judged:
        counts[v.outcome] = counts.get(v.outcome, 0) + 1
    lines = ["# The research's findings, reproduced on veth", "",
             "Each finding as this project reads it, the results it was judged on, a plot and the verdict computed "
             "from the numbers (python/xnf/analysis/findings.py). Written by `xnf report reproduce`.", "",
             "Verdicts: " + ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) + ".", "",
             "| finding | study | verdict |", "| --- | --- | --- |"]
    lines += [f"| [{f.claim}](#{f.key}) | {STUDY_NAMES[f.study]} | **{v.outcome}** |" for f, v, _, _ in judged]
    for finding, verdict, sources, figure in judged:
        lines += ["", f"## {finding.key}", "", f"*{finding.claim}* ({STUDY_NAMES[finding.study]})", "",
                  f"**Verdict: {verdict.outcome}.** {verdict.why}", ""]
        if figure:
            lines += [f"![{finding.key}]({figure.name})", ""]
        lines += _table(verdict.rows)
        if sources:
            lines += ["", "Results: " + ", ".join(f"`{p}`" for p in sources)]
    page = out / "reproduce.md"
    page.write_text("\n".join(lines) + "\n")
    return page


def reproduce(folders: list[Path], out: Path, run: bool = False, only: list[str] | None = None) -> Path:
    chosen = [f for f in FINDINGS if not only or f.key in only]
    if only and len(chosen) != len(set(only)):
        raise XnfError(f"unknown finding: choose from {', '.join(f.key for f in FINDINGS)}")
    out.mkdir(parents=True, exist_ok=True)
    found = newest_results(folders + [out])
    if run:
        missing = list(dict.fromkeys(n for f in chosen for n in f.needs if n not in found))
        run_missing(missing, out)
        found = newest_results(folders + [out])
    judged = []
    for finding in chosen:
        verdict, sources = judge(finding, found)
        judged.append((finding, verdict, sources, plot(verdict, out / f"{finding.key}.png")))
    return write_page(out, judged)

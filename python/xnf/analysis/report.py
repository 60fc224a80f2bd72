"""`xnf report RESULTS.json`: a Markdown page with the plots, the summary table and how it was measured."""

from __future__ import annotations

import lzma
from pathlib import Path

from xnf.analysis import crossing, plots
from xnf import results_file
from xnf.errors import XnfError


def _load(path: Path) -> dict:
    try:
        doc = results_file.load_json(path)
    except FileNotFoundError:
        raise XnfError(f"no results file {path}") from None
    except (ValueError, lzma.LZMAError) as err:
        raise XnfError(f"{path} is not a results file (JSON error: {err})") from None
    if "summary" not in doc or "samples" not in doc:
        raise XnfError(f"{path} is not a results file written by 'xnf bench run' (no summary or samples)")
    return doc


def _fmt(value) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.3f}"
    if isinstance(value, (list, tuple)):
        return ",".join(map(str, value))
    return str(value)


def _table(rows: list[dict]) -> str:
    keys = list(dict.fromkeys(k for row in rows for k in row))  # every column, in first-seen order
    lines = ["| " + " | ".join(keys) + " |", "|" + " --- |" * len(keys)]
    lines += ["| " + " | ".join(_fmt(r.get(k)) for k in keys) + " |" for r in rows]
    return "\n".join(lines)


def _latency_table(samples: list[dict]) -> str:
    rows = []
    seen = set()
    for s in samples:
        name = plots.label(s["case"])
        if name in seen:
            continue
        seen.add(name)
        for fraction, trial in sorted(s["result"].get("latency_at", {}).items()):
            lat = trial["latency_ns"]

            def us(key: str):
                """No samples (a sink sends nothing back): no latency, not zero latency."""
                return lat[key] / 1000 if lat.get("samples") else None

            rows.append({"case": name, "load": f"{float(fraction):.0%}", "offered Mpps": trial["offered_pps"] / 1e6,
                         "p50 µs": us("p50"), "p99 µs": us("p99"), "p99.9 µs": us("p99_9"), "max µs": us("max"),
                         "loss": trial["loss_ratio"]})
    return _table(rows) if rows else "(no latency trials in this benchmark)"


def _crossing_section(summary: list[dict]) -> list[str]:
    """XDP against the AF_XDP mode(s), when the benchmark swept one parameter over both."""
    param = plots.swept_parameter(summary)
    modes = {crossing.subject(row) for row in summary}
    if not param or crossing.KERNEL_MODE not in modes or len(modes) < 2:
        return []
    result = crossing.compare(summary, param)
    return ["## XDP against AF_XDP", "", crossing.sentence(result), "", crossing.cost_sentence(result), "",
            _table(result["table"]), ""]


def _mitigations_line(env: dict) -> list[str]:
    """The CPU's mitigations, where the results file has them (files before 2026-11-29 do not)."""
    mitigations = env.get("cpu_mitigations")
    if not mitigations:
        return []
    return ["- CPU mitigations: " + "; ".join(f"{name}: {said}" for name, said in mitigations.items())]


def _yardstick_lines(doc: dict) -> list[str]:
    if "yardstick" not in doc:
        return []
    rates = ", ".join(f"{y['mpps']:.2f}" for y in doc["yardstick"]["samples"])
    return [f"- yardstick: the {doc['yardstick']['subject']}, measured once every repetition among the cases "
            f"({rates} Mpps); yardstick_ratio is a case's median same-repetition ratio to it"]


def _sender_lines(doc: dict) -> list[str]:
    """How xnf-gen sent, and what the kernel gave it (a result taken without live frames says so)."""
    senders = sorted({s["result"].get("sender") for s in doc["samples"] if s["result"].get("sender")})
    facilities = doc["environment"].get("kernel_facilities", {})
    refused = [name for name, state in facilities.items() if state == "refused"]
    lines = [f"- xnf-gen's sender: {', '.join(senders)}"] if senders else []
    if refused:
        lines.append(f"- the kernel refused: {', '.join(refused)}"
                     + (f" (XNF_KERNEL_WITHOUT={facilities['override']})" if facilities.get("override") else ""))
    return lines


def _generator_bound_section(doc: dict) -> list[str]:
    """Where the generator, not the NF, was the limit: the cases ranked by the DUT's cost per frame instead."""
    if not doc.get("generator_bound"):
        return []
    rows = ["| nf | mode | DUT core ns/frame |", "| --- | --- | --- |"] + [
        f"| {r['nf']} | {r['mode']}{'/' + r['tx_path'] if r.get('tx_path') else ''} | {r['ns_per_frame']} |"
        for r in doc.get("ranked_by_cost", [])]
    return ["## Generator-bound", "",
            f"Some searches were generator-bound: their rates are xnf-gen's, not the NF's. The cases ranked by what "
            f"the DUT's core spent per frame at {doc['common_rate_pps']:,} frames/s, which every path carries "
            "(cheapest first):", "", *rows, ""]


def write_report(results: Path, out_dir: Path | None = None) -> Path:
    doc = _load(results)
    out_dir = out_dir or results.parent / f"{results.stem}-report"
    out_dir.mkdir(parents=True, exist_ok=True)
    bench, env = doc["benchmark"], doc["environment"]
    figures = [plots.throughput(doc["summary"], out_dir / "throughput.png"),
               plots.cost(doc["summary"], out_dir / "cost.png"),
               plots.cpu_split(doc["samples"], out_dir / "cpu.png"),
               plots.latency_cdf(doc["samples"], out_dir / "latency.png")]
    page = out_dir / "report.md"
    lines = [
        f"# {bench['name']}", "", bench["description"], "",
        "## Where and how", "",
        f"- kernel {env['kernel']}, {env['cpu_model']}, {env['cores']} cores, TSC {env.get('tsc_hz') or '?'} Hz, "
        f"commit {env['commit']}, started {env['started_utc']}",
        *_mitigations_line(env),
        f"- command: `{env['command_line']}`",
        f"- measure: {bench['measure']}; {bench['seconds']} s per trial; {bench['repetitions']} repetitions in "
        f"interleaved order (the case order turns around every repetition)",
        f"- generator on core {doc['generator_core']}; AF_XDP workers on core {doc['worker_core']}; on veth "
        "the DUT's XDP work runs in softirq on the generator's core (docs/lab.md)",
        "- throughput: RFC 2544 binary search, loss < 0.1 %, to 1 % of the generator's maximum; "
        "\"generator_limited\" means even that maximum passed (docs/methodology.md)",
        *_yardstick_lines(doc), *_sender_lines(doc), "",
        "## Results", "", _table(doc["summary"]), "",
        *_generator_bound_section(doc),
    ]
    for fig in figures:
        if fig:
            lines += [f"![{fig.stem}]({fig.name})", ""]
    lines += _crossing_section(doc["summary"])
    lines += ["## Latency", "", _latency_table(doc["samples"]), "",
              f"Raw samples: `{results.name}` ({len(doc['samples'])} samples).", ""]
    page.write_text("\n".join(lines))
    return page

"""Live views of running instances: `xnf stats --interval S` (one instance, every rate) and `xnf top` (all
instances, one line each), until Ctrl-C or --count intervals. --json writes one JSON object per interval."""

from __future__ import annotations

import json
import sys
import time
from typing import Callable

from xnf import control, live_rates, output
from xnf.errors import XnfError

MIN_INTERVAL_S = 0.1


def _fmt_rate(value: float, unit: str) -> str:
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if abs(value) >= scale:
            return f"{value / scale:.2f} {prefix}{unit}"
    return f"{value:.0f} {unit}"


def _intervals(interval: float, count: int | None, step: Callable[[int], None]) -> int:
    """Calls step(i) every interval seconds, count times or until Ctrl-C; returns how many ran."""
    if interval < MIN_INTERVAL_S:
        raise XnfError(f"--interval {interval:g}: give at least {MIN_INTERVAL_S} seconds")
    done = 0
    try:
        while count is None or done < count:
            time.sleep(interval)
            step(done)
            done += 1
    except KeyboardInterrupt:
        pass
    return done


def stats_every(name: str, interval: float, count: int | None, as_json: bool) -> int:
    previous = [control.request_json(name, "stats")]
    seen: list[dict] = []

    def step(_: int) -> None:
        now = control.request_json(name, "stats")
        if live_rates.restarted(previous[0], now):
            print(f"{name} restarted: rates start again", file=sys.stderr)
        else:
            r = live_rates.rates(previous[0], now)
            seen.append(r)
            if as_json:
                print(json.dumps(r), flush=True)
            else:
                _print_rates(r)
        previous[0] = now

    _intervals(interval, count, step)
    if seen and not as_json:
        mean = sum(live_rates.handled_pps(r) * r["seconds"] for r in seen) / sum(r["seconds"] for r in seen)
        print(f"{name}: {len(seen)} intervals of {interval:g} s, {_fmt_rate(mean, 'pps')} handled on average")
    return 0


def _print_rates(r: dict) -> None:
    from rich.table import Table

    table = Table(title=f"{r['name']}: {r['nf']}, {r['mode']} mode, last {r['seconds']:.2f} s")
    table.add_column("verdict")
    table.add_column("packets/s", justify="right")
    table.add_column("bits/s", justify="right")
    for verdict, rate in r["verdicts"].items():
        table.add_row(verdict, _fmt_rate(rate["pps"], "pps"), _fmt_rate(rate["bps"], "bps"))
    for counter, rate in r["counters"].items():
        table.add_row(f"[dim]{counter}[/dim]", _fmt_rate(rate, "/s"), "")
    for w in r["workers"]:
        table.add_row(f"worker {w['worker']}", f"rx {_fmt_rate(w.get('rx_packets', 0), 'pps')}",
                      f"tx {_fmt_rate(w.get('tx_packets', 0), 'pps')}")
    output.console().print(table)


def top(interval: float, count: int | None, as_json: bool) -> int:
    previous: dict[str, dict] = {}

    def snapshot() -> dict[str, dict]:
        answers = {}
        for name in control.instances():
            try:
                answers[name] = control.request_json(name, "stats")
            except XnfError:
                continue  # it stopped between the listing and the request
        return answers

    def step(_: int) -> None:
        now = snapshot()
        rows = [live_rates.rates(previous[n], s) for n, s in now.items()
                if n in previous and not live_rates.restarted(previous[n], s)]
        previous.clear()
        previous.update(now)
        if as_json:
            print(json.dumps(rows), flush=True)
        else:
            _print_top(rows)

    previous.update(snapshot())
    _intervals(interval, count, step)
    return 0


def _print_top(rows: list[dict]) -> None:
    from rich.table import Table

    table = Table(title=f"xnf top: {len(rows)} instance(s)")
    for column in ("instance", "nf", "mode", "handled", "tx", "redirect", "drop", "pass", "bits/s out"):
        table.add_column(column, justify="left" if column in ("instance", "nf", "mode") else "right")
    for r in sorted(rows, key=live_rates.handled_pps, reverse=True):
        v = r["verdicts"]
        out_bps = v["tx"]["bps"] + v["redirect"]["bps"]
        table.add_row(r["name"], r["nf"], r["mode"], _fmt_rate(live_rates.handled_pps(r), "pps"),
                      *(_fmt_rate(v[k]["pps"], "pps") for k in ("tx", "redirect", "drop", "pass")),
                      _fmt_rate(out_bps, "bps"))
    console = output.console()
    if console.is_terminal:
        console.clear()
    console.print(table)

"""Rates from two `stats` answers of one instance: packets and bits per second per verdict, per worker and for
the NF's own counters. The interval is the instance's own uptime difference (both read in the answers), so a
slow control socket does not bend the rate."""

from __future__ import annotations


def _per_second(before: int, after: int, seconds: float) -> float:
    return (after - before) / seconds if seconds > 0 else 0.0


def restarted(before: dict, after: dict) -> bool:
    """A new instance under the same name: its counters started again."""
    return after["uptime_s"] < before["uptime_s"] or after.get("mode") != before.get("mode")


def rates(before: dict, after: dict) -> dict:
    seconds = after["uptime_s"] - before["uptime_s"]
    verdicts = {}
    for verdict, now in after["verdicts"].items():
        then = before["verdicts"][verdict]
        verdicts[verdict] = {"pps": _per_second(then["packets"], now["packets"], seconds),
                             "bps": 8 * _per_second(then["bytes"], now["bytes"], seconds)}
    counters = {name: _per_second(before["counters"].get(name, 0), value, seconds)
                for name, value in after.get("counters", {}).items()}
    workers = []
    for now, then in zip(after.get("workers", []), before.get("workers", [])):
        row = {"worker": now["worker"]}
        row.update({k: _per_second(then[k], v, seconds) for k, v in now.items() if isinstance(v, int) and k != "worker"})
        row["verdicts"] = {k: _per_second(then["verdicts"][k], v, seconds) for k, v in now["verdicts"].items()}
        workers.append(row)
    return {"name": after["name"], "nf": after["nf"], "mode": after["mode"], "seconds": round(seconds, 3),
            "verdicts": verdicts, "counters": counters, "workers": workers}


def handled_pps(r: dict) -> float:
    """Frames the NF gave a verdict to, per second (malformed is a reason beside a verdict, not one)."""
    return sum(v["pps"] for k, v in r["verdicts"].items() if k != "malformed")

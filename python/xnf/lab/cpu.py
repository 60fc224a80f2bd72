"""CPU time per core from /proc/stat: who did the work, split into user, system, softirq and idle."""

from __future__ import annotations

import os
from dataclasses import dataclass

FIELDS = ("user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal")
TICK_S = 1.0 / os.sysconf("SC_CLK_TCK")


@dataclass
class CpuSnapshot:
    per_core: dict[int, dict[str, int]]


def snapshot() -> CpuSnapshot:
    cores = {}
    with open("/proc/stat") as stat:
        for line in stat:
            name, *values = line.split()
            if name.startswith("cpu") and name != "cpu":
                cores[int(name[3:])] = dict(zip(FIELDS, map(int, values)))
    return CpuSnapshot(cores)


def split(before: CpuSnapshot, after: CpuSnapshot) -> dict[int, dict[str, float]]:
    """Seconds per core and field between two snapshots, with shares of the core's total time."""
    result = {}
    for core, values in after.per_core.items():
        seconds = {f: (values[f] - before.per_core[core][f]) * TICK_S for f in FIELDS}
        total = sum(seconds.values()) or 1.0
        result[core] = {**{f: round(seconds[f], 3) for f in ("user", "system", "softirq", "idle")},
                        "busy_share": round(1.0 - seconds["idle"] / total, 3)}
    return result

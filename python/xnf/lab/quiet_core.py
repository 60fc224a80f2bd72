"""Keeping a user-space worker's core to the worker for a measurement.

A worker that spins on its core is still a thread the scheduler may put aside: on this VM the kernel's memory
monitor (kdamond, about 1 ms every half second), its compaction thread and the RCU thread ran on the worker's core
for 1-8 ms at a time (perf sched, 2026-11-24), and at 3.5 Mpps a ring of 2,048 frames holds 0.6 ms. The frames of
such a stall are lost, a trial near the path's capacity fails, and the RFC 2544 search ends lower by chance. The
kernel path runs in softirq, which no thread preempts: the two paths were not measured on equal terms.

quiet(cores) moves every thread that may run elsewhere (its allowed cores are more than the quiet ones: kernel
threads that are not per-CPU, other processes) off those cores for the measurement and gives each its own mask back
after; per-CPU kernel threads (ksoftirqd, kworker/N) stay, they cannot move. The lab's own threads move too: this
process, and with it what it starts during the measurement (an NF's control thread, xnf-gen's main thread), which
would otherwise take the DUT's core now and then and be counted in its busy time. What the lab puts on those cores
it puts there explicitly (an AF_XDP worker's --cores, taskset, a pinned NAPI thread), which an inherited mask does
not prevent, and a thread allowed only those cores stays. What an operator does for good (isolcpus, nohz_full,
tuned's cpu-partitioning), for the length of a measurement.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

PROC = Path("/proc")
# What the running measurement keeps quiet: the results' environment says it (state()).
_current: dict | None = None


def state() -> dict:
    """For a results file's environment: the cores kept to the DUT and how many threads were moved off them."""
    return dict(_current) if _current else {"cores": [], "threads_moved": 0}


def _threads() -> list[int]:
    tids = []
    for task_dir in PROC.glob("[0-9]*/task"):
        with contextlib.suppress(OSError):   # a process that ended meanwhile
            tids += [int(t.name) for t in task_dir.iterdir() if t.name.isdigit()]
    return tids


@contextlib.contextmanager
def quiet(cores: set[int]):
    """Every movable thread off `cores` until the block ends; yields how many were moved."""
    moved: dict[int, set[int]] = {}
    for tid in _threads():
        try:
            allowed = os.sched_getaffinity(tid)
            if not allowed & cores or not allowed - cores:
                continue
            os.sched_setaffinity(tid, allowed - cores)
            moved[tid] = allowed
        except OSError:   # gone, or a thread that may not move (PF_NO_SETAFFINITY)
            continue
    global _current
    _current = {"cores": sorted(cores), "threads_moved": len(moved)}
    try:
        yield len(moved)
    finally:
        _current = None
        for tid, allowed in moved.items():
            with contextlib.suppress(OSError):
                if os.sched_getaffinity(tid) == allowed - cores:   # nobody else moved it meanwhile
                    os.sched_setaffinity(tid, allowed)

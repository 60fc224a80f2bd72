"""Keeping a user-space worker's core to the worker for a measurement.

A worker that spins on its core is still a thread the scheduler may put aside: on this VM the kernel's memory
monitor (kdamond, about 1 ms every half second), its compaction thread and the RCU thread ran on the worker's core
for 1-8 ms at a time (perf sched, 2026-11-24), and at 3.5 Mpps a ring of 2,048 frames holds 0.6 ms. The frames of
such a stall are lost, a trial near the path's capacity fails, and the RFC 2544 search ends lower by chance. The
kernel path runs in softirq, which no thread preempts: the two paths were not measured on equal terms.

quiet(cores) moves every thread that may run elsewhere (its allowed cores are more than the quiet ones: kernel
threads that are not per-CPU, other processes) off those cores for the measurement and gives each its own mask back
after; per-CPU kernel threads (ksoftirqd, kworker/N) stay, they cannot move. This process and its children are left
alone: the lab places them itself. What an operator does for good (isolcpus, nohz_full, tuned's cpu-partitioning),
for the length of a measurement.
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


def _own_tree() -> set[int]:
    """This process and its descendants (the NF, the generator): the lab pins those."""
    parents: dict[int, int] = {}
    for stat in PROC.glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            parents[int(stat.parent.name)] = int(fields[1])
        except (OSError, IndexError, ValueError):
            continue
    tree, grew = {os.getpid()}, True
    while grew:
        grew = False
        for pid, parent in parents.items():
            if parent in tree and pid not in tree:
                tree.add(pid)
                grew = True
    return tree


def _threads_outside(tree: set[int]) -> list[int]:
    tids = []
    for task_dir in PROC.glob("[0-9]*/task"):
        if int(task_dir.parent.name) in tree:
            continue
        tids += [int(t.name) for t in task_dir.iterdir() if t.name.isdigit()]
    return tids


@contextlib.contextmanager
def quiet(cores: set[int]):
    """Every movable thread off `cores` until the block ends; yields how many were moved."""
    moved: dict[int, set[int]] = {}
    for tid in _threads_outside(_own_tree()):
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

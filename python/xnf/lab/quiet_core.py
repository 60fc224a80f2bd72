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

A process killed during the block (SIGKILL, a CI job's end) cannot give the masks back, and every process started
after, init's children among them, would inherit the shrunken mask: the machine loses a core for good. So the moves
are written first to a journal in the run directory, and the next quiet() (and the test suite's start) gives back
what a dead process's journal says it took.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path

from xnf import control, process_id

PROC = Path("/proc")
JOURNAL_PREFIX = "quiet-cores-"
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


def _start_of(tid: int) -> int | None:
    """The thread's start time (clock ticks after boot): with its id, which thread it is (ids are reused)."""
    fields = process_id.stat_fields(str(tid))
    return int(fields[19]) if fields else None


def _journal_path() -> Path:
    return control.run_dir() / f"{JOURNAL_PREFIX}{os.getpid()}.json"


def _write_journal(path: Path, cores: set[int], moved: dict[int, tuple[int | None, set[int]]]) -> None:
    doc = {"owner": [os.getpid(), _start_of(os.getpid())], "cores": sorted(cores),
           "moved": [[tid, start, sorted(allowed)] for tid, (start, allowed) in moved.items()]}
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps(doc))
    partial.replace(path)


def _give_back(cores: set[int], moved: list[tuple[int, int | None, set[int]]]) -> int:
    """Each thread its mask back, if it is still the thread moved and still has the mask it was given."""
    given = 0
    for tid, start, allowed in moved:
        with contextlib.suppress(OSError):
            if _start_of(tid) == start and os.sched_getaffinity(tid) == allowed - cores:
                os.sched_setaffinity(tid, allowed)
                given += 1
    return given


def give_back_left() -> int:
    """What the journals of processes that died during quiet() took, given back; the journals removed. Returns how
    many threads got their masks back."""
    given = 0
    for path in control.run_dir().glob(f"{JOURNAL_PREFIX}*.json"):
        try:
            doc = json.loads(path.read_text())
            owner, start = doc["owner"]
            if process_id.find(int(owner), int(start)) is not None:
                continue   # its owner still runs, and gives them back itself
            cores = set(doc["cores"])
            given += _give_back(cores, [(tid, when, set(allowed)) for tid, when, allowed in doc["moved"]])
        except (OSError, ValueError, KeyError, TypeError):
            pass   # unreadable: nothing in it can be given back exactly
        path.unlink(missing_ok=True)
    return given


def _movable(cores: set[int]) -> dict[int, tuple[int | None, set[int]]]:
    """The threads allowed on the cores and elsewhere too: thread id -> (its start, its mask)."""
    movable = {}
    for tid in _threads():
        with contextlib.suppress(OSError):   # a thread that ended meanwhile
            allowed = os.sched_getaffinity(tid)
            if allowed & cores and allowed - cores:
                movable[tid] = (_start_of(tid), allowed)
    return movable


@contextlib.contextmanager
def quiet(cores: set[int]):
    """Every movable thread off `cores` until the block ends; yields how many were moved."""
    give_back_left()
    journal = _journal_path()
    moved = _movable(cores)
    try:
        _write_journal(journal, cores, moved)   # before the moves: a kill amid them finds them written
        for tid, (_, allowed) in list(moved.items()):
            try:
                os.sched_setaffinity(tid, allowed - cores)
            except OSError:   # gone, or a thread that may not move (PF_NO_SETAFFINITY)
                del moved[tid]
        global _current
        _current = {"cores": sorted(cores), "threads_moved": len(moved)}
        yield len(moved)
    finally:
        _current = None
        _give_back(cores, [(tid, start, allowed) for tid, (start, allowed) in moved.items()])
        journal.unlink(missing_ok=True)

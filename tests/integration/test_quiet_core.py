"""A measurement keeps the DUT's core to the DUT: every thread that may run elsewhere leaves it for the run and gets
its own cores back after; per-CPU kernel threads and the lab's own processes stay where they are."""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from xnf.lab import quiet_core

CORE = 1


def _outsider(tmp_path: Path) -> int:
    """A process that is not this one's descendant (setsid -f: its parent exits, init adopts it)."""
    pid_file = tmp_path / "pid"
    subprocess.run(["setsid", "-f", "sh", "-c", f"echo $$ > {pid_file}; exec sleep 60"], check=True)
    for _ in range(100):
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        time.sleep(0.05)
    raise AssertionError("the outside process did not start")


def _per_cpu_kthread(core: int) -> int:
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().strip() == f"ksoftirqd/{core}":
                return int(comm.parent.name)
        except OSError:
            continue
    pytest.skip(f"no ksoftirqd/{core} here")


def test_other_threads_leave_the_dut_core_and_come_back(tmp_path):
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores")
    outsider = _outsider(tmp_path)
    try:
        before, mine = os.sched_getaffinity(outsider), os.sched_getaffinity(0)
        assert CORE in before
        ksoftirqd = _per_cpu_kthread(CORE)
        with quiet_core.quiet({CORE}) as moved:
            assert moved >= 1 and CORE not in os.sched_getaffinity(outsider)
            assert os.sched_getaffinity(0) == mine                      # the lab places its own
            assert os.sched_getaffinity(ksoftirqd) == {CORE}            # cannot move: stays
            assert quiet_core.state() == {"cores": [CORE], "threads_moved": moved}
        assert os.sched_getaffinity(outsider) == before
        assert quiet_core.state()["threads_moved"] == 0
    finally:
        os.kill(outsider, 9)

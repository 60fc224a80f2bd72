"""A measurement keeps the DUT's core to the DUT: every thread that may run elsewhere leaves it for the run and gets
its own cores back after, the lab's own among them; per-CPU kernel threads and what the lab pinned there stay, and
what the lab starts meanwhile can still be pinned there."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from lab_helpers import wait_until
from xnf import control
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
    pinned = subprocess.Popen(["taskset", "-c", str(CORE), "sleep", "60"])
    try:
        before, mine = os.sched_getaffinity(outsider), os.sched_getaffinity(0)
        assert CORE in before and CORE in mine
        ksoftirqd = _per_cpu_kthread(CORE)
        wait_until(lambda: os.sched_getaffinity(pinned.pid) == {CORE}, what="taskset's pin")
        with quiet_core.quiet({CORE}) as moved:
            assert moved >= 2 and CORE not in os.sched_getaffinity(outsider)
            assert os.sched_getaffinity(0) == mine - {CORE}             # the lab's own leave too
            assert os.sched_getaffinity(ksoftirqd) == {CORE}            # cannot move: stays
            assert os.sched_getaffinity(pinned.pid) == {CORE}           # pinned there by the lab: stays
            placed = subprocess.run(["taskset", "-c", str(CORE), "cat", "/proc/self/status"], capture_output=True,
                                    text=True, check=True).stdout
            assert f"Cpus_allowed_list:\t{CORE}\n" in placed              # started now and pinned there: runs there
            assert quiet_core.state() == {"cores": [CORE], "threads_moved": moved}
        assert os.sched_getaffinity(outsider) == before and os.sched_getaffinity(0) == mine
        assert quiet_core.state()["threads_moved"] == 0
    finally:
        os.kill(outsider, 9)
        pinned.kill()
        pinned.wait()


def test_what_a_killed_measurement_took_is_given_back(tmp_path):
    """SIGKILL in the middle of a measurement: its journal gives every thread it moved its mask back, the next
    measurement's or the suite's start, instead of leaving init and all it starts off the DUT's core for good."""
    if (os.cpu_count() or 1) < 2:
        pytest.skip("needs two cores")
    outsider = _outsider(tmp_path)
    before, mine = os.sched_getaffinity(outsider), os.sched_getaffinity(0)
    holder = subprocess.Popen([sys.executable, "-c", "import sys, time\nfrom xnf.lab import quiet_core\n"
                               f"with quiet_core.quiet({{{CORE}}}):\n    print('quiet', flush=True)\n"
                               "    time.sleep(60)"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "quiet\n"
        assert CORE not in os.sched_getaffinity(outsider) and CORE not in os.sched_getaffinity(0)
        holder.kill()
        holder.wait()
        assert CORE not in os.sched_getaffinity(outsider)   # nobody gave it back
        assert quiet_core.give_back_left() >= 2
        assert os.sched_getaffinity(outsider) == before and os.sched_getaffinity(0) == mine
        assert not list(control.run_dir().glob(f"{quiet_core.JOURNAL_PREFIX}*"))
    finally:
        holder.kill()
        os.kill(outsider, 9)
        quiet_core.give_back_left()

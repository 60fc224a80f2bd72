"""xnf-core-pair and the core-pair study: the probe's reading and the study's per-round table, on real runs."""

from __future__ import annotations

import json
import subprocess
import uuid
from contextlib import contextmanager
from pathlib import Path

import pytest

from xnf.lab import paths
from lab_helpers import run_xnf
from xnf import build

CPUSET_V1 = Path("/sys/fs/cgroup/cpuset")
CGROUP_V2 = Path("/sys/fs/cgroup")


def probe(*args: str, confined_to: Path | None = None) -> subprocess.CompletedProcess:
    command = [str(build.tool_binary("xnf-core-pair")), *args]
    if confined_to is not None:   # the probe started inside the cpuset: it joins it before it execs
        command = ["sh", "-c", f'echo $$ > {confined_to / "cgroup.procs"} && exec "$@"', "sh", *command]
    return subprocess.run(command, capture_output=True, text=True, timeout=30)


def _v2_has_cpusets() -> bool:
    controls = CGROUP_V2 / "cgroup.subtree_control"
    return controls.exists() and "cpuset" in controls.read_text().split()


@contextmanager
def cpuset_of_cpu_0():
    """A cpuset cgroup that holds CPU 0 only, made for the test and removed after (cgroup v1's cpuset hierarchy, or
    v2 where the cpuset controller is enabled at the root); the test is skipped where there is neither."""
    name = f"xnf-test-{uuid.uuid4().hex[:8]}"
    if (CPUSET_V1 / "cpuset.cpus").exists():
        group = CPUSET_V1 / name
        group.mkdir()
        (group / "cpuset.mems").write_text("0")
    elif _v2_has_cpusets():
        group = CGROUP_V2 / name
        group.mkdir()
    else:
        pytest.skip("no cpuset cgroup here to confine the probe with")
    try:
        (group / "cpuset.cpus").write_text("0")
        yield group
    finally:
        group.rmdir()


def test_the_probe_times_the_loop_alone_beside_a_spinner_and_a_round_trip():
    done = probe("--cpu", "0", "--partner", "1", "--ms", "100")
    assert done.returncode == 0, done.stderr
    reading = json.loads(done.stdout)
    assert reading["alone_ns"] > 0 and reading["beside_spinner_ns"] > 0 and reading["partner_alone_ns"] > 0
    assert reading["round_trip_ns"] > 0
    assert abs(reading["slowdown"] - reading["beside_spinner_ns"] / reading["alone_ns"]) < 0.01


def test_the_round_trip_alone_runs_no_loop_and_no_spinner():
    done = probe("--cpu", "0", "--partner", "1", "--ms", "50", "--round-trip-only")
    assert done.returncode == 0, done.stderr
    reading = json.loads(done.stdout)
    assert set(reading) == {"cpu", "partner", "round_trip_ns"} and reading["round_trip_ns"] > 0


def test_the_probe_refuses_a_cpu_it_cannot_use_with_what_to_do():
    same = probe("--cpu", "1", "--partner", "1")
    assert same.returncode == 2 and "two different CPUs" in same.stderr
    absent = probe("--cpu", "0", "--partner", "999")
    assert absent.returncode == 2 and "is not one of this machine's cores" in absent.stderr
    assert probe("--version").stdout.split()[0] == "xnf-core-pair"


def test_the_probe_confined_to_one_cpu_refuses_rather_than_run_both_ends_there():
    """A probe that could not pin its two ends would time the loop beside a spinner on its own core and report a
    slowdown that is the scheduler's: it must refuse, saying why."""
    with cpuset_of_cpu_0() as group:
        confined = probe("--cpu", "0", "--partner", "1", "--ms", "50", confined_to=group)
        allowed = probe("--cpu", "0", "--partner", "1", "--ms", "50", "--round-trip-only", confined_to=group)
    for done in (confined, allowed):
        assert done.returncode != 0 and "confined to other CPUs" in done.stderr, done.stderr
        assert not done.stdout.strip()


def test_the_study_sets_each_rounds_rates_beside_its_probe(tmp_path):
    ran = run_xnf(["bench", "run", "core-pair", "--rounds", "3", "--seconds", "0.3", "--probe-ms", "100",
                   "--out", str(tmp_path)], timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("core_pair-*.json")
    doc = json.loads(results.read_text())["summary"]
    assert [r["round"] for r in doc["rounds"]] == [0, 1, 2]
    user = paths.find("afxdp").key   # on this kernel's transmit path
    for row in doc["rounds"]:
        assert row["slowdown"] > 0 and row["round_trip_ns"] > 0 and row["yardstick_mpps"] > 0
        assert row["xdp_over_yardstick"] > 0 and row[f"{user}_over_yardstick"] > 0
    assert set(doc["correlation"]) == {"slowdown", "round_trip_ns"}
    assert set(doc["correlation"]["round_trip_ns"]) == {"xdp", user}
    too_few = run_xnf(["bench", "run", "core-pair", "--rounds", "2", "--out", str(tmp_path)])
    assert too_few.returncode != 0 and "--rounds at least 3" in too_few.stderr

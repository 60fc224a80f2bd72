"""Helpers the integration tests share: running the CLI, the generator, checking attachments."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from contextlib import contextmanager

from xnf.build import REPO_ROOT
from xnf.lab import background, pace
from xnf.lab import topology as topo
from xnf.lab.generator import Generator


def gen(t: topo.Topology, *args: str) -> dict:
    """Runs xnf-gen on gen0 towards the DUT, receiving on gen0; returns its JSON summary."""
    return Generator(t, receive_on=0).run(*args).summary


def wait_until(condition, timeout_s: float = 5.0, what: str = "condition"):
    """Polls condition() until it holds, and returns what it gave; fails the test, saying what, if it has not within
    timeout_s."""
    deadline = time.monotonic() + pace.timeout(timeout_s)
    while not (got := condition()):
        assert time.monotonic() < deadline, f"{what}: not reached in {timeout_s} s"
        time.sleep(0.05)
    return got


def xdp_attached(ns: str, iface: str) -> bool:
    out = subprocess.run(["ip", "-n", ns, "link", "show", iface], capture_output=True, text=True).stdout
    return "prog/xdp" in out


BPF_LINK_TYPE_TCX = 11   # what bpftool before 7.3 prints for a TCX link, which it cannot name


def tcx_link_programs() -> list[int]:
    """The programs attached through TCX links anywhere (bookworm's bpftool lists a TCX link by type number, without
    its device): the ids, one per link."""
    out = subprocess.run(["bpftool", "-j", "link", "show"], capture_output=True, text=True, check=True).stdout
    return [link["prog_id"] for link in json.loads(out or "[]") if link.get("type") in (BPF_LINK_TYPE_TCX, "tcx")]


in_background = background.start   # what the tests import from here


def run_xnf(args: list[str], ns: str | None = None, timeout: float = 30):
    """Runs the xnf CLI, optionally inside a namespace."""
    argv = [sys.executable, "-m", "xnf"] + args
    if ns:
        argv = ["ip", "netns", "exec", ns] + argv
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT / "python"))
    return subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env)


def assert_rules_rejected(ns: str, nf: str, path: str, line: int, reason: str) -> None:
    """Starting nf with a rules file that is wrong at line: exit 1, naming the file, the line and the reason."""
    result = run_xnf(["run", nf, "--mode", "xdp", "--iface", "dut0", "--rules", path], ns=ns)
    assert result.returncode == 1 and f"{path}:{line}: " in result.stderr and reason in result.stderr


def _state(pid: int) -> str:
    with open(f"/proc/{pid}/stat") as f:
        return f.read().rpartition(")")[2].split()[0]


@contextmanager
def stopped(process: subprocess.Popen):
    """The process stopped (SIGSTOP) until the block ends, then resumed. The signal is delivered a moment after
    kill() returns: the block starts only once the kernel shows the process stopped, so what it tests never races
    the signal."""
    process.send_signal(signal.SIGSTOP)
    try:
        deadline = time.monotonic() + 30
        while _state(process.pid) not in ("T", "t"):
            assert time.monotonic() < deadline, f"process {process.pid} did not stop"
            time.sleep(0.01)
        yield process
    finally:
        process.send_signal(signal.SIGCONT)

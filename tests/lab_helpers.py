"""Helpers the integration tests share: running the CLI, the generator, checking attachments."""

from __future__ import annotations

import os
import subprocess
import sys

from xnf.build import REPO_ROOT
from xnf.lab import topology as topo
from xnf.lab.generator import Generator


def gen(t: topo.Topology, *args: str) -> dict:
    """Runs xnf-gen on gen0 towards the DUT, receiving on gen0; returns its JSON summary."""
    return Generator(t, receive_on=0).run(*args).summary


def xdp_attached(ns: str, iface: str) -> bool:
    out = subprocess.run(["ip", "-n", ns, "link", "show", iface], capture_output=True, text=True).stdout
    return "prog/xdp" in out


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

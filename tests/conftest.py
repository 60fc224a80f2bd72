"""Shared fixtures: a built tree, root, and topologies that are always removed."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import pytest

from xnf.build import REPO_ROOT, ensure_built
from xnf.lab import topology as topo
from xnf.lab.generator import Generator



def pytest_sessionstart(session):
    if os.geteuid() != 0:
        pytest.exit("the xnf tests need root (namespaces, XDP): run them with sudo ./scripts/test.sh", returncode=2)
    ensure_built()
    topo.remove_stale()
    # SIGTERM (a CI timeout, kill) becomes KeyboardInterrupt, so fixtures still tear down.
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def pytest_sessionfinish(session, exitstatus):
    topo.teardown_all()


@pytest.fixture
def pair():
    with topo.Topology("pair") as t:
        yield t


@pytest.fixture
def bare_pair():
    """A pair whose generator side is free for xnf-gen's receiver."""
    with topo.Topology("pair", gen_xdp=None) as t:
        yield t


def gen(t: topo.Topology, *args: str) -> dict:
    """Runs xnf-gen on gen0 towards the DUT, receiving on gen0; returns its JSON summary."""
    return Generator(t, receive_on=0).run(*args).summary


@pytest.fixture
def two_port():
    with topo.Topology("two-port") as t:
        yield t


@pytest.fixture
def rules_file(tmp_path):
    """Writes rules text to a file and returns its path."""

    def write(text: str, name: str = "rules.txt") -> str:
        path = tmp_path / name
        path.write_text(text)
        return str(path)

    return write


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

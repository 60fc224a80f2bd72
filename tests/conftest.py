"""Shared fixtures: topologies that are always removed, rules files. (Root and the build: ../conftest.py;
helpers the tests import: lab_helpers.py.)"""

from __future__ import annotations

import subprocess

import pytest

from xnf.lab import topology as topo


@pytest.fixture
def pair():
    with topo.Topology("pair") as t:
        yield t


@pytest.fixture
def bare_pair():
    """A pair whose generator side is free for xnf-gen's receiver."""
    with topo.Topology("pair", gen_xdp=None) as t:
        yield t


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


@pytest.fixture
def bpffs(tmp_path):
    """A bpffs every process of the test sees (ip netns exec hides /sys/fs/bpf): where --state keeps an NF."""
    folder = tmp_path / "bpffs"
    folder.mkdir()
    subprocess.run(["mount", "-t", "bpf", "bpf", str(folder)], check=True)
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)

"""`pip install .`, not editable, into a fresh virtual environment: the wheel carries xnf's programs (setup.py
builds them with the project's Makefile into the package), so the installed `xnf` lists its NFs and runs one
through veth in the kernel and in user space, far from the checkout."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from packets import udp4
from test_xdp_nfs import exchange
from xnf.build import PACKAGED_PREFIX, REPO_ROOT
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths


@pytest.fixture(scope="module")
def venv(tmp_path_factory) -> Path:
    """A virtual environment with xnf pip-installed from the checkout (its Python dependencies from the system's
    site-packages, so that nothing but the build backend is fetched)."""
    where = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(where)], check=True)
    installed = subprocess.run([str(where / "bin" / "pip"), "install", "-q", "--root-user-action=ignore",
                                str(REPO_ROOT)], capture_output=True, text=True, cwd="/")
    assert installed.returncode == 0, installed.stderr
    return where


def venv_env(venv: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "XNF_PREFIX")}
    return dict(env, PATH=f"{venv / 'bin'}:{env['PATH']}")


def xnf(venv: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(venv / "bin" / "xnf"), *args], capture_output=True, text=True, cwd="/",
                          env=venv_env(venv))


def test_the_wheel_carries_the_programs_and_imports_nothing_from_the_checkout(venv):
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import xnf.build as b; print(b.layout().root)"],
                           capture_output=True, text=True, cwd="/", env=venv_env(venv), check=True).stdout.strip()
    assert Path(where).parts[-2:] == ("xnf", PACKAGED_PREFIX) and str(REPO_ROOT) not in where
    listed = xnf(venv, "list", "--json")
    assert listed.returncode == 0, listed.stderr
    names = {nf["nf"] for nf in json.loads(listed.stdout)}
    assert {"macswap", "firewall", "router", "lb"} <= names


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_the_installed_xnf_runs_an_nf_through_veth(venv, mode, pair):
    name = f"{pair.dut_ns}-wheel"
    proc = pair.spawn(pair.dut_ns, [str(venv / "bin" / "xnf"), "run", "macswap", "--mode", mode, "--name", name,
                              *[w for iface in pair.dut_ifaces for w in ("--iface", iface)]], env=venv_env(venv))
    nf = NfInstance(pair, "macswap", name, proc)
    nf._wait_ready()
    link = pair.links[0]
    got = exchange(pair, [udp4(link, 1000 + i, 53, seq=i) for i in range(20)], expect=20)
    assert len(got) == 20
    assert all(frame[:6] == bytes.fromhex(link.gen_mac.replace(":", "")) for frame in got)
    proc.send_signal(signal.SIGINT)
    assert proc.wait(timeout=10) == 0

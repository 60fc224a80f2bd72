"""An NF that lives outside the repository: `make install` lays out the SDK and the Python package, the example
(examples/portblock) builds against the installed pkg-config file and with the installed `xnf build`, and the
binary runs through veth in the kernel and in user space like any NF xnf ships."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from lab_helpers import run_xnf
from packets import tcp6, udp4
from test_xdp_nfs import exchange
from xnf.build import REPO_ROOT
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

# An unusual prefix, staged under DESTDIR: nothing may depend on the install being where PREFIX says.
PREFIX = "/opt/xnf-staged"
BLOCKED = "block udp 53\nblock tcp 22\n"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """xnf installed with DESTDIR; returns the staged prefix."""
    destdir = tmp_path_factory.mktemp("destdir")
    made = subprocess.run(["make", "-s", "install", f"DESTDIR={destdir}", f"PREFIX={PREFIX}"], cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert made.returncode == 0, made.stderr
    return destdir / PREFIX.lstrip("/")


@pytest.fixture
def example(tmp_path) -> Path:
    """A copy of examples/portblock in a folder of its own, far from the checkout."""
    folder = tmp_path / "src" / "portblock"
    shutil.copytree(REPO_ROOT / "examples" / "portblock", folder, ignore=shutil.ignore_patterns("build"))
    return folder


def installed_env(prefix: Path, nf_dir: Path) -> dict:
    """The environment of a user of the installed xnf: its bin/ on PATH, its package importable."""
    package = next(prefix.glob("lib/python3*/site-packages"))
    return dict(os.environ, PATH=f"{prefix / 'bin'}:{os.environ['PATH']}", PYTHONPATH=str(package),
                XNF_NF_DIR=str(nf_dir))


def run_installed(prefix: Path, nf_dir: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(prefix / "bin" / "xnf"), *args], capture_output=True, text=True,
                          env=installed_env(prefix, nf_dir), cwd="/")


def test_install_lays_out_the_sdk_and_nothing_of_the_runtime_for_nfs(installed):
    for path in ("include/xnf/nf.h", "include/xnf/control.h", "lib/xnf/libxnf.a", "lib/xnf/main.o",
                 "lib/pkgconfig/xnf.pc", "share/xnf/nf.mk", "bin/xnf-gen", "bin/xnf-firewall", "bin/xnf"):
        assert (installed / path).is_file(), path
    assert not (installed / "include/xnf/runtime").exists()  # the runtime's headers stay off the NF API


def test_the_example_builds_with_the_installed_pkg_config(installed, example):
    env = dict(os.environ, PKG_CONFIG_PATH=str(installed / "lib/pkgconfig"))
    made = subprocess.run(["make", "-C", str(example)], capture_output=True, text=True, env=env)
    assert made.returncode == 0, made.stderr
    assert f"-I{REPO_ROOT}/include" not in made.stdout and str(installed / "lib/xnf/libxnf.a") in made.stdout
    described = json.loads(subprocess.run([str(example / "build" / "xnf-portblock"), "describe", "--json"],
                                          capture_output=True, text=True, check=True).stdout)
    assert described["nf"] == "portblock"
    assert described["counters"] == ["blocked", "passed", "no_port"]
    assert described["rules_syntax"] == "block tcp|udp PORT"


def test_the_installed_xnf_builds_it_and_every_command_finds_it(installed, example, tmp_path):
    nf_dir = tmp_path / "nfs"
    where = run_installed(installed, nf_dir, "build", str(example))
    assert where.returncode == 0, where.stderr
    assert (nf_dir / "xnf-portblock").is_file()
    imported = subprocess.run(["python3", "-c", "import xnf; print(xnf.__file__)"], capture_output=True, text=True,
                              env=installed_env(installed, nf_dir), cwd="/").stdout
    assert imported.startswith(str(installed))  # the installed package answered, not the checkout's
    listed = run_installed(installed, nf_dir, "list").stdout.splitlines()
    assert "firewall" in listed and f"portblock\t(built: {nf_dir / 'xnf-portblock'})" in listed
    helped = run_installed(installed, nf_dir, "run", "portblock", "--help")
    assert helped.returncode == 0 and "--mode MODE" in helped.stdout
    refused = run_installed(installed, nf_dir, "run", "chain:portblock,drop", "--help")
    assert refused.returncode == 1 and "chains are built from the sources of an xnf checkout" in refused.stderr


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_the_built_nf_blocks_its_ports_through_veth(installed, example, tmp_path, monkeypatch, rules_file, mode, pair):
    nf_dir = tmp_path / "nfs"
    assert run_installed(installed, nf_dir, "build", str(example)).returncode == 0
    monkeypatch.setenv("XNF_NF_DIR", str(nf_dir))
    nf = NfInstance.start(pair, "portblock", mode, pair.dut_ifaces, rules=rules_file(BLOCKED))
    link = pair.links[0]
    blocked = [udp4(link, 1000 + i, 53, seq=i) for i in range(20)] + [tcp6(link, 4000 + i, 22) for i in range(5)]
    passing = [udp4(link, 1000 + i, 54, seq=i) for i in range(30)] + [tcp6(link, 4000, 23)]
    got = exchange(pair, blocked + passing, expect=len(passing))
    assert len(got) == len(passing)
    counters = json.loads(nf.request("stats"))["counters"]
    assert counters == {"blocked": len(blocked), "passed": len(passing), "no_port": 0}
    assert nf.stats()["drop"]["packets"] == len(blocked)
    assert sorted(nf.request("rules list").splitlines()) == sorted(BLOCKED.splitlines())
    listed = run_installed(installed, nf_dir, "rules", "list", "--name", nf.name)
    assert listed.returncode == 0 and "block udp 53" in listed.stdout
    assert nf.stop() == 0


def test_build_takes_paths_make_cannot_and_refuses_what_it_cannot_build(tmp_path):
    """A folder and an output whose paths hold a space build (make cannot read such paths: xnf links them from
    ones it can); an output that is a file, and a name the checkout's test NFs already take, are refused."""
    spaced = tmp_path / "dir with space" / "portblock"
    shutil.copytree(REPO_ROOT / "examples" / "portblock", spaced, ignore=shutil.ignore_patterns("build"))
    out = tmp_path / "out dir"
    built = run_xnf(["build", str(spaced), "--out", str(out)])
    assert built.returncode == 0, built.stderr
    assert (out / "xnf-portblock").is_file() and f"XNF_NF_DIR='{out}'" in built.stdout + built.stderr
    to_file = run_xnf(["build", str(spaced), "--out", "/dev/null"])
    assert to_file.returncode == 1 and "is not a folder" in to_file.stderr and "Traceback" not in to_file.stderr
    twin = tmp_path / "ratelimit"
    twin.mkdir()
    shutil.copy(REPO_ROOT / "examples" / "portblock" / "portblock.c", twin / "ratelimit.c")
    clash = run_xnf(["build", str(twin), "--out", str(out)])
    assert clash.returncode == 1 and "test NFs" in clash.stderr

"""The deployment artifacts (docs/deployment.md): the container image builds from this checkout with the README's
script (a debootstrap base from Debian's packages, no registry) and runs an NF over a veth pair of the test's own
namespaces from its environment; stopping it leaves nothing attached; the Kubernetes manifests pass the Kubernetes
schemas, offline."""

from __future__ import annotations

import os
import resource
import subprocess
import sys
import time

import pytest

from lab_helpers import xdp_attached
from xnf import control
from xnf.build import REPO_ROOT
from xnf.errors import XnfError
from xnf.lab.generator import Generator

IMAGE = "localhost/xnf:latest"
# This lab's machines give root no CAP_SYS_RESOURCE and mix cgroup v1 and v2, where podman's defaults fail (crun
# refuses hybrid cgroups; the default limits would have to be raised): runc, and limits no higher than the host's.
OPEN_FILES = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
PODMAN_RUN = ["podman", "run", "--runtime", "runc", "--ulimit", f"nofile={OPEN_FILES}:{OPEN_FILES}",
              "--ulimit", "nproc=4096:4096"]
FRAMES = 1000
MANIFESTS = sorted((REPO_ROOT / "deploy" / "kubernetes").glob("*.yaml"))


@pytest.fixture(scope="module")
def image() -> str:
    built = subprocess.run([str(REPO_ROOT / "scripts" / "build-image.sh")], capture_output=True, text=True,
                           timeout=1800)
    assert built.returncode == 0, built.stdout[-2000:] + built.stderr[-3000:]
    return IMAGE


def wait_for(name: str, run_dir: str, container: str, timeout_s: float = 30) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            control.request(name, "info", run_dir)
            return
        except XnfError:
            time.sleep(0.2)
    logs = subprocess.run(["podman", "logs", container], capture_output=True, text=True)
    raise AssertionError(f"the NF in the container did not answer: {logs.stdout}{logs.stderr}")


def test_the_image_runs_an_nf_from_its_environment_over_a_veth_pair(image, tmp_path, bare_pair):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    container = f"xnf-test-{os.getpid()}"
    bare_pair.on_teardown(lambda: subprocess.run(["podman", "rm", "-f", container], capture_output=True))
    started = subprocess.run([*PODMAN_RUN, "-d", "--rm", "--name", container, "--privileged",
                              "--network", f"ns:/var/run/netns/{bare_pair.dut_ns}", "-v", f"{run_dir}:/run/xnf",
                              "-e", "XNF_NF=macswap", "-e", "XNF_MODE=xdp", "-e", "XNF_IFACE=dut0",
                              "-e", "XNF_NAME=edge", image], capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    wait_for("edge", str(run_dir), container)
    out = Generator(bare_pair, receive_on=0).run("--count", str(FRAMES), "--rate", "100000").summary
    assert out["received"] == FRAMES
    stats = control.request_json("edge", "stats", str(run_dir))
    assert stats["nf"] == "macswap" and stats["verdicts"]["tx"]["packets"] == FRAMES
    stopped = subprocess.run(["podman", "stop", "-t", "10", container], capture_output=True, text=True,
                             timeout=60)
    assert stopped.returncode == 0, stopped.stderr
    assert not xdp_attached(bare_pair.dut_ns, "dut0")


def test_the_image_runs_the_instances_of_a_configuration_file(image, tmp_path, bare_pair):
    """The file `xnf apply` and the systemd unit take, mounted at /etc/xnf/xnf.toml: xnf daemon runs it."""
    run_dir, etc = tmp_path / "run", tmp_path / "etc"
    run_dir.mkdir()
    etc.mkdir()
    (etc / "xnf.toml").write_text('[instance.edge]\nnf = "macswap"\nmode = "xdp"\nifaces = ["dut0"]\n')
    container = f"xnf-test-config-{os.getpid()}"
    bare_pair.on_teardown(lambda: subprocess.run(["podman", "rm", "-f", container], capture_output=True))
    started = subprocess.run([*PODMAN_RUN, "-d", "--rm", "--name", container, "--privileged",
                              "--network", f"ns:/var/run/netns/{bare_pair.dut_ns}", "-v", f"{run_dir}:/run/xnf",
                              "-v", f"{etc}:/etc/xnf:ro", image], capture_output=True, text=True, timeout=60)
    assert started.returncode == 0, started.stderr
    wait_for("edge", str(run_dir), container)
    out = Generator(bare_pair, receive_on=0).run("--count", str(FRAMES), "--rate", "100000").summary
    assert out["received"] == FRAMES
    stopped = subprocess.run(["podman", "stop", "-t", "30", container], capture_output=True, text=True,
                             timeout=90)
    assert stopped.returncode == 0, stopped.stderr
    assert not xdp_attached(bare_pair.dut_ns, "dut0")


def test_the_image_says_what_it_needs(image):
    missing = subprocess.run([*PODMAN_RUN, "--rm", image], capture_output=True, text=True, timeout=60)
    assert missing.returncode != 0 and "set XNF_NF" in missing.stderr


def test_the_kubernetes_manifests_pass_the_schemas():
    """kubernetes-validate (a test dependency, pyproject.toml) carries the schemas: nothing is fetched."""
    checked = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict", *map(str, MANIFESTS)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert len(MANIFESTS) == 4


def test_the_schema_check_would_catch_a_broken_manifest(tmp_path):
    broken = tmp_path / "broken.yaml"
    broken.write_text((REPO_ROOT / "deploy" / "kubernetes" / "xnf-daemonset.yaml").read_text()
                      .replace("hostNetwork: true", "hostNetwork: true\n      hostNetworking: yes"))
    checked = subprocess.run([sys.executable, "-m", "kubernetes_validate", "--strict", str(broken)],
                             capture_output=True, text=True, timeout=120)
    assert checked.returncode != 0 and "hostNetworking" in checked.stdout + checked.stderr

"""tests/unit needs neither root nor a build: run on a copy of the tree that has never been built, with every
capability dropped (no CAP_BPF, CAP_NET_ADMIN, CAP_SYS_ADMIN...), it passes and builds nothing."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

from xnf.build import REPO_ROOT


def test_unit_tests_run_unprivileged_on_an_unbuilt_tree(tmp_path):
    copy = tmp_path / "xnf"
    listed = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=REPO_ROOT,
                            capture_output=True, text=True, check=True).stdout.split("\n")
    for name in filter(None, listed):
        if (REPO_ROOT / name).is_file():
            (copy / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(REPO_ROOT / name, copy / name)
    assert not (copy / "build").exists()
    unprivileged = ["setpriv", "--bounding-set=-all", "--inh-caps=-all", "--ambient-caps=-all", "--no-new-privs"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("XNF_")}
    ran = subprocess.run([*unprivileged, sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/unit"],
                         cwd=copy, capture_output=True, text=True, env=env, timeout=300)
    assert ran.returncode == 0, ran.stdout[-3000:] + ran.stderr[-2000:]
    assert " passed" in ran.stdout and "skipped" not in ran.stdout
    assert not (copy / "build").exists()
    capabilities = subprocess.run([*unprivileged, "grep", "CapEff", "/proc/self/status"], capture_output=True,
                                  text=True).stdout
    assert capabilities.split()[-1] == "0000000000000000"  # the tests really ran without any

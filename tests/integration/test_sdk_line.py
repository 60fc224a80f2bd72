"""The SDK line: an NF's sources reach <xnf/nf.h> and <xnf/control.h> and nothing else of xnf, and the build
says so plainly when one tries."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from xnf.build import REPO_ROOT

NF = """#include <xnf/nf.h>
{extra}
static __always_inline xnf_verdict {name}(struct xnf_pkt *pkt)
{{
\treturn XNF_DROP;
}}
XNF_DEFINE_NF({name});
"""


@pytest.fixture(autouse=True)
def no_leftovers():
    """The test NFs' objects and binaries go once the test is done: they are built from a temporary folder."""
    yield
    for name in ("sdk_reach", "sdk_clean"):
        shutil.rmtree(REPO_ROOT / "build/nfs" / name, ignore_errors=True)
        (REPO_ROOT / "build/bin" / f"xnf-{name}").unlink(missing_ok=True)


def build(tmp_path, name: str, extra: str) -> subprocess.CompletedProcess:
    folder = tmp_path / name
    folder.mkdir()
    (folder / f"{name}.c").write_text(NF.format(name=name, extra=extra))
    return subprocess.run(["make", "-s", f"NF_EXTRA_DIRS={folder}", f"build/bin/xnf-{name}"], cwd=REPO_ROOT,
                          capture_output=True, text=True)


@pytest.mark.parametrize("header", ["xnf/runtime/log.h", "xnf/internal/bpf_glue.h"])
def test_an_nf_that_reaches_past_the_sdk_does_not_build(tmp_path, header):
    made = build(tmp_path, "sdk_reach", f"#include <{header}>")
    assert made.returncode != 0
    assert f"sdk_reach.c:2: includes <{header}>, which is xnf's own, not the NF API" in made.stderr
    assert "<xnf/nf.h> (the data path) and <xnf/control.h> (the control side)" in made.stderr
    assert not (REPO_ROOT / "build/bin/xnf-sdk_reach").exists()


def test_the_compiler_itself_refuses_the_glue(tmp_path):
    """Past the build's check (a hand-made build, say), the glue's own guard still stops the compiler."""
    source = tmp_path / "direct.c"
    source.write_text("#include <xnf/internal/native_glue.h>\n")
    made = subprocess.run(["cc", "-c", "-Iinclude", str(source), "-o", str(tmp_path / "direct.o")], cwd=REPO_ROOT,
                          capture_output=True, text=True)
    assert made.returncode != 0 and "xnf/internal/ is xnf's own glue, not the NF API" in made.stderr


def test_an_nf_within_the_sdk_builds(tmp_path):
    made = build(tmp_path, "sdk_clean", "#include <xnf/control.h>")
    assert made.returncode == 0, made.stderr
    assert (REPO_ROOT / "build/bin/xnf-sdk_clean").exists()

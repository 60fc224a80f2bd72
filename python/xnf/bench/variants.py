"""Variant builds for benchmarks that measure a build-time switch (a hook or an optimisation compiled out) beside
the usual build, in the same run: make's VARIANT_DEFINES into a build folder of the variant's own."""

from __future__ import annotations

import subprocess
from pathlib import Path

from xnf import build
from xnf.errors import XnfError


def binaries(name: str, defines: str, programs: list[str]) -> dict[str, Path]:
    """programs (xnf-macswap...) built with defines into build/variants/NAME, by program name."""
    folder = build.REPO_ROOT / "build" / "variants" / name
    targets = {program: folder / "bin" / program for program in programs}
    made = subprocess.run(["make", "-s", "-j2", f"BUILD={folder.relative_to(build.REPO_ROOT)}",
                           f"VARIANT_DEFINES={defines}",
                           *(str(t.relative_to(build.REPO_ROOT)) for t in targets.values())],
                          cwd=build.REPO_ROOT, capture_output=True, text=True)
    if made.returncode != 0:
        raise XnfError(f"the {name} variant did not build: {made.stderr.strip()[-2000:]}")
    return targets

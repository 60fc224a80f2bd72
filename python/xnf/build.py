"""Where the built artefacts live, and building them when they are missing."""

from __future__ import annotations

import subprocess
from pathlib import Path

from xnf.errors import XnfError

REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "build"
BIN_DIR = BUILD_DIR / "bin"
NF_SOURCE_DIRS = (REPO_ROOT / "nfs",)


def available_nfs() -> list[str]:
    """NFs shipped in nfs/ (each folder nfs/<name>/<name>.c is one NF)."""
    names = []
    for base in NF_SOURCE_DIRS:
        for folder in sorted(base.iterdir()) if base.is_dir() else []:
            if (folder / f"{folder.name}.c").is_file():
                names.append(folder.name)
    return names


def test_nfs() -> list[str]:
    """NFs that exist for the tests (tests/nfs/<name>/<name>.c)."""
    folder = REPO_ROOT / "tests" / "nfs"
    return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.c").is_file()) if folder.is_dir() else []


def nf_source(nf: str) -> Path:
    """The one source file of an NF (shipped or test)."""
    for base in NF_SOURCE_DIRS + (REPO_ROOT / "tests" / "nfs",):
        if (base / nf / f"{nf}.c").is_file():
            return base / nf / f"{nf}.c"
    raise XnfError(f"unknown NF '{nf}': choose one of {', '.join(available_nfs())}")


def ensure_built() -> None:
    """Runs make (quietly) so that binaries match the sources."""
    result = subprocess.run(["make", "-s", "-C", str(REPO_ROOT)], capture_output=True, text=True)
    if result.returncode != 0:
        raise XnfError(f"building xnf failed; run 'make' in {REPO_ROOT} to see why:\n{result.stderr.strip()}")


def nf_binary(nf: str) -> Path:
    """The binary of an NF or a chain ('chain:a,b'), built if needed; unknown NFs get a clear error."""
    from xnf import chain  # chain builds on this module

    if chain.is_chain(nf):
        return chain.ensure_chain(nf)
    path = BIN_DIR / f"xnf-{nf}"
    if not path.exists():
        known = available_nfs()
        if nf not in known and not (REPO_ROOT / "tests" / "nfs" / nf).is_dir():
            raise XnfError(f"unknown NF '{nf}': choose one of {', '.join(known)}")
        ensure_built()
    return path


def tool_binary(name: str) -> Path:
    path = BIN_DIR / name
    if not path.exists():
        ensure_built()
    return path

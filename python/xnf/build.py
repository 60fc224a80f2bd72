"""Where xnf's programs are, and building them when they are missing.

Two layouts hold them. A checkout: this package sits in python/ beside the Makefile, the programs are in
build/ and `make` builds what is missing. An installed prefix (`make install`, or the one a wheel carries inside
this package: `pip install .`): PREFIX/bin, PREFIX/lib/xnf/bpf, PREFIX/share/xnf. XNF_PREFIX names either one explicitly. NFs built outside both (`xnf build DIR`) live in
the user's NF folder (XNF_NF_DIR, else ~/.local/share/xnf/nfs), searched after the NFs xnf ships.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from xnf import user_data
from xnf.errors import XnfError

# The checkout this package sits in, when it sits in one: the tests and bench/ run from it.
REPO_ROOT = Path(__file__).resolve().parents[2]
BUILD_DIR = REPO_ROOT / "build"
BIN_DIR = BUILD_DIR / "bin"

# Written by `make install`: the names of the NFs it installed, one per line.
SHIPPED_NFS_LIST = "share/xnf/nfs"
# Where a wheel (pip install ., setup.py) carries the programs: a prefix inside this package.
PACKAGED_PREFIX = "_prefix"


@dataclass(frozen=True)
class Layout:
    root: Path
    checkout: bool

    @property
    def bin_dir(self) -> Path:
        return self.root / ("build/bin" if self.checkout else "bin")

    @property
    def bpf_dir(self) -> Path:
        return self.root / ("build/bpf" if self.checkout else "lib/xnf/bpf")

    @property
    def nf_mk(self) -> Path:
        """The NF build recipe `xnf build` runs (mk/nf.mk; it finds the SDK from where it sits)."""
        return self.root / ("mk/nf.mk" if self.checkout else "share/xnf/nf.mk")

    def shipped_nfs(self) -> list[str]:
        if self.checkout:
            folder = self.root / "nfs"
            return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.c").is_file())
        return (self.root / SHIPPED_NFS_LIST).read_text().split()


def _is_checkout(path: Path) -> bool:
    return (path / "Makefile").is_file() and (path / "mk" / "nf.mk").is_file() and (path / "nfs").is_dir()


def _is_installed(path: Path) -> bool:
    return (path / SHIPPED_NFS_LIST).is_file()


def _install_candidates() -> list[Path]:
    """Prefixes xnf may be installed under: the one inside this package (a wheel's, setup.py), the one this
    package is installed under (PREFIX/lib/python3.X/site-packages/xnf), the one whose bin/ holds the xnf-gen on
    PATH, and Python's."""
    here = Path(__file__).resolve().parents
    found = [here[0] / PACKAGED_PREFIX] + ([here[4]] if len(here) > 4 else [])
    generator = shutil.which("xnf-gen")
    if generator:
        found.append(Path(generator).resolve().parents[1])
    found.append(Path(sys.prefix))
    return found


@functools.cache
def layout() -> Layout:
    named = os.environ.get("XNF_PREFIX")
    if named:
        root = Path(named).resolve()
        if _is_checkout(root) or _is_installed(root):
            return Layout(root, _is_checkout(root))
        raise XnfError(f"XNF_PREFIX={named} is neither an xnf checkout nor a prefix xnf is installed under "
                       f"(no {SHIPPED_NFS_LIST}): point it at one, or unset it")
    if _is_checkout(REPO_ROOT):
        return Layout(REPO_ROOT, True)
    for prefix in _install_candidates():
        if _is_installed(prefix):
            return Layout(prefix, False)
    raise XnfError("xnf's programs are not installed: run 'pip install .' or 'make install' in an xnf checkout "
                   "(PREFIX=DIR chooses where), or set XNF_PREFIX to the prefix they were installed under")


def user_nf_dirs() -> list[Path]:
    """Where `xnf build` puts NFs and every command looks for them: XNF_NF_DIR, else the user's data folder
    (and, under sudo, the invoking user's: an NF built without root is then found by `sudo xnf run`)."""
    if os.environ.get("XNF_NF_DIR"):
        return [Path(os.environ["XNF_NF_DIR"])]
    dirs = [user_data.data_dir() / "nfs"]
    invoker = os.environ.get("SUDO_USER")
    if invoker and os.geteuid() == 0:
        dirs.append(Path(os.path.expanduser(f"~{invoker}")) / ".local/share/xnf/nfs")
    return dirs


def user_nfs() -> dict[str, Path]:
    """NFs built with `xnf build`: name -> binary (the first folder that has it wins)."""
    found: dict[str, Path] = {}
    for folder in reversed(user_nf_dirs()):
        for binary in sorted(folder.glob("xnf-*")) if folder.is_dir() else []:
            if os.access(binary, os.X_OK):
                found[binary.name.removeprefix("xnf-")] = binary
    return found


def available_nfs() -> list[str]:
    """The NFs xnf ships, then the ones built with `xnf build`."""
    shipped = layout().shipped_nfs()
    return shipped + sorted(set(user_nfs()) - set(shipped))


def test_nfs() -> list[str]:
    """NFs that exist for the tests (tests/nfs/<name>/<name>.c, in a checkout)."""
    folder = layout().root / "tests" / "nfs"
    if not layout().checkout or not folder.is_dir():
        return []
    return sorted(p.name for p in folder.iterdir() if (p / f"{p.name}.c").is_file())


def nf_source(nf: str) -> Path:
    """The one source file of an NF shipped in (or tested by) a checkout."""
    root = layout().root
    for base in (root / "nfs", root / "tests" / "nfs"):
        if (base / nf / f"{nf}.c").is_file():
            return base / nf / f"{nf}.c"
    raise XnfError(f"no source of '{nf}' in an xnf checkout: chains are built from the NFs of a checkout "
                   f"({', '.join(layout().shipped_nfs())})")


def ensure_built() -> None:
    """Runs make (quietly) in a checkout so that binaries match the sources; an install is built already."""
    if not layout().checkout:
        return
    root = layout().root
    result = subprocess.run(["make", "-s", "-C", str(root)], capture_output=True, text=True)
    if result.returncode != 0:
        raise XnfError(f"building xnf failed; run 'make' in {root} to see why:\n{result.stderr.strip()}")


def _unknown_nf(nf: str) -> XnfError:
    return XnfError(f"unknown NF '{nf}': choose one of {', '.join(available_nfs())}, or build your own "
                    "with 'xnf build DIR'")


def nf_binary(nf: str) -> Path:
    """The binary of one NF (not a chain: programs.nf_binary), built if needed; unknown NFs get a clear error."""
    if nf in layout().shipped_nfs() or nf in test_nfs():
        path = layout().bin_dir / f"xnf-{nf}"
        if not path.exists():
            ensure_built()
        return path
    built = user_nfs().get(nf)
    if built is None:
        raise _unknown_nf(nf)
    return built


def tool_binary(name: str) -> Path:
    """One of xnf's programs (xnf-gen, xnf-gen-ref, ...)."""
    path = layout().bin_dir / name
    if not path.exists():
        ensure_built()
    if not path.exists():
        raise XnfError(f"{path} is missing: reinstall xnf ('make install' in its checkout)")
    return path


def bpf_object(name: str) -> Path:
    """One of xnf's own BPF programs (bpf/NAME.bpf.c), e.g. the generator side's xnf_pass."""
    path = layout().bpf_dir / f"{name}.bpf.o"
    if not path.exists():
        ensure_built()
    return path

"""`xnf build DIR`: an NF that lives outside xnf's repository, built into an xnf-NAME binary that every `xnf`
command then finds. The build is mk/nf.mk, the same rules that build the NFs xnf ships, against the SDK of
this xnf (a checkout or an installed prefix)."""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
from pathlib import Path

from xnf import build
from xnf.errors import XnfError

# The NF's name becomes C identifiers (its function, its BPF skeleton) and the binary's name.
NF_NAME = re.compile(r"[a-z_][a-z0-9_]*\Z")


def _checked_name(folder: Path) -> str:
    if not folder.is_dir():
        raise XnfError(f"{folder} is not a folder: give the folder that holds your NF (NAME/NAME.c)")
    name = folder.name
    if not (folder / f"{name}.c").is_file():
        raise XnfError(f"{folder} holds no {name}.c: an NF's folder is named after the NF and holds NAME.c "
                       "(docs/writing-an-nf.md shows one from an empty folder)")
    if not NF_NAME.match(name):
        raise XnfError(f"'{name}' cannot name an NF: use lower-case letters, digits and _ (it becomes C names)")
    if name in build.layout().shipped_nfs():
        raise XnfError(f"'{name}' is an NF xnf ships: give yours another name (its folder and NAME.c)")
    if name in build.test_nfs():
        raise XnfError(f"'{name}' is one of this checkout's test NFs (tests/nfs/), which every command would find "
                       "first: give yours another name (its folder and NAME.c)")
    return name


def _out_folder(out: Path | None) -> Path:
    out = (out or build.user_nf_dirs()[0]).resolve()
    if out.exists() and not out.is_dir():
        raise XnfError(f"--out {out} is not a folder: give the folder the binary goes to")
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise XnfError(f"cannot make the folder {out}: {err.strerror}") from None
    return out


# What make takes in a path without quoting: the rest (a space, '$', '#', ':') it reads as its own syntax.
MAKE_SAFE_PATH = re.compile(r"[A-Za-z0-9_./+-]+\Z")


def _make_safe(path: Path, links: Path) -> Path:
    """path itself, or, where make would misread it, a link to it from a temporary folder."""
    if MAKE_SAFE_PATH.match(str(path)):
        return path
    link = links / f"{len(list(links.iterdir()))}-{path.name if MAKE_SAFE_PATH.match(path.name) else 'folder'}"
    link.symlink_to(path)
    return link


def _check_binary(binary: Path, name: str) -> None:
    """The binary must answer as the NF it was built from, or nothing else would find it right."""
    answer = subprocess.run([str(binary), "describe", "--json"], capture_output=True, text=True)
    described = json.loads(answer.stdout) if answer.returncode == 0 else {}
    if described.get("nf") != name:
        raise XnfError(f"{binary} was built but does not describe itself as {name}: {answer.stderr.strip()}")


def build_nf(folder: Path, out: Path | None = None) -> Path:
    """Builds the NF in folder (objects in folder/build) into out/xnf-NAME; returns the binary."""
    folder = folder.resolve()
    name = _checked_name(folder)
    out = _out_folder(out)
    build.ensure_built()
    with tempfile.TemporaryDirectory(prefix="xnf-build-") as links:
        # an NF's folder keeps its name through the link: the recipe takes NAME from it
        source = folder if MAKE_SAFE_PATH.match(str(folder)) else Path(links) / "nf" / name
        if source != folder:
            source.parent.mkdir()
            source.symlink_to(folder)
        made = subprocess.run(["make", "-s", "-f", str(build.layout().nf_mk), f"NF_DIR={source}",
                               f"OUT={_make_safe(out, Path(links))}"], capture_output=True, text=True)
    if made.returncode != 0:
        raise XnfError(f"building {name} failed:\n{(made.stderr or made.stdout).strip()[-4000:]}")
    binary = out / f"xnf-{name}"
    _check_binary(binary, name)
    return binary

"""The kernel's BPF maps as bpftool shows them: the newest of a name (the instance a test or study just started
made it last), a pinned one, and their entries as BTF formats them."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from xnf.errors import XnfError


def _bpftool(*argv: str) -> list[dict]:
    done = subprocess.run(["bpftool", "-j", *argv], capture_output=True, text=True)
    if done.returncode != 0:
        raise XnfError(f"bpftool {' '.join(argv)} failed: {_reason(done)}")
    return json.loads(done.stdout or "[]")


def _reason(done: subprocess.CompletedProcess) -> str:
    """With -j bpftool writes its error as JSON on stdout ({"error": ...}), not on stderr."""
    try:
        return json.loads(done.stdout)["error"]
    except (ValueError, KeyError, TypeError):
        return done.stderr.strip() or f"exit code {done.returncode}"


def newest(name: str, max_entries: int | None = None) -> dict | None:
    """bpftool's record of the newest map of that name (and size, if given), or None when there is none."""
    maps = [m for m in _bpftool("map", "show")
            if m.get("name") == name and max_entries in (None, m.get("max_entries"))]
    return max(maps, key=lambda m: m["id"]) if maps else None


def entries(name: str, max_entries: int | None = None) -> list[dict]:
    """The newest map of that name's entries: [{"key": ..., "value": ...}] as BTF names their fields."""
    shown = newest(name, max_entries)
    if shown is None:
        raise XnfError(f"no BPF map named {name} is loaded")
    return [entry["formatted"] for entry in _bpftool("map", "dump", "id", str(shown["id"]))]


def pinned_entries(pin: Path) -> list[dict]:
    """The entries of the map pinned at pin (bpffs), as entries() gives them."""
    return [entry["formatted"] for entry in _bpftool("map", "dump", "pinned", str(pin))]

"""Where xnf keeps what it makes for a user: the machine profile, the NFs `xnf build` makes, the results of
`xnf bench` and `xnf report`. The user's data folder (XDG_DATA_HOME, else ~/.local/share) holds an xnf/ folder;
in a checkout, results go to its results/ folder instead, beside the studies that wrote them. Never the current
directory unless asked (--out)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share") / "xnf"


def results_dir() -> Path:
    """Where `xnf bench run` and `xnf report reproduce` write by default."""
    from xnf import build
    from xnf.errors import XnfError

    try:
        where = build.layout()
    except XnfError:   # programs not installed: said where they are needed, not here
        return data_dir() / "results"
    return where.root / "results" if where.checkout else data_dir() / "results"

"""Where xnf keeps what it makes for a user: the machine profile, the NFs `xnf build` makes, the results of
`xnf bench` and `xnf report` (outside a checkout: python/xnf/commands/arguments.py). The user's data folder
(XDG_DATA_HOME, else ~/.local/share) holds an xnf/ folder. Never the current directory unless asked (--out)."""

from __future__ import annotations

import os
from pathlib import Path


def data_dir() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local/share") / "xnf"


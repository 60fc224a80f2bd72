"""A --state folder taken away as xnf keeps it, and no more: DIR/layout, DIR/maps/MAP and DIR/links/PORT (describe's
state_folder, from lib/xdp/state_keep.c). Anything else in the folder is another party's (a start refuses such a
folder, but a folder can be given something after): it stays, and so does the folder, said."""

from __future__ import annotations

import os
from pathlib import Path

from xnf import contract
from xnf.errors import XnfError


def remove(state: str) -> str:
    """What is left of the folder, said in a few words ("" when it is all gone); the links going takes the program
    off."""
    folder = Path(state)
    layout, *subfolders = contract.runtime()["state_folder"]
    try:
        for sub in subfolders:
            if (folder / sub).is_dir():
                for pinned in (folder / sub).iterdir():
                    pinned.unlink()
                (folder / sub).rmdir()
        (folder / layout).unlink(missing_ok=True)
        left = sorted(entry.name for entry in folder.iterdir()) if folder.is_dir() else []
        if not left and folder.is_dir():
            folder.rmdir()
    except OSError as err:
        raise XnfError(f"cannot remove the kept state in {state}: {os.strerror(err.errno)} ({err.filename})") \
            from None
    return f"; {', '.join(left)} left in {state}: not xnf's" if left else ""

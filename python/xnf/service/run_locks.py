"""Locks on files of the run directory (flock, released when the holder's descriptor closes, or the holder dies):
one apply at a time (apply.py), one daemon per run directory (daemon.py)."""

from __future__ import annotations

import fcntl
import os

from xnf import control
from xnf.errors import XnfError


def open_lock(name: str) -> int:
    """A descriptor on the run directory's lock file name, made if need be."""
    path = control.run_dir() / name
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    except OSError as err:
        raise XnfError(f"cannot open {path}: {os.strerror(err.errno)}") from None


def take(lock: int) -> bool:
    """Whether this process now holds lock (False: another does)."""
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return True
    except BlockingIOError:
        return False

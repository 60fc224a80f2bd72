"""How much slower the machine running the tests is than the lab's: scripts/vmtest boots other kernels in an
emulated VM (TCG), 20 to 30 times slower. What waits for a condition waits that much longer, and what asks a path
to keep up with a stream is sent that much slower; nothing else changes. Set by XNF_SLOWER_BY (1 when unset)."""

from __future__ import annotations

import os

from xnf.errors import XnfError

SLOWER_BY_ENV = "XNF_SLOWER_BY"


def slower_by() -> float:
    text = os.environ.get(SLOWER_BY_ENV, "1")
    try:
        factor = float(text)
    except ValueError:
        factor = 0.0
    if not 1 <= factor <= 1000:
        raise XnfError(f"{SLOWER_BY_ENV}={text!r}: give how many times slower this machine is, from 1 to 1000")
    return factor


def timeout(seconds: float) -> float:
    """A wait for a condition, on this machine."""
    return seconds * slower_by()


def bitrate(text: str) -> str:
    """An iperf3 bitrate (20M), on this machine."""
    units = {"K": 1e3, "M": 1e6, "G": 1e9}
    value = float(text[:-1]) * units[text[-1]] if text[-1] in units else float(text)
    return f"{max(1, int(value / slower_by()))}"

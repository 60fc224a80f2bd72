"""The binary that runs an NF name: a chain ('chain:a,b', built by chain.py) or one NF, shipped or built with
`xnf build` (found by build.py). The one place that knows both, so neither needs the other."""

from __future__ import annotations

from pathlib import Path

from xnf import build, chain


def nf_binary(nf: str) -> Path:
    """Built first if needed; an unknown name gets a clear error."""
    return chain.ensure_chain(nf) if chain.is_chain(nf) else build.nf_binary(nf)

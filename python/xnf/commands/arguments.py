"""What the subcommands share: the bounded number types of their command lines, the check for root, and where results
go."""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

from xnf import build, user_data
from xnf.errors import XnfError

# Every number the command line takes is bounded here, before anything reads it: a count, a size or a core count
# out of these ranges is a typo, and some would have the host allocate without end.
MAX_COUNT = 1_000_000_000
MAX_SECONDS = 24 * 3600.0


def require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise XnfError(f"{what} needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")


def whole_number(low: int, high: int):
    def parse(text: str) -> int:
        if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low:,} to {high:,}")
        return int(text)
    return parse


positive_int = whole_number(1, MAX_COUNT)


def seconds_between(low: float, high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from {low:g} to {high:g}")
        return value
    return parse


def cores_limit() -> int:
    """The most cores an NF's instance can use: its workers, and the core that receives."""
    from xnf import contract

    return contract.limit("workers") + 1


def results_dir() -> Path:
    """Where `xnf bench run` and `xnf report reproduce` write by default: in a checkout its results/ folder, beside
    the studies that wrote them; else the user's data folder."""
    try:
        where = build.layout()
    except XnfError:   # programs not installed: said where they are needed, not here
        return user_data.data_dir() / "results"
    return where.root / "results" if where.checkout else user_data.data_dir() / "results"


def results_out(args: argparse.Namespace) -> Path:
    return Path(args.out) if args.out else results_dir()

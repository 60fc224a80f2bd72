"""How much the `xnf` command says (`-q`, `-v`): what a command produces (tables, JSON, lists, the answer) is always
printed; the lines around it (where results went, progress) only without -q; the commands xnf runs underneath (NF
binaries, the generator, `ip`) only with -v, on stderr."""

from __future__ import annotations

import shlex
import sys

QUIET, NORMAL, VERBOSE = -1, 0, 1
level = NORMAL


def set_level(quiet: bool, verbose: int) -> None:
    global level
    level = QUIET if quiet else NORMAL + verbose


def info(text: str) -> None:
    """A line about the work (progress, where results went): not with -q."""
    if level >= NORMAL:
        print(text, flush=True)


def command(argv: list) -> None:
    """A command xnf runs: shown with -v."""
    if level >= VERBOSE:
        print("xnf: running " + shlex.join(str(a) for a in argv), file=sys.stderr, flush=True)

"""How much the `xnf` command says (`-q`, `-v`): what a command produces (tables, JSON, lists, the answer) is always
printed; the lines around it (where results went, progress) only without -q; the commands xnf runs underneath (NF
binaries, the generator, `ip`) only with -v, on stderr."""

from __future__ import annotations

import shlex
import sys

QUIET, NORMAL, VERBOSE = -1, 0, 1
level = NORMAL
# Where the lines about the work go: stderr under --json, whose stdout is the JSON alone.
info_stream = sys.stdout


def set_level(quiet: bool, verbose: int, json_out: bool = False) -> None:
    global level, info_stream
    level = QUIET if quiet else NORMAL + verbose
    info_stream = sys.stderr if json_out else sys.stdout


def info(text: str) -> None:
    """A line about the work (progress, where results went): not with -q."""
    if level >= NORMAL:
        print(text, file=info_stream, flush=True)


def command(argv: list) -> None:
    """A command xnf runs: shown with -v."""
    if level >= VERBOSE:
        print("xnf: running " + shlex.join(str(a) for a in argv), file=sys.stderr, flush=True)

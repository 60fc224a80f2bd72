"""How much the `xnf` command says (`-q`, `-v`): what a command produces (tables, JSON, lists, the answer) is always
printed; the lines around it (where results went, progress) only without -q; the commands xnf runs underneath (NF
binaries, the generator, `ip`) only with -v, on stderr."""

from __future__ import annotations

import shlex
import sys

QUIET, NORMAL, VERBOSE = -1, 0, 1
level = NORMAL
# Where the lines about the work go: stderr under --json, whose stdout is the JSON alone. Looked up when a line is
# said (None: standard output as it is then), not kept from import: a stream replaced since (a test's captured
# output, closed after it) must not be written to.
info_stream = None
info_to_stderr = False


def set_level(quiet: bool, verbose: int, json_out: bool = False) -> None:
    global level, info_to_stderr
    level = QUIET if quiet else NORMAL + verbose
    info_to_stderr = json_out


def info(text: str) -> None:
    """A line about the work (progress, where results went): not with -q."""
    if level >= NORMAL:
        print(text, file=info_stream or (sys.stderr if info_to_stderr else sys.stdout), flush=True)


def command(argv: list) -> None:
    """A command xnf runs: shown with -v."""
    if level >= VERBOSE:
        print("xnf: running " + shlex.join(str(a) for a in argv), file=sys.stderr, flush=True)

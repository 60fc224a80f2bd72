"""The console every table and answer is printed on. On a terminal it is the terminal's width; piped or logged,
rich would wrap at 80 columns and break a table's rows, so there it is as wide as COLUMNS says, else PIPE_WIDTH:
a table keeps its own width and a line is never cut."""

from __future__ import annotations

import os
import sys

from rich.console import Console

PIPE_WIDTH = 200


def console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    if stream.isatty() or os.environ.get("COLUMNS"):
        return Console(stderr=stderr)
    return Console(stderr=stderr, width=PIPE_WIDTH)

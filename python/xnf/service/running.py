"""A running instance that a command outside the service's file may act on (xnf stop, xnf move): found by its
name, and refused when the service's file runs it, since the file would put it back as it was."""

from __future__ import annotations

from xnf import control, process_id
from xnf.errors import XnfError
from xnf.service import apply as applying


def outside_the_file(name: str, through_the_file: str) -> tuple[int, list[str] | None]:
    """The instance's pid and command line (None once its process is gone). through_the_file says how to do the same
    through the file, for the refusal."""
    record = control.owner(name)
    if record is None:
        raise XnfError(f"no running instance named '{name}'; see 'xnf ps'")
    if name in applying.applied():
        raise XnfError(f"{name} runs from the service's file: {through_the_file}")
    return record.pid, process_id.command_line(record.pid)

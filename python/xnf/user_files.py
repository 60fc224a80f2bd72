"""Files a user names on the command line (rules for `xnf cost` and `xnf advise`, a mix, a profile), read within
bounds: a device that never ends (/dev/zero, /dev/urandom), a file larger than any NF takes, or bytes that are not
UTF-8 text end in one message naming the file, never in memory or a temporary folder filled, nor a traceback."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from xnf.errors import XnfError

CHUNK = 1 << 16
# A rules file xnf cost copies: the largest any shipped NF takes (a million routes per family) with room to spare.
MAX_RULES_BYTES = 256 << 20
MAX_TEXT_BYTES = 16 << 20  # a mix or a profile


def is_file(text: str) -> bool:
    """Whether text names a file: a spec given inline may be no possible path at all (too long, a NUL in it)."""
    try:
        return Path(text).is_file()
    except (OSError, ValueError):
        return False


def read_text(path: str | Path, what: str, max_bytes: int = MAX_TEXT_BYTES, regular: bool = False) -> str:
    """The file's text, at most max_bytes of UTF-8. regular: only a regular file (what is read again later, as the
    service's file, cannot be a pipe; and a FIFO no one writes to would hang the read)."""
    _check_path(path, what)
    if regular:
        _check_regular(path, what)
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as err:
        raise XnfError(f"cannot read the {what} {path}: {err.strerror}") from None
    if len(data) > max_bytes:
        raise XnfError(f"the {what} {path} is longer than {max_bytes >> 20} MiB: is it the file you meant?")
    try:
        return data.decode()
    except UnicodeDecodeError as err:
        raise XnfError(f"the {what} {path} is not UTF-8 text (byte {err.start}): is it the file you meant?") from None


def copy_rules(source: str | Path, target: Path, max_line: int, max_bytes: int = MAX_RULES_BYTES) -> None:
    """Copies a rules file as it is read (a pipe, /dev/stdin, can be read once), refusing a line longer than
    max_line, more than max_bytes, and bytes that are not UTF-8, as the NF's own reader does."""
    _check_path(source, "rules file")
    copied, line_start, line_no, tail = 0, 0, 1, b""
    try:
        with open(source, "rb") as src, open(target, "wb") as dst:
            while chunk := src.read(CHUNK):
                copied += len(chunk)
                if copied > max_bytes:
                    raise XnfError(f"the rules file {source} is longer than {max_bytes >> 20} MiB, more than any NF "
                                   "holds: is it the file you meant?")
                data = tail + chunk
                for newline in _newlines(data):
                    _check_line(data[line_start:newline], source, line_no, max_line)
                    line_no, line_start = line_no + 1, newline + 1
                tail, line_start = data[line_start:], 0
                if len(tail) > max_line:
                    raise XnfError(f"{source}:{line_no}: a line longer than {max_line} bytes")
                dst.write(chunk)
            _check_line(tail, source, line_no, max_line)
    except OSError as err:
        raise XnfError(f"cannot copy the rules file {source}: {err.strerror}") from None


def _check_regular(path: str | Path, what: str) -> None:
    try:
        mode = os.stat(path).st_mode
    except OSError as err:
        raise XnfError(f"cannot read the {what} {path}: {err.strerror}") from None
    if not stat.S_ISREG(mode):
        raise XnfError(f"the {what} {path} is not a regular file (a pipe, a device or a folder): give a file")


def _check_path(path: str | Path, what: str) -> None:
    """No file's name holds a NUL: open() would raise ValueError, not OSError."""
    if "\0" in str(path):
        raise XnfError(f"the {what} {str(path)!r} names no file: a path cannot hold a NUL byte")


def _newlines(data: bytes):
    at = data.find(b"\n")
    while at >= 0:
        yield at
        at = data.find(b"\n", at + 1)


def _check_line(line: bytes, source, line_no: int, max_line: int) -> None:
    if len(line) > max_line:
        raise XnfError(f"{source}:{line_no}: a line longer than {max_line} bytes")
    if b"\0" in line:
        raise XnfError(f"{source}:{line_no}: a NUL byte in a rule")
    try:
        line.decode()
    except UnicodeDecodeError:
        raise XnfError(f"{source}:{line_no}: bytes that are not UTF-8 text") from None

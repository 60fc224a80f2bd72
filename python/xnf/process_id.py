"""A process as an owner record names it (lib/util/process.c writes them): its pid in its own pid namespace, its
start time, and that namespace's inode. An NF in a container records the pid it has there; seen from the host, it
is found by the innermost pid each process has (NSpid in /proc/PID/status)."""

from __future__ import annotations

import os
from pathlib import Path

PROC = Path("/proc")
EXITED = ("Z", "X", "x")   # states of a process that has run its last line: a zombie, or dead


def stat_fields(entry: str) -> list[str] | None:
    """The fields of /proc/ENTRY/stat after the command name (the state first), or None when it is gone."""
    try:
        line = (PROC / entry / "stat").read_text()
    except OSError:
        return None
    return line[line.rindex(")") + 2:].split()


def started_at(pid: int) -> float | None:
    """When a process of this pid namespace started (seconds since the epoch), or None when it is gone."""
    fields = stat_fields(str(pid))
    if not fields:
        return None
    boot = next(int(line.split()[1]) for line in (PROC / "stat").read_text().splitlines() if line.startswith("btime"))
    return boot + int(fields[19]) / os.sysconf("SC_CLK_TCK")


def command_line(pid: int) -> list[str] | None:
    """The words a process was started with, or None when it is gone."""
    try:
        raw = (PROC / str(pid) / "cmdline").read_bytes()
    except OSError:
        return None
    return [word.decode(errors="replace") for word in raw.split(b"\0") if word]


def pid_namespace(entry: str = "self") -> int:
    try:
        return os.stat(PROC / entry / "ns" / "pid").st_ino
    except OSError:
        return 0


def _innermost_pid(entry: str) -> int:
    try:
        for line in (PROC / entry / "status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return 0


def find(pid: int, start_time: int, pid_ns: int = 0) -> str | None:
    """The /proc entry of the process recorded (pid and start time in pid_ns; 0: this namespace), or None when
    none that this process can see is it."""
    if not pid_ns or pid_ns == pid_namespace():
        fields = stat_fields(str(pid))
        return str(pid) if fields and int(fields[19]) == start_time else None   # field 22: the start time
    for entry in PROC.iterdir():
        name = entry.name
        if name.isdigit() and pid_namespace(name) == pid_ns and _innermost_pid(name) == pid:
            fields = stat_fields(name)
            if fields and int(fields[19]) == start_time:
                return name
    return None

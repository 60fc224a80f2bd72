"""systemd's readiness protocol (sd_notify(3)): one datagram of "KEY=VALUE" lines to the socket $NOTIFY_SOCKET
names ('@' for the abstract namespace). Without $NOTIFY_SOCKET (not run by systemd) it does nothing. The whole
protocol is this one send, so it is written here rather than taken from python-systemd, which needs libsystemd's
headers to build (docs/dependencies.md)."""

from __future__ import annotations

import os
import socket
import time

ENV = "NOTIFY_SOCKET"
WATCHDOG_ENV = "WATCHDOG_USEC"


def notify(*lines: str) -> bool:
    """Sends the lines as one message; False when there is no one to tell (or the socket refused it)."""
    where = os.environ.get(ENV)
    if not where:
        return False
    address = "\0" + where[1:] if where.startswith("@") else where
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
        try:
            sock.sendto("\n".join(lines).encode(), address)
        except OSError:
            return False
    return True


def ready(status: str) -> bool:
    return notify("READY=1", f"STATUS={status}")


def reloading() -> bool:
    """Said before a reload, with the monotonic time systemd wants beside it (Type=notify-reload's rule, which
    Type=notify accepts too)."""
    return notify("RELOADING=1", f"MONOTONIC_USEC={time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000}")


def stopping() -> bool:
    return notify("STOPPING=1")


def status(text: str) -> bool:
    return notify(f"STATUS={text}")


def watchdog() -> bool:
    return notify("WATCHDOG=1")


def watchdog_interval_s() -> float | None:
    """How often to say WATCHDOG=1: half the unit's WatchdogSec (None when it sets none for this process)."""
    usec, pid = os.environ.get(WATCHDOG_ENV), os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2e6
    except ValueError:
        return None

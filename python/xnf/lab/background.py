"""Work that runs beside a measurement (a stream, a connection) in a thread, its outcome kept for whoever joins it:
a study's window, a test's traffic across a restart."""

from __future__ import annotations

import contextlib
import threading


def start(work) -> tuple[threading.Thread, dict]:
    """work() started in a thread: once it is joined, the dict holds what it returned ("value") or what it raised
    ("error"), for the caller to judge."""
    outcome: dict = {}

    def run():
        try:
            outcome["value"] = work()
        except Exception as err:   # the caller judges it
            outcome["error"] = err

    thread = threading.Thread(target=run)
    thread.start()
    return thread, outcome


@contextlib.contextmanager
def running(work):
    """work() in a thread while the block runs; joined at its end. Yields the outcome dict of start()."""
    thread, outcome = start(work)
    try:
        yield outcome
    finally:
        thread.join()

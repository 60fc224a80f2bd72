"""An NF instance's process, whoever starts it (the lab, in a topology's namespace; the service and `xnf move`,
detached): its `run` options for the settings every instance has, spelled as the runtime's option table spells
them; the wait until its control socket answers, which comes after its program is attached with its rules in force;
and its stop, a signal and then SIGKILL if it has not gone in time."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Callable

from xnf import contract, control, process_id
from xnf.errors import XnfError

STOP_TIMEOUT_S = 15.0
POLL_S = 0.05


def option(name: str) -> str:
    """The runtime's spelling of one of its options (`--iface`), read from its option table."""
    if not any(found["name"] == name for found in contract.runtime()["options"]):
        raise XnfError(f"the runtime has no option --{name}")
    return f"--{name}"


def run_options(name: str, mode: str | None, ifaces: list[str] | tuple[str, ...], rules: str | None = None,
                pin: str | None = None, state: str | None = None) -> list[str]:
    """`run`'s options for an instance's own settings; mode None for a chain whose members say where they run."""
    words = ([option("mode"), mode] if mode else []) + [option("name"), name]
    words += [w for iface in ifaces for w in (option("iface"), iface)]
    for key, value in (("rules", rules), ("pin", pin), ("state", state)):
        words += [option(key), value] if value else []
    return words


def wait_until_answering(name: str, process: subprocess.Popen, timeout_s: float, said: Callable[[], str]) -> None:
    """Returns once the instance's control socket answers; raises with what it said (said()) if its process ends
    first, and kills it if it has not answered within timeout_s."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise XnfError(f"{name} did not start (exit {process.returncode}): {said()}")
        try:
            control.request(name, "info", timeout_s=1.0)
            return
        except XnfError:
            time.sleep(POLL_S)
    process.kill()
    process.wait()
    raise XnfError(f"{name} did not answer on its control socket within {timeout_s:.0f} s: {said()}")


def alive(pid: int, process: subprocess.Popen | None = None) -> bool:
    """Whether it still runs (a zombie another process has not reaped has run its last line)."""
    if process is not None:
        return process.poll() is None
    fields = process_id.stat_fields(str(pid))
    return bool(fields) and fields[0] not in process_id.EXITED


def stop(pid: int, process: subprocess.Popen | None = None, sig: int = signal.SIGTERM,
         timeout_s: float = STOP_TIMEOUT_S, kill: bool = True) -> bool:
    """sig sent (SIGTERM and SIGINT stop an instance as Ctrl-C does: it takes its programs off and puts its ports
    back), then waited for; whether it went within timeout_s. If not, and kill: SIGKILL, and waited for."""
    try:
        os.kill(pid, sig)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + timeout_s
    while alive(pid, process):
        if time.monotonic() > deadline:
            if kill:
                _kill(pid, process)
            return False
        time.sleep(POLL_S / 2)
    if process is not None:
        process.wait()
    return True


def _kill(pid: int, process: subprocess.Popen | None) -> None:
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        return
    if process is not None:
        process.wait()
    else:
        while alive(pid):
            time.sleep(POLL_S / 2)

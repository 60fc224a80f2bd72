"""`xnf move NAME --mode MODE`: a running NF moved between the kernel's two hooks, XDP and tc, with its state.

The instance must keep its kernel path (`--state DIR`, lib/xdp/state_keep.c): the running process is stopped (its
program stays attached and forwards, with its maps), and the same command line with the other mode is started
detached (its output in the run directory's NAME.log). The new build takes the kept maps over (the maps both
builds have; the XDP build's own stay pinned for a move back), attaches at its hook while the kept program still
runs, and only then lets the kept program go: one of the two carries every frame. Should the new start fail, the
command line it had is started again, on the kept state it never left.

Into user space (afxdp, hybrid) nothing is moved yet: its sessions would have to be copied between kernel maps
and native maps, and it is refused with why. An instance the service runs (`xnf apply`, `xnf daemon`) is moved
by its file: change its mode there and apply, which restarts it on its kept state the same way.
"""

from __future__ import annotations

import os
import signal
import time

from xnf import contract, control, process_id
from xnf.argv_words import option_value, without_option
from xnf.errors import XnfError
from xnf.service import apply as applying

STOP_TIMEOUT_S = 15.0
OPTIONS_OF_A_HOOK = {"tc": ("--tc-send",)}   # options only one hook's mode takes: dropped when leaving it


def _argv_of(pid: int) -> list[str]:
    try:
        raw = (process_id.PROC / str(pid) / "cmdline").read_bytes()
    except OSError as err:
        raise XnfError(f"cannot read the command line of pid {pid}: {err.strerror}") from None
    return [word.decode() for word in raw.split(b"\0") if word]


def moved_argv(argv: list[str], mode: str) -> list[str]:
    """The command line with the other mode, and without the options only the mode it leaves takes."""
    here = contract.mode(option_value(argv, "--mode") or "")["hook"]
    out = without_option(argv, "--mode")
    for option in OPTIONS_OF_A_HOOK.get(here, ()):
        out = without_option(out, option)
    return out + ["--mode", mode]


def _check(name: str, argv: list[str], mode: str) -> str:
    target = contract.mode(mode)
    if target["datapath"] != "kernel" or target["sockets"] or target.get("generic"):
        raise XnfError(f"xnf move carries an NF between the kernel's hooks (xdp, tc) with its maps; into --mode "
                       f"{mode} its sessions would have to move into the process, which is not built yet")
    if not option_value(argv, "--state"):
        raise XnfError(f"{name} runs without --state: xnf move carries its program and maps over through the "
                       "kept state; start it with --state DIR (a folder in bpffs)")
    if name in applying.applied():
        raise XnfError(f"{name} runs from the service's file: change its mode there and run xnf apply (or systemctl "
                       "reload xnf), which restarts it on its kept state the same way")
    current = option_value(argv, "--mode")
    if current == mode:
        raise XnfError(f"{name} runs in {mode} already")
    return current or "?"


def _stop(name: str, pid: int) -> None:
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    while applying.alive(pid, None):
        if time.monotonic() > deadline:
            raise XnfError(f"{name} (pid {pid}) did not stop within {STOP_TIMEOUT_S:.0f} s: nothing was moved")
        time.sleep(0.05)
    control.remove_records(name)


def move(name: str, mode: str) -> str:
    record = control.owner(name)
    if record is None:
        raise XnfError(f"no running instance named '{name}'; see 'xnf ps'")
    argv = _argv_of(record.pid)
    current = _check(name, argv, mode)
    _stop(name, record.pid)
    try:
        process = applying.spawn(name, moved_argv(argv, mode))
    except XnfError as err:
        applying.spawn(name, argv)
        raise XnfError(f"{name} could not move to {mode} ({err}); it runs in {current} again, on its kept state")
    return (f"moved {name} from {current} to {mode}: its program and maps carried over (pid {process.pid}, output in "
            f"{control.run_dir() / (name + '.log')})")

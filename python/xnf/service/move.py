"""`xnf move NAME --mode MODE`: a running NF moved between paths (XDP, tc, the AF_XDP workers) with its state.

The instance must keep its state (`--state DIR`: lib/xdp/state_keep.c, lib/runtime/state_handover.c): the running
process is stopped (a kernel build's program stays attached and forwards, with its maps; AF_XDP workers hand their
tables to the kernel first, where the program in place runs the NF on them), and the same command line with the other
mode is started detached (its output in the run directory's NAME.log). The new process takes the kept maps over
(workers copy them into their own tables before the links move to their sockets), attaches while the kept
program still runs, and only then lets it go: one of the two carries every frame. Should the new start fail, the
command line it had is started again, on the kept state it never left.

Which modes keep state is the mode table's (`keeps_state` in describe). An instance the service runs (`xnf
apply`, `xnf daemon`) is moved by its file: change its mode there and apply, which restarts it the same way.
"""

from __future__ import annotations

import os
import subprocess

from xnf import contract, control
from xnf.argv_words import option_value, without_option
from xnf.errors import XnfError
from xnf.service import apply as applying
from xnf.service.running import outside_the_file

STOP_TIMEOUT_S = 15.0


def moved_argv(argv: list[str], mode: str, extra: list[str] | None = None) -> list[str]:
    """The command line with the other mode, without the options only the mode it leaves takes, and with extra
    (the new mode's own options, such as the workers' cores)."""
    here, there = contract.mode(option_value(argv, "--mode") or ""), contract.mode(mode)
    out = without_option(argv, "--mode")
    left = list(contract.runtime()["hook_options"].get(here["hook"], ()))   # only that hook's modes take them
    if not there["sockets"]:
        left += contract.runtime()["socket_options"]
    flags = {f"--{option['name']}" for option in contract.runtime()["options"] if option["kind"] == "flag"}
    for option in left + [word.split("=", 1)[0] for word in extra or () if word.startswith("--")]:
        out = without_option(out, option, takes_value=option not in flags)
    return out + ["--mode", mode] + list(extra or ())


def check_movable(name: str) -> tuple[int, list[str]]:
    """The instance's pid and command line, once it is one xnf move can move: it keeps its state, and the service's
    file does not own it."""
    pid, argv = outside_the_file(name, "change its mode there and run xnf apply (or systemctl reload xnf), which "
                                       "restarts it on its kept state the same way")
    if argv is None:
        raise XnfError(f"the instance's process (pid {pid}) is gone: see 'xnf ps'")
    if not option_value(argv, "--state"):
        raise XnfError(f"{name} runs without --state: xnf move carries its program and tables over through the "
                       "kept state; start it with --state DIR (a folder in bpffs)")
    return pid, argv


def _check(name: str, argv: list[str], mode: str) -> str:
    keeping = [found["name"] for found in contract.runtime()["modes"] if found["keeps_state"]]
    if not contract.mode(mode)["keeps_state"]:
        raise XnfError(f"xnf move carries an NF with its state between {', '.join(keeping)}; --mode {mode} cannot "
                       "take state over yet")
    current = option_value(argv, "--mode")
    if current == mode:
        raise XnfError(f"{name} runs in {mode} already")
    return current or "?"


def _stop(name: str, pid: int) -> None:
    if not applying.end(name, pid, timeout_s=STOP_TIMEOUT_S):
        raise XnfError(f"{name} (pid {pid}) did not stop within {STOP_TIMEOUT_S:.0f} s: nothing was moved")


def _in_its_namespace(pid: int) -> list[str]:
    """What puts a command in the network namespace the instance runs in (its ports are there): nothing where it is
    ours, `ip netns exec NAME` where the namespace has a name (which also shows the namespace's /sys)."""
    try:
        if os.stat(f"/proc/{pid}/ns/net").st_ino == os.stat("/proc/self/ns/net").st_ino:
            return []
    except OSError as err:
        raise XnfError(f"cannot see which network namespace pid {pid} runs in: {err.strerror}") from None
    named = subprocess.run(["ip", "netns", "identify", str(pid)], capture_output=True, text=True).stdout.split()
    if len(named) != 1:
        raise XnfError(f"the instance (pid {pid}) runs in a network namespace that has no name here: run xnf move "
                       "inside that namespace")
    return ["ip", "netns", "exec", named[0]]


def move(name: str, mode: str, extra: list[str] | None = None) -> str:
    pid, argv = check_movable(name)
    current = _check(name, argv, mode)
    argv = _in_its_namespace(pid) + argv
    _stop(name, pid)
    try:
        process = applying.spawn(name, moved_argv(argv, mode, extra))
    except XnfError as err:
        applying.spawn(name, argv)
        raise XnfError(f"{name} could not move to {mode} ({err}); it runs in {current} again, on its kept state")
    return (f"moved {name} from {current} to {mode}: its rules and sessions carried over (pid {process.pid}, output in "
            f"{control.run_dir() / (name + '.log')})")

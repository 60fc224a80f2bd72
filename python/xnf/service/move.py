"""`xnf move NAME --mode MODE`: a running NF moved between paths (XDP, tc, the AF_XDP workers) with its state.

The instance must keep its state (`--state DIR`: lib/xdp/state_keep.c, lib/runtime/state_handover.c). The new
command line is checked first (`check-run`: options, kernel, ports, rules, folders) where the instance runs: its
network and mount namespaces and its working folder, held open while it moves, so that an `ip netns exec` shell's
bpffs and relative paths are the instance's. Nothing is stopped if the check fails. Then the running process is
stopped (a kernel build's program stays attached and forwards, with its maps; AF_XDP workers hand their
tables to the kernel first, where the program in place runs the NF on them), and the same command line with the other
mode is started detached (its output in the run directory's NAME.log). The new process takes the kept maps over
(workers copy them into their own tables before the links move to their sockets), attaches while the kept
program still runs, and only then lets it go: one of the two carries every frame. Should the new start fail, the
command line it had is started again, where it ran, on the kept state it never left.

Which modes keep state is the mode table's (`keeps_state` in describe). An instance the service runs (`xnf
apply`, `xnf daemon`) is moved by its file: change its mode there and apply, which restarts it the same way.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from xnf import contract, control, instance
from xnf.argv_words import option_value, without_option
from xnf.errors import XnfError
from xnf.service import apply as applying
from xnf.service import start_check
from xnf.service.running import outside_the_file

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
    if not applying.end(name, pid):
        raise XnfError(f"{name} (pid {pid}) did not stop within {instance.STOP_TIMEOUT_S:.0f} s: nothing was moved")


@contextmanager
def _where_it_runs(pid: int):
    """What runs a command where the instance runs, kept after it has gone: its network namespace (its ports), its
    mount namespace (the bpffs its --state is in: a shell of `ip netns exec` has its own /sys) and its working
    folder (relative --rules and --state), each held open. Yields the words that enter them and the descriptors to
    hand on."""
    opened: list[int] = []
    try:
        for what, flags in (("ns/net", os.O_RDONLY), ("ns/mnt", os.O_RDONLY), ("cwd", os.O_RDONLY | os.O_DIRECTORY)):
            opened.append(os.open(f"/proc/{pid}/{what}", flags))
    except OSError as err:
        for fd in opened:
            os.close(fd)
        raise XnfError(f"cannot reach where the instance (pid {pid}) runs: {err.strerror}; nothing was moved") \
            from None
    net, mnt, cwd = opened
    try:
        yield (["nsenter", f"--net=/proc/self/fd/{net}", f"--mount=/proc/self/fd/{mnt}", f"--wd=/proc/self/fd/{cwd}",
                "--"], tuple(opened))
    finally:
        for fd in opened:
            os.close(fd)


def move(name: str, mode: str, extra: list[str] | None = None) -> str:
    pid, argv = check_movable(name)
    current = _check(name, argv, mode)
    with _where_it_runs(pid) as (enter, fds):
        moved = enter + moved_argv(argv, mode, extra)
        try:
            start_check.check_run(moved, pass_fds=fds)
        except XnfError as err:
            raise XnfError(f"{name} cannot move to {mode}: {err}; it runs in {current} as before") from None
        _stop(name, pid)
        try:
            process = applying.spawn(name, moved, pass_fds=fds)
        except XnfError as err:
            try:
                applying.spawn(name, enter + argv, pass_fds=fds)
            except XnfError as again:
                raise XnfError(f"{name} could not move to {mode} ({err}), nor start in {current} again ({again})") \
                    from None
            raise XnfError(f"{name} could not move to {mode} ({err}); it runs in {current} again, on its kept state") \
                from None
    return (f"moved {name} from {current} to {mode}: its rules and sessions carried over (pid {process.pid}, output in "
            f"{control.run_dir() / (name + '.log')})")

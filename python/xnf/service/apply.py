"""`xnf apply FILE`: makes the instances that run match the file (python/xnf/service/config.py) and says what it
changed. What it applied is written down in the run directory (applied.json, and each instance's rules as applied
in applied/NAME.rules), so that the next apply knows which instances are the file's:

  - an instance the file names and nothing runs under that name: started, detached, its output in NAME.log; ready
    when its control socket answers (the socket comes last, after its rules are in force);
  - one whose rules alone changed: its rules file written anew and reloaded through its control socket (each
    rule written over its key, then the keys gone deleted: a rule both versions hold is never absent), no
    restart;
  - one whose NF, mode, interfaces, options, pin or state changed: stopped and started again (a mode cannot change
    in place); with `state` (--state) the new process takes the kept program and maps over without a gap, unless
    the NF changed;
  - one the last apply started that the file no longer names: stopped, and its kept state removed;
  - one that runs under a name of the file but was not started by apply: refused before anything changes.

Nothing is touched until the whole file is valid and the plan holds; a start that fails stops the apply there,
with the instance's own words from its log, and what was done before it is said.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from xnf import control, instance, programs
from xnf.errors import XnfError
from xnf.service import run_locks, start_check, state_folder
from xnf.service.config import Config, InstanceSpec

STATE_FILE = "applied.json"
LOCK_FILE = "apply.lock"
LOCK_WAIT_S = 60.0
RULES_FOLDER = "applied"
READY_TIMEOUT_S = 60.0
RELOAD_TIMEOUT_S = 300.0   # an instance answers a reload once the file is in force: 60,000 rules take seconds
LOG_TAIL = 1200
LOG_MAX_BYTES = 1 << 20   # an instance's log, beyond which the next start moves it to NAME.log.1


@dataclass
class Step:
    name: str
    action: str              # start, stop, restart, rules, keep
    why: str = ""
    spec: InstanceSpec | None = None
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    before: InstanceSpec | None = None   # what ran (a rules change puts its file back if the new one is refused)

    def said(self) -> str:
        if self.action == "rules":
            return f"{self.name}: rules changed in place ({len(self.added)} added, {len(self.removed)} removed)"
        if self.action == "keep":
            return f"{self.name}: unchanged"
        return f"{self.name}: {self.action}" + (f" ({self.why})" if self.why else "")


def _state_path() -> Path:
    return control.run_dir() / STATE_FILE


def applied() -> dict[str, dict]:
    """What the last apply started and left running: name -> its spec, pid and start time."""
    try:
        return json.loads(_state_path().read_text())["instances"]
    except (OSError, ValueError, KeyError):
        return {}


def _write_whole(path: Path, text: str) -> None:
    """path holds text, or what it held before (written aside, then renamed over it); a full or failing run
    directory is one message, not a traceback."""
    tmp = path.with_suffix(".tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp.write_text(text)
        os.chmod(tmp, 0o600)
        tmp.replace(path)
    except OSError as err:
        tmp.unlink(missing_ok=True)
        raise XnfError(f"cannot write {path}: {os.strerror(err.errno)}: free or fix the run directory "
                       f"({control.run_dir()}) and apply again") from None


def _write_state(instances: dict[str, dict], config_path: Path) -> None:
    _write_whole(_state_path(), json.dumps({"config": str(config_path), "instances": instances}, indent=1) + "\n")


@contextmanager
def one_at_a_time():
    """Held while a file is planned and applied: two applies (or an apply and the daemon's reload) at once would
    each start what the other does and record half of it."""
    lock = run_locks.open_lock(LOCK_FILE)
    try:
        deadline = time.monotonic() + LOCK_WAIT_S
        while not run_locks.take(lock):
            if time.monotonic() > deadline:
                raise XnfError(f"another xnf apply (or the daemon's reload) has been applying for over "
                               f"{LOCK_WAIT_S:.0f} s: nothing was changed; try again once it is done")
            time.sleep(0.1)
        yield
    finally:
        os.close(lock)


def rule_lines(text: str | None) -> list[str]:
    """A rules text's rules, as the NFs read them: a line each, blank lines and comments left out."""
    lines = (line.strip() for line in (text or "").splitlines())
    return list(dict.fromkeys(line for line in lines if line and not line.startswith("#")))


def _running() -> dict[str, control.Listed]:
    return {item.name: item for item in control.listing(remove_stale=True)}


def _diff_step(name: str, spec: InstanceSpec, before: InstanceSpec) -> Step:
    if spec == before:
        return Step(name, "keep", spec=spec)
    if spec.same_but_rules(before) and (spec.rules is None) == (before.rules is None):
        old, new = rule_lines(before.rules), rule_lines(spec.rules)
        kept_before, kept_now = set(old), set(new)   # sets: 60,000 rules compared as lists took 20 s
        return Step(name, "rules", spec=spec, added=[r for r in new if r not in kept_before],
                    removed=[r for r in old if r not in kept_now], before=before)
    changed = [key for key in ("nf", "mode", "ifaces", "options", "pin", "state")
               if getattr(spec, key) != getattr(before, key)] or ["rules given where there were none, or taken away"]
    return Step(name, "restart", f"{', '.join(changed)} changed: cannot change in place", spec)


def plan(config: Config) -> list[Step]:
    """What apply would do, in order: stops first (an interface may move between instances), then the rest."""
    running, done = _running(), applied()
    steps = []
    for name, record in done.items():
        if name not in config.instances:   # one that died goes too: its kept program would forward on
            steps.append(Step(name, "stop", "no longer in the file" + ("" if name in running else
                                                                        "; it had stopped already")))
    for name, spec in config.instances.items():
        if name in running and name not in done:
            pid = running[name].owner.pid if running[name].owner else "?"
            raise XnfError(f"an instance named {name} runs (pid {pid}) that xnf apply did not start: stop it, or name "
                           f"the file's [instance.{name}] otherwise; nothing was changed")
        if name not in running:
            why = "was applied, no longer runs" if name in done else ""
            steps.append(Step(name, "start", why, spec))
        else:
            steps.append(_diff_step(name, spec, InstanceSpec.from_dict(done[name]["spec"])))
    for step in steps:   # before anything is stopped: nothing is changed if one would fail
        if step.action in ("start", "restart"):
            start_check.check_spec(step.spec)
        elif step.action == "rules":
            start_check.check_spec(step.spec, failing="rules not changed")
    return steps


def _rules_file(spec: InstanceSpec) -> str | None:
    if spec.rules is None:
        return None
    path = control.run_dir() / RULES_FOLDER / f"{spec.name}.rules"
    _write_whole(path, spec.rules)     # whole: the instance reads it at its start and at every reload
    return str(path)


def _log_tail(path: Path, since: int = 0) -> str:
    """The end of what the log holds from byte since on: what this start said, not an earlier one."""
    try:
        with open(path, "rb") as log:
            log.seek(since)
            return log.read().decode(errors="replace")[-LOG_TAIL:].strip()
    except OSError:
        return ""


def start(spec: InstanceSpec) -> subprocess.Popen:
    """The instance started in a session of its own (it outlives apply), once its control socket answers."""
    binary = programs.nf_binary(spec.nf)
    return spawn(spec.name, [str(binary), "run", *spec.run_options(_rules_file(spec))])


def _rotated(path: Path) -> Path:
    return path.with_name(path.name + ".1")


def rotate_log(path: Path, max_bytes: int = LOG_MAX_BYTES) -> None:
    """A log grown past max_bytes moved to PATH.1 (the one before it dropped): restarts, reloads and moves append to
    an instance's log for as long as the service runs."""
    try:
        if path.stat().st_size > max_bytes:
            path.replace(_rotated(path))
    except FileNotFoundError:
        pass


def log_path(name: str) -> Path:
    """Where an instance started by spawn writes its output."""
    return control.run_dir() / f"{name}.log"


def remove_logs(name: str) -> None:
    """An instance's log and the one rotate_log moved aside, for a caller done with the instance."""
    for log in (log_path(name), _rotated(log_path(name))):
        log.unlink(missing_ok=True)


def spawn(name: str, argv: list[str], pass_fds: tuple[int, ...] = ()) -> subprocess.Popen:
    """An NF binary's `run` started detached, its output in log_path(name); returned once its control socket
    answers, or an XnfError with what it said. pass_fds: what a command before the binary (nsenter) opens."""
    log_file = log_path(name)
    log_file.parent.mkdir(parents=True, exist_ok=True)
    rotate_log(log_file)
    with open(log_file, "ab") as log:
        log.write(f"--- {time.strftime('%Y-%m-%dT%H:%M:%S')} {' '.join(argv)}\n".encode())
        log.flush()
        since = log.tell()
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                                   start_new_session=True, pass_fds=pass_fds)
    instance.wait_until_answering(name, process, READY_TIMEOUT_S, lambda: _log_tail(log_file, since))
    return process


def end(name: str, pid: int, sig: int = signal.SIGTERM, timeout_s: float = instance.STOP_TIMEOUT_S) -> bool:
    """sig sent to the instance's process, and its records removed once it has gone: whether it went within
    timeout_s (a process already gone has); it is left running if not."""
    if not instance.stop(pid, None, sig, timeout_s, kill=False):
        return False
    control.remove_records(name)
    return True


def stop(name: str, process: subprocess.Popen | None = None) -> None:
    """SIGTERM, as Ctrl-C does: the instance takes its programs off and puts its ports back; SIGKILL if it has not
    gone within instance.STOP_TIMEOUT_S (then said)."""
    record = control.owner(name)
    if process is None and record is not None and record.state() == control.DEAD:
        control.remove_records(name)
        return   # gone; its pid may be another process's now (the record's start time says which, as xnf ps reads)
    pid = process.pid if process else record.pid if record else None
    if pid is not None and not instance.stop(pid, process):
        control.remove_records(name)
        raise XnfError(f"{name} did not stop within {instance.STOP_TIMEOUT_S:.0f} s of SIGTERM: killed (a killed "
                       "instance may leave its programs attached: docs/robustness.md)")


def drop_state(spec: dict) -> None:
    """An instance's kept kernel path (--state) removed: its links go, which takes its program off."""
    if spec.get("state"):
        state_folder.remove(spec["state"])


def change_rules(step: Step) -> None:
    """The instance's rules file written anew and reloaded (`reload`, as SIGHUP): each rule written over its key,
    then the keys gone deleted, without a restart (docs/operations.md, "Reloading the rules")."""
    _rules_file(step.spec)
    try:
        control.request(step.name, "reload", timeout_s=RELOAD_TIMEOUT_S)
    except XnfError as err:
        _rules_file(step.before)     # the file as the rules in force are, for a restart to read
        raise XnfError(f"{step.name}: rules not changed: {err}") from None


def _record_or_stop(name: str, done: dict[str, dict], config_path: Path,
                    children: dict[str, subprocess.Popen]) -> None:
    """An instance just started, written down; one that cannot be is stopped: the next apply would not know it."""
    try:
        _write_state(done, config_path)
    except XnfError:
        stop(name, children.pop(name, None))
        done.pop(name)
        raise


class RolledBack(XnfError):
    """A restart that failed after its checks, whose instance runs again as it was: what ran is running."""

    def __init__(self, message: str, process: subprocess.Popen, spec: InstanceSpec):
        super().__init__(message)
        self.process, self.spec = process, spec


def _restart(step: Step, before: InstanceSpec | None) -> subprocess.Popen:
    """The new start; should it fail, the instance as it ran, started again (on its kept state, if it has one)."""
    try:
        return start(step.spec)
    except XnfError as err:
        if before is None:
            raise
        try:
            process = start(before)
        except XnfError as again:
            raise XnfError(f"{step.name}: the restart failed ({err}), and so did starting it as it was ({again})") \
                from None
        raise RolledBack(f"{step.name}: the restart failed ({err}); it runs as it was", process, before) from None


def carry_out(config: Config, steps: list[Step], children: dict[str, subprocess.Popen] | None = None) -> list[str]:
    """The plan done, step by step, with what it did said; the state written after every step, so that a failure
    leaves it true. children: the daemon's handles on the processes it started (kept to reap them)."""
    children = children if children is not None else {}
    done = applied()
    said = []
    try:
        for step in steps:
            if step.action in ("stop", "restart"):
                before = done.get(step.name, {}).get("spec", {})
                stop(step.name, children.pop(step.name, None))
                # Kept state goes with an instance that goes, one whose NF changed (its maps would not fit) or one
                # given another folder or none (its program would run on); a restart of the same NF in the same
                # folder takes it over, without a gap (and lets go of ports it no longer has).
                if step.action == "stop" or (before.get("nf"), before.get("state")) != (step.spec.nf,
                                                                                        step.spec.state):
                    drop_state(before)
                done.pop(step.name, None)
                _write_state(done, config.path)
            if step.action == "start":
                children[step.name] = start(step.spec)
            elif step.action == "restart":
                children[step.name] = _restart(step, InstanceSpec.from_dict(before) if before else None)
            if step.action in ("start", "restart"):
                done[step.name] = {"spec": step.spec.as_dict(), "pid": children[step.name].pid}
                _record_or_stop(step.name, done, config.path, children)
            elif step.action == "rules":
                change_rules(step)
                done[step.name]["spec"] = step.spec.as_dict()
                _write_state(done, config.path)
            said.append(step.said())
    except RolledBack as err:
        children[step.name] = err.process
        done[step.name] = {"spec": err.spec.as_dict(), "pid": err.process.pid}
        _write_state(done, config.path)
        raise XnfError("; ".join(said + [str(err)])) from None
    except XnfError as err:
        raise XnfError("; ".join(said + [str(err)])) from None
    return said


def apply(config: Config, children: dict[str, subprocess.Popen] | None = None) -> list[str]:
    with one_at_a_time():
        return carry_out(config, plan(config), children)


def stop_all(children: dict[str, subprocess.Popen] | None = None) -> list[str]:
    """Every instance the last apply started, stopped (xnf daemon's stop)."""
    children = children if children is not None else {}
    done, said = applied(), []
    for name in list(done):
        stop(name, children.pop(name, None))
        said.append(f"{name}: stopped")
    _write_state({}, Path(""))
    return said

"""Client of the control socket every running NF instance listens on (see lib/control).

Beside each socket NAME.sock the instance keeps NAME.owner (one JSON line: pid, start time, pid namespace, NF,
mode; python/xnf/process_id.py finds the process, in a container too), so that a
client tells, without waiting for an answer, an instance that is stopped (SIGSTOP, a debugger: it would take a
request and act on it only once resumed) or killed (its socket left behind) from one that runs. A request to a
stopped instance is refused before anything is sent."""

from __future__ import annotations

import json
import os
import re
import socket
import stat
from dataclasses import dataclass
from pathlib import Path

from xnf import process_id
from xnf.errors import XnfError

DEFAULT_RUN_DIR = "/run/xnf"
TIMEOUT_S = 5.0

RUNNING, STOPPED, DEAD, UNKNOWN = "running", "stopped", "dead", "unknown"


def run_dir(override: str | None = None) -> Path:
    return Path(override or os.environ.get("XNF_RUN_DIR") or DEFAULT_RUN_DIR)


# What the runtime takes as an instance's name (lib/control/control_server.c, valid_name): a name is a file in the
# run directory, never a path out of it.
INSTANCE_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}\Z")


def socket_path(name: str, directory: str | None = None) -> Path:
    if not INSTANCE_NAME.match(name):
        raise XnfError(f"'{name}' is not an instance's name: up to 64 letters, digits, '.', '_' or '-', not starting "
                       "with '.' (see 'xnf ps')")
    return run_dir(directory) / f"{name}.sock"


@dataclass(frozen=True)
class Owner:
    """What NAME.owner says of the process behind a control socket."""
    name: str
    nf: str
    mode: str
    pid: int
    start_time: int
    pid_ns: int = 0          # its pid namespace's inode (0: a record of before it was written, this namespace)

    def state(self) -> str:
        """running, stopped (SIGSTOP or traced) or dead (gone, or its pid now another process's); unknown for an
        instance of another pid namespace that this process cannot see (a container's, seen from another one)."""
        entry = process_id.find(self.pid, self.start_time, self.pid_ns)
        if entry is None:
            foreign = self.pid_ns and self.pid_ns != process_id.pid_namespace()
            return UNKNOWN if foreign else DEAD
        fields = process_id.stat_fields(entry)
        if not fields or fields[0] in process_id.EXITED:
            return DEAD   # a zombie holds its pid and nothing else: its socket answers no one
        return STOPPED if fields[0] in ("T", "t") else RUNNING


def owner(name: str, directory: str | None = None) -> Owner | None:
    """The owner record of an instance's socket; None when there is none (or it cannot be read)."""
    try:
        record = json.loads(socket_path(name, directory).with_suffix(".owner").read_text())
        return Owner(str(record["name"]), str(record["nf"]), str(record["mode"]), int(record["pid"]),
                     int(record["start_time"]), int(record.get("pid_ns", 0)))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def state(name: str, directory: str | None = None) -> str:
    record = owner(name, directory)
    return record.state() if record else UNKNOWN


def refuse_unless_running(name: str, directory: str | None = None) -> None:
    """An XnfError saying so when the instance is stopped or dead (by its owner record), before anything is
    sent."""
    record = owner(name, directory)
    now = record.state() if record else UNKNOWN
    if now == STOPPED:
        raise XnfError(f"instance '{name}' (pid {record.pid}) is stopped (SIGSTOP, or a debugger holds it): nothing "
                       f"was sent; resume it with 'kill -CONT {record.pid}'")
    if now == DEAD:
        raise XnfError(f"instance '{name}' is not running any more (pid {record.pid} is gone); see 'xnf ps'")


def _exchange(path: Path, line: str, timeout_s: float) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(timeout_s)
        sock.connect(str(path))
        sock.sendall(line.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode(errors="replace")


def check_request(line: str) -> None:
    """What a request may be: one line of UTF-8 text within the runtime's limit."""
    from xnf import contract

    if "\n" in line or "\r" in line or "\0" in line:
        raise XnfError("a request is one line: the rule or argument holds a line break or a NUL")
    try:
        size = len(line.encode())
    except UnicodeEncodeError:
        raise XnfError("the rule or argument holds bytes that are not UTF-8 text") from None
    try:
        most = contract.limit("control_request")
    except XnfError:   # no programs this user can read to ask: the instance refuses a request too long itself
        return
    if size > most:
        raise XnfError(f"the request is {size} bytes long, and an instance takes at most {most}")


def request(name: str, line: str, directory: str | None = None, timeout_s: float = TIMEOUT_S) -> str:
    """Sends one request; returns the body of an 'ok' answer, raises XnfError otherwise."""
    check_request(line)
    refuse_unless_running(name, directory)
    path = socket_path(name, directory)
    try:
        answer = _exchange(path, line, timeout_s)
    except FileNotFoundError:
        raise XnfError(f"no running instance named '{name}' (no {path}); see 'xnf ps'") from None
    except ConnectionRefusedError:
        raise XnfError(f"instance '{name}' is not running any more (stale {path})") from None
    except PermissionError:
        raise XnfError(f"cannot reach {path}: run xnf with sudo") from None
    except socket.timeout:
        raise XnfError(f"instance '{name}' did not answer within {timeout_s:g} s (busy, or stopped after it was "
                       "asked): a change it was sent may still take effect when it answers; check with "
                       "'xnf rules list'") from None
    except BlockingIOError:
        raise XnfError(f"instance '{name}' has more clients waiting than it queues: try again") from None
    except (ConnectionResetError, BrokenPipeError):
        raise XnfError(f"instance '{name}' closed the connection before answering (it stopped, or refused the "
                       "request)") from None
    status, _, body = answer.partition("\n")
    if status == "ok":
        return body
    raise XnfError(status.removeprefix("error: ") or f"instance '{name}' closed the connection")


def request_json(name: str, line: str, directory: str | None = None, timeout_s: float = TIMEOUT_S) -> dict:
    return json.loads(request(name, line, directory, timeout_s))


def _is_socket(path: Path) -> bool:
    try:
        return stat.S_ISSOCK(path.stat().st_mode)
    except OSError:
        return False


def _is_stale(path: Path) -> bool:
    """A socket file nobody listens on: its instance was killed before it could remove it."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)  # a busy instance's full backlog must not hang the caller
        try:
            sock.connect(str(path))
        except ConnectionRefusedError:
            return True
        except OSError:
            return False
    return False


@dataclass(frozen=True)
class Listed:
    """An instance of the run directory: its name, its state, and what its owner record says (None without one)."""
    name: str
    state: str
    owner: Owner | None


def remove_records(name: str, directory: str | None = None) -> None:
    """A dead instance's control socket and its owner record (a killed process leaves both)."""
    path = socket_path(name, directory)
    path.unlink(missing_ok=True)
    path.with_suffix(".owner").unlink(missing_ok=True)


def listing(directory: str | None = None, remove_stale: bool = False) -> list[Listed]:
    """Every instance whose socket is there and whose process lives, running or stopped; with remove_stale, the
    sockets (and owner records) of dead ones go."""
    found = []
    folder = run_dir(directory)
    for path in sorted(folder.glob("*.sock")) if folder.is_dir() else []:
        if not _is_socket(path):
            continue  # not ours: a file or folder that only looks like a control socket is left alone
        record = owner(path.stem, directory)
        now = record.state() if record else UNKNOWN
        if now == DEAD or (now == UNKNOWN and _is_stale(path)):
            if remove_stale:
                remove_records(path.stem, directory)
            continue
        found.append(Listed(path.stem, now, record))
    return found


def instances(directory: str | None = None, remove_stale: bool = False) -> list[str]:
    """Names of instances that answer now (running, not stopped); with remove_stale, dead ones' sockets go."""
    names = []
    for item in listing(directory, remove_stale):
        if item.state == STOPPED:
            continue
        try:
            request(item.name, "info", directory)
        except XnfError:
            continue
        names.append(item.name)
    return names


def pick_instance(name: str | None, directory: str | None = None) -> str:
    """The named instance, or the only one there is (a stopped one is picked too: asking it says it is stopped)."""
    if name:
        return name
    present = [item.name for item in listing(directory)]
    if len(present) == 1:
        return present[0]
    if not present:
        raise XnfError("no NF instance is running; start one with 'xnf run'")
    raise XnfError(f"several instances are running ({', '.join(present)}): choose one with --name")


def instances_of(nf: str, directory: str | None = None) -> list[Listed]:
    """Every instance of one NF, running or not answering: by its owner record, or by asking the ones without."""
    found = []
    for item in listing(directory):
        if item.owner:
            if item.owner.nf == nf:
                found.append(item)
            continue
        try:
            if request_json(item.name, "info", directory).get("nf") == nf:
                found.append(Listed(item.name, RUNNING, None))
        except XnfError:
            found.append(Listed(item.name, UNKNOWN, None))  # cannot tell: counted, so that it is not skipped silently
    return found


def fan_out(items: list[Listed], line: str, directory: str | None = None) -> list[tuple[str, str | None]]:
    """Sends one request to each instance, after checking that every one of them runs (a stopped one would act on
    it only when resumed: then nothing is sent anywhere). Returns (name, None or the reason it failed) for each;
    there is no transaction across instances, so each outcome is reported."""
    not_running = [f"{i.name} ({i.state}{f', pid {i.owner.pid}' if i.owner else ''})" for i in items
                   if i.state != RUNNING]
    if not_running:
        raise XnfError(f"not changed anywhere: {', '.join(not_running)} would not take it now; resume or stop "
                       f"{'it' if len(not_running) == 1 else 'them'} first")
    outcomes = []
    for item in items:
        try:
            request(item.name, line, directory)
            outcomes.append((item.name, None))
        except XnfError as err:
            outcomes.append((item.name, str(err)))
    return outcomes

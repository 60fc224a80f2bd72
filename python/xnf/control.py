"""Client of the control socket every running NF instance listens on (see lib/control)."""

from __future__ import annotations

import json
import os
import socket
import stat
from pathlib import Path

from xnf.errors import XnfError

DEFAULT_RUN_DIR = "/run/xnf"
TIMEOUT_S = 5.0


def run_dir(override: str | None = None) -> Path:
    return Path(override or os.environ.get("XNF_RUN_DIR") or DEFAULT_RUN_DIR)


def socket_path(name: str, directory: str | None = None) -> Path:
    return run_dir(directory) / f"{name}.sock"


def _exchange(path: Path, line: str) -> str:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.settimeout(TIMEOUT_S)
        sock.connect(str(path))
        sock.sendall(line.encode() + b"\n")
        chunks = []
        while chunk := sock.recv(65536):
            chunks.append(chunk)
    return b"".join(chunks).decode()


def request(name: str, line: str, directory: str | None = None) -> str:
    """Sends one request; returns the body of an 'ok' answer, raises XnfError otherwise."""
    path = socket_path(name, directory)
    try:
        answer = _exchange(path, line)
    except FileNotFoundError:
        raise XnfError(f"no running instance named '{name}' (no {path}); see 'xnf ps'") from None
    except ConnectionRefusedError:
        raise XnfError(f"instance '{name}' is not running any more (stale {path})") from None
    except PermissionError:
        raise XnfError(f"cannot reach {path}: run xnf with sudo") from None
    except socket.timeout:
        raise XnfError(f"instance '{name}' did not answer within {TIMEOUT_S:.0f} s") from None
    except BlockingIOError:
        raise XnfError(f"instance '{name}' has more clients waiting than it queues: try again") from None
    status, _, body = answer.partition("\n")
    if status == "ok":
        return body
    raise XnfError(status.removeprefix("error: ") or f"instance '{name}' closed the connection")


def request_json(name: str, line: str, directory: str | None = None) -> dict:
    return json.loads(request(name, line, directory))


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


def instances(directory: str | None = None, remove_stale: bool = False) -> list[str]:
    """Names of instances whose control socket answers; with remove_stale, dead instances' sockets go."""
    names = []
    folder = run_dir(directory)
    for path in sorted(folder.glob("*.sock")) if folder.is_dir() else []:
        if not _is_socket(path):
            continue  # not ours: a file or folder that only looks like a control socket is left alone
        if _is_stale(path):
            if remove_stale:
                path.unlink(missing_ok=True)
            continue
        try:
            request(path.stem, "info", directory)
        except XnfError:
            continue
        names.append(path.stem)
    return names


def pick_instance(name: str | None, directory: str | None = None) -> str:
    """The named instance, or the only running one."""
    if name:
        return name
    running = instances(directory)
    if len(running) == 1:
        return running[0]
    if not running:
        raise XnfError("no NF instance is running; start one with 'xnf run'")
    raise XnfError(f"several instances are running ({', '.join(running)}): choose one with --name")


def instances_of(nf: str, directory: str | None = None) -> list[str]:
    """The running instances of one NF (by the name its binary reports)."""
    return [name for name in instances(directory) if request_json(name, "info", directory).get("nf") == nf]


def fan_out(names: list[str], line: str, directory: str | None = None) -> None:
    """Sends one request to each instance in turn; the first refusal stops it and says which instances took the
    request and which did not (there is no transaction across instances), so the rules can be put right."""
    done: list[str] = []
    for name in names:
        try:
            request(name, line, directory)
        except XnfError as err:
            left = [n for n in names if n not in done and n != name]
            raise XnfError(f"{name} refused '{line}': {err}. Done on: {', '.join(done) or 'none'}; not tried on: "
                           f"{', '.join(left) or 'none'}") from None
        done.append(name)

"""`xnf daemon FILE`: the file's instances kept running as a service (deploy/systemd/xnf.service runs it).

  - start: the file applied (python/xnf/service/apply.py), then READY=1 to systemd (sd_notify), with what runs in
    STATUS;
  - SIGHUP (systemctl reload): RELOADING=1, the file read and applied again, READY=1; a file that does not hold
    (a malformed line, an NF that cannot start) is said, in STATUS and on stderr, and what runs is left as it was;
  - every CHECK_S: an instance that has died is said and started again, at most RESTARTS times within
    RESTART_WINDOW_S (as systemd's StartLimitBurst and StartLimitIntervalSec); past that it is left down until the
    file is applied again, said on stderr and in STATUS; WATCHDOG=1 while the daemon works and every instance not
    left down answers, when the unit sets WatchdogSec;
  - SIGTERM or SIGINT (systemctl stop): STOPPING=1, every instance stopped as Ctrl-C stops one (programs taken
    off, ports put back), exit 0.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from xnf import control, say
from xnf.errors import XnfError
from xnf.service import apply as applying
from xnf.service import config as configuration
from xnf.service import run_locks, sd_notify

CHECK_S = 1.0
RESTARTS, RESTART_WINDOW_S = 3, 10.0
DAEMON_LOCK = "daemon.lock"


class Revivals:
    """When a dead instance is started again: at most RESTARTS times within RESTART_WINDOW_S. One that dies more
    often is left down (why, by name) until the file is applied again."""

    def __init__(self, window_s: float = RESTART_WINDOW_S):
        self.window_s = window_s
        self.times: dict[str, list[float]] = {}
        self.left_down: dict[str, str] = {}

    def allow(self, name: str, now: float) -> bool:
        if name in self.left_down:
            return False
        recent = [t for t in self.times.get(name, []) if now - t < self.window_s]
        if len(recent) >= RESTARTS:
            self.left_down[name] = f"died again after {RESTARTS} restarts within {self.window_s:g} s"
            return False
        self.times[name] = recent + [now]
        return True


def _error(text: str) -> None:
    """Said on stderr, which systemd's journal keeps."""
    print(f"xnf daemon: {text}", file=sys.stderr, flush=True)


class Daemon:
    def __init__(self, path: Path, restart_window_s: float = RESTART_WINDOW_S):
        self.path = path
        self.children: dict[str, subprocess.Popen] = {}
        self.window_s = restart_window_s
        self.revivals = Revivals(restart_window_s)
        self.signals: list[int] = []

    def _on_signal(self, signum, _frame) -> None:
        self.signals.append(signum)

    def _apply(self) -> str | None:
        """The file applied; None, or why it was not (what runs is then what ran)."""
        try:
            config = configuration.load(self.path)
            for line in applying.apply(config, self.children):
                say.info(line)
        except XnfError as err:
            _error(f"{self.path}: not applied: {err}")
            return str(err)
        self.revivals = Revivals(self.window_s)
        return None

    def _status(self) -> str:
        down = self.revivals.left_down
        names = sorted(name for name in applying.applied() if name not in down)
        said = f"{len(names)} instance(s) running: {', '.join(names)}" if names else "no instance running"
        if not names and not down:
            said = "no instance in the file"
        return said + "".join(f"; {name} left down ({why})" for name, why in sorted(down.items()))

    def _revive(self) -> bool:
        """Dead instances started again; True when every instance the file names answers."""
        healthy = True
        for name, record in applying.applied().items():
            if name in self.revivals.left_down:
                continue   # said once; the daemon's own health is not its
            process = self.children.get(name)
            if process is not None and process.poll() is None:
                continue
            if process is None and control.state(name) == control.RUNNING:
                continue
            healthy = False
            if process is not None:
                _error(f"{name} exited ({process.returncode}): see {control.run_dir() / (name + '.log')}")
                self.children.pop(name)
            self._restart(name, record)
        return healthy

    def _restart(self, name: str, record: dict) -> None:
        if not self.revivals.allow(name, time.monotonic()):
            _error(f"{name}: left down ({self.revivals.left_down[name]}): fix it and reload (systemctl reload xnf)")
            sd_notify.status(self._status()[:400])
            return
        try:
            self.children[name] = applying.start(configuration.InstanceSpec.from_dict(record["spec"]))
            say.info(f"{name}: started again")
        except XnfError as err:
            _error(f"{name}: {err}")
            sd_notify.status(f"{name} is down: {err}"[:400])

    def run(self) -> int:
        for signum in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, self._on_signal)
        if self._apply() is not None:
            self._stop()
            return 1
        sd_notify.ready(self._status())
        watchdog = sd_notify.watchdog_interval_s()
        next_ping = time.monotonic()
        while True:
            while self.signals:
                signum = self.signals.pop(0)
                if signum in (signal.SIGTERM, signal.SIGINT):
                    self._stop()
                    return 0
                sd_notify.reloading()
                why = self._apply()
                sd_notify.ready(self._status() + (f"; {self.path} not applied: {why}"[:400] if why else ""))
            healthy = self._revive()
            if watchdog and healthy and time.monotonic() >= next_ping:
                sd_notify.watchdog()
                next_ping = time.monotonic() + watchdog
            time.sleep(min(CHECK_S, watchdog or CHECK_S))

    def _stop(self) -> None:
        sd_notify.stopping()
        try:
            for line in applying.stop_all(self.children):
                say.info(line)
        except XnfError as err:
            _error(str(err))


def _the_only_daemon() -> int:
    """A lock held for the daemon's life on its run directory: two daemons there would each revive, stop and apply
    over the other. Returns the descriptor that holds it."""
    lock = run_locks.open_lock(DAEMON_LOCK)
    if not run_locks.take(lock):
        holder = os.read(lock, 32).decode(errors="replace").strip() or "?"
        os.close(lock)
        raise XnfError(f"another xnf daemon (pid {holder}) runs the instances of {control.run_dir()}: stop it "
                       "first (systemctl stop xnf)")
    os.ftruncate(lock, 0)
    os.write(lock, f"{os.getpid()}\n".encode())
    return lock


def run(path: str, restart_window_s: float = RESTART_WINDOW_S) -> int:
    configuration.load(path)     # refused before anything starts, with its line
    lock = _the_only_daemon()
    sys.stdout.flush()
    try:
        return Daemon(Path(path), restart_window_s).run()
    finally:
        os.close(lock)

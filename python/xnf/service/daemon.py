"""`xnf daemon FILE`: the file's instances kept running as a service (deploy/systemd/xnf.service runs it).

  - start: the file applied (python/xnf/service/apply.py), then READY=1 to systemd (sd_notify), with what runs in
    STATUS;
  - SIGHUP (systemctl reload): RELOADING=1, the file read and applied again, READY=1; a file that does not hold
    (a malformed line, an NF that cannot start) is said, in STATUS and on stderr, and what runs is left as it was;
  - every CHECK_S: an instance that has died is said and started again (at most RESTARTS in a row, then left
    down and said); WATCHDOG=1 while the instances answer, when the unit sets WatchdogSec;
  - SIGTERM or SIGINT (systemctl stop): STOPPING=1, every instance stopped as Ctrl-C stops one (programs taken
    off, ports put back), exit 0.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

from xnf import control, say
from xnf.errors import XnfError
from xnf.service import apply as applying
from xnf.service import config as configuration
from xnf.service import sd_notify

CHECK_S = 1.0
RESTARTS = 3


def _error(text: str) -> None:
    """Said on stderr, which systemd's journal keeps."""
    print(f"xnf daemon: {text}", file=sys.stderr, flush=True)


class Daemon:
    def __init__(self, path: Path):
        self.path = path
        self.children: dict[str, subprocess.Popen] = {}
        self.failures: dict[str, int] = {}
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
        self.failures.clear()
        return None

    def _status(self) -> str:
        names = sorted(applying.applied())
        return f"{len(names)} instance(s) running: {', '.join(names)}" if names else "no instance in the file"

    def _revive(self) -> bool:
        """Dead instances started again; True when every instance the file names answers."""
        healthy = True
        for name, record in applying.applied().items():
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
        tries = self.failures.get(name, 0)
        if tries >= RESTARTS:
            return
        self.failures[name] = tries + 1
        try:
            self.children[name] = applying.start(configuration.InstanceSpec.from_dict(record["spec"]))
            say.info(f"{name}: started again")
        except XnfError as err:
            _error(f"{name}: {err}" + ("; left down" if tries + 1 >= RESTARTS else ""))
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


def run(path: str) -> int:
    configuration.load(path)     # refused before anything starts, with its line
    sys.stdout.flush()
    return Daemon(Path(path)).run()

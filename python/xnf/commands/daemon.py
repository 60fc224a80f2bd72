"""`xnf daemon`: keep a configuration file's instances running, as a systemd service (Type=notify; SIGHUP applies the
file again; deploy/systemd/xnf.service)."""

from __future__ import annotations

import argparse

from xnf.commands.arguments import MAX_SECONDS, require_root, seconds_between


def cmd_daemon(args: argparse.Namespace) -> int:
    """The file's instances kept running, as a systemd service (python/xnf/service/daemon.py)."""
    from xnf.service import daemon

    require_root("xnf daemon")
    return daemon.run(args.file, args.restart_window or daemon.RESTART_WINDOW_S)


def add_parser(sub) -> None:
    daemon_cmd = sub.add_parser("daemon", help="keep a configuration file's instances running, as a systemd service "
                                "(Type=notify; SIGHUP applies the file again; deploy/systemd/xnf.service)")
    daemon_cmd.add_argument("file", help="the configuration (TOML: [instance.NAME] tables)")
    daemon_cmd.add_argument("--restart-window", type=seconds_between(1, MAX_SECONDS), default=None, metavar="SECONDS",
                            help="an instance that dies again after 3 restarts within this many seconds is left "
                                 "down until the file is applied again (default: 10)")
    daemon_cmd.set_defaults(func=cmd_daemon)

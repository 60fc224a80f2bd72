"""`xnf stop`: stop a running NF as Ctrl-C does; with --state its program forwards on with the kept tables, unless
--drop-state removes them."""

from __future__ import annotations

import argparse

from xnf import control
from xnf.commands.arguments import require_root


def cmd_stop(args: argparse.Namespace) -> int:
    """A running NF stopped as Ctrl-C stops it (python/xnf/service/stop.py)."""
    from xnf.service import stop

    require_root("xnf stop")
    print(stop.stop(control.pick_instance(args.name), args.drop_state))
    return 0


def add_parser(sub) -> None:
    stop_cmd = sub.add_parser("stop", help="stop a running NF as Ctrl-C does; with --state its program forwards "
                              "on with the kept tables, unless --drop-state removes them")
    stop_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    stop_cmd.add_argument("--drop-state", action="store_true", help="remove its --state folder too, which takes "
                          "its program off")
    stop_cmd.set_defaults(func=cmd_stop)

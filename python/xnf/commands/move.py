"""`xnf move`: move a running NF between xdp, tc and the AF_XDP modes with its rules and sessions, without a gap (it
must run with --state DIR)."""

from __future__ import annotations

import argparse

from xnf import control
from xnf.commands.arguments import require_root


def cmd_move(args: argparse.Namespace) -> int:
    """A running NF moved between paths with its rules and sessions (python/xnf/service/move.py)."""
    from xnf.service import move

    require_root("xnf move")
    print(move.move(control.pick_instance(args.name), args.mode, args.options))
    return 0


def add_parser(sub) -> None:
    move_cmd = sub.add_parser("move", help="move a running NF between xdp, tc and the AF_XDP modes with its rules "
                              "and sessions, without a gap (it must run with --state DIR)")
    move_cmd.add_argument("--mode", required=True, help="the mode to move it to (those describe lists with "
                          "keeps_state: xdp, tc, afxdp...)")
    move_cmd.add_argument("options", nargs="*", help="after --: the new mode's own options, e.g. -- --cores 1")
    move_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    move_cmd.set_defaults(func=cmd_move)

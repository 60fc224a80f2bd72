"""`xnf top`: the rates of every running instance, refreshed until Ctrl-C."""

from __future__ import annotations

import argparse

from xnf import watch
from xnf.commands.arguments import MAX_SECONDS, positive_int, seconds_between


def cmd_top(args: argparse.Namespace) -> int:
    from xnf import watch

    return watch.top(args.interval, args.count, args.json)


def add_parser(sub) -> None:
    top = sub.add_parser("top", help="the rates of every running instance, refreshed until Ctrl-C")
    top.add_argument("--interval", "-i", type=seconds_between(watch.MIN_INTERVAL_S, MAX_SECONDS), default=1.0, metavar="S",
                     help="seconds between refreshes")
    top.add_argument("--count", "-c", type=positive_int, metavar="N", help="stop after N refreshes")
    top.add_argument("--json", action="store_true", help="one JSON list per refresh")
    top.set_defaults(func=cmd_top)

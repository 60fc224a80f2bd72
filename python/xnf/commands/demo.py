"""`xnf demo`: run the NFs on an emulated edge server and show the results."""

from __future__ import annotations

import argparse

from xnf.commands.arguments import require_root, seconds_between


def cmd_demo(args: argparse.Namespace) -> int:
    from xnf.bench import demo

    require_root("xnf demo")
    return demo.run(seconds=args.seconds)


def add_parser(sub) -> None:
    demo = sub.add_parser("demo", help="run the NFs on an emulated edge server and show the results")
    demo.add_argument("--seconds", type=seconds_between(0.1, 600), default=2.0, help="traffic time per measurement")
    demo.set_defaults(func=cmd_demo)

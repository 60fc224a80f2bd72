"""`xnf apply`: make the running instances match a configuration file: start, stop, change rules in place, restart
what cannot change in place (docs/operations.md)."""

from __future__ import annotations

import argparse

from xnf.commands.arguments import require_root


def cmd_apply(args: argparse.Namespace) -> int:
    """Makes the running instances match the file (python/xnf/service/apply.py)."""
    from xnf.service import apply as applying
    from xnf.service import config

    wanted = config.load(args.file)
    if args.check:
        for step in applying.plan(wanted):
            print(f"would: {step.said()}" if step.action != "keep" else step.said())
        return 0
    require_root("xnf apply")
    for line in applying.apply(wanted):
        print(line)
    return 0


def add_parser(sub) -> None:
    apply_cmd = sub.add_parser("apply", help="make the running instances match a configuration file: start, stop, "
                               "change rules in place, restart what cannot change in place (docs/operations.md)")
    apply_cmd.add_argument("file", help="the configuration (TOML: [instance.NAME] tables)")
    apply_cmd.add_argument("--check", action="store_true", help="check the file and say what would change, "
                           "changing nothing")
    apply_cmd.set_defaults(func=cmd_apply)

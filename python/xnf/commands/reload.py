"""`xnf reload`: a running NF reads its --rules file again and puts it in force in place of what it held, rule by
rule, without a restart (as kill -HUP does)."""

from __future__ import annotations

import argparse
import sys

from xnf import control


def cmd_reload(args: argparse.Namespace) -> int:
    """The instance reads its --rules file again and puts it in force in place of what it held (as SIGHUP does)."""
    sys.stdout.write(control.request(control.pick_instance(args.name), "reload"))
    return 0


def add_parser(sub) -> None:
    reload_cmd = sub.add_parser("reload", help="a running NF reads its --rules file again and puts it in force in "
                                "place of what it held, rule by rule, without a restart (as kill -HUP does)")
    reload_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    reload_cmd.set_defaults(func=cmd_reload)

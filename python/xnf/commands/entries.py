"""`xnf entries`: how full the NF's maps are (entries held, capacity)."""

from __future__ import annotations

import argparse
import json

from xnf import control


def cmd_entries(args: argparse.Namespace) -> int:
    name = control.pick_instance(args.name)
    rows = [control.request_json(name, f"entries {m}") for m in args.maps]
    if args.json:
        print(json.dumps(rows, indent=2))
    for row in [] if args.json else rows:
        print(f"{row['map']}: {row['entries']} of {row['capacity']} entries")
    return 0


def add_parser(sub) -> None:
    entries = sub.add_parser("entries", help="how full the NF's maps are (entries held, capacity)")
    entries.add_argument("maps", nargs="+", metavar="MAP", help="a map of the NF (lb_sessions, fw_acl ...)")
    entries.add_argument("--name", "-n", help="instance (default: the only running one)")
    entries.add_argument("--json", action="store_true", help="machine-readable output")
    entries.set_defaults(func=cmd_entries)

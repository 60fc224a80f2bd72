"""`xnf list`: the NFs xnf has: shipped, and built with 'xnf build'."""

from __future__ import annotations

import argparse
import json

from xnf import build


def cmd_list(args: argparse.Namespace) -> int:
    built = build.user_nfs()
    nfs = [{"nf": nf, "built": str(built[nf]) if nf in built else None} for nf in build.available_nfs()]
    if args.json:
        print(json.dumps(nfs, indent=2))
    for row in [] if args.json else nfs:
        print(f"{row['nf']}\t(built: {row['built']})" if row["built"] else row["nf"])
    return 0


def add_parser(sub) -> None:
    nf_list = sub.add_parser("list", help="the NFs xnf has: shipped, and built with 'xnf build'")
    nf_list.add_argument("--json", action="store_true", help="machine-readable output")
    nf_list.set_defaults(func=cmd_list)

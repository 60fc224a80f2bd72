"""`xnf conntrack`: the connections a running NF tracks (as conntrack -L lists netfilter's): state, who opened and who
answered, idle and left seconds."""

from __future__ import annotations

import argparse



def cmd_conntrack(args: argparse.Namespace) -> int:
    from xnf import conntrack_list

    return conntrack_list.run(args.name, args.table, args.json, args.limit)


def add_parser(sub) -> None:
    conntrack = sub.add_parser("conntrack", help="the connections a running NF tracks (as conntrack -L lists "
                               "netfilter's): state, who opened and who answered, idle and left seconds")
    conntrack.add_argument("--name", "-n", help="instance (default: the only running one)")
    conntrack.add_argument("--table", help="its connection table (default: its only one, acl_ct for the acl)")
    conntrack.add_argument("--json", action="store_true", help="machine-readable output")
    conntrack.add_argument("--limit", type=int, help="list at most this many, all counted (default 100,000)")
    conntrack.set_defaults(func=cmd_conntrack)

"""`xnf ps`: running NF instances."""

from __future__ import annotations

import argparse
import json

from xnf import control
from xnf.errors import XnfError


def cmd_ps(args: argparse.Namespace) -> int:
    from xnf import attached

    infos = []
    for item in control.listing(remove_stale=True):
        try:
            info = control.request_json(item.name, "info") | {"state": item.state}
            info["others_attached"] = attached.others_on(info)
        except XnfError as err:  # stopped, hung, or gone since the listing: said, not left out
            if not item.owner:
                continue
            info = {"name": item.name, "nf": item.owner.nf, "mode": item.owner.mode, "pid": item.owner.pid,
                    "ports": [], "state": item.state if item.state != control.RUNNING else "not answering",
                    "why": str(err), "others_attached": {}}
        infos.append(info)
    if args.json:
        print(json.dumps(infos, indent=2))
    for info in [] if args.json else infos:
        ports = ",".join(p["iface"] for p in info["ports"])
        others = "; ".join(f"also on {iface}: " + ", ".join(f"{p['name']} (id {p['id']}, {p['mode']})" for p in progs)
                           for iface, progs in info["others_attached"].items())
        state = "" if info["state"] == control.RUNNING else f"\t{info['state'].upper()}: {info.get('why', '')}"
        print(f"{info['name']}\t{info['nf']}\t{info['mode']}\tpid {info['pid']}\t{ports}" +
              (f"\t{others}" if others else "") + state)
    return 0


def add_parser(sub) -> None:
    ps = sub.add_parser("ps", help="running NF instances")
    ps.add_argument("--json", action="store_true", help="machine-readable output")
    ps.set_defaults(func=cmd_ps)

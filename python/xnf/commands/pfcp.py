"""`xnf pfcp`: a PFCP (N4) endpoint that sets up a running upf's sessions for an SMF."""

from __future__ import annotations

import argparse

from xnf import control


def cmd_pfcp(args: argparse.Namespace) -> int:
    from xnf import pfcp

    return pfcp.serve(control.pick_instance(args.name), args.listen, args.port, args.n3_addr, args.node_id, args.smf,
                      args.max_sessions)


def add_parser(sub) -> None:
    pfcp = sub.add_parser("pfcp", help="a PFCP (N4) endpoint that sets up a running upf's sessions for an SMF")
    pfcp.add_argument("--name", "-n", help="the upf instance (default: the only running one)")
    pfcp.add_argument("--listen", required=True, metavar="ADDR", help="the IPv4 address to answer PFCP on")
    pfcp.add_argument("--port", type=int, default=8805, help="the UDP port (default 8805, PFCP's)")
    pfcp.add_argument("--n3-addr", required=True, metavar="ADDR",
                      help="the upf's N3 address, in the F-TEIDs this endpoint chooses")
    pfcp.add_argument("--node-id", metavar="ADDR", help="the Node ID and F-SEID address (default the --listen one)")
    pfcp.add_argument("--smf", action="append", metavar="ADDR",
                      help="accept associations from this SMF address only (again for more; default: any)")
    pfcp.add_argument("--max-sessions", type=int, default=100_000, metavar="N",
                      help="sessions at most; more are refused with cause 75 (default 100000)")
    pfcp.set_defaults(func=cmd_pfcp)

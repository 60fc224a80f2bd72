"""`xnf dump`: capture what a running NF received and the verdict it gave (pcapng with -w, for tcpdump and
Wireshark)."""

from __future__ import annotations

import argparse

from xnf import capture, control
from xnf.commands.arguments import MAX_COUNT, positive_int, whole_number
from xnf.errors import XnfError


def cmd_dump(args: argparse.Namespace) -> int:
    verdicts = [v for item in args.verdict or [] for v in item.split(",") if v]
    if args.verdict is not None and not verdicts:
        raise XnfError("--verdict names no verdict: give one or more of drop, tx, pass, redirect, redirect_error, "
                       "abort, local, or leave it out for all")
    return capture.dump(control.pick_instance(args.name), verdicts, args.count or 0, args.write, snap=args.snaplen,
                        at=args.at, expression=" ".join(args.expression))


def add_parser(sub) -> None:
    dump = sub.add_parser("dump", help="capture what a running NF received and the verdict it gave (pcapng "
                          "with -w, for tcpdump and Wireshark)")
    dump.add_argument("--name", "-n", help="instance (default: the only running one)")
    dump.add_argument("--verdict", action="append", metavar="V",
                      help="only frames given this verdict: drop, tx, pass, redirect, redirect_error, abort, local "
                           "(repeat or join with commas; default all)")
    dump.add_argument("--count", "-c", type=positive_int, metavar="N", help="stop after N frames")
    dump.add_argument("-w", dest="write", metavar="FILE", help="write pcapng to FILE ('-': standard output); each "
                      "frame's comment gives where it was taken, its verdict, port, queue and side")
    dump.add_argument("-s", "--snaplen", type=whole_number(0, MAX_COUNT), default=0, metavar="BYTES",
                      help="keep at most BYTES of each frame (default 0: the whole frame, up to a jumbo frame)")
    dump.add_argument("--at", choices=capture.AT, default="exit", help="exit: as the NF left each frame, with its "
                      "verdict (the default); entry: as it came in, before anything ran; both")
    dump.add_argument("expression", nargs="*", help="a filter expression in tcpdump's language (libpcap compiles "
                      "it in the instance): only the frames it matches")
    dump.set_defaults(func=cmd_dump)

"""`xnf doctor`: what this kernel gives xnf (each facility, what xnf does without it), and with ports: what xnf needs
from each port and its veth peer, every problem with the command that fixes it."""

from __future__ import annotations

import argparse
import os
import sys

from xnf import build, programs
from xnf.commands.arguments import require_root
from xnf.errors import XnfError


DOCTOR_NF = "macswap"  # any NF binary judges ports the same way: the checks are the runtime's


def cmd_doctor(args: argparse.Namespace) -> int:
    """What this kernel gives xnf (the facility table), then the port checks a start makes, alone
    (lib/runtime/port_checks.c): each problem with why and its fix."""
    require_root("xnf doctor")
    if not args.ifaces and [o for o in args.options if o != "--verbose"]:
        raise XnfError(f"xnf doctor judges {' '.join(args.options)} on ports: give them first "
                       "(xnf doctor IFACE [IFACE ...] --mode MODE)")
    if not args.ifaces:
        binary = build.tool_binary("xnf-kernel")
        sys.stdout.flush()
        os.execv(binary, [str(binary), *(["--json"] if args.json else [])])
    binary = programs.nf_binary(args.nf or DOCTOR_NF)
    argv = [str(binary), "doctor", *[a for iface in args.ifaces for a in ("--iface", iface)], *args.options]
    if args.json:
        argv.append("--json")
    sys.stdout.flush()
    os.execv(binary, argv)


def add_parser(sub) -> None:
    doctor = sub.add_parser("doctor", help="what this kernel gives xnf (each facility, what xnf does without it), "
                            "and with ports: what xnf needs from each port and its veth peer, every problem with the "
                            "command that fixes it")
    doctor.add_argument("ifaces", nargs="*", metavar="IFACE", help="the ports, as 'xnf run --iface' would get them")
    doctor.add_argument("--nf", help="judge for this NF's binary (default: any; the checks are the runtime's)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(func=cmd_doctor)

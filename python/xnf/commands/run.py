"""`xnf run`: run an NF on one or more interfaces until Ctrl-C ('xnf run --help' lists the options and modes)."""

from __future__ import annotations

import argparse
import os
import sys

from xnf import chain, programs
from xnf.commands.arguments import require_root


RUN_USAGE = ("usage: xnf run NF --mode MODE --iface IF [--iface IF ...] [options]\n\n"
             "Runs NF until Ctrl-C. Every option goes to the NF binary, which checks it; 'xnf run NF --help' "
             "shows the NF's own options too.\n\n")


def cmd_run(args: argparse.Namespace) -> int:
    if not args.nf or args.nf in ("-h", "--help"):
        from xnf import contract

        print(RUN_USAGE + contract.help_text())
        return 0
    binary = programs.nf_binary(args.nf)
    if not {"-h", "--help"} & set(args.options):
        require_root("xnf run")
    argv = [str(binary), "run", *chain.run_arguments(args.nf, args.options)]
    sys.stdout.flush()
    os.execv(binary, argv)  # the NF binary owns signals and clean-up from here on


def add_parser(sub) -> None:
    run = sub.add_parser("run", add_help=False, help="run an NF on one or more interfaces until Ctrl-C "
                         "('xnf run --help' lists the options and modes)")
    run.add_argument("nf", nargs="?", help="NF name (see 'xnf list')")
    run.set_defaults(func=cmd_run)

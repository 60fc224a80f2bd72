"""The `xnf` command: a thin front over the NF binaries and their control sockets."""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys

from xnf import say
from xnf.commands import COMMANDS
from xnf.errors import XnfError


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xnf")
    except PackageNotFoundError:
        return "(not installed)"


def make_parser() -> argparse.ArgumentParser:
    """The whole command line: the global options, then each subcommand's parser from its own module."""
    parser = argparse.ArgumentParser(prog="xnf", description=__doc__)
    parser.add_argument("--version", action="version", version=f"xnf {_version()}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only what a command produces (no progress, no "
                        "lines about where results went)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="also the commands xnf runs underneath "
                        "(on stderr); 'xnf -v run' passes it to the NF binary")
    sub = parser.add_subparsers(dest="command", required=True)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def _exit_on_sigterm() -> None:
    """SIGTERM ends the command the way Ctrl-C does, through its clean-ups (temporary folders, the lab's
    namespaces), where nothing else took the signal."""
    def stop(signum, _frame):
        raise SystemExit(128 + signum)

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    _exit_on_sigterm()
    parser = make_parser()
    args, extra = parser.parse_known_args(argv)
    json_out = getattr(args, "json", False)
    say.set_level(args.quiet, args.verbose, json_out)
    if args.command in ("run", "doctor"):
        # --mode and AF_XDP settings (--queues, --workers, --batch ...): the NF binary checks them
        args.options = extra + (["--verbose"] if args.verbose else [])
    elif args.command == "bench":
        args.options = extra  # a study's own options: its parser checks them
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except XnfError as err:
        if json_out:
            # A program reading the JSON gets the error as JSON too; a person still sees it on stderr.
            print(json.dumps({"error": str(err)}))
        print(f"xnf: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (head, grep -q) has what it wanted: end quietly, and keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

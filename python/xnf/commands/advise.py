"""`xnf advise`: where should this NF run for this mix? Every data path predicted by the cost model from the NF's own
cost, the fastest recommended."""

from __future__ import annotations

import argparse

from xnf import nf_cost
from xnf.commands.arguments import cores_limit, positive_int, require_root, whole_number
from xnf.errors import XnfError


def cmd_advise(args: argparse.Namespace) -> int:
    from xnf.model import advise_command

    if args.cores and args.cores > cores_limit():
        raise XnfError(f"--cores {args.cores}: an instance uses at most {cores_limit()} cores (its workers and the core "
                       "that receives); the model's rates grow with cores only that far")
    require_root("xnf advise")
    return advise_command.run(args)


def add_parser(sub) -> None:
    advise = sub.add_parser("advise", help="where should this NF run for this mix? Every data path predicted by the "
                            "cost model from the NF's own cost, the fastest recommended")
    advise.add_argument("nf", help="NF name (see 'xnf list'), or a chain (chain:a,b: its split points are candidates)")
    advise.add_argument("--rules", help="the NF's rules")
    advise.add_argument("--mix", metavar="FILE|SPEC", help="the traffic: xnf-gen's traffic options or classes, inline "
                        "or in a file (default one flow of 64-byte UDP frames)")
    advise.add_argument("--profile", metavar="P", help="a machine profile (file, or a published one's name; default: "
                        "the one 'xnf bench run model-fit' installed, else the quick one, made first if there is none: "
                        "a few minutes, installed only when the host was steady)")
    advise.add_argument("--cores", type=positive_int, metavar="N", help="cores the NF may use (default the "
                        "profile's)")
    advise.add_argument("--map-size", action="append", metavar="MAP=N", help="a map's size, as xnf run takes it")
    advise.add_argument("--sessions", choices=nf_cost.SESSIONS, default="established", help="which frames the NF "
                        f"is priced on: {nf_cost.SESSIONS_HELP}")
    advise.add_argument("--calibrate", action="store_true", help="bring the profile to this machine now: each path's "
                        "baseline and drop rates measured again, each path's times scaled by its own (a minute or "
                        "two)")
    advise.add_argument("--verify", type=int, nargs="?", const=3, metavar="N", help="measure the best N candidates "
                        "(default 3) in the lab, in interleaved rounds with the yardstick, and say whether the pick "
                        "holds")
    advise.add_argument("--move", metavar="NAME", help="then move the running instance NAME (of this NF, started "
                        "with --state) to the recommended path, with its rules and sessions (xnf move)")
    advise.add_argument("--rounds", type=positive_int, default=3, help="rounds of xnf cost (default 3)")
    advise.add_argument("--frames", type=whole_number(1, nf_cost.MAX_FRAMES), help="frames of the mix xnf cost runs on "
                        "(default: every "
                        f"flow once, {nf_cost.MIN_FRAMES}-{nf_cost.MAX_FRAMES})")
    advise.add_argument("--json", action="store_true", help="machine-readable output")
    advise.set_defaults(func=cmd_advise)

"""`xnf cost`: what an NF costs per frame on a traffic mix, natively and in XDP, without a topology."""

from __future__ import annotations

import argparse
import json

from xnf import nf_cost
from xnf.commands.arguments import positive_int, require_root, whole_number


def cmd_cost(args: argparse.Namespace) -> int:
    from xnf import mix, nf_cost

    require_root("xnf cost")
    gen = [item for spec in args.mix_class or [] for item in ("--class", spec)]
    gen += ["--flows", str(args.flows)] if args.flows else []
    gen += ["--size", str(args.size)] if args.size else []
    gen += mix.parse(args.mix)
    mix.refuse_twice(gen)
    frames = nf_cost.new_session_frames(gen, args.frames) if args.sessions == "new" else args.frames
    result = nf_cost.measure(args.nf, gen, args.rules, frames, args.repeat, args.map_size)
    if args.json:
        print(json.dumps({**result, "sessions": args.sessions}, indent=2))
        return 0
    verdicts = ", ".join(f"{k} {v}" for k, v in result["verdicts"].items())
    print(f"{result['nf']} on {result['frames']} frames of the mix ({verdicts}), {result['repeat']} passes:\n"
          f"  native (the AF_XDP workers' code, in batches): {result['native_ns_per_frame']:.1f} ns per frame "
          f"(a batch run again at once: {result['native_warm_ns_per_frame']:.1f})\n"
          f"  XDP program (BPF_PROG_RUN, with its per-run work): {result['xdp_ns_per_frame']:.1f} ns per frame: "
          f"{result['xdp_warm_ns_per_frame']:.1f} run again at once, plus the misses of a native batch "
          f"(one cold run per syscall: {result['xdp_cold_ns_per_frame']:.1f})\n"
          f"  first pass ({'every frame a new session' if args.sessions == 'new' else 'each flow first seen'}): "
          f"{result['native_first_ns_per_frame']:.1f} ns per frame natively, {result['xdp_first_ns_per_frame']:.1f} "
          "in XDP")
    return 0


def add_parser(sub) -> None:
    cost = sub.add_parser("cost", help="what an NF costs per frame on a traffic mix, natively and in XDP, without "
                          "a topology")
    cost.add_argument("nf", help="NF name (see 'xnf list'), or a chain")
    cost.add_argument("--rules", help="rules loaded first")
    cost.add_argument("--class", dest="mix_class", action="append", metavar="SPEC",
                      help="a traffic class as xnf-gen takes it (NAME:share=F,saddr=ADDR/LEN,...); repeat for a mix")
    cost.add_argument("--flows", type=positive_int, help="flows of the base traffic (default 1)")
    cost.add_argument("--size", type=positive_int, help="frame size (default the smallest)")
    cost.add_argument("--frames", type=whole_number(1, nf_cost.MAX_FRAMES), help="frames of the mix to run on (default: "
                      "enough for every "
                      f"flow of the mix once, {nf_cost.MIN_FRAMES}-{nf_cost.MAX_FRAMES})")
    cost.add_argument("--repeat", type=whole_number(1, nf_cost.MAX_REPEAT), help="timed passes over them (default: "
                      f"{nf_cost.FRAME_RUNS} frame runs' worth, at least {nf_cost.MIN_PASSES})")
    cost.add_argument("--map-size", action="append", metavar="MAP=N", help="a map's size, as xnf run takes it")
    cost.add_argument("--sessions", choices=nf_cost.SESSIONS, default="established", help=nf_cost.SESSIONS_HELP)
    cost.add_argument("--mix", metavar="FILE|SPEC", help="the traffic: xnf-gen's traffic options or classes, inline "
                      "or in a file (docs/cost-model.md)")
    cost.add_argument("--json", action="store_true", help="machine-readable output")
    cost.set_defaults(func=cmd_cost)

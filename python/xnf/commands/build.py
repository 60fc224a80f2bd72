"""`xnf build`: build an NF of your own (a folder NAME/ with NAME.c) into xnf-NAME."""

from __future__ import annotations

import argparse
import shlex

from xnf import build, say


def cmd_build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from xnf.build_nf import build_nf

    binary = build_nf(Path(args.folder), Path(args.out) if args.out else None)
    name = binary.name.removeprefix("xnf-")
    say.info(f"built {binary}")
    if binary.parent.resolve() not in (d.resolve() for d in build.user_nf_dirs()):
        say.info(f"xnf commands find it with XNF_NF_DIR={shlex.quote(str(binary.parent))}")
    say.info(f"run it with: sudo xnf run {name} --mode xdp --iface IF")
    return 0


def add_parser(sub) -> None:
    build_cmd = sub.add_parser("build", help="build an NF of your own (a folder NAME/ with NAME.c) into xnf-NAME")
    build_cmd.add_argument("folder", help="the NF's folder (docs/writing-an-nf.md)")
    build_cmd.add_argument("--out", help="where the binary goes (default: $XNF_NF_DIR, else ~/.local/share/xnf/nfs, "
                           "where every xnf command looks)")
    build_cmd.set_defaults(func=cmd_build)

"""`xnf exporter`: serve every instance's counters as Prometheus metrics."""

from __future__ import annotations

import argparse



def cmd_exporter(args: argparse.Namespace) -> int:
    from xnf import exporter

    return exporter.serve(args.listen, args.run_dir)


def add_parser(sub) -> None:
    exporter = sub.add_parser("exporter", help="serve every instance's counters as Prometheus metrics")
    exporter.add_argument("--listen", default="127.0.0.1:9417", metavar="ADDR:PORT",
                          help="where /metrics is served (default 127.0.0.1:9417)")
    exporter.add_argument("--run-dir", help="the instances' run directory (default $XNF_RUN_DIR, else /run/xnf)")
    exporter.set_defaults(func=cmd_exporter)

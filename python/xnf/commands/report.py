"""`xnf report`: plots and a Markdown page from a results file; 'xnf report reproduce': the research's findings judged
on this machine's results."""

from __future__ import annotations

import argparse

from xnf import build, say
from xnf.commands.arguments import require_root, results_dir
from xnf.errors import XnfError


def _published_results() -> list:
    """Where reproduce looks by default: this user's results, and the research record a checkout carries."""
    where = build.layout()
    return [results_dir()] + ([where.root / "research" / "results"] if where.checkout else [])


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.results == "reproduce":
        from xnf.analysis.reproduce import reproduce

        if args.run_missing:
            require_root("xnf report reproduce --run-missing")
        folders = [Path(d) for d in args.results_dir or _published_results()]
        only = [k for item in args.only or [] for k in item.split(",") if k]
        page = reproduce(folders, Path(args.out) if args.out else results_dir() / "reproduce",
                         args.run_missing, only)
        say.info(f"reproduced: {page}")
        return 0
    if args.results_dir or args.run_missing or args.only:
        raise XnfError("--results-dir, --run-missing and --only go with 'xnf report reproduce'")
    from xnf.analysis.report import write_report

    page = write_report(Path(args.results), Path(args.out) if args.out else None)
    say.info(f"report: {page}")
    return 0


def add_parser(sub) -> None:
    report = sub.add_parser("report", help="plots and a Markdown page from a results file; 'xnf report reproduce': "
                            "the research's findings judged on this machine's results")
    report.add_argument("results", help="a results JSON written by 'xnf bench run', or 'reproduce'")
    report.add_argument("--out", help="folder for the page and plots (default: beside the results; reproduce: "
                        f"{results_dir() / 'reproduce'})")
    report.add_argument("--results-dir", action="append", metavar="DIR", help="reproduce: where to look for results "
                        f"(repeat; default {results_dir()}, and a checkout's research/results)")
    report.add_argument("--run-missing", action="store_true", help="reproduce: run the benchmarks whose results are "
                        "missing first (with their defaults: hours for all)")
    report.add_argument("--only", action="append", metavar="KEY", help="reproduce: only these findings (comma-"
                        "separated or repeated)")
    report.set_defaults(func=cmd_report)

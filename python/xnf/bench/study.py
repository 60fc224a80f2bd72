"""The skeleton every study of rounds is written on: its subjects measured in interleaved rounds (each round through
all of them, the order turned around every round: python/xnf/lab/rounds.py), a temporary folder for the trials'
files, the environment, the summary against the same-run yardstick, one results file, one line per summary row.

A study module builds one `RoundsStudy` and exposes it the way `xnf bench` reads every study: NAME, DESCRIPTION,
add_arguments(parser) and run(args, out_dir) (catalog.py). What differs between studies is only what it measures
(subjects, trial), how it sums up (summarise) and what it says (line, report)."""

from __future__ import annotations

import argparse
import contextlib
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from xnf import results_file, say
from xnf.lab import environment
from xnf.lab.rounds import measure_rounds


@dataclass
class Place:
    """Where a trial runs: a folder for its files, and what the study set up for all of its trials (a topology
    kept over the rounds, say; None when each trial makes its own)."""
    folder: Path
    lab: Any = None


def nothing_set_up(args: argparse.Namespace, folder: Path):
    return contextlib.nullcontext()


def add_paths_option(parser: argparse.ArgumentParser, paths: dict) -> None:
    """--paths: a subset of xnf's modes a study measures beside its yardstick (paths: name -> (mode, options))."""
    parser.add_argument("--paths", default=",".join(paths), help="xnf's modes: a subset of " + ", ".join(paths))


def paths_described(paths: dict) -> dict:
    """The study's paths as its results file records them."""
    return {name: {"mode": mode, "options": options} for name, (mode, options) in paths.items()}


@dataclass
class RoundsStudy:
    name: str                                                  # xnf bench run NAME
    results: str                                               # the results file's stem (NAME-STAMP.json)
    subjects: Callable[[argparse.Namespace], list]
    trial: Callable[[Any, argparse.Namespace, Place], dict]    # (subject, options, where it runs)
    line: Callable[[dict], str]                                # a sample, as progress
    summarise: Callable[[list[dict], argparse.Namespace], list[dict]]
    report: Callable[[dict], str]                              # a summary row, for people
    rounds: int = 5
    seconds: float = 2.0
    fields: Callable[[argparse.Namespace], dict] = lambda args: {}   # more of the set-up for the results file
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    check: Callable[[argparse.Namespace], str | None] = lambda args: None   # what is wrong with the options
    # What every trial shares, set up once around the rounds (a context manager of (options, folder)).
    lab: Callable[[argparse.Namespace, Path], Any] = nothing_set_up
    seconds_type: type = float
    plot: Callable[[list[dict], Path], Any] = lambda summary, png: None   # a figure beside the results file

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rounds", type=int, default=self.rounds)
        parser.add_argument("--seconds", type=self.seconds_type, default=self.seconds, help="seconds per trial")
        self.options(parser)

    def run(self, args: argparse.Namespace, out_dir: Path) -> Path:
        wrong = self.check(args)
        if args.rounds < 1 or args.seconds <= 0 or wrong:
            raise SystemExit(f"{self.name}: " + (wrong or "--rounds at least 1, --seconds above 0"))
        env = environment.describe()
        with tempfile.TemporaryDirectory() as folder, self.lab(args, Path(folder)) as lab:
            place = Place(Path(folder), lab)
            samples = measure_rounds(self.subjects(args), args.rounds, lambda s: self.trial(s, args, place),
                                     self.line)
        summary = self.summarise(samples, args)
        path = results_file.write(out_dir, self.results, {
            "environment": env, **self.fields(args), "seconds_per_trial": args.seconds, "summary": summary,
            "samples": samples}, summary)
        self.plot(summary, path.with_suffix(".png"))
        for row in summary:
            say.info(self.report(row))
        return path

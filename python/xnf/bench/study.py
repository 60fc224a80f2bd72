"""The skeleton every study is written on: its options checked, the environment, a temporary folder for the trials'
files and what the trials share set up around them, the samples measured, the summary (against the same-run
yardstick), one results file, a figure, what it found said line by line.

`Study` takes the samples from any measurement (a run against the clock, a fit's sweep, an earlier results file);
`RoundsStudy`, what most studies are, measures its subjects in interleaved rounds (each round through all of them,
the order turned around every round: python/xnf/lab/rounds.py). A study module builds one and exposes it the way
`xnf bench` reads every study: NAME, DESCRIPTION, add_arguments(parser) and run(args, out_dir) (catalog.py). What
differs between studies is only what it measures, how it sums up and what it says."""

from __future__ import annotations

import argparse
import contextlib
import statistics
import tempfile
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any, Callable

from xnf import results_file, say
from xnf.lab import environment
from xnf.lab.rounds import measure_rounds, median_ratio


@dataclass
class Place:
    """Where a trial runs: a folder for its files, what the study set up for all of its trials (a topology kept
    over the rounds, say; None when each trial makes its own) and the machine's environment (its TSC rate, say)."""
    folder: Path
    lab: Any = None
    env: dict | None = None

    @property
    def tsc_hz(self) -> float | None:
        return (self.env or {}).get("tsc_hz")


def nothing_set_up(args: argparse.Namespace, folder: Path):
    return contextlib.nullcontext()


def add_paths_option(parser: argparse.ArgumentParser, paths: dict) -> None:
    """--paths: a subset of xnf's modes a study measures beside its yardstick (paths: name -> (mode, options))."""
    parser.add_argument("--paths", default=",".join(paths), help="xnf's modes: a subset of " + ", ".join(paths))


@dataclass(frozen=True)
class ScenariosOnPaths:
    """A study's subjects: each of its scenarios on the yardstick and on each of xnf's paths it measures, as
    (scenario, path); --scenarios and --paths choose among them."""
    scenarios: tuple[str, ...]
    paths: dict
    yardstick: str

    def chosen(self, args: argparse.Namespace) -> tuple[list[str], list[str]]:
        return [s for s in args.scenarios.split(",") if s], [p for p in args.paths.split(",") if p]

    def check(self, args: argparse.Namespace) -> str | None:
        scenarios, paths = self.chosen(args)
        if not scenarios or any(s not in self.scenarios for s in scenarios) or any(p not in self.paths for p in paths):
            return f"--scenarios among {', '.join(self.scenarios)}; --paths among {', '.join(self.paths)}"
        return None

    def subjects(self, args: argparse.Namespace) -> list[tuple[str, str]]:
        scenarios, paths = self.chosen(args)
        return [(s, p) for s in scenarios for p in [self.yardstick] + paths]

    def options(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--scenarios", default=",".join(self.scenarios),
                            help="a subset of " + ", ".join(self.scenarios))
        add_paths_option(parser, self.paths)

    def rows(self, samples: list[dict], ratio_name: str,
             more: Callable[[str, list[dict]], dict] = lambda scenario, mine: {}) -> list[dict]:
        """Per scenario and path, in the order measured: the median rate ("mpps") and its median same-round ratio
        (as ratio_name) to the yardstick in that scenario, and what more(scenario, its samples) adds."""
        rows = []
        for scenario in dict.fromkeys(s["scenario"] for s in samples):
            for path in dict.fromkeys(s["path"] for s in samples):
                mine = [s for s in samples if (s["scenario"], s["path"]) == (scenario, path)]
                if mine:
                    rows.append({"subject": f"{path} {scenario}", "scenario": scenario, "path": path,
                                 "mpps": statistics.median(s["mpps"] for s in mine),
                                 ratio_name: median_ratio(samples, mine, "mpps", f"{self.yardstick} {scenario}")
                                 if path != self.yardstick else 1.0, "rounds": len(mine), **more(scenario, mine)})
        return rows


def paths_described(paths: dict) -> dict:
    """The study's paths as its results file records them."""
    return {name: {"mode": mode, "options": options} for name, (mode, options) in paths.items()}


def of_summary(plot: Callable[[Any, Path], Any]) -> Callable[[Any, list[dict], Path], Any]:
    """A study's figure drawn from its summary alone."""
    return lambda summary, samples, png: plot(summary, png)


def rows_as_they_are(summary: Any) -> list[dict]:
    return summary


def as_summary(summary: Any) -> dict:
    return {"summary": summary}


@dataclass
class Study:
    name: str                                                  # xnf bench run NAME
    results: str                                               # the results file's stem (NAME-STAMP.json)
    _: KW_ONLY
    measure: Callable[[argparse.Namespace, Place], list[dict]] # the samples
    summarise: Callable[[list[dict], argparse.Namespace], Any]  # the results file's "summary"
    report: Callable[[dict], str] | None = None                # a row of the summary's table, for people
    # The summary's rows: the results file's CSV and what is reported (a summary that is not a list says which)
    table: Callable[[Any], list[dict]] = rows_as_they_are
    said_last: Callable[[Any], list[str]] = lambda summary: []   # lines said after the rows
    seconds: float | None = 2.0                                # --seconds' default (None: the study has no --seconds)
    seconds_type: type = float
    seconds_help: str = "seconds per trial"
    seconds_field: str = "seconds_per_trial"                   # what the results file calls --seconds
    fields: Callable[[argparse.Namespace], dict] = lambda args: {}   # more of the set-up for the results file
    options: Callable[[argparse.ArgumentParser], None] = lambda parser: None
    check: Callable[[argparse.Namespace], str | None] = lambda args: None   # what is wrong with the options
    # What every trial shares, set up once around the measurement (a context manager of (options, folder)).
    lab: Callable[[argparse.Namespace, Path], Any] = nothing_set_up
    # a figure beside the results file, from the summary and the samples
    plot: Callable[[Any, list[dict], Path], Any] = lambda summary, samples, png: None
    keep_samples: str = "samples"                              # the results file's name for the samples
    # Parts measured after the samples, in the same set-up, each kept in the results file under its name
    parts: Callable[[argparse.Namespace, Place], dict] = lambda args, place: {}
    # What the options lead to, worked out once before anything runs (a profile loaded into args, say); it ends the
    # study with SystemExit on what it cannot take
    prepare: Callable[[argparse.Namespace], None] = lambda args: None
    # An earlier results file of the study to take the samples (and their environment) from instead of measuring
    # (re-judging after the judging changed): its document, or None to measure
    earlier: Callable[[argparse.Namespace], dict | None] = lambda args: None
    # How the summary is laid out in the results file (default: as "summary")
    document: Callable[[Any], dict] = as_summary
    # What the study does with its results beyond the file (a profile written and installed): (summary, results path,
    # options, the environment the samples were measured in)
    then: Callable[[Any, Path, argparse.Namespace, dict], None] = lambda summary, path, args, env: None

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        if self.seconds is not None:
            parser.add_argument("--seconds", type=self.seconds_type, default=self.seconds, help=self.seconds_help)
        self.options(parser)

    def measured(self, args: argparse.Namespace) -> tuple[dict, list[dict], dict, dict]:
        """(environment, samples, parts, the trials' length) measured now, or taken from the earlier results file."""
        earlier = self.earlier(args)
        if earlier is not None:
            seconds = {self.seconds_field: earlier[self.seconds_field]} if self.seconds_field in earlier else {}
            return earlier["environment"], earlier[self.keep_samples], {}, seconds
        env = environment.describe()
        with tempfile.TemporaryDirectory() as folder, self.lab(args, Path(folder)) as lab:
            place = Place(Path(folder), lab, env)
            samples = self.measure(args, place)
            parts = self.parts(args, place)
        return env, samples, parts, {self.seconds_field: args.seconds} if self.seconds is not None else {}

    def wrong(self, args: argparse.Namespace) -> str | None:
        if self.seconds is not None and args.seconds <= 0:
            return "--seconds above 0"
        return self.check(args)

    def run(self, args: argparse.Namespace, out_dir: Path) -> Path:
        self.prepare(args)
        wrong = self.wrong(args)
        if wrong:
            raise SystemExit(f"{self.name}: {wrong}")
        env, samples, parts, seconds = self.measured(args)
        args.measured_in = env   # the environment of the samples (the earlier file's when judged again)
        summary = self.summarise(samples, args)
        rows = self.table(summary)
        path = results_file.write(out_dir, self.results, {
            "environment": env, **self.fields(args), **seconds, **parts, **self.document(summary),
            self.keep_samples: samples}, rows)
        self.plot(summary, samples, path.with_suffix(".png"))
        self.then(summary, path, args, env)
        for row in rows if self.report else []:
            say.info(self.report(row))
        for line in self.said_last(summary):
            say.info(line)
        return path


@dataclass(kw_only=True)
class RoundsStudy(Study):
    subjects: Callable[[argparse.Namespace], list]
    trial: Callable[[Any, argparse.Namespace, Place], dict]    # (subject, options, where it runs)
    line: Callable[[dict], str]                                # a sample, as progress
    rounds: int = 5
    min_rounds: int = 1
    measure: Callable[[argparse.Namespace, Place], list[dict]] | None = None

    def __post_init__(self) -> None:
        self.measure = self.measure or self.in_rounds

    def in_rounds(self, args: argparse.Namespace, place: Place) -> list[dict]:
        return measure_rounds(self.subjects(args), args.rounds, lambda s: self.trial(s, args, place), self.line)

    def add_arguments(self, parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--rounds", type=int, default=self.rounds)
        super().add_arguments(parser)

    def wrong(self, args: argparse.Namespace) -> str | None:
        if args.rounds < self.min_rounds:
            return f"--rounds at least {self.min_rounds}"
        return super().wrong(args)

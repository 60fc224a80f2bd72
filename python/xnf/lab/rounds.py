"""The order every benchmark measures in: each round goes through all subjects, and the order turns around
every round, so slow drift of the machine (and the first trial's warm-up) spreads over all of them instead
of favouring one. Ratios to a yardstick are taken within a round."""

from __future__ import annotations

import statistics
from typing import Callable, Iterator, Sequence, TypeVar

from xnf import say

T = TypeVar("T")


def interleaved(subjects: Sequence[T], rounds: int) -> Iterator[tuple[int, T]]:
    """(round, subject) for every round, forwards in even rounds and backwards in odd ones."""
    for round_no in range(rounds):
        for subject in (subjects if round_no % 2 == 0 else subjects[::-1]):
            yield round_no, subject


def measure_rounds(subjects: Sequence[T], rounds: int, trial: Callable[[T], dict],
                   line: Callable[[dict], str]) -> list[dict]:
    """Runs trial(subject) in the interleaved order; each sample gets its "round", and line(sample) is printed
    as it comes (a benchmark shows its progress)."""
    samples = []
    for round_no, subject in interleaved(subjects, rounds):
        sample = trial(subject)
        sample["round"] = round_no
        samples.append(sample)
        say.info(f"round {round_no} {line(sample)}")
    return samples


def spread(values: Sequence[float]) -> float:
    """How much a repeated measurement (the yardstick's, over the rounds) moved: (highest - lowest) / median; 0 with
    one value."""
    return (max(values) - min(values)) / statistics.median(values) if len(values) > 1 else 0.0


def beside_yardstick(samples: list[dict], mine: list[dict], metric: str, yardstick: str,
                     same: tuple[str, ...] = ()) -> list[tuple[float, float]]:
    """(value, the yardstick's value) of metric for each sample of mine whose round (and whose values of the keys
    in same) the yardstick subject was measured in too: what a same-run ratio or difference is taken from."""
    def key(sample: dict) -> tuple:
        return (sample["round"], *(sample[k] for k in same))

    yard = {key(s): s[metric] for s in samples if s["subject"] == yardstick}
    return [(s[metric], yard[key(s)]) for s in mine if key(s) in yard]


def medians(mine: list[dict], fields: tuple[str, ...]) -> dict:
    """The median of each field over the samples."""
    return {f: statistics.median(s[f] for s in mine) for f in fields}


def median_ratio(samples: list[dict], mine: list[dict], metric: str, yardstick: str,
                 same: tuple[str, ...] = ()) -> float | None:
    """The median of mine's same-round ratios of metric to the yardstick's (beside_yardstick), to 3 places; None
    when the yardstick was measured in none of their rounds."""
    ratios = [v / y for v, y in beside_yardstick(samples, mine, metric, yardstick, same) if y]
    return round(statistics.median(ratios), 3) if ratios else None


def median_difference(samples: list[dict], mine: list[dict], metric: str, yardstick: str) -> float:
    """The median of mine's same-round differences of metric from the yardstick's, to 2 places."""
    return round(statistics.median(v - y for v, y in beside_yardstick(samples, mine, metric, yardstick)), 2)


def rate_rows(samples: list[dict], yardstick: str, ratio_name: str, fields: tuple[str, ...] = ()) -> list[dict]:
    """Per subject, in the order first measured: the median rate ("mpps") over its rounds with their standard
    deviation, the median of its same-round ratios to the yardstick (as ratio_name), and the medians of the other
    fields named."""
    rows = []
    for label in dict.fromkeys(s["subject"] for s in samples):
        mine = [s for s in samples if s["subject"] == label]
        rates = [s["mpps"] for s in mine]
        rows.append({"subject": label, "mpps": round(statistics.median(rates), 4),
                     "stdev": round(statistics.stdev(rates), 4) if len(rates) > 1 else 0.0,
                     **medians(mine, fields), ratio_name: median_ratio(samples, mine, "mpps", yardstick), "rounds": len(mine)})
    return rows

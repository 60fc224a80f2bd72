"""Which of a subject's rounds the cost model takes as its rate: the best (the highest) or the median.

On this VM the host only ever takes from a rate. It moves the two vCPUs apart (the far placement,
docs/methodology.md), and for seconds at a time it runs a vCPU slower: an ALU loop on one core read 575-730 million
steps per second between trials minutes apart, and within one NF instance the rate sat on plateaus (hybrid/live router
3.3, then 2.4, then 3.0 Mpps, 0.5 s trials) that neither the cores' round trip nor the steal time in /proc/stat showed
(docs/methodology.md, "The host only slows a path"; research/cost-model-notebook.md). Nothing inside the
guest undoes either, and neither adds to a rate, so the highest of a subject's rounds is the nearest to what the path
does when the host leaves its cores alone. A median of five rounds is pulled down whenever three were slowed, which
happens more to the two-core paths (two vCPUs to slow) than to XDP's one; so a fit and its check both taken on medians
disagree by whatever the host did to each. (Python's timeit advises the minimum of repeated timings for the same
reason.)

The statistic is the fit's: the profile records it, and its checks (model-check, `xnf advise`'s calibration) take
the same one of their own rounds. What the advisor counts a path down by stays how far its median rounds fell short
(model_check._typical_error): a pick must hold on what a path typically does. A median stays selectable, for a
machine whose noise goes both ways.
"""

from __future__ import annotations

import argparse
import statistics
from collections.abc import Iterable

BEST, MEDIAN = "best", "median"
CHOICES = (BEST, MEDIAN)
DEFAULT = BEST
# What a profile written before the choice existed took (every fit before it).
BEFORE = MEDIAN
WHAT = {BEST: "the best of the rounds", MEDIAN: "the medians of the rounds"}


def of(rates: Iterable[float], name: str) -> float:
    """The rate the statistic name takes from rates (one per round)."""
    rates = list(rates)
    if not rates:
        raise ValueError("no rate to take a statistic of")
    return max(rates) if name == BEST else statistics.median(rates)


def add_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--statistic", choices=CHOICES, default=DEFAULT,
                        help=f"which of each point's rounds the fit takes: {BEST} (the highest: the host here only "
                             f"slows a path down) or {MEDIAN}; the profile keeps it, and its checks use it "
                             f"(default {DEFAULT})")

"""Where the host has put the VM's two vCPUs, as the lab reads it: the time a cache line takes to go from the
sender's core to the worker's and back (xnf-core-pair, tools/core-pair).

On this VM the round trip sits at one of two levels that change every few seconds to minutes (the host moves the
pair between cores that share a cache and cores that do not), and a user-space path, whose every ring entry crosses
between the two cores, forwards a quarter less at the far level while XDP (one core) does not move
(docs/methodology.md, "Where the host puts the two vCPUs"). So every measurement of an NF's rate is bracketed by a
probe before and after it, and a run's probes are split into the two levels after the fact."""

from __future__ import annotations

import json
import math
import statistics
import subprocess

from xnf import build
from xnf.errors import XnfError
from xnf.lab.cores import DUT_CORE, GEN_CORE

PROBE_MS = 20       # how long the round trip is measured between two rate measurements
LEVELS_APART = 2.0  # the far level's median round trip over the near one's, at least, to count as two levels
NEAR, FAR, MIXED = "near", "far", "mixed"
ALL = "all"         # --placement all: every measurement, whatever its level
EACH = "each"       # --placement each: every measurement at a level, judged at its own (the mixed ones left out)


def probe(ms: int = PROBE_MS) -> dict:
    """xnf-core-pair's whole reading: the loop's time alone and beside a spinner on the DUT's core, the round trip."""
    return _core_pair("--ms", str(ms))


def round_trip_ns(ms: int = PROBE_MS) -> float:
    """The round trip alone: the probe set between measurements, which must not busy the DUT's core before them."""
    return _core_pair("--ms", str(ms), "--round-trip-only")["round_trip_ns"]


def _core_pair(*args: str) -> dict:
    done = subprocess.run([str(build.tool_binary("xnf-core-pair")), "--cpu", str(GEN_CORE), "--partner",
                           str(DUT_CORE), *args], capture_output=True, text=True)
    if done.returncode != 0:
        raise XnfError(f"xnf-core-pair failed: {done.stderr.strip()}")
    return json.loads(done.stdout)


def _best_cut(logs: list[float]) -> tuple[int, float] | None:
    """The index splitting sorted logs into the two groups with the least spread within them, and the cut value.
    Each group's spread (sum of squares about its mean) comes from running sums, so a run's thousand probes cost
    one pass."""
    n, total, total_sq = len(logs), sum(logs), sum(x * x for x in logs)
    best, low, low_sq = None, 0.0, 0.0
    for i in range(1, n):
        low, low_sq = low + logs[i - 1], low_sq + logs[i - 1] ** 2
        if logs[i] == logs[i - 1]:
            continue
        high, high_sq = total - low, total_sq - low_sq
        spread = (low_sq - low * low / i) + (high_sq - high * high / (n - i))
        if best is None or spread < best[0]:
            best = (spread, i)
    return None if best is None else (best[1], math.exp((logs[best[1] - 1] + logs[best[1]]) / 2))


def two_levels(values: list[float]) -> float | None:
    """Where to split round trips into the near and the far level: the cut (on a log scale, since the levels differ
    by a factor) that leaves the least spread within the two groups. None when the values hold one level only
    (the groups' medians less than LEVELS_APART apart, or fewer than two distinct values)."""
    logs = sorted(math.log(v) for v in values if v > 0)
    found = _best_cut(logs)
    if found is None:
        return None
    i, cut = found
    if math.exp(statistics.median(logs[i:]) - statistics.median(logs[:i])) < LEVELS_APART:
        return None
    return cut


def level(before: float, after: float, cut: float | None) -> str:
    """The level a measurement ran at, from its two probes: near or far when both read it, else mixed. With no
    cut (the run saw one level), near."""
    if cut is None:
        return NEAR
    sides = {before < cut, after < cut}
    return MIXED if len(sides) == 2 else (NEAR if before < cut else FAR)


def label(samples: list[dict]) -> float | None:
    """Sets each sample's "placement" from its "round_trip_ns" pair, the run's cut taken over all of them; returns
    the cut. Samples without probes (the yardstick's, or results written before the probes) get none."""
    probed = [s for s in samples if s.get("round_trip_ns")]
    cut = two_levels([t for s in probed for t in s["round_trip_ns"]])
    for s in probed:
        s["placement"] = level(*s["round_trip_ns"], cut)
    return cut


CHOICES = (ALL, NEAR, FAR)


def keep(samples: list[dict], which: str, study: str) -> tuple[list[dict], dict]:
    """The samples a study judges when told to keep only the measurements at one level (--placement): those at it,
    and those without probes (the yardstick's, which runs on one core). Labels every sample on the way. Returns them
    and what was kept, for the results file."""
    cut = label(samples)
    counts = {p: sum(s.get("placement") == p for s in samples) for p in (NEAR, FAR, MIXED)}
    about = {"kept": which, "cut_ns": round(cut, 1) if cut else None, "measurements": counts}
    if which == ALL:
        return samples, about
    if not any(s.get("round_trip_ns") for s in samples):
        raise SystemExit(f"{study}: these samples carry no round-trip probes (measured before the lab took them): "
                         f"--placement all")
    if which == EACH:
        return [s for s in samples if s.get("placement") != MIXED], about
    return [s for s in samples if s.get("placement", which) == which], about


def add_argument(parser, choices: tuple[str, ...] = CHOICES) -> None:
    parser.add_argument("--placement", choices=choices, default=ALL,
                        help="judge only the measurements whose probes before and after read this level of the "
                             "cores' round trip (near: the vCPUs on cores that share a cache)"
                             + ("; each: every one at its own level, leaving out those whose probes disagree"
                                if EACH in choices else ""))

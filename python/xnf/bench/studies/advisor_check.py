"""Does the advisor pick the fastest path? Ten NF x mix cases the profile was not fitted on (python/xnf/model/
cases.py: firewalls under attacks of 50 and 90 %, a 100,000-rule firewall, light and heavy checksums, lb with
10,000 flows, a router, memload over 256 MiB, two chains under attack), and for each every candidate the advisor
weighs (every path of the profile, a chain's split points, offloaded drop rules) measured by RFC 2544.

Every round measures, beside each candidate's rate, the case's c_task (its members' too, for the split points), as
`xnf advise` does; the advisor's pick for a case is the candidate it ranks first: the highest median prediction (the
profile as fitted) less how far the candidate may fall short of it (advisor.candidate_shortfall: its path's shortfall in
the profile's validation, at least the unvalidated floor for a split or an offload), as advisor.rank counts.
The pick holds when its measured rate is the fastest measured or within 5 % of it; each verdict carries the
confidence `xnf advise` would have given the pick (advisor.level_of), so the two can be set side by side.

Measured how: a case's candidates follow one another in every round (a minute or so), while a round takes ten, and
the machine's speed moves by up to 1.8x between rounds here. So each candidate's rate is taken relative to its case's
block, the median of all its case's candidates in the same round, and the verdict compares the medians of those
relative rates (a randomised-block comparison: what moves the whole block cancels). The verdict on the plain medians
of the rates is written beside it. The yardstick is measured in every round and set beside the profile's, as
model-check does.

    xnf bench run advisor-check [--profile P] [--rounds 3] [--seconds 0.5] [--cases ...] [--paths ...]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import asdict
from pathlib import Path

from xnf import chain, contract, say
from xnf.bench import results_file
from xnf.bench.rounds import measure_rounds
from xnf.lab import environment, placement
from xnf.model import advisor, cases, check_rounds, lab_rate, task
from xnf.model.check_rounds import YARDSTICK_SUBJECT
from xnf.model.predict import predict
from xnf.model.profile import Profile
from xnf.model.task import NfCost, TaskCost

NAME = "advisor-check"
DESCRIPTION = "the advisor's pick against every candidate it weighed, measured, on ten NF x mix cases it was not " \
              "fitted on"
# afxdp/xsk is the profile's too, but forwards a fifth of what the others do on veth: measuring it ten times over
# says nothing new (--paths takes it).
DEFAULT_PATHS = ["xdp", "afxdp/live", "afxdp-sysc/live", "afxdp-poll/live", "hybrid/live"]
HOLDS_WITHIN = 0.05


def measure_task(case: lab_rate.NfCase, baseline: dict, folder: Path, frames: int) -> TaskCost:
    how = task.Measurement(case.gen_options, frames=frames, rounds=1, map_sizes=case.map_sizes)
    return task.measure(case.nf, case.write_rules(folder), baseline, how)


def drop_rules(nf: str) -> bool:
    return not chain.is_chain(nf) and contract.describe(nf).get("drop_rules", False)


def candidate(profile: Profile, case: lab_rate.NfCase, cost: TaskCost, label: str) -> advisor.Candidate:
    found = [c for c in advisor.candidates(profile, case.nf, cost, drop_rules(case.nf)) if c.label == label]
    return found[0]


def trial(subject: tuple, profile: Profile, args: argparse.Namespace, tsc_hz, folder: Path) -> dict:
    label, which = subject
    if subject == YARDSTICK_SUBJECT:
        return check_rounds.yardstick_trial(args, tsc_hz, candidate=None)
    case = cases.find(label)
    cost = measure_task(case, profile.baseline, folder, args.frames)
    chosen = candidate(profile, case, cost, which)
    rate = lab_rate.measure(case, chosen.nf, chosen.options, args.seconds, tsc_hz)
    return {"case": label, "candidate": which, "mpps": rate["mpps"], "round_trip_ns": rate["round_trip_ns"],
            "task": asdict(cost)}


def _task_of(sample: dict) -> TaskCost:
    t = sample["task"]
    return TaskCost(NfCost(**t["whole"]), t["baseline"], [NfCost(**m) for m in t["members"]])


def predicted(sample: dict, profile: Profile) -> tuple[float, float, float]:
    """The sample's prediction (the profile as fitted, the sample's own c_task), how far the candidate may fall
    short of it (advisor.candidate_shortfall) and the size of the errors to expect (advisor.candidate_spread)."""
    case = cases.find(sample["case"])
    chosen = candidate(profile, case, _task_of(sample), sample["candidate"])
    return (predict(profile.path(chosen.path_key), chosen.load).mpps, advisor.candidate_shortfall(profile, chosen),
            advisor.candidate_spread(profile, chosen))


def block_relative(samples: list[dict]) -> None:
    """Sets each candidate sample's "relative": its rate over the median rate of its case's candidates in the same
    round (its block)."""
    blocks: dict[tuple, list[float]] = {}
    for s in samples:
        if s["candidate"]:
            blocks.setdefault((s["case"], s["round"]), []).append(s["mpps"])
    for s in samples:
        if s["candidate"]:
            s["relative"] = round(s["mpps"] / statistics.median(blocks[(s["case"], s["round"])]), 4)


def verdict(label: str, here: list[dict], measure: str) -> dict:
    """The pick (the advisor's first: the most it can count on) against the fastest by `measure` (a field of the
    rows), and the confidence `xnf advise` would have given the pick."""
    ranked = sorted(here, key=lambda r: -r["counted_mpps"])
    pick = ranked[0]
    fastest = max(here, key=lambda r: r[measure])
    ratio = pick[measure] / fastest[measure]
    confidence = advisor.level_of([(r["counted_mpps"], r["spread"]) for r in ranked])
    return {"pick": pick["candidate"], "fastest": fastest["candidate"], "pick_over_fastest": round(ratio, 4),
            "holds": ratio >= 1 - HOLDS_WITHIN, "confidence": confidence}


def summarise(samples: list[dict], profile: Profile) -> tuple[list[dict], list[dict]]:
    """(a row per case and candidate, a row per case: the pick, the fastest measured, whether the pick holds, judged
    on the rates relative to their blocks, and on the plain rates)."""
    shortfalls, spreads = {}, {}
    for s in samples:
        if s["candidate"]:
            mpps, shortfalls[s["candidate"]], spreads[s["candidate"]] = predicted(s, profile)
            s["predicted_mpps"] = round(mpps, 4)
    block_relative(samples)
    rows, verdicts = [], []
    for label in dict.fromkeys(s["case"] for s in samples if s["candidate"]):
        mine = [s for s in samples if s["case"] == label]
        here = []
        for which in dict.fromkeys(s["candidate"] for s in mine):
            of = [s for s in mine if s["candidate"] == which]
            measured = [s["mpps"] for s in of]
            prediction = statistics.median(s["predicted_mpps"] for s in of)
            shortfall = shortfalls[which]
            here.append({"case": label, "candidate": which, "measured_mpps": round(statistics.median(measured), 4),
                         "measured_stdev": round(statistics.stdev(measured), 4) if len(measured) > 1 else 0.0,
                         "relative": round(statistics.median(s["relative"] for s in of), 4),
                         "predicted_mpps": round(prediction, 4), "shortfall": shortfall, "spread": spreads[which],
                         "counted_mpps": round(advisor.counted_on(prediction, shortfall), 4), "rounds": len(of)})
        rows += here
        judged, plain = verdict(label, here, "relative"), verdict(label, here, "measured_mpps")
        pick = next(r for r in here if r["candidate"] == judged["pick"])
        fastest = next(r for r in here if r["candidate"] == judged["fastest"])
        verdicts.append({"case": label, **judged, "pick_predicted_mpps": pick["predicted_mpps"],
                         "pick_counted_mpps": pick["counted_mpps"],
                         "pick_measured_mpps": pick["measured_mpps"], "fastest_mpps": fastest["measured_mpps"],
                         **{f"plain_{k}": plain[k] for k in ("fastest", "pick_over_fastest", "holds")}})
    return rows, verdicts


def add_arguments(parser: argparse.ArgumentParser) -> None:
    check_rounds.add_arguments(parser, 3, [c.label for c in cases.held_out_cases()], DEFAULT_PATHS,
                               "the profile the advisor uses")


def _measure(args: argparse.Namespace, profile: Profile, labels: list[str]) -> tuple[list[dict], dict, float]:
    env = environment.describe()
    with tempfile.TemporaryDirectory() as folder:
        subjects = [YARDSTICK_SUBJECT]
        for label in labels:   # the candidates of a case follow from its mix: one measurement names them
            case = cases.find(label)
            first = measure_task(case, profile.baseline, Path(folder), args.frames)
            subjects += [(label, c.label) for c in advisor.candidates(profile, case.nf, first, drop_rules(case.nf))]
        samples = measure_rounds(subjects, args.rounds,
                                 lambda s: trial(s, profile, args, env["tsc_hz"], Path(folder)),
                                 lambda s: f"{s['case']:28s} {s['candidate'] or '':40s} {s['mpps']:6.3f} Mpps")
    return samples, env, args.seconds


def run(args: argparse.Namespace, out_dir: Path) -> Path:
    checked_setup = check_rounds.setup(args, NAME)
    profile, labels = checked_setup.profile, checked_setup.labels
    samples, env, seconds = check_rounds.earlier(args, NAME) or _measure(args, profile, labels)
    judged, placed = placement.keep(samples, args.placement, NAME)
    rows, verdicts = summarise(judged, profile)
    holds = sum(v["holds"] for v in verdicts)
    plain_holds = sum(v["plain_holds"] for v in verdicts)
    path = results_file.write(out_dir, "advisor_check", {
        "environment": env, "profile": json.loads(profile.to_json()), "yardstick": lab_rate.YARDSTICK,
        "seconds_per_trial": seconds, "yardstick_drift": check_rounds.drift(samples, profile),
        "judged_from": args.earlier, "placement": placed, "holds_within": HOLDS_WITHIN, "verdicts": verdicts,
        "picks_that_hold": holds, "picks_that_hold_on_plain_medians": plain_holds, "summary": rows,
        "samples": samples}, verdicts)
    for v in verdicts:
        say.info(f"{v['case']:28s} pick {v['pick']:40s} {v['pick_over_fastest']:5.1%} of the fastest "
                 f"({v['fastest']}): {'holds' if v['holds'] else 'DOES NOT HOLD'}")
    say.info(f"the pick holds in {holds} of {len(verdicts)} cases ({plain_holds} on the plain medians of the rates)")
    for level in ("high", "medium", "low"):
        mine = [v for v in verdicts if v["confidence"] == level]
        say.info(f"  confidence {level}: {len(mine)} picks, {sum(v['holds'] for v in mine)} held")
    return path

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

With --calibrations, the same measurements judge the advisor as a user on another machine would meet it: each
round also measures every path's baseline and drop NF (python/xnf/model/calibration.py), and the picks and their
predictions are judged three ways side by side: with the profile as it is ("none"), scaled by the yardstick alone
("one-factor", the calibration before per path) and calibrated per path ("per-path"). Each way says in how many
cases the pick held and in how many the pick's predicted rate was within PREDICTED_WITHIN of its measured one.

    xnf bench run advisor-check [--profile P] [--rounds 3] [--seconds 0.5] [--cases ...] [--paths ...]
                                [--calibrations none,one-factor,per-path]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from dataclasses import asdict
from pathlib import Path

from xnf import chain, contract
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import paths, placement
from xnf.model import advisor, calibration, cases, check_rounds, lab_rate, rate_statistic, task
from xnf.model.check_rounds import YARDSTICK_SUBJECT
from xnf.model.predict import predict
from xnf.model.profile import Profile
from xnf.model.task import NfCost, TaskCost

NAME = "advisor-check"
DESCRIPTION = "the advisor's pick against every candidate it weighed, measured, on ten NF x mix cases it was not " \
              "fitted on"
# afxdp/xsk is the profile's too, but forwards a fifth of what the others do on veth: measuring it ten times over
# says nothing new (--paths takes it).
# Every mode an XDP program starts, each on this kernel's default transmit path.
DEFAULT_MODES = paths.Modes(paths.at_xdp)
HOLDS_WITHIN = 0.05
PREDICTED_WITHIN = 0.15
NONE, ONE_FACTOR, PER_PATH = "none", "one-factor", "per-path"
CALIBRATIONS = {NONE: None, ONE_FACTOR: calibration.one_factor, PER_PATH: calibration.per_path}
CALIBRATION_CASE = "calibration"
# A candidate's rounds taken with the profile's statistic (rate_statistic): what its prediction is judged against.
STATISTIC_MEASURED = "measured_by_statistic_mpps"


def measure_task(case: lab_rate.NfCase, baseline: dict, folder: Path, frames: int) -> TaskCost:
    how = task.Measurement(case.gen_options, frames=frames, rounds=1, map_sizes=case.map_sizes)
    return task.measure(case.nf, case.write_rules(folder), baseline, how)


def drop_rules(nf: str) -> bool:
    return not chain.is_chain(nf) and contract.describe(nf).get("drop_rules", False)


def candidate(profile: Profile, case: lab_rate.NfCase, cost: TaskCost, label: str) -> advisor.Candidate:
    found = [c for c in advisor.candidates(profile, case.nf, cost, drop_rules(case.nf)) if c.label == label]
    return found[0]


def trial(subject: tuple, args: argparse.Namespace, place: Place) -> dict:
    label, which = subject
    profile, tsc_hz, folder = args.checked_setup.profile, place.tsc_hz, place.folder
    if subject == YARDSTICK_SUBJECT:
        return check_rounds.yardstick_trial(args, tsc_hz, candidate=None)
    if label == CALIBRATION_CASE:
        return {**calibration.trial(profile, which, args.seconds, tsc_hz), "case": label, "candidate": None}
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
                         STATISTIC_MEASURED: round(rate_statistic.of(measured, profile.statistic), 4),
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
                         "pick_measured_mpps": pick["measured_mpps"],
                         f"pick_{STATISTIC_MEASURED}": pick[STATISTIC_MEASURED],
                         "fastest_mpps": fastest["measured_mpps"],
                         **{f"plain_{k}": plain[k] for k in ("fastest", "pick_over_fastest", "holds")}})
    return rows, verdicts


def options(parser: argparse.ArgumentParser) -> None:
    check_rounds.add_arguments(parser, [c.label for c in cases.held_out_cases()], paths.keys(*DEFAULT_MODES),
                               "the profile the advisor uses")
    parser.add_argument("--calibrations", default=NONE, help=f"judge the picks with the profile brought to the "
                        f"machine each of these ways, side by side: {', '.join(CALIBRATIONS)} (any but {NONE} "
                        "measures each path's baseline and drop NF in every round)")


def calibration_samples(samples: list[dict]) -> list[dict]:
    """The rounds' yardstick and per-path readings, as python/xnf/model/calibration.py takes them."""
    out = [{"kind": calibration.YARDSTICK, "path": None, "mpps": s["mpps"], "round": s["round"]}
           for s in samples if s["case"] == YARDSTICK_SUBJECT[0]]
    return out + [s for s in samples if s["case"] == CALIBRATION_CASE]


def judge_prediction(v: dict) -> None:
    """How far off the pick's rate was, each prediction against the measurement it stands for: the prediction (the
    profile's statistic of a path's rounds, the best unless the profile says median) against that statistic of the
    pick's rounds, and the rate counted on (the prediction less the path's typical shortfall) against their median.
    Set against the median, a best-of-rounds prediction would count every round the host slowed as the model's
    error (as this check did until 2026-11-26)."""
    v["pick_predicted_error"] = round(v["pick_predicted_mpps"] / v[f"pick_{STATISTIC_MEASURED}"] - 1, 4)
    v["predicted_within"] = abs(v["pick_predicted_error"]) <= PREDICTED_WITHIN
    v["pick_counted_error"] = round(v["pick_counted_mpps"] / v["pick_measured_mpps"] - 1, 4)
    v["counted_within"] = abs(v["pick_counted_error"]) <= PREDICTED_WITHIN


def judged_ways(samples: list[dict], profile: Profile, ways: list[str]) -> dict:
    """Per way of calibrating: the profile it gives, what the calibration found, the rows and the verdicts."""
    readings = calibration_samples(samples)
    out = {}
    for way in ways:
        calibrate = CALIBRATIONS[way]
        brought, found = calibrate(profile, readings) if calibrate else (profile, {"how": NONE})
        rows, verdicts = summarise([s for s in samples if s["case"] != CALIBRATION_CASE], brought)
        for v in verdicts:
            judge_prediction(v)
        out[way] = {"calibration": found, "rows": rows, "verdicts": verdicts,
                    "picks_that_hold": sum(v["holds"] for v in verdicts),
                    "picks_that_hold_on_plain_medians": sum(v["plain_holds"] for v in verdicts),
                    "picks_predicted_within": sum(v["predicted_within"] for v in verdicts),
                    "picks_counted_within": sum(v["counted_within"] for v in verdicts)}
    return out


def _ways(args: argparse.Namespace) -> list[str]:
    ways = [w for w in args.calibrations.split(",") if w]
    if not ways or any(w not in CALIBRATIONS for w in ways):
        raise SystemExit(f"{NAME}: --calibrations takes {', '.join(CALIBRATIONS)}")
    return ways


def prepare(args: argparse.Namespace) -> None:
    """The profile and the cases, into args.checked_setup; the ways of calibrating checked."""
    args.checked_setup = check_rounds.setup(args, NAME)
    _ways(args)


def subjects(args: argparse.Namespace) -> list[tuple]:
    """The yardstick, the calibration's readings where a way calibrates, and each case's candidates (which follow
    from its mix: one measurement of its c_task names them)."""
    profile = args.checked_setup.profile
    out = [YARDSTICK_SUBJECT]
    if _ways(args) != [NONE]:
        out += [(CALIBRATION_CASE, c) for c in calibration.subjects(profile) if c.kind != calibration.YARDSTICK]
    with tempfile.TemporaryDirectory() as folder:
        for label in args.checked_setup.labels:
            case = cases.find(label)
            first = measure_task(case, profile.baseline, Path(folder), args.frames)
            out += [(label, c.label) for c in advisor.candidates(profile, case.nf, first, drop_rules(case.nf))]
    return out


CALIBRATION_POINTS = {calibration.LIGHT: "taskemu, light", calibration.DEAR: "taskemu, dear",
                      calibration.DROP_TIMES: "drop NF"}


def _line(s: dict) -> str:
    if s["case"] == CALIBRATION_CASE and s["kind"] == calibration.TASK_COSTS:
        return f"{s['case']:28s} taskemu's c_task: " + ", ".join(
            f"{kind} {s[f'{kind}_native_ns']:.0f} ns natively, {s[f'{kind}_xdp_ns']:.0f} in XDP"
            for kind in calibration.POINT_CYCLES)
    what = f"{s['path']} ({CALIBRATION_POINTS[s['kind']]})" if s["case"] == CALIBRATION_CASE else s["candidate"] or ""
    return f"{s['case']:28s} {what:40s} {s['mpps']:6.3f} Mpps"


def judged(samples: list[dict], args: argparse.Namespace) -> dict:
    """The picks judged each way of calibrating, with what the results file keeps beside them."""
    profile, ways = args.checked_setup.profile, _ways(args)
    if ways != [NONE] and not any(s["case"] == CALIBRATION_CASE for s in samples):
        raise SystemExit(f"{NAME}: {args.earlier} holds no calibration readings: judge it with --calibrations {NONE}")
    kept, placed = placement.keep(samples, args.placement, NAME)
    by_way = judged_ways(kept, profile, ways)
    first = by_way[ways[0]]
    return {"yardstick_drift": check_rounds.drift(samples, profile), "placement": placed,
            "holds_within": HOLDS_WITHIN, "predicted_within": PREDICTED_WITHIN, "calibrations": by_way,
            "verdicts": first["verdicts"], "picks_that_hold": first["picks_that_hold"],
            "picks_that_hold_on_plain_medians": first["picks_that_hold_on_plain_medians"], "summary": first["rows"]}


def verdict_rows(found: dict) -> list[dict]:
    return [{"calibration": way, **v} for way, judged_way in found["calibrations"].items()
            for v in judged_way["verdicts"]]


def report(v: dict) -> str:
    return (f"{v['calibration']:10s} {v['case']:28s} pick {v['pick']:40s} {v['pick_over_fastest']:5.1%} of the "
            f"fastest ({v['fastest']}): {'holds' if v['holds'] else 'DOES NOT HOLD'}; predicted "
            f"{v['pick_predicted_error']:+.0%} (counted on {v['pick_counted_error']:+.0%})")


def totals(found: dict) -> list[str]:
    lines = []
    for way, judged_way in found["calibrations"].items():
        verdicts = judged_way["verdicts"]
        lines.append(f"calibration {way}: the pick holds in {judged_way['picks_that_hold']} of {len(verdicts)} cases "
                     f"({judged_way['picks_that_hold_on_plain_medians']} on the plain medians of the rates); its rate "
                     f"predicted within {PREDICTED_WITHIN:.0%} in {judged_way['picks_predicted_within']} (against "
                     f"the profile's statistic of its rounds), the rate counted on in "
                     f"{judged_way['picks_counted_within']} (against their median)")
        for level in ("high", "medium", "low"):
            mine = [v for v in verdicts if v["confidence"] == level]
            lines.append(f"    confidence {level}: {len(mine)} picks, {sum(v['holds'] for v in mine)} held")
    return lines


STUDY = RoundsStudy(
    NAME, "advisor_check", rounds=3, seconds=lab_rate.TRIAL_SECONDS, seconds_help=lab_rate.TRIAL_SECONDS_HELP,
    options=options, prepare=prepare, subjects=subjects, trial=trial, line=_line,
    earlier=lambda args: check_rounds.earlier(args, NAME), summarise=judged, document=lambda found: found,
    table=verdict_rows, report=report, said_last=totals,
    fields=lambda args: {"profile": json.loads(args.checked_setup.profile.to_json()),
                         "yardstick": lab_rate.YARDSTICK, "judged_from": args.earlier})
add_arguments, run = STUDY.add_arguments, STUDY.run

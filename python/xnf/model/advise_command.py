"""`xnf advise NF`: measures the NF's c_task on the mix (python/xnf/model/task.py), asks the advisor, and with
--verify measures the best few candidates in the lab to check the pick."""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from xnf import chain, contract, mix, output, say
from xnf.lab import environment
from xnf.model import advisor, check_rounds, lab_paths, lab_rate, rate_statistic, task
from xnf.errors import XnfError
from xnf.model.profile import Profile, installed, load, quick_path

VERIFY_SECONDS = 0.5
MAX_VERIFIED = 12
CALIBRATION_RUNS = 3
# The yardstick's runs spread by 10-30 % on this VM: a smaller difference is not the machine moving.
CALIBRATION_DEADBAND = 0.25


def calibrated(profile: Profile, tsc_hz: float | None) -> tuple[Profile, dict]:
    """The profile scaled by its yardstick measured now (a few runs, taken as the profile's fit took its own:
    rate_statistic) against the one stored with it, when the two differ by more than the yardstick's own spread:
    within a session the machine moves less than that (docs/cost-model.md), between sessions it can move 2.6x."""
    then = profile.yardsticks.get(lab_rate.YARDSTICK_KEY)
    if not then:
        return profile, {"skipped": f"the profile stores no {lab_rate.YARDSTICK}: it cannot be calibrated"}
    now = rate_statistic.of((lab_rate.yardstick(VERIFY_SECONDS, tsc_hz) for _ in range(CALIBRATION_RUNS)),
                            profile.statistic)
    moved = abs(now / then - 1) > CALIBRATION_DEADBAND
    info = {"yardstick": lab_rate.YARDSTICK, "mpps_now": round(now, 4), "mpps_at_fit": then,
            "factor": round(then / now, 4) if moved else 1.0, "applied": moved}
    return (check_rounds.on_the_day(profile, now) if moved else profile), info


def verify(answer: dict, case: lab_rate.NfCase, how_many: int, tsc_hz: float | None) -> dict:
    """Measures the first how_many candidates (RFC 2544, one search each) and says whether the pick was fastest."""
    measured = []
    for row in answer["candidates"][:how_many]:
        run_nf, options = row["run"][2], row["run"][3:]
        rate = lab_rate.measure(case, run_nf, options, VERIFY_SECONDS, tsc_hz)
        row["measured_mpps"] = round(rate["mpps"], 3)
        measured.append(row)
    fastest = max(measured, key=lambda r: r["measured_mpps"])
    pick = measured[0]
    holds = pick["measured_mpps"] >= 0.95 * fastest["measured_mpps"]
    return {"measured": len(measured), "fastest": fastest["label"], "pick_holds": holds,
            "pick_over_fastest": round(pick["measured_mpps"] / fastest["measured_mpps"], 3)}


def _user_command(row: dict, rules: str | None) -> str:
    words = row["run"] + ["--iface", "IF"] + (["--rules", rules] if rules else [])
    return " ".join(words)


def print_text(answer: dict, rules: str | None) -> None:
    from rich.table import Table

    console = output.console()
    t, prof = answer["task"], answer["profile"]
    rates = f", rates {rate_statistic.WHAT[prof['statistic']]}" if prof["source"] == "measured" else ""
    console.print(f"{answer['nf']}: profile '{prof['name']}' ({prof['source']}{rates}; {prof['platform']})")
    console.print(f"  c_task on the mix: {t['native_ns_over_baseline']:+.0f} ns natively, "
                  f"{t['xdp_ns_over_baseline']:+.0f} ns in XDP over {t['baseline']['nf']}; "
                  f"{t['drop_share']:.0%} of frames dropped")
    verified = any("measured_mpps" in r for r in answer["candidates"])
    far = any(r.get("far_mpps") is not None for r in answer["candidates"])
    table = Table()
    for column in ("path", "Mpps", "counted down by", "counted on", "limit", "ns per frame",
                   "CPU ns per frame") + (("Mpps, cores apart",) if far else ()) + \
            (("measured Mpps",) if verified else ()):
        table.add_column(column, justify="left" if column in ("path", "limit", "ns per frame") else "right")
    for row in answer["candidates"]:
        ns = " | ".join(f"{k} {v:.0f}" for k, v in row["ns_per_frame"].items())
        cells = [row["label"], f"{row['mpps']:.3f}", f"{row['shortfall']:.0%}", f"{row['counted_mpps']:.3f}",
                 row["bottleneck"], ns,
                 f"{row['cpu_ns_per_frame']:.0f}"]
        if far:
            cells.append(f"{row['far_mpps']:.3f}" if row.get("far_mpps") is not None else "")
        if verified:
            cells.append(f"{row['measured_mpps']:.3f}" if "measured_mpps" in row else "")
        table.add_row(*cells)
    console.print(table)
    rec = answer["recommendation"]
    console.print(f"[bold]Recommended: {rec['label']}[/bold] (confidence: {rec['confidence']})")
    console.print(f"  {_user_command(answer['candidates'][0], rules)}")
    console.print("Why:")
    for line in [rec["why"], *answer["reasons"]]:
        console.print(f"  - {line}")
    for skip in answer["skipped"]:
        console.print(f"Not weighed: {skip['label']} ({skip['why']})")
    if "calibration" in answer:
        console.print(f"Calibration: {answer['calibration']}")
    if "verification" in answer:
        v = answer["verification"]
        console.print(f"Verified ({v['measured']} measured): fastest {v['fastest']}; the pick "
                      f"{'holds' if v['pick_holds'] else 'does not hold'} ({v['pick_over_fastest']:.0%} of it)")


def quick_fit() -> Path:
    """Fits the quick profile (model-fit --quick, about a minute) and installs it; its progress on stderr, so that
    --json's stdout stays the answer alone. A subprocess: the fit is a study of the lab (xnf.bench), which the
    model does not import."""
    say.info(f"no profile of this machine yet: fitting a quick one ({', '.join(lab_paths.QUICK_PATHS)}; "
             "about a minute; "
             "its confidence is lower). 'xnf bench run model-fit' (about 40 minutes) refines it.")
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as out:
        fit = subprocess.run([sys.executable, "-m", "xnf", "-q", "bench", "run", "model-fit", "--quick",
                              "--out", out], stdout=sys.stderr, stderr=subprocess.PIPE, text=True)
    where = quick_path()
    if fit.returncode != 0 or not where.exists():
        raise XnfError(f"the quick fit of this machine's profile failed ({fit.stderr.strip()[-400:] or 'no message'});"
                       " run it alone to see why: xnf bench run model-fit --quick")
    say.info(f"quick profile fitted in {time.monotonic() - started:.0f} s: {where}")
    return where


def chosen_profile(named: str | None) -> Profile:
    """The profile named, else the one installed (a full fit's, else the quick one's), else a quick fit made now."""
    return load(named or installed() or quick_fit())


def run(args: argparse.Namespace) -> int:
    if args.verify and args.cores is not None:
        raise XnfError("--verify measures on the lab's own cores: leave out --cores")
    if args.verify and not 1 <= args.verify <= MAX_VERIFIED:
        raise XnfError(f"--verify N measures the best N candidates: 1 to {MAX_VERIFIED}")
    gen = mix.parse(args.mix)
    profile = chosen_profile(args.profile)
    tsc_hz = environment.describe()["tsc_hz"]
    calibration = None
    if args.calibrate:
        profile, calibration = calibrated(profile, tsc_hz)
    how = task.Measurement(gen, frames=args.frames, rounds=args.rounds, map_sizes=args.map_size or [])
    measured = task.measure(args.nf, args.rules, profile.baseline, how)
    drop_rules = not chain.is_chain(args.nf) and contract.describe(args.nf).get("drop_rules", False)
    answer = advisor.advice(profile, args.nf, measured, drop_rules, args.cores)
    if calibration:
        answer["calibration"] = calibration
    if args.verify:
        rules_text = Path(args.rules).read_text() if args.rules else None
        case = lab_rate.NfCase("advise", args.nf, rules_text, gen, args.map_size or [])
        answer["verification"] = verify(answer, case, args.verify, tsc_hz)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print_text(answer, args.rules)
    return 0

"""`xnf advise NF`: measures the NF's c_task on the mix (python/xnf/model/task.py), asks the advisor, and with
--verify measures the best few candidates in the lab to check the pick."""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from pathlib import Path

from xnf import chain, contract, control, mix, output, say, user_files
from xnf.argv_words import option_value, without_option
from xnf.lab import container_nf, environment
from xnf.lab.rounds import interleaved, spread as rounds_spread
from xnf.model import advisor, calibration, lab_paths, lab_rate, provenance, rate_statistic, segments, task
from xnf.model import quick_fit as quick_fit_of
from xnf.errors import XnfError
from xnf.model.profile import Profile, install, installed, load

VERIFY_SECONDS = lab_rate.TRIAL_SECONDS
VERIFY_ROUNDS = 3
MAX_VERIFIED = 12
# A segment mix's verification: iperf3's whole seconds per trial, and the most streams it runs.
VERIFY_TCP_SECONDS = 2
MAX_STREAMS = 128
HOLDS_WITHIN = 0.05


def verify(answer: dict, case: lab_rate.NfCase, how_many: int, tsc_hz: float | None,
           rounds: int = VERIFY_ROUNDS) -> dict:
    """Measures the first how_many candidates (RFC 2544) in rounds whose order turns around every round, with the
    yardstick in each, and says whether the pick was the fastest (or within HOLDS_WITHIN of it) on the medians of
    the rounds; and whether the host moved more than the gap it judged on."""
    rows = answer["candidates"][:how_many]
    subjects = [None] + list(range(len(rows)))
    rates: dict = {i: [] for i in subjects}
    for _, i in interleaved(subjects, rounds):
        if i is None:
            rates[None].append(lab_rate.yardstick(VERIFY_SECONDS, tsc_hz))
            continue
        run_nf, options = rows[i]["run"][2], rows[i]["run"][3:]
        rates[i].append(lab_rate.measure(case, run_nf, options, VERIFY_SECONDS, tsc_hz)["mpps"])
    return _judged(rows, rates, rounds, "mpps")


def verify_segments(answer: dict, streams: int, how_many: int, rounds: int = VERIFY_ROUNDS) -> dict:
    """A segment mix's pick checked with the traffic it stands for: iperf3 from one lab container to another through
    the first how_many candidates (the NF with the lab's own rules for it, python/xnf/lab/container_nf.py), Linux's
    own forwarding between them the yardstick, in rounds whose order turns around every round."""
    from xnf.lab import apps
    from xnf.lab.cores import DUT_CORE, GEN_CORE
    from xnf.lab.hosts import HostsTopology

    rows = answer["candidates"][:how_many]
    subjects = [None] + list(range(len(rows)))
    rates: dict = {i: [] for i in subjects}
    with HostsTopology(hosts=3) as t, tempfile.TemporaryDirectory() as folder:
        h0, h1 = t.host(0), t.host(1)
        for _, i in interleaved(subjects, rounds):
            nf, options = (container_nf.LINUX, []) if i is None else (rows[i]["run"][2], rows[i]["run"][3:])
            if i is not None and lab_rate.needs_workers(nf, options):
                options = options + ["--cores", str(DUT_CORE)]
            with container_nf.running(t, nf, None, options, Path(folder)) as target:
                rates[i].append(apps.iperf3(t, h0.ns, h1.ns, h1.ip, seconds=VERIFY_TCP_SECONDS, streams=streams,
                                            connect_to=target, core=GEN_CORE).gbit_s)
    return {**_judged(rows, rates, rounds, "gbit_s"), "yardstick": "Linux forwarding between the same containers",
            "streams": streams, "rules": f"the lab's own for {answer['nf']} between its containers"}


def _judged(rows: list[dict], rates: dict, rounds: int, unit: str) -> dict:
    """Each row's measured median (rates[i], the yardstick's under None), and whether the pick held."""
    for i, row in enumerate(rows):
        row[f"measured_{unit}"] = round(statistics.median(rates[i]), 3)
        row[f"measured_rounds_{unit}"] = [round(r, 3) for r in rates[i]]
    fastest = max(rows, key=lambda r: r[f"measured_{unit}"])
    ratio = rows[0][f"measured_{unit}"] / fastest[f"measured_{unit}"]
    yard = rates[None]
    spread = rounds_spread(yard)
    second = sorted((r[f"measured_{unit}"] for r in rows), reverse=True)[1] if len(rows) > 1 else None
    gap = fastest[f"measured_{unit}"] / second - 1 if second else None
    pick = rows[0]
    return {"measured": len(rows), "rounds": rounds, "unit": unit, "fastest": fastest["label"],
            "pick_holds": ratio >= 1 - HOLDS_WITHIN, "pick_over_fastest": round(ratio, 3),
            # What to run: the pick where it holds, else what the measurement found fastest (a pick the measurement
            # refuted is not recommended); the model's error on its pick beside it.
            "recommended": pick["label"] if ratio >= 1 - HOLDS_WITHIN else fastest["label"],
            "pick_error": round(pick[unit] / pick[f"measured_{unit}"] - 1, 3),
            f"yardstick_{unit}": [round(r, 3) for r in yard], "host_spread": round(spread, 3),
            "gap_to_second": round(gap, 3) if gap is not None else None,
            "host_too_unsteady": gap is not None and spread > gap}


def _user_command(row: dict, rules: str | None) -> str:
    words = row["run"] + ["--iface", "IF"] + (["--rules", rules] if rules else [])
    return " ".join(words)


def print_text(answer: dict, rules: str | None) -> None:
    from rich.table import Table

    console = output.console()
    t, prof = answer["task"], answer["profile"]
    rates = f", rates {rate_statistic.WHAT[prof['statistic']]}" if prof["source"] == "measured" else ""
    console.print(f"{answer['nf']}: profile '{prof['name']}' ({prof['source']}{rates}; {prof['platform']})")
    on = "new sessions (every frame a flow's first)" if t["sessions"] == "new" else "the mix"
    console.print(f"  c_task on {on}: {t['native_ns_over_baseline']:+.0f} ns natively, "
                  f"{t['xdp_ns_over_baseline']:+.0f} ns in XDP over {t['baseline']['nf']}; "
                  f"{t['drop_share']:.0%} of frames dropped")
    unit = "gbit_s" if "segments" in answer else "mpps"
    shown = {"mpps": "Mpps", "gbit_s": "Gbit/s"}
    verified = any(f"measured_{unit}" in r for r in answer["candidates"])
    far = any(r.get("far_mpps") is not None for r in answer["candidates"])
    table = Table()
    for column in ("path", "Mpps") + (("Gbit/s", "counted on, Gbit/s") if unit == "gbit_s" else
                                      ("counted down by", "counted on")) + \
            ("limit", "ns per frame", "CPU ns per frame") + (("Mpps, cores apart",) if far else ()) + \
            ((f"measured {shown[unit]}",) if verified else ()):
        table.add_column(column, justify="left" if column in ("path", "limit", "ns per frame") else "right")
    for row in answer["candidates"]:
        ns = " | ".join(f"{k} {v:.0f}" for k, v in row["ns_per_frame"].items())
        cells = [row["label"], f"{row['mpps']:.3f}"]
        cells += [f"{row['gbit_s']:.1f}", f"{row['counted_gbit_s']:.1f}"] if unit == "gbit_s" else \
            [f"{row['shortfall']:.0%}", f"{row['counted_mpps']:.3f}"]
        cells += [row["bottleneck"], ns, f"{row['cpu_ns_per_frame']:.0f}"]
        if far:
            cells.append(f"{row['far_mpps']:.3f}" if row.get("far_mpps") is not None else "")
        if verified:
            cells.append(f"{row[f'measured_{unit}']:.3f}" if f"measured_{unit}" in row else "")
        table.add_row(*cells)
    console.print(table)
    rec, v = answer["recommendation"], answer.get("verification")
    if v and v["recommended"] != rec["label"]:
        measured = next(r for r in answer["candidates"] if r["label"] == v["recommended"])
        console.print(f"[bold]Recommended, as measured: {v['recommended']}[/bold] (the model's pick, {rec['label']}, "
                      f"measured {v['pick_over_fastest']:.0%} of it; predicted {v['pick_error']:+.0%} off)")
        console.print(f"  {_user_command(measured, rules)}")
    else:
        console.print(f"[bold]Recommended: {rec['label']}[/bold] (confidence: {rec['confidence']})")
        console.print(f"  {_user_command(answer['candidates'][0], rules)}")
    console.print("Why:")
    for line in [rec["why"], *answer["reasons"]]:
        console.print(f"  - {line}")
    for skip in answer["skipped"]:
        console.print(f"Not weighed: {skip['label']} ({skip['why']})")
    if "calibration" in answer:
        console.print(_calibration_text(answer["calibration"]))
    if "verification" in answer:
        v = answer["verification"]
        how = (f"iperf3, {v['streams']} stream(s), {v['rules']}, beside {v['yardstick']}; " if "streams" in v
               else "")
        console.print(f"Verified ({how}{v['measured']} measured, {v['rounds']} rounds, medians): fastest "
                      f"{v['fastest']}; "
                      f"the pick {'holds' if v['pick_holds'] else 'does not hold'} ({v['pick_over_fastest']:.0%} of "
                      f"it); the yardstick moved {v['host_spread']:.0%} meanwhile"
                      + (": more than the gap it judged on" if v["host_too_unsteady"] else ""))


def quick_fit(env: dict, tsc_hz: float | None, why: str) -> Profile:
    """Fits the quick profile here (python/xnf/model/quick_fit.py) and installs it, marked when the host was
    unsteady; its progress on stderr under --json, so that stdout stays the answer alone."""
    say.info(f"{why}: fitting a quick one ({', '.join(lab_paths.quick_paths())}; {quick_fit_of.ROUNDS} rounds, "
             "about two and a half minutes; its confidence is lower). 'xnf bench run model-fit' (about 40 minutes) "
             "refines it.")
    started = time.monotonic()
    profile, host = quick_fit_of.fit(env, tsc_hz, say.info)
    where, took = install(profile), time.monotonic() - started
    if host.steady:
        say.info(f"quick profile fitted in {took:.0f} s: {where}")
    else:
        say.info(f"quick profile fitted in {took:.0f} s on a host unsteady over {host.attempts} attempts "
                 f"({host.why_not()}): installed marked so ({where}); its answers are of low confidence, and the "
                 "next xnf advise fits again if the host is quiet by then")
    return profile


def chosen_profile(named: str | None, env: dict, tsc_hz: float | None) -> Profile:
    """The profile named, else the one installed (a full fit's, else the quick one's), else a quick fit made now.
    An installed quick profile fitted on an unsteady host is fitted again once the host is quiet."""
    where = named or installed()
    if not where:
        return quick_fit(env, tsc_hz, "no profile of this machine yet")
    profile = load(where)
    if named or not profile.quick:
        return profile
    if not profile.host:
        return quick_fit(env, tsc_hz, "the quick profile installed was fitted before xnf measured how steady the "
                                      "host was")
    if not profile.host["steady"]:
        say.info("the quick profile installed was fitted on an unsteady host: measuring whether the host is quiet "
                 "now (about 15 s)")
        now = quick_fit_of.host_now(tsc_hz)
        if now.steady:
            return quick_fit(env, tsc_hz, "the host is quiet now")
        say.info(f"the host is still unsteady ({now.why_not()}): answering from the profile fitted then")
    return profile


def _judge_the_fit(answer: dict, profile: Profile) -> None:
    """A quick profile fitted on an unsteady host answers with low confidence, saying why; a steady one's spread is
    weighed against the pick's lead like a calibration's."""
    host = profile.host
    if not host:
        return
    if not host["steady"]:
        advisor.lower_confidence(answer, "low", "the quick profile was fitted on an unsteady host ("
                                 + quick_fit_of.Steadiness.of(host).why_not() + ")")
    _judge_the_host(answer, host["spread"], "quick fit")


def calibration_of(profile: Profile, tsc_hz: float | None) -> tuple[Profile, dict]:
    """--calibrate: each path of the profile read again now (python/xnf/model/calibration.py)."""
    measurable = calibration.measurable(profile)
    if not measurable:
        return profile, {"how": "none", "skipped": "the lab runs none of the profile's paths: it cannot be "
                                                   "calibrated here", "host_spread": 0.0}
    return calibration.calibrate(profile, tsc_hz, say.info)


def _judge_the_host(answer: dict, spread: float, during: str) -> None:
    """Low confidence when the yardstick moved more, while it was measured, than the pick's lead over the next."""
    rows = answer["candidates"]
    if len(rows) < 2:
        return
    key = "counted_gbit_s" if "segments" in answer else "counted_mpps"
    lead = rows[0][key] / rows[1][key] - 1
    if spread > lead:
        advisor.lower_confidence(answer, "low", f"the host moved the yardstick by {spread:.0%} during the "
                                 f"{during}, more than the pick's lead of {lead:.0%}: too unsteady to separate "
                                 f"{rows[0]['label']} from {rows[1]['label']} now")


def _calibration_text(c: dict) -> str:
    if "skipped" in c:
        return f"Calibration: none ({c['skipped']})"
    moved = ", ".join(f"{key} x{f['forward']:.2f}" + (f" (drops x{f['drop']:.2f})" if f["drop"] != f["forward"]
                                                      else "")
                      for key, f in c["factors"].items())
    return (f"Calibration ({c['how']}, {c['seconds']:.0f} s): times {moved}; the yardstick "
            f"{', '.join(f'{r:.2f}' for r in c['yardstick_mpps_now'])} Mpps now, {c['yardstick_mpps_at_fit']} at the "
            f"fit, moving {c['host_spread']:.0%} while measured")


def _streams(gen: list[str], segment_mix: segments.SegmentMix) -> int:
    """A segment mix's flows as iperf3's parallel streams (one unless the mix says --flows)."""
    flows = option_value(gen, "--flows")
    streams = segments.exact_int(flows, "--flows") if flows is not None else 1
    if not 1 <= streams <= MAX_STREAMS:
        raise XnfError(f"--verify on a segment mix runs its --flows as iperf3 streams: 1 to {MAX_STREAMS}, not "
                       f"{streams}")
    return streams


def _check_movable(name: str, nf: str) -> None:
    """The instance --move names runs this NF: said before minutes of measuring, not after."""
    from xnf.service import move

    move.check_movable(name)
    runs = control.request_json(name, "info").get("nf")
    if not chain.is_chain(nf) and runs != nf:
        raise XnfError(f"--move {name}: that instance runs {runs}, not {nf}: advise it for its own NF")


def move_to_recommended(answer: dict, name: str) -> str:
    """The instance moved to what the answer recommends (measured, where it was verified): its mode, and the
    options the path takes (a transmit path), or said why it stays."""
    from xnf.service import move

    label = (answer.get("verification") or {}).get("recommended") or answer["recommendation"]["label"]
    row = next(r for r in answer["candidates"] if r["label"] == label)
    options = row["run"][3:]
    mode = option_value(options, "--mode")
    if mode is None:
        return f"{name} stays where it runs: the recommended {label} is not one mode xnf move can take it to"
    if control.request_json(name, "info")["mode"] == mode:
        return f"{name} runs in {mode} already: it stays"
    if not contract.mode(mode)["keeps_state"]:
        return f"{name} stays: the recommended {label} (--mode {mode}) cannot take its state over yet"
    return move.move(name, mode, without_option(options, "--mode"))


def run(args: argparse.Namespace) -> int:
    if args.move:
        _check_movable(args.move, args.nf)
    if args.verify and args.cores is not None:
        raise XnfError("--verify measures on the lab's own cores: leave out --cores")
    if args.verify and not 1 <= args.verify <= MAX_VERIFIED:
        raise XnfError(f"--verify N measures the best N candidates: 1 to {MAX_VERIFIED}")
    if args.verify and args.sessions == "new":
        raise XnfError("--verify measures established flows: a trial of new sessions would run out of the mix's "
                       "flows (and a NAT's pool) within a fraction of a second; leave out one of the two")
    gen, segment_mix = segments.of_words(mix.parse(args.mix, segments=True))
    streams = _streams(gen, segment_mix) if args.verify and segment_mix else None
    if streams and not chain.is_chain(args.nf):
        container_nf.check_nf(args.nf)
    elif streams:
        raise XnfError("--verify on a segment mix runs iperf3 between the lab's containers through the NF with the "
                       f"lab's own rules, which it has for {', '.join(container_nf.RULES)}, not for a chain")
    here = environment.describe()
    tsc_hz = here["tsc_hz"]
    profile = chosen_profile(args.profile, here, tsc_hz)
    judged = provenance.judge(profile, here)
    calibration = None
    if args.calibrate:
        profile, calibration = calibration_of(profile, tsc_hz)
    how = task.Measurement(gen, frames=args.frames, rounds=args.rounds, map_sizes=args.map_size or [],
                           sessions=args.sessions)
    measured = task.measure(args.nf, args.rules, profile.baseline, how)
    drop_rules = not chain.is_chain(args.nf) and contract.describe(args.nf).get("drop_rules", False)
    answer = advisor.advice(profile, args.nf, measured, drop_rules, args.cores, segment_mix)
    answer["profile"]["provenance"] = judged
    _judge_the_fit(answer, profile)
    note = provenance.advice_note(judged)
    if note and not calibration:
        advisor.lower_confidence(answer, "medium", note)
    if calibration:
        answer["calibration"] = calibration
        _judge_the_host(answer, calibration["host_spread"], "calibration")
    if args.verify and segment_mix:
        answer["verification"] = verify_segments(answer, streams, args.verify)
        _judge_the_host(answer, answer["verification"]["host_spread"], "verification")
    elif args.verify:
        rules_text = user_files.read_text(args.rules, "rules", user_files.MAX_RULES_BYTES) if args.rules else None
        case = lab_rate.NfCase("advise", args.nf, rules_text, gen, args.map_size or [])
        answer["verification"] = verify(answer, case, args.verify, tsc_hz)
        _judge_the_host(answer, answer["verification"]["host_spread"], "verification")
    if args.move:
        answer["move"] = move_to_recommended(answer, args.move)
    if args.json:
        print(json.dumps(answer, indent=2))
    else:
        print_text(answer, args.rules)
        if args.move:
            output.console().print(f"Move: {answer['move']}")
    return 0

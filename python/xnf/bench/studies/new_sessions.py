"""Does the advisor's price of a new session hold? An NF that keeps state per flow on the lab's one port, on each
path of the profile, set beside what `xnf advise --sessions new` and `xnf advise` predict for it: the NAT (--nf nat,
python/xnf/model/cases.py: to a remote, each flow keeping its source port; a flow's first frame makes a mapping and
a session) or the stateful acl (--nf acl, docs/conntrack.md: a flow's first frame makes a connection).

Each round, per path: the NF started afresh; --flows flows' first frames flat out from the generator's core (every
frame opens a session), then the same flows again flat out for --seconds (every frame finds its own).
Both are rates of what came back translated, at overload: the RFC 2544 search the profile was fitted with cannot
run on new sessions (its trials would run out of flows and of the pool within a fraction of a second), so the rates
are not the profile's kind. What is judged is what they share: new over established, measured within one trial
(the host's speed cancels) against predicted, per path, and which path is fastest on new sessions. The c_task of
each kind is measured before the rounds, three rounds against the baseline as `xnf advise` does.

    xnf bench run new-sessions [--profile P] [--rounds 5] [--seconds 1] [--paths xdp,afxdp/live,hybrid/live]
                               [--nf nat|acl]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from xnf import control, nf_cost
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import paths
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood, returned_to_gen0
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.model import advisor, cases, check_rounds, lab_rate, task
from xnf.model.predict import predict
from xnf.model.profile import Profile, load

NAME = "new-sessions"
DESCRIPTION = "the advisor's price of new sessions (the NAT's, the stateful acl's) against the lab: new over " \
              "established flows, per path"
# At most: within one public address's pool (ports 1024-65535) and the NAT's session table as it starts by default
FLOWS = 60000
DEFAULT_MODES = paths.Modes(paths.kinds_at_xdp)   # each on this kernel's default transmit path (paths.keys)
# What is still on its way through a worker when the generator stops: waited for before counting what came back
SETTLE_S = 0.05


@dataclass
class Setup:
    profile: Profile                       # cut to the paths asked for
    case: lab_rate.NfCase
    costs: dict[str, task.TaskCost] = field(default_factory=dict)   # per kind of session, once the rounds start

    def cost(self, kind: str) -> task.TaskCost:
        """c_task of each kind of session (nf_cost.SESSIONS), measured the first time one is asked for: after the
        options are checked, before the first trial."""
        if not self.costs:
            with tempfile.TemporaryDirectory() as folder:
                rules = self.case.write_rules(Path(folder))
                for each in nf_cost.SESSIONS:
                    how = task.Measurement(self.case.gen_options, sessions=each)
                    self.costs[each] = task.measure(self.case.nf, rules, self.profile.baseline, how)
        return self.costs[kind]


@dataclass(frozen=True)
class SessionsNf:
    """An NF whose flows' first frames make state: its case, and its counters of what was made and what was
    refused for want of room."""
    case: Callable[[int], lab_rate.NfCase]
    made: str
    refused: tuple[str, ...]


NFS = {
    "nat": SessionsNf(lambda flows: lab_rate.NfCase("nat-new", "nat", cases.nat_on_a_stick(), cases.nat_flows(flows)),
                      "new_mapping", ("pool_full", "table_full")),
    "acl": SessionsNf(lambda flows: lab_rate.NfCase("acl-new", "acl", cases.STATEFUL_ACL, cases.nat_flows(flows)),
                      "ct_new", ("ct_full",)),
}


def prepare(args: argparse.Namespace) -> None:
    full = load(args.profile)
    profile = check_rounds.on_paths(full, args.paths)
    if profile is None:
        raise SystemExit(f"{NAME}: --paths among {', '.join(full.paths)}")
    args.sessions_setup = Setup(profile, NFS[args.nf].case(args.flows))


def _candidate(setup: Setup, kind: str, path: str) -> advisor.Candidate:
    found = advisor.candidates(setup.profile, setup.case.nf, setup.cost(kind), drop_rules=False)
    return next(c for c in found if c.label == path)


def predicted_mpps(setup: Setup, kind: str, path: str) -> float:
    chosen = _candidate(setup, kind, path)
    return predict(setup.profile.path(chosen.path_key), chosen.load).mpps


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--profile", help="the machine profile (default: the installed one)")
    parser.add_argument("--paths", default=",".join(paths.keys(*DEFAULT_MODES)), help="the profile's paths to measure")
    parser.add_argument("--flows", type=int, default=FLOWS, help=f"new flows per trial (1,024 to {FLOWS:,}, the "
                        "default)")
    parser.add_argument("--nf", choices=NFS, default="nat", help="the NF whose sessions are priced (default nat)")


def trial(path: str, args: argparse.Namespace, place: Place) -> dict:
    setup = args.sessions_setup
    chosen = _candidate(setup, "established", path)
    extra = list(chosen.options) + (["--cores", str(DUT_CORE)] if lab_rate.needs_workers(chosen.nf, chosen.options)
                                    else [])
    with Topology("pair", gen_xdp="drop") as t, \
            NfInstance.start(t, chosen.nf, None, t.dut_ifaces, rules=setup.case.write_rules(place.folder),
                             extra=extra) as nf:
        back, rates = returned_to_gen0(t), {}
        for kind, count in (("new", args.flows), ("established", None)):   # the flows once, then for --seconds
            before = back()
            run = flood(t, args.seconds, GEN_CORE, setup.case.gen_options, completed=back, count=count)
            time.sleep(SETTLE_S)
            rates[kind] = (back() - before) / run.seconds / 1e6
        counters = control.request_json(nf.name, "stats")["counters"]
    made = NFS[args.nf]
    return {"subject": path, "new_mpps": round(rates["new"], 4), "established_mpps": round(rates["established"], 4),
            "new_over_established": round(rates["new"] / rates["established"], 4) if rates["established"] else None,
            "made": counters.get(made.made), "refused": sum(counters.get(c, 0) for c in made.refused)}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per path: the measured rates and new over established (medians of the rounds), the predictions, and the
    ratio's error; the first row of each kind's ranking is marked."""
    setup, rows = args.sessions_setup, []
    for path in setup.profile.paths:
        mine = [s for s in samples if s["subject"] == path and s["new_over_established"]]
        if not mine:
            continue
        new, est = predicted_mpps(setup, "new", path), predicted_mpps(setup, "established", path)
        measured = statistics.median(s["new_over_established"] for s in mine)
        rows.append({"path": path, "rounds": len(mine),
                     "new_mpps": round(statistics.median(s["new_mpps"] for s in mine), 4),
                     "established_mpps": round(statistics.median(s["established_mpps"] for s in mine), 4),
                     "measured_ratio": round(measured, 4), "predicted_new_mpps": round(new, 4),
                     "predicted_established_mpps": round(est, 4), "predicted_ratio": round(new / est, 4),
                     "ratio_error": round(new / est / measured - 1, 4),
                     "made": [s["made"] for s in mine]})
    for rate in ("new_mpps", "predicted_new_mpps"):
        if rows:
            max(rows, key=lambda r: r[rate])[f"fastest_by_{rate}"] = True
    return rows


def _line(sample: dict) -> str:
    return (f"{sample['subject']:12s} new {sample['new_mpps']:.3f} Mpps, established {sample['established_mpps']:.3f}"
            f" ({sample['new_over_established']}), {sample['made']} sessions made")


def _report(row: dict) -> str:
    marks = " ".join(m for m, f in (("fastest measured", "fastest_by_new_mpps"),
                                    ("fastest predicted", "fastest_by_predicted_new_mpps")) if row.get(f))
    return (f"{row['path']:12s} new/established measured {row['measured_ratio']:.2f}, predicted "
            f"{row['predicted_ratio']:.2f} ({row['ratio_error']:+.0%}); new {row['new_mpps']:.3f} Mpps "
            f"(predicted {row['predicted_new_mpps']:.3f}) {marks}").rstrip()


def _fields(args: argparse.Namespace) -> dict:
    setup = args.sessions_setup
    return {"nf": args.nf, "flows": args.flows, "generator_core": GEN_CORE, "dut_core": DUT_CORE, "profile": setup.profile.name,
            "c_task": {kind: {"native_ns_over_baseline": round(c.whole.native_ns, 1),
                              "xdp_ns_over_baseline": round(c.whole.xdp_ns, 1)} for kind, c in setup.costs.items()}}


STUDY = RoundsStudy(NAME, "new_sessions", subjects=lambda args: [k for k in args.paths.split(",") if k],
                    trial=trial, summarise=summarise, rounds=5, seconds=1.0, options=_options, prepare=prepare,
                    check=lambda args: None if nf_cost.MIN_FRAMES <= args.flows <= FLOWS else
                    f"--flows from {nf_cost.MIN_FRAMES:,} to {FLOWS:,}",
                    line=_line, report=_report, fields=_fields)
add_arguments, run = STUDY.add_arguments, STUDY.run

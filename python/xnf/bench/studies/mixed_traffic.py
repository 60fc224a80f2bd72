"""Legitimate throughput under a growing share of traffic to drop: where the drop happens decides what is left
for the rest (the analogue of the research's mixed-traffic figure).

The firewall holds one drop rule per attack source (16 sources in 203.0.113.0/28) and allows everything else.
xnf-gen sends flat out from core 0, 64-byte UDP frames, a legitimate class (16 flows) and the attack class at
drop shares 0 to 90 %; the legitimate frames come back to gen0 and are counted by veth there (the attack never
comes back). Two placements of the AF_XDP workers: on core 1, their own ("own"), and on core 0 with the
generator and the kernel's receive ("shared", as on an edge server whose cores are all busy). Subjects, each in
one run, in rounds whose order turns around every round:
  xdp      the firewall in XDP: drops and forwards in the kernel
  afxdp    the firewall in user space: every frame crosses to the workers
  hybrid   the firewall in XDP, what it forwards sent by the workers
  split    chain:firewall@xdp,macswap@afxdp: the firewall in XDP, a user-space NF behind it
  offload  the firewall in user space with --offload-drops: its hot drop rules move into XDP (above 2,000 pps
           each: the controller sees the rate that reaches the NF, and a starved worker sees ~7,500 pps of
           each of 16 sources sending 90,000)
Each trial first runs 1.2 s of the same traffic unmeasured: the offload controller (measuring every 0.5 s,
so the pause between the two generator runs does not cool its rules) moves them in then.
The yardstick is xdp in the same round: every subject's legitimate rate is also given as a ratio to it.

    xnf bench run mixed-traffic [--rounds 3] [--seconds 2] [--shares 0,0.25,0.5,0.75,0.9] [--placements own,shared]
                                [--subjects xdp,afxdp,...] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
from pathlib import Path

from xnf.bench.figures import mix_plots
from xnf.bench.study import Place, RoundsStudy, of_summary
from xnf.lab.rounds import median_ratio, medians
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.generator import Generator, flat_out
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "mixed-traffic"
DESCRIPTION = ("the legitimate class's throughput as the share of traffic to drop grows 0-90 %: xdp, afxdp, "
               "hybrid, a split chain and dynamic offload, side by side")
ATTACK_SOURCES = 16
ATTACKERS = "203.0.113"
WARM_UP_S = 1.2
# label: (NF, mode or None when the NF's places say it, options besides the workers' core)
SUBJECTS = {
    "xdp": ("firewall", "xdp", []),
    "afxdp": ("firewall", "afxdp", []),
    "hybrid": ("firewall", "hybrid", []),
    "split": ("chain:firewall@xdp,macswap@afxdp", None, []),
    "offload": ("firewall", "afxdp", ["--offload-drops", "--offload-interval-ms", "500", "--offload-above", "2000",
                                   "--offload-below", "200"]),
}
YARDSTICK = "xdp"
PLACEMENTS = {"own": DUT_CORE, "shared": GEN_CORE}  # the workers' core


def rules(nf: str, dut_ip: str) -> str:
    lines = [f"drop udp {ATTACKERS}.{i} 9 {dut_ip} 9" for i in range(ATTACK_SOURCES)]
    prefix = "firewall " if nf.startswith("chain:") else ""
    return "".join(f"{prefix}{line}\n" for line in lines)


def traffic(share: float, dut_ip: str) -> list[str]:
    options = ["--dst-ip", dut_ip, "--size", "64"]
    if share == 0:
        return options + ["--flows", "16"]
    return options + ["--class", f"legit:share={1 - share:g},flows=16",
                      "--class", f"attack:saddr={ATTACKERS}.0/28,share={share:g}"]


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    with Topology("pair", gen_xdp="drop") as t:
        yield t


def trial(subject: tuple[str, float, str], args: argparse.Namespace, place: Place) -> dict:
    (label, share, placement), t, seconds, rules_dir = subject, place.lab, args.seconds, place.folder
    nf, mode, extra = SUBJECTS[label]
    if mode != "xdp":
        extra = ["--cores", str(PLACEMENTS[placement]), *extra]
    link = t.links[0]
    path = rules_dir / f"{label}.rules"
    path.write_text(rules(nf, link.dut_ip))
    instance = NfInstance.start(t, nf, mode, t.dut_ifaces, rules=str(path), extra=extra)
    try:
        Generator(t).run(*flat_out(WARM_UP_S, GEN_CORE), *traffic(share, link.dut_ip))
        run = flood(t, seconds, GEN_CORE, traffic(share, link.dut_ip))
    finally:
        instance.stop()
    return {"subject": label, "placement": placement, "drop_share": share, "sent": run.sent,
            "legit_returned": run.returned,
            "seconds": round(run.seconds, 4), "offered_mpps": round(run.offered_mpps, 4),
            "legit_mpps": round(run.mpps(run.returned), 4),
            "ns_per_frame": round(run.ns_per_frame(run.sent), 1) if run.sent else None,
            "core0_busy_share": run.cpu[GEN_CORE]["busy_share"], "core1_busy_share": run.cpu[DUT_CORE]["busy_share"]}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """Per placement, subject and share: the median legitimate rate, and its median ratio to the yardstick in
    the same round and placement."""
    rows = []
    for placement in PLACEMENTS:
        for label in SUBJECTS:
            for share in sorted({s["drop_share"] for s in samples}):
                mine = [s for s in samples
                        if s["subject"] == label and s["drop_share"] == share and s["placement"] == placement]
                if not mine:
                    continue
                rows.append({"placement": placement, "subject": label, "drop_share": share,
                             **medians(mine, ("legit_mpps", "offered_mpps", "ns_per_frame")),
                             "ratio_to_xdp": median_ratio(samples, mine, "legit_mpps", YARDSTICK,
                                                          ("placement", "drop_share")),
                             "rounds": len(mine)})
    return rows


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shares", default="0,0.25,0.5,0.75,0.9",
                        help="drop shares to measure, comma-separated, each from 0 to 0.9")
    parser.add_argument("--subjects", default=",".join(SUBJECTS), help="a subset of " + ", ".join(SUBJECTS))
    parser.add_argument("--placements", default=",".join(PLACEMENTS),
                        help=f"where the AF_XDP workers run: own (core {DUT_CORE}), shared (core {GEN_CORE}, with the "
                             "generator and the kernel's receive)")


def _chosen(args: argparse.Namespace) -> tuple[list[float], list[str], list[str]]:
    return ([float(x) for x in args.shares.split(",")], [s for s in args.subjects.split(",") if s],
            [p for p in args.placements.split(",") if p])


def _check(args: argparse.Namespace) -> str | None:
    try:
        shares, labels, placements = _chosen(args)
    except ValueError:
        shares, labels, placements = [-1.0], [], []
    if any(not 0 <= x <= 0.9 for x in shares) or any(s not in SUBJECTS for s in labels) or \
            YARDSTICK not in labels or any(p not in PLACEMENTS for p in placements):
        return (f"shares go from 0 to 0.9, subjects are {', '.join(SUBJECTS)} (xdp, the yardstick, always among "
                f"them), placements {', '.join(PLACEMENTS)}")
    return None


def _subjects(args: argparse.Namespace) -> list[tuple[str, float, str]]:
    shares, labels, placements = _chosen(args)
    return [(lb, x, p) for p in placements for x in shares for lb in labels]


STUDY = RoundsStudy(
    NAME, "mixed_traffic", subjects=_subjects, trial=trial, summarise=summarise, lab=_lab, rounds=3, seconds=2.0,
    options=_options, check=_check, plot=of_summary(mix_plots.legit_vs_drop_share),
    line=lambda s: f"{s['placement']:6s} {s['subject']:8s} drop {s['drop_share']:4.2f}: legit "
                   f"{s['legit_mpps']:6.3f} Mpps (offered {s['offered_mpps']:.3f})",
    report=lambda row: f"{row['placement']:6s} {row['subject']:8s} drop {row['drop_share']:4.2f}: "
                       f"{row['legit_mpps']:.3f} Mpps, {row['ratio_to_xdp']} of xdp",
    fields=lambda args: {"generator_core": GEN_CORE, "worker_cores": PLACEMENTS, "warm_up_s": WARM_UP_S,
                         "attack_sources": ATTACK_SOURCES, "yardstick": YARDSTICK,
                         "subjects": {k: {"nf": v[0], "mode": v[1], "options": v[2]} for k, v in SUBJECTS.items()
                                      if k in _chosen(args)[1]}})
add_arguments, run = STUDY.add_arguments, STUDY.run

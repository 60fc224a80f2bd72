"""A soak: minutes of traffic at 90 % of the searched loss-free rate while the rules change, with every frame
accounted for, and the instance's memory, map occupancy and latency sampled over time.

Subjects (NF in a mode), one after the other, each in its own topology:
  firewall-xdp, firewall-afxdp   16 drop rules for one attack source range, 16 more for a second range added and
                                 deleted by the churn (so its frames are dropped or forwarded as the rule stands);
                                 80 % legitimate frames (256 flows), 10 % to each attack range
  lb-xdp, lb-afxdp               one UDP service, 4 backends; a fifth backend added and deleted by the churn; every
                                 sample's traffic comes from a new client address (4,096 flows), so sessions open
                                 all the time and the old ones expire (timeout 5 s) and are swept

Per subject: an RFC 2544 search (loss < 0.1 % of the legitimate class, one repetition of 2 s trials, the churn already running) finds the
loss-free rate of the mix, then the generator offers --load of it in back-to-back runs of --sample-seconds
until --minutes are over, while a thread changes rules at --churn-per-s through the control socket. Between runs
(no traffic in flight) it reads the NF's counters, its RSS, the entries of its main map, and veth's counters.
Every run must account for every frame: sent = returned + the NF's counted verdicts that do not return a frame
(drop, pass, abort, redirect_error, local) + the frames veth dropped and counted (rx_drops on either side:
a full ring between the peers, or a redirect into an AF_XDP socket whose ring was full, which the socket counts
too, as kernel_rx_dropped: shown as a breakdown, not added again); what is left is "unexplained" and must be 0.

The yardstick is the same NF's loss-free rate in xdp in the same run: the afxdp search is given as a ratio to it.
The results file keeps a sample per subject (its search, the instance at the start and at the end), each with its
generator runs in order ("over_time").

    xnf bench run soak [--minutes 10] [--sample-seconds 10] [--load 0.9] [--churn-per-s 50]
                       [--subjects firewall-xdp,firewall-afxdp,lb-xdp,lb-afxdp] [--out DIR]
"""

from __future__ import annotations

import argparse
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from xnf import control, say
from xnf.bench.figures import soak_plots
from xnf.bench.study import Place, Study
from xnf.lab.nf_setup import GEN_DST, GEN_PORT, lb_sessions
from xnf.lab import rfc2544, veth_stats
from xnf.lab.cores import DUT_CORE
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "soak"
DESCRIPTION = ("minutes at 90 % of the loss-free rate with rule churn: firewall and lb in xdp and afxdp, every "
               "frame accounted, RSS, map entries and latency over time")
SUBJECTS = {"firewall-xdp": ("firewall", "xdp"), "firewall-afxdp": ("firewall", "afxdp"),
            "lb-xdp": ("lb", "xdp"), "lb-afxdp": ("lb", "afxdp")}
MAIN_MAP = {"firewall": "fw_acl", "lb": "lb_sessions"}
STATIC_ATTACK, CHURNED_ATTACK = "203.0.113.0/28", "203.0.113.16/28"
LB_FLOWS_PER_SAMPLE, LB_TIMEOUT_S = 4096, 5
# Verdicts whose frame does not come back to the generator; tx and redirect do.
NOT_RETURNED = ("drop", "pass", "abort", "redirect_error", "local", "not_ready")
# Frames veth dropped and counted (ethtool -S), on either side of the pair.
VETH_LOSSES = ("rx_drops",)
# Where some of those were lost, counted again by the AF_XDP sockets and workers: a breakdown, not added.
SOCKET_LOSSES = ("kernel_rx_dropped", "live_device_dropped", "pass_dropped")
SEARCH_TRIAL_S = 2.0


@dataclass
class SearchTrial:
    """One search trial judged on the legitimate class (the attack is meant to be dropped). Frames the DUT's
    port refused carry no class, so their share of what was offered counts against the legitimate class too."""
    offered_pps: float
    achieved_pps: float
    legit_loss_ratio: float
    refused_ratio: float

    def passes(self, loss_threshold: float) -> bool:
        return self.legit_loss_ratio + self.refused_ratio < loss_threshold


class Subject:
    """One NF in one mode on its topology: its rules, its traffic, its churn."""

    def __init__(self, t: Topology, label: str):
        self.t, self.label = t, label
        self.nf, self.mode = SUBJECTS[label]
        self.link = t.links[0]

    def rules(self) -> tuple[str, list[str]]:
        if self.nf == "firewall":
            lines = [f"drop udp 203.0.113.{i} 9 {GEN_DST} 9" for i in range(16)]
            return "\n".join(lines) + "\n", []
        setup = lb_sessions(LB_FLOWS_PER_SAMPLE, self.link.gen_mac)
        return setup.rules.replace("timeout 3600", f"timeout {LB_TIMEOUT_S}"), setup.extra

    def churned_rule(self) -> str:
        if self.nf == "firewall":
            return "drop udp 203.0.113.{i} 9 " + f"{GEN_DST} 9"
        return f"backend udp {GEN_DST} {GEN_PORT} slot 5 198.19.0.99 {GEN_PORT} mac {self.link.gen_mac} port 0"

    def traffic(self, sample: int) -> list[str]:
        if self.nf == "firewall":
            return ["--class", "legit:share=0.8,flows=256,vary=sport",
                    "--class", f"attack:saddr={STATIC_ATTACK},share=0.1",
                    "--class", f"churned:saddr={CHURNED_ATTACK},share=0.1"]
        client = f"10.{sample // 250 % 250}.{sample % 250}.1"   # a new client each sample: new sessions
        return ["--src-ip", client, "--flows", str(LB_FLOWS_PER_SAMPLE), "--vary", "sport"]


def legit_loss(summary: dict) -> float:
    """The firewall's legitimate class, or all frames (lb)."""
    classes = {c["name"]: c for c in summary.get("classes", [])}
    c = classes.get("legit", summary)
    return c["lost"] / c["sent"] if c["sent"] else 1.0


def search(s: Subject, generator: Generator) -> rfc2544.SearchResult:
    def trial(rate: float) -> SearchTrial:
        out = generator.run("--duration", str(SEARCH_TRIAL_S), "--rate", str(rate), "--stamp-every", "64",
                            *s.traffic(0)).summary
        offered = out["sent"] + out.get("send_errors", 0)
        refused = out.get("send_errors", 0) / offered if rate and offered else 0.0
        return SearchTrial(rate, out["pps"], legit_loss(out), refused)
    return rfc2544.search_once(trial)


class Churn(threading.Thread):
    """Adds and deletes rules at a steady rate until stopped; counts what it changed and what was refused."""

    def __init__(self, nf: NfInstance, rule: str, per_second: float):
        super().__init__(daemon=True)
        self.nf, self.rule, self.period = nf, rule, 1.0 / per_second
        self.changes = self.errors = 0
        self.stopping = threading.Event()

    def run(self) -> None:
        i = 0
        while not self.stopping.wait(self.period):
            rule = self.rule.format(i=16 + i // 2 % 16)
            try:
                self.nf.request(f"rules {'add' if i % 2 == 0 else 'del'} {rule}")
                self.changes += 1
            except Exception:  # a refused change is counted and shown, never hides the soak's result
                self.errors += 1
            i += 1


def counted_losses(stats: dict, veth: dict[str, dict]) -> dict[str, int]:
    """Everything the NF and veth counted as not sent back, by name."""
    out = {f"verdict_{v}": stats["verdicts"][v]["packets"] for v in NOT_RETURNED}
    for side, counters in veth.items():
        for name in VETH_LOSSES:
            out[f"veth_{side}_{name}"] = counters.get(name, 0)
    return out


def socket_losses(stats: dict) -> dict[str, int]:
    return {f"socket_{name}": sum(w.get(name, 0) for w in stats.get("workers", [])) for name in SOCKET_LOSSES}


def read_state(s: Subject, nf: NfInstance) -> dict:
    stats = control.request_json(nf.name, "stats")
    veth = {"dut": veth_stats.read(s.t.dut_ns, s.link.dut_if), "gen": veth_stats.read(s.t.gen_ns, s.link.gen_if)}
    entries = control.request_json(nf.name, f"entries {MAIN_MAP[s.nf]}")
    return {"losses": counted_losses(stats, veth), "socket_losses": socket_losses(stats), "entries": entries["entries"], "capacity": entries["capacity"],
            "rss_kib": rss_kib(nf.process.pid), "counters": stats["counters"]}


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def sample_row(label: str, index: int, started: float, out: dict, before: dict, after: dict, churn: Churn,
               base: tuple[int, int]) -> dict:
    """One generator run; rule changes and refusals are counted from the soak's start (base: at that moment)."""
    losses = {k: after["losses"][k] - before["losses"][k] for k in after["losses"]}
    counted = sum(losses.values())
    latency = out.get("latency_ns", {})
    row = {"subject": label, "sample": index, "t_s": round(time.monotonic() - started, 1), "sent": out["sent"],
           "returned": out["received"], "counted": counted,
           "unexplained": out["sent"] - out["received"] - counted, "legit_loss": round(legit_loss(out), 6),
           "mpps": round(out["pps"] / 1e6, 4), "rss_kib": after["rss_kib"], "entries": after["entries"],
           "rule_changes": churn.changes - base[0], "rule_errors": churn.errors - base[1]}
    row.update({f"latency_{p}_us": round(latency[p] / 1000, 1) for p in ("p50", "p99", "p99_9", "max") if p in latency})
    row.update({k: v for k, v in losses.items() if v})
    row.update({k: v - before["socket_losses"][k] for k, v in after["socket_losses"].items() if v - before["socket_losses"][k]})
    return row


def soak(t: Topology, label: str, args: argparse.Namespace, rules_dir: Path) -> dict:
    """The subject's search and its soak: what the search found and the instance at the start and end, with the
    soak's samples over time ("over_time")."""
    s = Subject(t, label)
    text, extra = s.rules()
    path = rules_dir / f"{label}.rules"
    path.write_text(text)
    if s.mode != "xdp":
        extra = [*extra, "--cores", str(DUT_CORE)]
    nf = NfInstance.start(t, s.nf, s.mode, t.dut_ifaces, rules=str(path), extra=extra)
    generator = Generator(t, receive_on=0)
    churn = Churn(nf, s.churned_rule(), args.churn_per_s)
    try:
        churn.start()  # the search runs under the churn too: the soak's rate is found in the soak's conditions
        found = search(s, generator)
        rate = found.throughput_pps * args.load
        say.info(f"{label}: loss-free {found.throughput_pps / 1e6:.3f} Mpps, soaking at {rate / 1e6:.3f} Mpps "
                 f"for {args.minutes:g} min")
        rows, started = [], time.monotonic()
        before = read_state(s, nf)
        first, base = dict(before, sample=0), (churn.changes, churn.errors)
        try:
            while time.monotonic() - started < args.minutes * 60:
                index = len(rows) + 1
                out = generator.run("--duration", str(args.sample_seconds), "--rate", str(rate), "--stamp-every", "64",
                                    *s.traffic(index)).summary
                after = read_state(s, nf)
                rows.append(sample_row(label, index, started, out, before, after, churn, base))
                say.info(_progress(rows[-1]))
                before = after
        finally:
            churn.stopping.set()
            churn.join()
    finally:
        code = nf.stop()
    return {"subject": label, "nf": s.nf, "mode": s.mode, "loss_free_pps": found.throughput_pps,
            "mpps": round(found.throughput_pps / 1e6, 4), "generator_limited": found.generator_limited,
            "soak_pps": rate, "rss_kib_start": first["rss_kib"], "entries_start": first["entries"],
            "capacity": first["capacity"], "exit_code": code, "final_counters": before["counters"], "over_time": rows}


def _progress(row: dict) -> str:
    return (f"{row['subject']:15s} t={row['t_s']:6.1f}s sent {row['sent']:9d} returned {row['returned']:9d} counted "
            f"{row['counted']:8d} unexplained {row['unexplained']:3d} p99 {row.get('latency_p99_us', '-')} us rss "
            f"{row['rss_kib']} KiB entries {row['entries']} rule changes {row['rule_changes']}")


def over_time(runs: list[dict]) -> list[dict]:
    return [row for run_info in runs for row in run_info["over_time"]]


def summarise(runs: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = over_time(runs)
    xdp_rate = {r["nf"]: r["loss_free_pps"] for r in runs if r["mode"] == "xdp"}
    summary = []
    for run_info in runs:
        mine = [r for r in rows if r["subject"] == run_info["subject"]]
        p99 = [r["latency_p99_us"] for r in mine if "latency_p99_us" in r]
        summary.append({
            "subject": run_info["subject"], "minutes": round(mine[-1]["t_s"] / 60, 2) if mine else 0,
            "loss_free_mpps": round(run_info["loss_free_pps"] / 1e6, 4),
            "ratio_to_xdp": round(run_info["loss_free_pps"] / xdp_rate[run_info["nf"]], 3)
            if xdp_rate.get(run_info["nf"]) else None,
            "soak_mpps": round(run_info["soak_pps"] / 1e6, 4), "sent": sum(r["sent"] for r in mine),
            "returned": sum(r["returned"] for r in mine), "counted": sum(r["counted"] for r in mine),
            "unexplained": sum(r["unexplained"] for r in mine),
            "legit_lost_samples": sum(1 for r in mine if r["legit_loss"] > 0),
            "rule_changes": mine[-1]["rule_changes"] if mine else 0,
            "rule_errors": mine[-1]["rule_errors"] if mine else 0,
            "rss_kib_start": run_info["rss_kib_start"], "rss_kib_max": max((r["rss_kib"] for r in mine), default=0),
            "rss_kib_end": mine[-1]["rss_kib"] if mine else 0,
            "entries_max": max((r["entries"] for r in mine), default=0), "entries_end": mine[-1]["entries"] if mine else 0,
            "p99_us_first": p99[0] if p99 else None, "p99_us_last": p99[-1] if p99 else None,
            "p99_us_max": max(p99) if p99 else None, "exit_code": run_info["exit_code"]})
    return summary


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--minutes", type=float, default=10.0, help="traffic time per subject")
    parser.add_argument("--sample-seconds", type=float, default=10.0, help="one generator run, one sample")
    parser.add_argument("--load", type=float, default=0.9, help="share of the searched loss-free rate offered")
    parser.add_argument("--churn-per-s", type=float, default=50.0, help="rule changes per second")
    parser.add_argument("--subjects", default=",".join(SUBJECTS), help="a subset of " + ", ".join(SUBJECTS))


def labels(args: argparse.Namespace) -> list[str]:
    return [s for s in args.subjects.split(",") if s]


def wrong(args: argparse.Namespace) -> str | None:
    if any(s not in SUBJECTS for s in labels(args)) or not labels(args) or not 0 < args.load <= 1 or \
            args.minutes <= 0 or args.sample_seconds <= 0 or args.churn_per_s <= 0:
        return (f"subjects are {', '.join(SUBJECTS)}; --load is above 0 and at most 1; --minutes, --sample-seconds "
                "and --churn-per-s are above 0")
    return None


def measure(args: argparse.Namespace, place: Place) -> list[dict]:
    """Each subject soaked in turn, each in a topology of its own."""
    runs = []
    for label in labels(args):
        with Topology("pair", gen_xdp=None) as t:
            runs.append(soak(t, label, args, place.folder))
    return runs


STUDY = Study(
    NAME, "soak", measure=measure, summarise=summarise, options=options, check=wrong, seconds=None,
    plot=lambda summary, runs, png: soak_plots.over_time(over_time(runs), png),
    report=lambda row: f"{row['subject']:15s} {row['minutes']} min at {row['soak_mpps']} Mpps ({row['ratio_to_xdp']} "
                       f"of xdp's loss-free rate): sent {row['sent']}, returned {row['returned']}, counted "
                       f"{row['counted']}, unexplained {row['unexplained']}; RSS {row['rss_kib_start']} -> "
                       f"{row['rss_kib_end']} KiB; p99 {row['p99_us_first']} -> {row['p99_us_last']} us",
    fields=lambda args: {"minutes": args.minutes, "sample_seconds": args.sample_seconds, "load": args.load,
                         "churn_per_s": args.churn_per_s, "worker_core": DUT_CORE,
                         "yardsticks": {k: f"{v[0]}-xdp" for k, v in SUBJECTS.items()}})
add_arguments, run = STUDY.add_arguments, STUDY.run

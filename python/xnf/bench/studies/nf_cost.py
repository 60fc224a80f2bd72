"""What each NF costs per frame, natively and in XDP, on a traffic mix and without a topology (`xnf cost`): the
c_task of the cost model (docs/cost-model.md), measured in rounds whose order turns around every round.

Subjects (NF, rules, traffic, map sizes):
  macswap       nothing but the MAC swap: the yardstick (every other subject's time is also given less macswap's
                in the same round, which is what the NF adds to the frame handling both share)
  firewall      16 drop rules, 75 % legitimate frames (64 flows), 25 % from the 16 dropped sources
  firewall-10k  10,000 exact-match rules, 1,000 flows each hitting an allow rule
  lb            one UDP service with 4 backends, 1,000 flows (sessions open in the warm-up pass)
  router        a /16 route out of port 0, 1,000 destinations in it
  checksum-16   16 L4 checksum computations per frame
  memload-16M   one random access per frame into 16 MiB
  chain         chain:firewall,macswap with the firewall's 16 drop rules and mix
XDP times are from BPF_PROG_RUN's own time per run: the program with the glue around the NF and the per-run work of
the test harness, no driver and no transmit, taken warm plus the misses a native batch meets; native times are each
batch's run timed alone (lib/runtime/nf_cost.c says why; the samples keep the cold and warm times too).

    xnf bench run nf-cost [--rounds 5] [--frames 1024] [--repeat 200] [--subjects macswap,firewall,...]
"""

from __future__ import annotations

import argparse
import statistics

from xnf.bench.study import Place, RoundsStudy
from xnf.lab import nf_setup
from xnf.lab.rounds import beside_yardstick
from xnf.nf_cost import measure

NAME = "nf-cost"
DESCRIPTION = "each NF's time per frame natively and in XDP on a mix, without a topology (the cost model's c_task)"
YARDSTICK = "macswap"
FIREWALL_RULES = "".join(f"drop udp 203.0.113.{i} 9 198.18.0.2 9\n" for i in range(16))
MIX = ["--class", "legit:share=0.75,flows=64,vary=sport", "--class", "attack:saddr=203.0.113.0/28,share=0.25"]
THOUSAND_FLOWS = ["--flows", "1000", "--vary", "sport"]


def subjects() -> dict[str, tuple[str, str | None, list[str], list[str]]]:
    """label: (NF, rules text, xnf-gen options, --map-size values)."""
    acl = nf_setup.firewall_acl(10000)
    lb = nf_setup.lb_sessions(1000, "02:00:00:00:00:01")
    return {
        "macswap": ("macswap", None, [], []),
        "firewall": ("firewall", FIREWALL_RULES, MIX, []),
        "firewall-10k": ("firewall", acl.rules, THOUSAND_FLOWS, []),
        "lb": ("lb", lb.rules, THOUSAND_FLOWS, [s for s in lb.extra if s != "--map-size"]),
        "router": ("router", "route 198.18.0.0/16 via 02:00:00:00:00:01 port 0\n",
                   ["--dst-ip", "198.18.0.1", "--flows", "1000", "--vary", "daddr"], []),
        "checksum-16": ("checksum", "repeat 16\n", [], []),
        "memload-16M": ("memload", None, THOUSAND_FLOWS, [f"ml_area={(16 << 20) // 64}"]),
        "chain": ("chain:firewall,macswap", "".join(f"firewall {line}\n" for line in FIREWALL_RULES.splitlines()),
                  MIX, []),
    }


def trial(label: str, args: argparse.Namespace, place: Place) -> dict:
    nf, rules_text, traffic, sizes = subjects()[label]
    rules = None
    if rules_text:
        rules = place.folder / f"{label}.rules"
        rules.write_text(rules_text)
    result = measure(nf, traffic, str(rules) if rules else None, args.frames, args.repeat, sizes)
    return {"subject": label, "nf": nf, "native_ns": result["native_ns_per_frame"],
            "xdp_ns": result["xdp_ns_per_frame"], "verdicts": result["verdicts"], "frames": result["frames"],
            **{key: result[f"{key}_per_frame"] for key in ("native_warm_ns", "xdp_cold_ns", "xdp_warm_ns")}}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for label in dict.fromkeys(s["subject"] for s in samples):
        mine = [s for s in samples if s["subject"] == label]
        row = {"subject": label, "rounds": len(mine)}
        for side in ("native_ns", "xdp_ns"):
            values = [s[side] for s in mine]
            added = [v - y for v, y in beside_yardstick(samples, mine, side, YARDSTICK)]
            row[side] = round(statistics.median(values), 1)
            row[f"{side}_stdev"] = round(statistics.stdev(values), 1) if len(values) > 1 else 0.0
            row[f"{side}_over_macswap"] = round(statistics.median(added), 1) if added else None
        rows.append(row)
    return rows


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--frames", type=int, default=1024, help="frames of each mix")
    parser.add_argument("--repeat", type=int, default=200, help="timed passes over them per side")
    parser.add_argument("--subjects", default=",".join(subjects()), help="a subset of " + ", ".join(subjects()))


def labels(args: argparse.Namespace) -> list[str]:
    return [s for s in args.subjects.split(",") if s]


def wrong(args: argparse.Namespace) -> str | None:
    if any(s not in subjects() for s in labels(args)) or YARDSTICK not in labels(args):
        return f"subjects are {', '.join(subjects())} ({YARDSTICK}, the yardstick, always among them)"
    return None


STUDY = RoundsStudy(
    NAME, "nf_cost", subjects=labels, trial=trial, summarise=summarise, options=options, check=wrong, seconds=None,
    line=lambda s: f"{s['subject']:13s}: native {s['native_ns']:8.1f} ns, xdp {s['xdp_ns']:8.1f} ns per frame",
    report=lambda row: f"{row['subject']:13s}: native {row['native_ns']} ns (+{row['native_ns_over_macswap']} over "
                       f"macswap), xdp {row['xdp_ns']} ns (+{row['xdp_ns_over_macswap']})",
    fields=lambda args: {"yardstick": YARDSTICK, "frames": args.frames, "repeat": args.repeat,
                         "subjects": {k: {"nf": v[0], "rules": v[1], "traffic": v[2], "map_sizes": v[3]}
                                      for k, v in subjects().items() if k in labels(args)}})
add_arguments, run = STUDY.add_arguments, STUDY.run

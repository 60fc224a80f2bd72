"""The ways to send without live frames, side by side on the same veth in the same run, beside live frames where the
kernel runs them: what each puts out from one core, and what each costs the DUT per frame.

Subjects: xnf-gen's three senders (live frames; tc, its tc program making each seed frame into up to 128; socket, a
packet socket with every frame's headers built by a test run of the program) and, from xnf-sender-ref, the other
ways user space can send, at their best (one fixed frame written once, nothing built per frame: sendmmsg on a packet
socket, a TPACKET_V2 transmit ring, an AF_XDP socket's transmit ring in copy mode). All send 64-byte frames.

Set-up: one `pair` topology kept over the rounds; an XDP_DROP sink (bpf/xnf_sink.bpf.c) on dut0, whose receive runs
in threaded NAPI pinned to core 1; every sender pinned to core 0, which then does nothing but send. Counted: frames
the sink received (veth's rx_xdp_drops), the same counter for every subject.

Two trials per subject and round:
- unpaced: what the sender puts out from core 0 alone ("mpps", and core 0's busy time per frame);
- paced at --rate (below what every sender reaches): the DUT core's busy time per frame. A frame that arrives as an
  skb (every sender here but live frames) is copied by veth into a page before XDP sees it: that copy is the DUT's
  extra cost, and a lab measuring with such a sender charges it to the NF ("dut_extra_ns": the DUT's cost beside
  live frames', same round).

    xnf bench run senders [--rounds 3] [--seconds 2] [--rate 200000] [--out results/]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
from pathlib import Path

from xnf import build, kernel
from xnf.bench.study import Place, RoundsStudy
from xnf.lab import cpu, netns, veth_stats
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.generator import Generator, flat_out
from xnf.lab.rounds import median_difference, median_ratio
from xnf.lab.topology import Topology

NAME = "senders"
DESCRIPTION = ("the ways to send without live frames (xnf-gen's tc and socket senders, sendmmsg, a TPACKET ring, "
               "AF_XDP copy mode) beside live frames, same veth, same run: rate from one core and the DUT's cost "
               "per frame")
GEN_SENDERS = ("live", "tc", "socket")
REFERENCES = ("mmsg", "tpacket", "afxdp")
YARDSTICK = "socket"    # the sender xnf-gen took without live frames before the tc sender
SIZE = 64


def subjects(args: argparse.Namespace) -> list[tuple[str, str]]:
    """(subject, trial): every sender unpaced; xnf-gen's senders paced too. Live frames where the kernel runs them."""
    found = [s for s in GEN_SENDERS if s != "live" or kernel.has("live_frames")]
    return [(s, "unpaced") for s in found + [f"ref-{r}" for r in REFERENCES]] + [(s, "paced") for s in found]


def _send(t: Topology, subject: str, trial: str, args: argparse.Namespace) -> float:
    """Runs the subject; returns the seconds it sent for."""
    link = t.links[0]
    if subject.startswith("ref-"):
        out = t.run(t.gen_ns, [str(build.tool_binary("xnf-sender-ref")), "--iface", link.gen_if, "--dst-mac",
                               link.dut_mac, "--how", subject.removeprefix("ref-"), "--core", str(GEN_CORE),
                               "--duration", str(args.seconds)], check=True)
        return json.loads(out.stdout)["seconds"]
    rate = args.rate if trial == "paced" else 0
    options = flat_out(args.seconds, GEN_CORE) if not rate else ["--duration", str(args.seconds), "--rate", str(rate)]
    summary = Generator(t).run(*options, "--sender", subject, "--size", str(SIZE)).summary
    return summary["seconds"]


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    sender, kind = subject
    t = place.lab
    rx0, cpu0 = veth_stats.read(t.dut_ns, "dut0"), cpu.snapshot()
    seconds = _send(t, sender, kind, args)
    rx1, usage = veth_stats.read(t.dut_ns, "dut0"), cpu.split(cpu0, cpu.snapshot())
    delivered = rx1["rx_xdp_drops"] - rx0["rx_xdp_drops"]
    per_frame = {name: usage[core]["busy"] / delivered * 1e9 if delivered else 0.0
                 for name, core in (("gen_core_ns", GEN_CORE), ("dut_core_ns", DUT_CORE))}
    return {"subject": sender, "trial": kind, "mpps": delivered / seconds / 1e6, "delivered": delivered,
            "seconds": seconds, **per_frame, "cpu": usage}


@contextlib.contextmanager
def lab(args: argparse.Namespace, folder: Path):
    with Topology("pair", gen_xdp=None) as t:
        netns.attach_own_xdp(t.dut_ns, "dut0", build.bpf_object("xnf_sink"))
        t.pin_dut_receive(DUT_CORE)
        yield t


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for kind in ("unpaced", "paced"):
        mine = [s for s in samples if s["trial"] == kind]
        for subject in dict.fromkeys(s["subject"] for s in mine):
            group = [s for s in mine if s["subject"] == subject]
            row = {"subject": subject, "trial": kind, "mpps": statistics.median(g["mpps"] for g in group),
                   "gen_core_ns": statistics.median(g["gen_core_ns"] for g in group),
                   "dut_core_ns": statistics.median(g["dut_core_ns"] for g in group), "rounds": len(group)}
            if kind == "unpaced":
                row[f"of_{YARDSTICK}"] = median_ratio(mine, group, "mpps", YARDSTICK)
            elif any(s["subject"] == "live" for s in mine):
                row["dut_extra_ns"] = median_difference(mine, group, "dut_core_ns", "live")
            rows.append(row)
    return rows


def _report(row: dict) -> str:
    if row["trial"] == "unpaced":
        return (f"{row['subject']:12s} unpaced {row['mpps']:6.2f} Mpps from one core ({row[f'of_{YARDSTICK}']:.2f}x "
                f"{YARDSTICK}; {row['gen_core_ns']:.0f} ns of its core a frame)")
    extra = f", {row['dut_extra_ns']:+.0f} ns beside live frames" if "dut_extra_ns" in row else ""
    return f"{row['subject']:12s} paced   the DUT's core {row['dut_core_ns']:.0f} ns a frame{extra}"


def options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rate", type=float, default=200000.0,
                        help="frames per second of the paced trials, below what every sender reaches")


STUDY = RoundsStudy(
    NAME, "senders", rounds=3, seconds=2.0, options=options, lab=lab, trial=trial, subjects=subjects,
    check=lambda args: None if args.rate > 0 else "--rate above 0",
    summarise=summarise,
    line=lambda s: f"{s['subject']:12s} {s['trial']:7s} {s['mpps']:6.2f} Mpps, generator core "
                   f"{s['gen_core_ns']:.0f} ns, DUT core {s['dut_core_ns']:.0f} ns a frame",
    report=_report,
    fields=lambda args: {"frame_size": SIZE, "generator_core": GEN_CORE, "dut_core": DUT_CORE,
                         "paced_rate_pps": args.rate, "yardstick": YARDSTICK})
add_arguments, run = STUDY.add_arguments, STUDY.run

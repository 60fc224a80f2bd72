"""AF_PACKET against AF_XDP and XDP on receive, per core (the packet-I/O studies' "AF_PACKET V2/V3 receives about a
million frames a second per core").

Each subject receives and drops 64-byte frames that xnf-gen sends flat out from core 0, with all of the DUT's work
on core 1: the DUT's veth receive runs in a NAPI thread pinned there (threaded NAPI), and so does the user-space
reader or worker. The frames are addressed to a host the DUT does not have (198.18.0.99), so after AF_PACKET's tap
the stack drops them at once, as it would traffic for another host.
  af_packet-v2   xnf-afpacket-ref, TPACKET_V2 ring (tools/afpacket-ref)
  af_packet-v3   xnf-afpacket-ref, TPACKET_V3 ring
  af_xdp         xnf's drop NF in afxdp-poll mode (the worker on core 1, sleeping in poll() as AF_PACKET's reader
                 does: a spinning one would take the core from the NAPI thread that feeds it)
  xdp            xnf's drop NF in XDP
The rate is what the subject received (read from the ring, or counted by the NF's verdict) per second of the flood;
core 1's busy share says whether it was the limit. The yardstick is xdp in the same round.

    xnf bench run af-packet [--rounds 5] [--seconds 2]
"""

from __future__ import annotations

import argparse
import json
import statistics

from xnf import build
from xnf.bench.study import Place, RoundsStudy
from xnf.errors import XnfError
from xnf.lab import netns
from xnf.lab.rounds import rate_rows
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.measure import KEPT_BACK
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "af-packet"
DESCRIPTION = "AF_PACKET (TPACKET_V2 and V3) against AF_XDP and XDP on receive, all of the DUT's work on one core"
SUBJECTS = ["af_packet-v2", "af_packet-v3", "af_xdp", "xdp"]
YARDSTICK = "xdp"
ELSEWHERE = "198.18.0.99"   # a host the DUT does not have: the stack drops what AF_PACKET let through
# The worker shares core 1 with the receive's NAPI thread: a worker that spins (afxdp) takes the core from the very
# receive that feeds it; one that sleeps in poll() when its ring is empty leaves it the core, as AF_PACKET's does.
AF_XDP_MODE = "afxdp-poll"


def _reader(t: Topology, version: int):
    proc = t.spawn(t.dut_ns, [str(build.tool_binary("xnf-afpacket-ref")), "--iface", t.links[0].dut_if,
                              "--version", str(version), "--core", str(DUT_CORE)])
    line = proc.stdout.readline()
    if "ring on" not in line:
        raise XnfError(f"xnf-afpacket-ref did not start: {proc.stderr.read().strip()}")
    return proc


def _stop_reader(proc) -> dict:
    proc.terminate()
    out, _ = proc.communicate(timeout=10)
    return json.loads(out.strip().splitlines()[-1])


def trial(label: str, args: argparse.Namespace, place: Place) -> dict:
    seconds = args.seconds
    with Topology("pair", gen_xdp=None) as t:
        dut = t.links[0].dut_if
        if label.startswith("af_packet"):
            netns.run(t.dut_ns, ["ethtool", "-K", dut, "gro", "on"])   # threaded NAPI on veth needs GRO or XDP
            t.pin_dut_receive(DUT_CORE)
            proc = _reader(t, int(label[-1]))
            run = flood(t, seconds, GEN_CORE, ["--dst-ip", ELSEWHERE], completed=lambda: 0)
            got = _stop_reader(proc)
            received, kernel_drops = got["frames"], got["kernel_drops"]
        else:
            mode = AF_XDP_MODE if label == "af_xdp" else "xdp"
            nf = NfInstance.start(t, "drop", mode, t.dut_ifaces, extra=["--cores", str(DUT_CORE)] if mode != "xdp"
                                  else [])
            t.pin_dut_receive(DUT_CORE)
            counted = (lambda: sum(v["packets"] for k, v in nf.stats().items() if k in KEPT_BACK))
            run = flood(t, seconds, GEN_CORE, ["--dst-ip", ELSEWHERE], completed=counted)
            nf.stop()
            received, kernel_drops = run.returned, None
    return {"subject": label, "sent": run.sent, "received": received, "kernel_drops": kernel_drops,
            "seconds": round(run.seconds, 4), "mpps": round(run.mpps(received), 4),
            "offered_mpps": round(run.offered_mpps, 4), "core1_busy_share": run.cpu[DUT_CORE]["busy_share"],
            "core0_busy_share": run.cpu[GEN_CORE]["busy_share"]}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    """rate_rows, and the rate per busy core of core 1 (where all of the DUT's work runs)."""
    rows = rate_rows(samples, YARDSTICK, "ratio_to_xdp", ("core1_busy_share",))
    for row in rows:
        mine = [s for s in samples if s["subject"] == row["subject"]]
        row["per_core_mpps"] = round(statistics.median(s["mpps"] / max(s["core1_busy_share"], 1e-3) for s in mine), 4)
    return rows


STUDY = RoundsStudy(
    NAME, "af_packet", subjects=lambda args: SUBJECTS, trial=trial, summarise=summarise,
    line=lambda s: f"{s['subject']:13s} {s['mpps']:6.3f} Mpps received, core {DUT_CORE} "
                   f"{s['core1_busy_share']:.0%} busy",
    report=lambda row: f"{row['subject']:13s} {row['mpps']:.3f} ± {row['stdev']:.3f} Mpps ({row['per_core_mpps']:.3f} "
                       f"per busy core), {row['ratio_to_xdp']} of xdp",
    fields=lambda args: {"generator_core": GEN_CORE, "dut_core": DUT_CORE, "yardstick": YARDSTICK})
add_arguments, run = STUDY.add_arguments, STUDY.run

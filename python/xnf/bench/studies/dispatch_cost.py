"""What the dispatcher (--local) costs the traffic it does not dispatch: in software (the kernel program parses
each frame's headers and looks its protocol and port up in a table) or by queue (one bit test on the frame's rx
queue; the steering itself is the sender's choice of core on veth, a NIC's flow rule on hardware).

macswap in afxdp (worker on core 1) forwards what xnf-gen sends flat out from core 0 (64-byte UDP, 1,000
flows, none of it local); the frames that come back are counted by veth on gen0. Subjects, in rounds whose
order turns around every round:
  none       no dispatcher (the yardstick: ratios are to it, in the same round)
  software   --local udp:7777 (no frame matches: every frame is parsed and looked up)
  queue      --queues 1 --local queue:1 on a two-queue veth (every frame arrives on queue 0)
The receive path (and so the dispatcher) runs in softirq on core 0 with the generator, so its cost shows in
core 0's time per frame and, where core 0 is the limit, in the rate; veth's spread from run to run is larger
than the cost, so each trial also times the kernel program itself with BPF_PROG_RUN (xnf-xdp-cost, 1,000,000
runs, on the instance's attached program): a forwarded frame (UDP to port 9, queue 0) and a local one (UDP to
port 7777; on queue 1 for the queue dispatcher), the time the decision adds to each.

    xnf bench run dispatch [--rounds 5] [--seconds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import json
import statistics

from xnf import build
from xnf.bench.figures import mix_plots
from xnf.bench.study import Place, RoundsStudy, of_summary
from xnf.lab.rounds import beside_yardstick
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.frames import udp_frame
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "dispatch"
DESCRIPTION = "the dispatcher's cost on traffic it does not dispatch: none, software (port table), queue"
SUBJECTS = {
    "none": [],
    "software": ["--local", "udp:7777"],
    "queue": ["--queues", "1", "--local", "queue:1"],
}
YARDSTICK = "none"
GEN_TRAFFIC = ["--flows", "1000", "--vary", "sport", "--size", "64"]
LOCAL_PORT, FORWARDED_PORT = 7777, 9
PROGRAM_RUNS = 1000000


def program_ns(t: Topology, frame: bytes, queue: int) -> float:
    """The attached program's mean time on frame, over PROGRAM_RUNS runs."""
    out = t.run(t.dut_ns, [str(build.tool_binary("xnf-xdp-cost")), "--iface", "dut0", "--frame", frame.hex(),
                           "--queue", str(queue), "--repeat", str(PROGRAM_RUNS)]).stdout
    return float(json.loads(out)["ns_per_run"])


def trial(label: str, args: argparse.Namespace, place: Place) -> dict:
    t = place.lab
    nf = NfInstance.start(t, "macswap", "afxdp", t.dut_ifaces, extra=["--cores", str(DUT_CORE), *SUBJECTS[label]])
    link = t.links[0]
    try:
        run = flood(t, args.seconds, GEN_CORE, GEN_TRAFFIC)
        forwarded_ns = program_ns(t, udp_frame(link, 1234, FORWARDED_PORT, bytes(18)), 0)
        local_ns = program_ns(t, udp_frame(link, 1234, LOCAL_PORT, bytes(18)), 1 if label == "queue" else 0)
    finally:
        nf.stop()
    core0 = run.cpu[GEN_CORE]
    return {"subject": label, "sent": run.sent, "forwarded": run.returned, "seconds": round(run.seconds, 4),
            "mpps": round(run.mpps(run.returned), 4),
            "ns_per_frame": round(run.ns_per_frame(run.returned), 1) if run.returned else None,
            "core0_ns_per_frame": round(core0["busy"] / run.returned * 1e9, 1) if run.returned else None,
            "core0_busy_share": core0["busy_share"], "core1_busy_share": run.cpu[DUT_CORE]["busy_share"],
            "program_ns_forwarded": forwarded_ns, "program_ns_local": local_ns}


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for label in SUBJECTS:
        mine = [s for s in samples if s["subject"] == label]
        rate_ratio = [v / y for v, y in beside_yardstick(samples, mine, "mpps", YARDSTICK)]
        core0_extra = [v - y for v, y in beside_yardstick(samples, mine, "core0_ns_per_frame", YARDSTICK)]
        program_extra = [v - y for v, y in beside_yardstick(samples, mine, "program_ns_forwarded", YARDSTICK)]
        rows.append({"subject": label, "mpps": statistics.median(s["mpps"] for s in mine),
                     "ns_per_frame": statistics.median(s["ns_per_frame"] for s in mine),
                     "core0_ns_per_frame": statistics.median(s["core0_ns_per_frame"] for s in mine),
                     "rate_ratio_to_none": round(statistics.median(rate_ratio), 3),
                     "core0_ns_added": round(statistics.median(core0_extra), 1),
                     "program_ns_forwarded": statistics.median(s["program_ns_forwarded"] for s in mine),
                     "program_ns_added": statistics.median(program_extra),
                     "program_ns_local": statistics.median(s["program_ns_local"] for s in mine),
                     "rounds": len(mine)})
    return rows


STUDY = RoundsStudy(
    NAME, "dispatch", subjects=lambda args: list(SUBJECTS), trial=trial, summarise=summarise, seconds=3.0,
    lab=lambda args, folder: Topology("pair", queues=2, gen_xdp="drop"), plot=of_summary(mix_plots.dispatch_cost),
    line=lambda s: f"{s['subject']:8s}: {s['mpps']:6.3f} Mpps, core 0 {s['core0_ns_per_frame']} ns/frame",
    report=lambda row: f"{row['subject']:8s}: {row['mpps']:.3f} Mpps ({row['rate_ratio_to_none']} of none), core 0 "
                       f"{row['core0_ns_per_frame']} ns/frame ({row['core0_ns_added']:+} ns); program: forwarded "
                       f"{row['program_ns_forwarded']} ns ({row['program_ns_added']:+} ns), local "
                       f"{row['program_ns_local']} ns",
    fields=lambda args: {"generator_core": GEN_CORE, "dut_core": DUT_CORE, "yardstick": YARDSTICK,
                         "subjects": SUBJECTS, "traffic": GEN_TRAFFIC})
add_arguments, run = STUDY.add_arguments, STUDY.run

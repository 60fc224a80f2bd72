"""What capture (xnf dump) costs the data path: not compiled in, compiled in but off (what every user pays), and
on (every verdict captured, a reader draining the stream to /dev/null).

macswap forwards what xnf-gen sends flat out from core 0 (64-byte UDP, 1,000 flows); the frames that come back
are counted by veth on gen0. "not compiled" is macswap from a variant build with -DXNF_NO_CAPTURE (built once,
into build/variants/no-capture, before the first trial). Subjects, in rounds whose order turns around every round:
  xdp not-compiled   the yardstick of the xdp subjects (ratios are to it, in the same round)
  xdp off, xdp on
  afxdp not-compiled the yardstick of the afxdp subjects (worker on core 1)
  afxdp off, afxdp on
In xdp mode the kernel program runs in softirq on core 0 with the generator, so veth's spread hides a few
nanoseconds; each xdp trial also times the attached program with BPF_PROG_RUN (xnf-xdp-cost, 1,000,000 runs of a
forwarded frame), which shows them. "on" reports how many records the reader took and how many the ring or the
workers' queues dropped because it fell behind.

    xnf bench run capture-cost [--rounds 5] [--seconds 3] [--out DIR]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import subprocess
import sys
from pathlib import Path

from xnf import build
from xnf.bench import variants
from xnf.bench.study import Place, RoundsStudy
from xnf.errors import XnfError
from xnf.lab.rounds import median_difference, median_ratio, medians
from xnf.lab import paths
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.frames import udp_frame
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

NAME = "capture-cost"
DESCRIPTION = "what xnf dump's hook costs: not compiled, compiled but off, on (xdp and afxdp)"
MODES = paths.Modes(paths.kernel_and_user)
STATES = ("not-compiled", "off", "on")
YARDSTICK_STATE = "not-compiled"
VARIANT = "no-capture"
GEN_TRAFFIC = ["--flows", "1000", "--vary", "sport", "--size", "64"]
PROGRAM_RUNS = 1000000


def variant_binary() -> Path:
    """macswap built without the capture hook, in its own build folder (make's VARIANT_DEFINES)."""
    return variants.binaries(VARIANT, "-DXNF_NO_CAPTURE", ["xnf-macswap"])["xnf-macswap"]


def program_ns(t: Topology, frame: bytes) -> float:
    out = t.run(t.dut_ns, [str(build.tool_binary("xnf-xdp-cost")), "--iface", t.links[0].dut_if, "--frame",
                           frame.hex(), "--repeat", str(PROGRAM_RUNS)]).stdout
    return float(json.loads(out)["ns_per_run"])


def start_reader(name: str) -> subprocess.Popen:
    """xnf dump of every verdict into /dev/null, running once its capture is on."""
    reader = subprocess.Popen([sys.executable, "-m", "xnf", "dump", "--name", name, "-w", "/dev/null"],
                              stderr=subprocess.PIPE, text=True)
    first = reader.stderr.readline()
    if "capturing" not in first:
        raise XnfError(f"xnf dump did not start: {first}{reader.stderr.read()}")
    return reader


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    """The variant built first, then one pair for every trial: (topology, the variant's binary)."""
    variant = variant_binary()
    with Topology("pair", gen_xdp="drop") as t:
        yield t, variant


def trial(subject: tuple[str, str], args: argparse.Namespace, place: Place) -> dict:
    (t, variant), seconds = place.lab, args.seconds
    mode, state = subject
    extra = [] if mode == "xdp" else ["--cores", str(DUT_CORE)]
    nf = NfInstance.start(t, "macswap", mode, t.dut_ifaces, extra=extra,
                          binary=variant if state == "not-compiled" else None)
    reader = start_reader(nf.name) if state == "on" else None
    try:
        run = flood(t, seconds, GEN_CORE, GEN_TRAFFIC)
        ns = program_ns(t, udp_frame(t.links[0], 1234, 9, bytes(18))) if mode == "xdp" else None
    finally:
        nf.stop()
        captured = _reader_total(reader)
    return {"subject": f"{mode} {state}", "mode": mode, "state": state, "sent": run.sent, "forwarded": run.returned,
            "seconds": round(run.seconds, 4), "mpps": round(run.mpps(run.returned), 4),
            "ns_per_frame": round(run.ns_per_frame(run.returned), 1) if run.returned else None,
            "program_ns": ns, "captured": captured}


def _reader_total(reader: subprocess.Popen | None) -> int | None:
    if reader is None:
        return None
    _, err = reader.communicate(timeout=30)
    words = err.split(" frames captured")[0].split()
    return int(words[-1]) if words and words[-1].isdigit() else None


def summarise(samples: list[dict], args: argparse.Namespace) -> list[dict]:
    rows = []
    for mode in MODES:
        for state in STATES:
            mine = [s for s in samples if s["mode"] == mode and s["state"] == state]
            if not mine:
                continue
            yardstick = f"{mode} {YARDSTICK_STATE}"
            row = {"subject": f"{mode} {state}", **medians(mine, ("mpps",)),
                   "ratio_to_not_compiled": median_ratio(samples, mine, "mpps", yardstick),
                   **medians(mine, ("ns_per_frame",)), "rounds": len(mine)}
            if mode == "xdp":
                row.update(medians(mine, ("program_ns",)),
                           program_ns_added=median_difference(samples, mine, "program_ns", yardstick))
            rows.append(row)
    return rows


def _report(row: dict) -> str:
    return (f"{row['subject']:18s}: {row['mpps']:.3f} Mpps ({row['ratio_to_not_compiled']} of not compiled)"
            + (f", program {row['program_ns']} ns ({row['program_ns_added']:+} ns)" if "program_ns" in row else ""))


STUDY = RoundsStudy(
    NAME, "capture_cost", subjects=lambda args: [(mode, state) for mode in MODES for state in STATES], trial=trial,
    summarise=summarise, lab=_lab, seconds=3.0, report=_report,
    line=lambda s: f"{s['subject']:18s}: {s['mpps']:6.3f} Mpps, program {s['program_ns']} ns, captured {s['captured']}",
    fields=lambda args: {"generator_core": GEN_CORE, "worker_core": DUT_CORE,
                         "yardstick": f"{MODES[0]} {YARDSTICK_STATE}",
                         "yardsticks": {m: f"{m} {YARDSTICK_STATE}" for m in MODES},
                         "variant": {"name": VARIANT, "defines": "-DXNF_NO_CAPTURE"}, "traffic": GEN_TRAFFIC})
add_arguments, run = STUDY.add_arguments, STUDY.run

"""What a SYN flood leaves behind in the stateful acl (research/lab-notebook.md, 2026-11-29, "What the flood leaves
behind"): one lab with the acl in XDP on conntrack-rates' 1,000 established flows, each 2 s trial reporting the rate,
the DUT core's time per frame, the NF process's CPU time and the programs' own time per frame (the kernel's program
statistics), before and after the study's 1,000,000 SYNs, and once the flood's entries are swept (SYN_SENT's idle
time cut to 4 s).

    python3 research/scripts/flood_aftermath.py [--binary build/bin/xnf-acl]

--binary: an xnf-acl built elsewhere (a trial build in a git worktree), to compare with the current one in turns.
Run as root, nothing else on the machine meanwhile.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from xnf import control
from xnf.bench.studies import conntrack_rates as study
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab.xdp_subject import detach

SYN_SENT_S = 4
DRAINED = 5000            # entries left: the 1,000 flows and a few of the flood's
DRAIN_WAIT_S = 60


def program_runs() -> dict:
    shown = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                                      check=True).stdout)
    return {p["id"]: (p.get("name"), p.get("run_cnt", 0), p.get("run_time_ns", 0)) for p in shown
            if p.get("type") == "xdp"}


def program_ns(before: dict, after: dict) -> dict:
    ns = {}
    for pid, (name, count, spent) in after.items():
        _, count0, spent0 = before.get(pid, (name, 0, 0))
        if count - count0 > 1000:
            ns[name] = round((spent - spent0) / (count - count0), 1)
    return ns


def process_cpu_s(pid: int) -> float:
    ticks = 0
    for tid in os.listdir(f"/proc/{pid}/task"):
        fields = open(f"/proc/{pid}/task/{tid}/stat").read().rsplit(")", 1)[1].split()
        ticks += int(fields[11]) + int(fields[12])
    return ticks / os.sysconf("SC_CLK_TCK")


def trial(t: Topology, nf: NfInstance, label: str) -> None:
    cpu0, runs0 = process_cpu_s(nf.process.pid), program_runs()
    run = flood(t, 2, GEN_CORE, study._flows(study.ESTABLISHED_FLOWS, t.links[1].gen_ip),
                completed=study._arrived_at(t, 1))
    cpu1, runs1 = process_cpu_s(nf.process.pid), program_runs()
    print(f"{label}: {run.mpps(run.returned):.3f} Mpps, core {DUT_CORE} "
          f"{run.core_ns_per_frame(DUT_CORE, run.returned):.0f} ns a frame, NF process {cpu1 - cpu0:.2f} s, "
          f"programs {program_ns(runs0, runs1)} ns a frame", flush=True)


def entries(nf: NfInstance) -> int:
    return control.request_json(nf.name, "entries acl_ct")["entries"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", type=Path, help="an xnf-acl built elsewhere")
    args = parser.parse_args()
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        with tempfile.TemporaryDirectory() as folder, Topology("two-port", gen_xdp="drop") as t:
            rules = Path(folder) / "acl.rules"
            rules.write_text(f"timeout tcp_syn_sent {SYN_SENT_S}\n" + study.RULES)
            mode, extra = study.PATHS["xdp"]
            nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=str(rules), extra=extra, binary=args.binary)
            t.pin_dut_receive(DUT_CORE)
            study._establish(t)
            trial(t, nf, "before")
            for run in range(study.FLOOD_RUNS):
                flood(t, 2, GEN_CORE, study._syn_flood(t.links[1].gen_ip, run), completed=study._arrived_at(t, 1),
                      count=study.FLOOD_SYNS // study.FLOOD_RUNS)
            print(f"flood: {entries(nf):,} entries", flush=True)
            trial(t, nf, "after")
            deadline = time.monotonic() + DRAIN_WAIT_S
            while entries(nf) > DRAINED and time.monotonic() < deadline:
                time.sleep(0.5)
            print(f"swept to {entries(nf):,} entries", flush=True)
            trial(t, nf, "swept")
            detach(nf)
    finally:
        subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=0"], check=True)


if __name__ == "__main__":
    main()

"""Two builds of xnf-acl in turns on conntrack-rates' 1,000 established flows, in XDP (research/lab-notebook.md,
2026-11-29, "The verifier's paths through the tracker"): each 2 s trial reports the rate, the DUT core's time per
frame and the acl program's own time per frame (the kernel's program statistics), the builds' order turned around
every round, so that a slow spell of the host falls on both.

    python3 research/scripts/build_pairs.py --other OTHER-CHECKOUT/build/bin/xnf-acl [--rounds 6] [--stateless]

--stateless: the study's one stateless rule instead of its stateful rules. Run as root, nothing else meanwhile.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import tempfile
from pathlib import Path

from xnf.bench.studies import conntrack_rates as study
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab.xdp_subject import detach

ACL_PROGRAM = "xnf_xdp_main"   # the SDK's XDP entry point, as bpftool names it
from flood_aftermath import program_ns, program_runs   # beside this script: on its path


def trial(binary: Path | None, rules: Path) -> tuple[float, float, float]:
    """(Mpps, ns a frame of the DUT's core, ns a frame of the acl's program) for one build on a fresh lab."""
    with Topology("two-port", gen_xdp="drop") as t:
        mode, extra = study.PATHS["xdp"]
        nf = NfInstance.start(t, "acl", mode, t.dut_ifaces, rules=str(rules), extra=extra, binary=binary)
        t.pin_dut_receive(DUT_CORE)
        study._establish(t)
        runs0 = program_runs()
        run = flood(t, 2, GEN_CORE, study._flows(study.ESTABLISHED_FLOWS, t.links[1].gen_ip),
                    completed=study._arrived_at(t, 1))
        programs = program_ns(runs0, program_runs())
        detach(nf)
    acl_ns = programs.get(ACL_PROGRAM, float("nan"))
    return run.mpps(run.returned), run.core_ns_per_frame(DUT_CORE, run.returned), acl_ns


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--other", type=Path, required=True, help="the xnf-acl to compare with this checkout's")
    parser.add_argument("--rounds", type=int, default=6)
    parser.add_argument("--stateless", action="store_true")
    args = parser.parse_args()
    builds = {"this": None, "other": args.other}
    seen: dict[str, list[tuple[float, float, float]]] = {name: [] for name in builds}
    subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=1"], check=True)
    try:
        with tempfile.TemporaryDirectory() as folder:
            rules = Path(folder) / "acl.rules"
            rules.write_text(study.STATELESS_RULES if args.stateless else study.RULES)
            for r in range(args.rounds):
                order = list(builds) if r % 2 == 0 else list(reversed(builds))
                for name in order:
                    mpps, core_ns, acl_ns = trial(builds[name], rules)
                    seen[name].append((mpps, core_ns, acl_ns))
                    print(f"round {r + 1} {name}: {mpps:.3f} Mpps, core {core_ns:.0f} ns a frame, "
                          f"program {acl_ns:.0f} ns a frame", flush=True)
    finally:
        subprocess.run(["sysctl", "-qw", "kernel.bpf_stats_enabled=0"], check=True)
    for name, rows in seen.items():
        print(f"{name}: median {statistics.median(r[0] for r in rows):.3f} Mpps, core "
              f"{statistics.median(r[1] for r in rows):.0f} ns, program {statistics.median(r[2] for r in rows):.0f} ns")
    this_over_other = [a[2] - b[2] for a, b in zip(seen["this"], seen["other"])]
    print(f"program this - other, by round: {[round(d) for d in this_over_other]} ns")


if __name__ == "__main__":
    main()

"""Experiment: yardstick flat-out trials in one topology, each between two 100 ms speed probes of core 0."""
from pathlib import Path
import json, sys, subprocess, time
from xnf.model import lab_rate
from xnf.bench.studies.xdp_overhead import attach, detach
from xnf.lab import environment, quiet_core
from xnf.lab.measure import run_trial, TrafficSpec
from xnf.lab.topology import Topology
SPEED = Path(__file__).with_name('speed')   # cc -O2 speed.c -o speed, beside this script
tsc = environment._tsc_hz()
quiet = quiet_core.quiet({1}); quiet.__enter__()
def speed(core):
    return float(subprocess.run([str(SPEED), str(core), '100'], capture_output=True, text=True).stdout)
n = int(sys.argv[1])
with Topology("pair", gen_xdp=None) as t:
    h = attach(t, ("object", "hand_macswap"))
    try:
        for k in range(n):
            a0, a1 = speed(0), speed(1)
            tr = run_trial(t, 0, 0.5, TrafficSpec(), tsc)
            b0, b1 = speed(0), speed(1)
            print(json.dumps({'t': round(time.time(), 1), 's0': [a0, b0], 's1': [a1, b1], 'mpps': round(tr.achieved_pps * (1 - tr.offered_loss_ratio) / 1e6, 3)}), flush=True)
    finally:
        detach(h)

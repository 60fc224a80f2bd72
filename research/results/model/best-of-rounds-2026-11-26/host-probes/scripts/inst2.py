"""Experiment: flat-out trials within one instance, each after a 100 ms speed probe of core 0 (ALU, 4 chains)."""
from pathlib import Path
import json, sys, subprocess
from xnf.model import cases, lab_rate, lab_paths
from xnf.lab import environment, quiet_core, placement
from xnf.lab.measure import run_trial
SPEED = Path(__file__).with_name('speed')   # cc -O2 speed.c -o speed, beside this script
tsc = environment._tsc_hz()
quiet = quiet_core.quiet({1}); quiet.__enter__()
def speed(core):
    return float(subprocess.run([str(SPEED), str(core), '100'], capture_output=True, text=True).stdout)
case = cases.find(sys.argv[1]); n = int(sys.argv[2]); paths = sys.argv[3].split(','); per = int(sys.argv[4])
for i in range(n):
    for key in paths:
        if key == 'yardstick':
            out = []
            for k in range(per):
                s = speed(0); out.append((s, round(lab_rate.yardstick(0.5, tsc), 2)))
            print(json.dumps({'i': i, 'key': key, 'rates': out}), flush=True); continue
        with lab_rate._running(case, case.nf, lab_paths.PATHS[key].run_options(), None) as (t, inst, traffic):
            lab_rate._warm_up(t, traffic)
            out = []
            for k in range(per):
                s = speed(0)
                tr = run_trial(t, 0, 0.5, traffic, tsc, nf=inst)
                out.append((s, round(placement.round_trip_ns()), round(tr.achieved_pps * (1 - tr.offered_loss_ratio) / 1e6, 2)))
            print(json.dumps({'i': i, 'key': key, 'rates': out}), flush=True)

"""Experiment: is the slow state per NF instance? Flat-out trials repeated within one instance, several instances."""
import json, sys, statistics as st
from xnf.model import cases, lab_rate, lab_paths
from xnf.lab import environment, quiet_core, placement
from xnf.lab.measure import run_trial
tsc = environment._tsc_hz()
quiet = quiet_core.quiet({1}); quiet.__enter__()
case = cases.find(sys.argv[1]); n = int(sys.argv[2]); paths = sys.argv[3].split(','); per = int(sys.argv[4])
for i in range(n):
    for key in paths:
        with lab_rate._running(case, case.nf, lab_paths.PATHS[key].run_options(), None) as (t, inst, traffic):
            lab_rate._warm_up(t, traffic)
            rates = []
            for k in range(per):
                tr = run_trial(t, 0, 0.5, traffic, tsc, nf=inst)
                rates.append(round(tr.achieved_pps * (1 - tr.offered_loss_ratio) / 1e6, 2))
            print(json.dumps({'i': i, 'key': key, 'rt': round(placement.round_trip_ns()), 'rates': rates}), flush=True)

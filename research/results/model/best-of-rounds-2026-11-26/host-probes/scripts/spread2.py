"""Experiment: the trials of each RFC 2544 search on the two-core paths (offered, achieved, loss)."""
import json, sys
from xnf.model import cases, lab_rate, lab_paths
from xnf.lab import environment, quiet_core
kept = []
orig = lab_rate.measure_throughput
def spy(*a, **k):
    r = orig(*a, **k); kept.append(r); return r
lab_rate.measure_throughput = spy
tsc = environment._tsc_hz()
quiet = quiet_core.quiet({1}); quiet.__enter__()
case = cases.find(sys.argv[1]); n = int(sys.argv[2]); paths = sys.argv[3].split(',')
for i in range(n):
    for key in paths:
        kept.clear()
        r = lab_rate.measure(case, case.nf, lab_paths.PATHS[key].run_options(), 0.5, tsc)
        trials = [(round(t.offered_pps / 1e6, 2), round(t.achieved_pps / 1e6, 2), round(t.offered_loss_ratio * 100, 2), t.send_errors, t.lost)
                  for t in kept[0].runs[0].trials]
        print(json.dumps({'i': i, 'key': key, 'mpps': round(r['mpps'], 3), 'rt': r['round_trip_ns'], 'trials': trials}), flush=True)

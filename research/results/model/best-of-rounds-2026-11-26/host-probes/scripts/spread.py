"""Experiment: repeat one case on the two-core paths; per measurement the steal time and context switches."""
import json, sys, time
from xnf.model import cases, lab_rate, lab_paths
from xnf.lab import cpu, environment

def stat():
    s = cpu.snapshot()
    ctxt = int([l for l in open('/proc/stat') if l.startswith('ctxt')][0].split()[1])
    return s, ctxt

from xnf.lab import quiet_core
tsc = environment._tsc_hz()
quiet = quiet_core.quiet({1}); quiet.__enter__()
case = cases.find(sys.argv[1]); n = int(sys.argv[2]); paths = sys.argv[3].split(',')
for i in range(n):
    for key in ['yardstick'] + paths:
        s0, c0 = stat(); t0 = time.time()
        if key == 'yardstick':
            r = {'mpps': lab_rate.yardstick(0.5, tsc)}
        else:
            r = lab_rate.measure(case, case.nf, lab_paths.PATHS[key].run_options(), 0.5, tsc)
        s1, c1 = stat()
        d = {c: {f: (s1.per_core[c][f] - s0.per_core[c][f]) for f in ('steal', 'idle', 'softirq', 'user', 'system')} for c in s1.per_core}
        print(json.dumps({'i': i, 'key': key, 'mpps': round(r['mpps'], 3), 'rt': r.get('round_trip_ns'), 'wall': round(time.time() - t0, 1),
                          'steal': [d[c]['steal'] for c in sorted(d)], 'ctxt': c1 - c0}), flush=True)

"""Reading memcaslap's report: totals from its last run line, latency from its total log2 histogram."""

import pytest

from xnf.errors import XnfError
from xnf.lab.local_app import parse_memcaslap

REPORT = """\
Total Statistics
Type     Time(s)  Ops          TPS(ops/s)   Net(M/s)   Get_miss   Min(us)  Max(us)    Avg(us)    Std_dev    Geo_dist
Period   2        237916       118958       123.4      0          12       4729       66         58.65      60.23
Global   2        237916       118958       123.4      3          12       4729       66         58.65      60.23

Total Statistics (242745 events)
   Min:        12
   Max:      4578
   Avg:        65
   Geo:     58.40
   Std:     68.75
   Log2 Dist:
       4:      617    19556   122025    88258
       8:    11665      280      260       36
      12:       17       31

cmd_get: 218474

Run time: 2.0s Ops: 242753 TPS: 121356 Net_rate: 135.8M/s
"""


def test_totals_and_percentiles():
    load = parse_memcaslap(REPORT)
    assert (load.seconds, load.ops, load.tps, load.get_misses) == (2.0, 242753, 121356.0, 3)
    # 242,745 samples: 50 % fall by the 64-127 us bucket, 99 % by 256-511 us (upper edges reported)
    assert load.latency_us == {"min": 12.0, "mean": 65.0, "max": 4578.0, "p50": 128, "p90": 256, "p99": 512}


def test_a_report_without_totals_is_an_error():
    with pytest.raises(XnfError, match="memcaslap said nothing measurable"):
        parse_memcaslap("servers: 10.0.0.1:11211\nconnection refused\n")

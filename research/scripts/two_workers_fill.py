"""An open lead (research/lab-notebook.md, 2026-11-30, "Two AF_XDP workers, one stops"): macswap in AF_XDP on a pair
of two queues, a worker per queue, 20,000 frames over 64 flows at 20,000 a second; prints what came back and each
worker's counters. On a host where tests/integration/test_live_tx.py's two-queue case fails, one worker's socket
stops after two to four thousand frames, the kernel finding its fill ring empty (rx_fill_ring_empty) for the rest,
while the worker's own fill_empty stays 0. Run as root, nothing else meanwhile; options after the script go to `xnf run`:

    python3 research/scripts/two_workers_fill.py --tx-path xsk --queues 2 --workers 2 [--batch 32] [--ring-size 1024]
"""

from __future__ import annotations

import sys

from xnf import control
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology


def main(options: list[str]) -> None:
    with Topology("pair", queues=2, gen_xdp=None) as t:
        t.run(t.gen_ns, ["ethtool", "-K", "gen0", "gro", "on"])   # dut0 takes XDP frames before the receiver is on
        nf = NfInstance.start(t, "macswap", "afxdp", t.dut_ifaces, extra=options)
        out = Generator(t, receive_on=0).run("--count", "20000", "--flows", "64", "--rate", "20000",
                                             "--cores", "0,1").summary
        print({k: out[k] for k in ("sent", "received", "lost", "reordered")})
        for worker in control.request_json(nf.name, "stats")["workers"]:
            print(worker["worker"], {k: v for k, v in worker.items() if isinstance(v, int) and v and k != "worker"})


if __name__ == "__main__":
    main(sys.argv[1:] or ["--tx-path", "live", "--queues", "2", "--workers", "2"])

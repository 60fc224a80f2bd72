"""What does the job on the DUT's port in the studies that set xnf beside other data planes (afxdp-modes,
live-tx): an xnf NF in a mode, xnf's minimal AF_XDP reference loop, or DPDK's testpmd. One protocol: start it on
a topology, read how many frames it dropped, stop it (returning its own receive count where xnf's counters are not
the ones that count); and one measurement of it under flat-out traffic."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from xnf import build, control
from xnf.errors import XnfError
from xnf.lab import nf_setup
from xnf.lab.cores import DUT_CORE, GEN_CORE
from xnf.lab.flood import Flood, flood
from xnf.lab.nf_process import NfInstance
from xnf.lab.testpmd import Testpmd
from xnf.lab.topology import Topology

XNF, REFERENCE, TESTPMD = "xnf", "reference", "testpmd"


@dataclass
class Subject:
    label: str
    nf: str                          # the NF, or the job of the reference loop and testpmd (macswap, drop ...)
    mode: str | None = None          # xnf's mode (None for the others)
    extra: list[str] = field(default_factory=list)
    kind: str = XNF
    testpmd_driver: str = "af_xdp"
    busy_budget: int | None = 0
    # The rules and options the NF needs on the topology it runs on (None: none)
    setup: Callable[[Topology], nf_setup.NfSetup] | None = None
    handle: object = None

    @property
    def forwards(self) -> bool:
        """Whether its frames come back to the generator (else they are dropped and counted where they fell)."""
        return self.nf not in ("drop", "swap_drop")

    def start(self, t: Topology, folder: Path) -> None:
        if self.kind == TESTPMD:
            self.handle = Testpmd.start(t, self.nf, self.testpmd_driver, "dut0", core=DUT_CORE,
                                        control_core=GEN_CORE, busy_budget=self.busy_budget)
        elif self.kind == REFERENCE:
            self.handle = t.spawn(t.dut_ns, [str(build.tool_binary("xnf-afxdp-ref")), "--iface", "dut0", "--job",
                                             self.nf, "--core", str(DUT_CORE)])
            if "xnf-afxdp-ref" not in self.handle.stdout.readline():
                raise XnfError(f"xnf-afxdp-ref did not start: {self.handle.stderr.read()}")
        else:
            setup = self.setup(t) if self.setup else nf_setup.NfSetup()
            rules = None
            if setup.rules:
                rules = folder / f"{self.nf}.rules"
                rules.write_text(setup.rules)
            extra = setup.extra + (["--cores", str(DUT_CORE)] + self.extra if self.mode != "xdp" else [])
            self.handle = NfInstance.start(t, self.nf, self.mode, t.dut_ifaces, rules=str(rules) if rules else None,
                                           extra=extra)

    def _stats(self) -> dict:
        return control.request_json(self.handle.name, "stats")

    def dropped(self) -> int:
        return self._stats()["verdicts"]["drop"]["packets"] if self.kind == XNF else 0

    def workers(self) -> list[dict]:
        return self._stats().get("workers", []) if self.kind == XNF and self.mode != "xdp" else []

    def stop(self) -> int:
        """Stops it; returns the reference loop's or testpmd's own receive count (0 for xnf)."""
        if self.kind == TESTPMD:
            return self.handle.stop().rx_packets
        if self.kind == REFERENCE:
            self.handle.terminate()
            out, _ = self.handle.communicate(timeout=10)
            return json.loads(out.strip().splitlines()[-1])["rx_packets"]
        self.handle.stop()
        return 0


@dataclass
class Flooded:
    run: Flood
    done: int                        # frames the subject completed: forwarded back, or dropped
    workers: list[dict]              # xnf's workers' counters at the end (AF_XDP modes)


def flooded(t: Topology, subject: Subject, seconds: float, traffic: list[str], folder: Path) -> Flooded:
    """The subject under xnf-gen's flat-out traffic from the generator's core for seconds."""
    subject.start(t, folder)
    try:
        drops0 = subject.dropped()
        run = flood(t, seconds, GEN_CORE, traffic)
        drops1, workers = subject.dropped(), subject.workers()
    finally:
        own_rx = subject.stop()
    if subject.forwards:
        done = run.returned
    else:
        done = own_rx if subject.kind != XNF else drops1 - drops0
    return Flooded(run, done, workers)

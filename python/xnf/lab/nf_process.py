"""An NF instance running inside a topology's namespace, driven through its control socket."""

from __future__ import annotations

import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from xnf import argv_words, chain, contract, control, instance, programs
from xnf.errors import XnfError
from xnf.lab import netns, pace
from xnf.lab.topology import Topology

START_TIMEOUT_S = 20.0


@dataclass
class NfInstance:
    topology: Topology
    nf: str
    name: str
    process: subprocess.Popen

    @classmethod
    def start(cls, topology: Topology, nf: str, mode: str | None, ifaces: list[str], rules: str | None = None,
              name: str | None = None, ns: str | None = None, extra: list[str] | None = None,
              binary: Path | None = None) -> "NfInstance":
        """Starts the NF and returns once its control socket answers; raises with its stderr if it exits.
        mode: None for a chain whose members say where they run (chain:firewall@xdp,lb@afxdp).
        extra: more options for the NF binary (AF_XDP settings, for instance).
        binary: another build of the NF (a benchmark's variant) instead of the usual one."""
        name = name or f"{topology.dut_ns}-{nf}".replace(":", "-").replace(",", "-").replace("@", "-")
        options = instance.run_options(name, mode, ifaces, rules) + (extra or [])
        given = mode or argv_words.option_value(options, instance.option("mode"))
        if given and contract.mode(given)["hook"] == "tc" and topology.FEEDS_XDP_FRAMES:
            options += _tc_on_a_generator(ns or topology.dut_ns, ifaces, options)
        argv = [str(binary or programs.nf_binary(nf)), "run", *chain.run_arguments(nf, options)]
        proc = topology.spawn(ns or topology.dut_ns, argv)
        started = cls(topology, nf, name, proc)
        topology.on_teardown(started._remove_stale_socket)
        started._wait_ready()
        return started

    def _wait_ready(self) -> None:
        instance.wait_until_answering(self.name, self.process, pace.timeout(START_TIMEOUT_S),
                                      lambda: self.process.stderr.read().strip())

    def _remove_stale_socket(self) -> None:
        """A killed instance cannot remove its control socket and owner record; this does, once it is gone."""
        if self.process.poll() is not None:
            control.remove_records(self.name)

    def __enter__(self) -> "NfInstance":
        return self

    def __exit__(self, *_) -> None:
        """Stops the NF however the block ended (its exit code is the caller's to check with stop())."""
        try:
            self.stop()
        except XnfError:
            pass   # killed after the timeout: the topology's teardown removes what it left

    def stats(self) -> dict:
        return control.request_json(self.name, "stats")["verdicts"]

    def request(self, line: str) -> str:
        return control.request(self.name, line)

    def stop(self, sig: int = signal.SIGINT, timeout_s: float = 10.0) -> int:
        """Signals the NF and waits; returns its exit code (killed after timeout_s, and then said)."""
        if self.process.poll() is None and not instance.stop(self.process.pid, self.process, sig, timeout_s):
            raise XnfError(f"{self.nf} did not stop within {timeout_s:.0f} s of signal {sig}")
        return self.process.returncode


def _tc_on_a_generator(ns: str, ifaces: list[str], options: list[str]) -> list[str]:
    """What an NF at tc needs in front of xnf-gen: GRO on its ports (a veth without an XDP program takes XDP frames
    by GRO alone) and, unless the caller chose, frames sent out of a port (--tc-send device), where the generator
    side's XDP sink sees them; bpf_redirect_peer would hand them to the peer's stack past it."""
    for iface in ifaces:
        netns.run(ns, ["ethtool", "-K", iface, "gro", "on"])
    return [] if "--tc-send" in options else ["--tc-send", "device"]

"""xnf-gen, and its reference xnf-gen-ref, as the lab, the benchmarks and the tests drive them: the one place
that writes their command line and reads their summary (the counterpart of NfInstance for the DUT)."""

from __future__ import annotations

import json
import subprocess
from dataclasses import dataclass, field

from xnf import build
from xnf.errors import XnfError
from xnf.lab.topology import Topology


@dataclass
class GenRun:
    summary: dict           # the JSON summary the generator printed; empty when it failed
    stderr: str
    returncode: int


def flat_out(seconds: float, cores: int | str) -> list[str]:
    """Options for an unpaced run of seconds on cores, in one-second kernel calls (the benchmarks' flood)."""
    return ["--duration", str(seconds), "--cores", str(cores), "--call-ms", "1000"]


@dataclass
class Generator:
    """Sends from the generator side of topology.links[link] to the DUT's MAC address. receive_on: the link on
    whose generator side xnf-gen's receiver counts what comes back (--rx-iface; it needs the interface free of
    XDP: a topology with gen_xdp=None)."""
    topology: Topology
    link: int = 0
    receive_on: int | None = None
    program: str = "xnf-gen"
    options: list[str] = field(default_factory=list)  # given to every run, before the run's own

    def argv(self, *options: str) -> list[str]:
        tx = self.topology.links[self.link]
        chosen = self.options + list(options)
        defaults = ["--iface", tx.gen_if, "--dst-mac", tx.dut_mac]
        if self.receive_on is not None:
            defaults += ["--rx-iface", self.topology.links[self.receive_on].gen_if]
        return [str(build.tool_binary(self.program)), *unless_chosen(defaults, chosen), *chosen]

    def run(self, *options: str, check: bool = True, timeout: float | None = None) -> GenRun:
        """Runs to the end; raises with the generator's own message if it fails (unless check is False)."""
        result = self.topology.run(self.topology.gen_ns, self.argv(*options), check=False,
                                   timeout=timeout or _timeout(options))
        if result.returncode != 0:
            if check:
                raise XnfError(f"{self.program} failed: {result.stderr.strip()}")
            return GenRun({}, result.stderr, result.returncode)
        last = result.stdout.strip().splitlines()[-1]
        return GenRun(json.loads(last), result.stderr, result.returncode)

    def spawn(self, *options: str) -> subprocess.Popen:
        """Starts in the background (stopped at the topology's teardown at the latest)."""
        return self.topology.spawn(self.topology.gen_ns, self.argv(*options))


def unless_chosen(defaults: list[str], chosen: list[str]) -> list[str]:
    """The defaults (option, value pairs) that the caller did not choose: xnf-gen refuses an option given twice."""
    named = {word.split("=", 1)[0] for word in chosen if word.startswith("--")}
    pairs = zip(defaults[::2], defaults[1::2])
    return [word for option, value in pairs if option not in named for word in (option, value)]


def _timeout(options: tuple[str, ...]) -> float:
    """Long enough for the run the options ask for, short enough that a hung generator fails the caller."""
    if "--duration" in options:
        return float(options[options.index("--duration") + 1]) + 60
    return 180

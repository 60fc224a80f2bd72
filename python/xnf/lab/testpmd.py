"""DPDK's testpmd as a baseline device under test, on a veth of a lab topology.

testpmd is the public reference the AF_XDP figures of this project are compared with: its af_xdp driver
(an AF_XDP socket in copy mode on veth, the kernel's own redirect program loaded by libxdp) and its
af_packet driver (TPACKET_V2 rings, the Linux stack's packet taps). It runs in the DUT's namespace with
its forwarding core pinned where the caller says, from Debian's dpdk-dev package, without hugepages
(--no-huge, --no-shconf, its own --file-prefix, removed at stop: nothing is left in /dev/hugepages or
/var/run/dpdk).

Jobs: "drop" is testpmd's rxonly forwarding mode (receive and free), "macswap" its macswap mode (swap the
Ethernet addresses, send back out of the same port).
"""

from __future__ import annotations

import os
import re
import selectors
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from xnf.errors import XnfError
from xnf.lab import netns
from xnf.lab.topology import Topology

BINARY = "dpdk-testpmd"
FORWARD_MODES = {"drop": "rxonly", "macswap": "macswap"}
DRIVERS = ("af_xdp", "af_packet")
INSTALL_HINT = "install it with: apt-get install dpdk-dev librte-net-af-xdp23 librte-net-af-packet23"
_READY = "Press enter to exit"
RUNTIME_DIR = Path("/var/run/dpdk")
_TOTALS = re.compile(r"Accumulated forward statistics.*?RX-packets:\s+(\d+)\s+RX-dropped:\s+(\d+)"
                     r".*?TX-packets:\s+(\d+)", re.S)


def _file_prefix(topology: Topology) -> str:
    """DPDK's runtime directory name: this topology's own, so removing it touches nobody else's."""
    return f"{topology.dut_ns}-testpmd"


def available() -> bool:
    return shutil.which(BINARY) is not None


def vdev_arg(driver: str, iface: str, busy_budget: int | None) -> str:
    """The --vdev argument for one port on iface, queue 0."""
    if driver == "af_xdp":
        arg = f"net_af_xdp0,iface={iface},start_queue=0,queue_count=1"
        # The PMD busy-polls (SO_PREFER_BUSY_POLL) by default; 0 turns that off.
        return arg if busy_budget is None else f"{arg},busy_budget={busy_budget}"
    if driver == "af_packet":
        # qdisc_bypass: frames go to the driver directly, as AF_XDP's copy-mode transmit does.
        return f"net_af_packet0,iface={iface},qpairs=1,qdisc_bypass=1"
    raise XnfError(f"unknown testpmd driver '{driver}': choose one of {', '.join(DRIVERS)}")


@dataclass
class Totals:
    rx_packets: int
    # Frames that reached the interface but not testpmd (a full socket ring). af_xdp reports them itself;
    # af_packet does not (its PMD ignores the socket's drop count), so for it they are the interface's
    # receive count over the run minus what testpmd received.
    rx_dropped: int
    tx_packets: int


class Testpmd:
    """One testpmd process forwarding on one interface; stop() returns its own packet totals."""

    __test__ = False  # a name pytest would otherwise take for a test class

    def __init__(self, proc: subprocess.Popen, driver: str, iface: str, ns: str):
        self.proc, self.driver, self.iface, self.ns = proc, driver, iface, ns
        self._rx_before = 0
        self._runtime_dir = RUNTIME_DIR / "none"

    @classmethod
    def start(cls, topology: Topology, job: str, driver: str, iface: str, core: int, control_core: int,
              busy_budget: int | None = 0, start_timeout_s: float = 30.0) -> "Testpmd":
        if not available():
            raise XnfError(f"{BINARY} (DPDK) is not installed: {INSTALL_HINT}")
        if job not in FORWARD_MODES:
            raise XnfError(f"testpmd has no '{job}' job: choose one of {', '.join(FORWARD_MODES)}")
        if driver == "af_packet":
            # Frames put on a veth by a live-frames generator reach a peer without XDP only through GRO.
            netns.run(topology.dut_ns, ["ethtool", "-K", iface, "gro", "on"])
        # Line-buffered: the readiness line must arrive while testpmd runs, not when it exits.
        argv = ["stdbuf", "-oL", BINARY, "-l", f"{control_core},{core}", "--main-lcore", str(control_core),
                "--no-huge", "-m", "256", "--no-shconf", "--no-telemetry", "--file-prefix", _file_prefix(topology),
                "--no-pci", "--log-level", "lib.eal:error",
                "--vdev", vdev_arg(driver, iface, busy_budget), "--",
                f"--forward-mode={FORWARD_MODES[job]}", "--auto-start", "--nb-cores", "1",
                "--total-num-mbufs", "16384"]
        # stdin stays open: testpmd runs until a line arrives on it (see stop()).
        proc = topology.spawn(topology.dut_ns, argv, stdin=subprocess.PIPE)
        pmd = cls(proc, driver, iface, topology.dut_ns)
        pmd._runtime_dir = RUNTIME_DIR / _file_prefix(topology)
        try:
            pmd._wait_ready(start_timeout_s)
        except XnfError:
            pmd._restore_interface()
            raise
        pmd._rx_before = pmd._interface_rx()
        return pmd

    def _interface_rx(self) -> int:
        return int(netns.run(self.ns, ["cat", f"/sys/class/net/{self.iface}/statistics/rx_packets"]).stdout)

    def _restore_interface(self) -> None:
        """testpmd leaves the port promiscuous (and af_packet needed GRO), and an empty runtime directory even
        with --no-shconf: put everything back as the lab had it."""
        shutil.rmtree(self._runtime_dir, ignore_errors=True)
        netns.ip("link", "set", "dev", self.iface, "promisc", "off", ns=self.ns, check=False)
        if self.driver == "af_packet":
            netns.run(self.ns, ["ethtool", "-K", self.iface, "gro", "off"], check=False)

    def _wait_ready(self, timeout_s: float) -> None:
        """Reads testpmd's output until it says it forwards; never blocks past the deadline.

        Reads the pipe's descriptor itself: a buffered readline() takes every line already in the pipe, and
        select() then waits for more that never come when the readiness line was among them (seen on a slow
        host, where testpmd's last lines arrive together)."""
        deadline = time.monotonic() + timeout_s
        fd = self.proc.stdout.fileno()
        seen = b""
        with selectors.DefaultSelector() as sel:
            sel.register(fd, selectors.EVENT_READ)
            while (left := deadline - time.monotonic()) > 0:
                if not sel.select(timeout=left):
                    break
                chunk = os.read(fd, 65536)
                if not chunk:
                    break
                seen += chunk
                if _READY.encode() in seen:
                    return
        self.proc.kill()
        _, err = self.proc.communicate(timeout=10)
        said = seen.decode(errors="replace").strip().splitlines()[-5:]
        raise XnfError(f"testpmd ({self.driver} on {self.iface}) did not start within {timeout_s:.0f} s: "
                       f"{(err or '').strip()[-400:]} {' | '.join(said)[-300:]}".strip())

    def stop(self) -> Totals:
        """Ends forwarding the way testpmd's prompt asks (a line on stdin) and reads its own totals."""
        arrived = self._interface_rx() - self._rx_before
        try:
            out, err = self.proc.communicate(input="\n", timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        self._restore_interface()
        match = _TOTALS.search(out)
        if not match:
            raise XnfError(f"testpmd ({self.driver}) printed no totals: {(err or out).strip()[-600:]}")
        rx, dropped, tx = (int(g) for g in match.groups())
        if self.driver == "af_packet":
            dropped = max(0, arrived - rx)
        return Totals(rx_packets=rx, rx_dropped=dropped, tx_packets=tx)

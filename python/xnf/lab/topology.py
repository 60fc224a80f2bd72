"""Topologies of namespaces and veth pairs, uniquely named and always removed.

pair      generator ns  gen0 <-veth-> dut0  device-under-test ns   (traffic returns the same way)
two-port  generator ns  gen0 <-veth-> dut0  DUT ns
                        gen1 <-veth-> dut1                          (in on port 0, out of port 1)
edge      a pair, plus application namespaces behind the DUT: app<i> ns  eth0 <-veth-> app<i> (DUT ns),
          198.19.i.2 <-> 198.19.i.1, as local applications or containers on an edge server

Addresses come from the benchmarking ranges (198.18.0.0/15, RFC 2544; 2001:2::/48, RFC 5180),
so nothing here can be mistaken for, or routed to, a real network.
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

from xnf import build, process_id
from xnf.errors import XnfError
from xnf.lab import netns

NAME_PREFIX = "xnf"
_counter = itertools.count()
_live: list["Topology"] = []
# Generator-side XDP: "pass" hands returned frames to the stack (tests capture them with AF_PACKET);
# "drop" sinks them in XDP, counted by veth; None attaches nothing (xnf-gen --rx-iface attaches its
# receiver there itself).
GEN_PROGRAMS = {"pass": "xnf_pass", "drop": "xnf_sink"}
STANDARD_MTU = 1500
ETHERNET_AND_FCS = 18     # what a frame on the wire has besides its MTU's worth


@dataclass
class Link:
    """One veth pair: index i joins gen<i> (generator side) and dut<i> (DUT side)."""

    index: int
    gen_if: str
    dut_if: str
    gen_mac: str
    dut_mac: str
    gen_ip: str
    dut_ip: str
    gen_ip6: str
    dut_ip6: str


@dataclass
class App:
    """An application namespace behind the DUT: its eth0 is the peer of app<i> in the DUT namespace."""

    index: int
    ns: str
    dut_if: str
    app_if: str
    dut_mac: str
    app_mac: str
    dut_ip: str
    app_ip: str


@dataclass
class Topology:
    KINDS = ("pair", "two-port", "edge")   # a subclass lays out its own (lab/nodes.py)
    # xnf-gen's frames arrive at the DUT as XDP frames, and the generator side counts what comes back in XDP: an NF
    # at tc needs GRO on its ports to take them, and must send out of a port, not into its peer (nf_process.py).
    FEEDS_XDP_FRAMES = True
    kind: str = "pair"
    queues: int = 1
    apps: int = 0             # edge: how many application namespaces
    gen_xdp: str | None = "pass"
    mtu: int = STANDARD_MTU   # of every veth the topology makes
    gen_ns: str = ""
    dut_ns: str = ""
    links: list[Link] = field(default_factory=list)
    app_list: list[App] = field(default_factory=list)
    _processes: list[subprocess.Popen] = field(default_factory=list)
    _cleanups: list = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.kind not in self.KINDS:
            raise XnfError(f"unknown topology '{self.kind}': use {', '.join(self.KINDS)}")
        if self.kind == "edge" and not 1 <= self.apps <= 64:
            raise XnfError(f"an edge topology needs 1 to 64 application namespaces, not {self.apps}")
        if not 1 <= self.queues <= 64:
            raise XnfError(f"queue count {self.queues} out of range 1-64")
        if self.gen_xdp is not None and self.gen_xdp not in GEN_PROGRAMS:
            raise XnfError(f"unknown generator-side program '{self.gen_xdp}': use pass, drop or None")
        tag = f"{NAME_PREFIX}-{os.getpid()}-{next(_counter)}"
        self.gen_ns, self.dut_ns = f"{tag}-gen", f"{tag}-dut"
        self._tag = tag

    # ------------------------------------------------------------------ life cycle
    def __enter__(self) -> "Topology":
        _exit_cleanly_on_sigterm()
        _live.append(self)
        try:
            self._build()
        except BaseException:
            self.teardown()
            raise
        return self

    def __exit__(self, *exc) -> None:
        self.teardown()

    def _build(self) -> None:
        netns.create(self.gen_ns)
        netns.create(self.dut_ns)
        for i in range(2 if self.kind == "two-port" else 1):
            self.links.append(self._add_link(i))
        for i in range(self.apps if self.kind == "edge" else 0):
            self.app_list.append(self._add_app(i))

    def _add_app(self, i: int) -> App:
        app = App(index=i, ns=f"{self._tag}-app{i}", dut_if=f"app{i}", app_if="eth0",
                  dut_mac=f"02:00:00:01:{i:02x}:01", app_mac=f"02:00:00:01:{i:02x}:02",
                  dut_ip=f"198.19.{i}.1", app_ip=f"198.19.{i}.2")
        netns.create(app.ns)
        self._veth((self.dut_ns, app.dut_if, app.dut_mac, app.dut_ip), (app.ns, app.app_if, app.app_mac, app.app_ip))
        netns.ip("route", "add", "default", "via", app.dut_ip, ns=app.ns)
        # veth fact: a frame an NF redirects into app<i> reaches eth0 only if eth0 has XDP or GRO
        netns.run(app.ns, ["ethtool", "-K", app.app_if, "gro", "on"])
        return app

    def _veth(self, a: tuple[str, str, str, str], b: tuple[str, str, str, str]) -> None:
        """A veth pair created straight inside two namespaces: (ns, ifname, mac, IPv4) each, /24, up,
        with the topology's queue count on both ends (veth drops XDP features when they differ)."""
        q = str(self.queues)
        netns.ip("link", "add", a[1], "netns", a[0], "address", a[2], "numtxqueues", q, "numrxqueues", q,
                 "type", "veth", "peer", "name", b[1], "netns", b[0], "address", b[2],
                 "numtxqueues", q, "numrxqueues", q)
        for ns, ifname, _, addr in (a, b):
            netns.ip("addr", "add", f"{addr}/24", "dev", ifname, ns=ns)
            netns.ip("link", "set", ifname, "mtu", str(self.mtu), "up", ns=ns)

    @property
    def namespaces(self) -> list[str]:
        return [self.gen_ns, self.dut_ns] + [app.ns for app in self.app_list]

    def _add_link(self, i: int) -> Link:
        link = Link(
            index=i, gen_if=f"gen{i}", dut_if=f"dut{i}",
            gen_mac=f"02:00:00:00:{i:02x}:01", dut_mac=f"02:00:00:00:{i:02x}:02",
            gen_ip=f"198.18.{i}.1", dut_ip=f"198.18.{i}.2",
            gen_ip6=f"2001:2:0:{i}::1", dut_ip6=f"2001:2:0:{i}::2",
        )
        self._veth((self.gen_ns, link.gen_if, link.gen_mac, link.gen_ip),
                   (self.dut_ns, link.dut_if, link.dut_mac, link.dut_ip))
        if self.gen_xdp:
            # veth fact: a frame the DUT sends with XDP_TX reaches gen<i> only if gen<i> has XDP.
            netns.attach_own_xdp(self.gen_ns, link.gen_if, build.bpf_object(GEN_PROGRAMS[self.gen_xdp]),
                                 multi_buffer=self.mtu > STANDARD_MTU)
        else:
            # veth fact: dut<i> takes frames from XDP (redirects, the live transmit path) only while gen<i> has
            # XDP or GRO. xnf-gen's receiver brings XDP for each run; GRO keeps it so in between, so an NF's
            # --tx-path auto need not wait for a receiver to attach. The receiver drops every frame: GRO
            # never merges anything a test reads.
            netns.run(self.gen_ns, ["ethtool", "-K", link.gen_if, "gro", "on"])
        return link

    def teardown(self) -> None:
        """Stops every process in both namespaces, then removes them. Safe to call twice."""
        for proc in self._processes:
            _stop(proc)
        for cleanup in self._cleanups:
            cleanup()
        self._cleanups.clear()
        for ns in self.namespaces_to_remove():
            for pid in netns.pids(ns) if netns.exists(ns) else []:
                _kill(pid)
            netns.delete(ns)
        if self in _live:
            _live.remove(self)

    # ------------------------------------------------------------------ processes
    def spawn(self, ns: str, argv: list[str], **popen_args) -> subprocess.Popen:
        """Starts argv inside ns; it is stopped at teardown whatever happens."""
        proc = subprocess.Popen(netns.exec_argv(ns, argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, start_new_session=True, **popen_args)
        self._processes.append(proc)
        return proc

    def namespaces_to_remove(self) -> list[str]:
        """Every namespace this topology may have made, even if building stopped half way."""
        apps = [f"{self._tag}-app{i}" for i in range(self.apps if self.kind == "edge" else 0)]
        return [self.gen_ns, self.dut_ns] + apps

    def on_teardown(self, cleanup) -> None:
        """Registers a callable run at teardown, after the processes have stopped."""
        self._cleanups.append(cleanup)

    def run(self, ns: str, argv: list[str], **kwargs) -> subprocess.CompletedProcess:
        return netns.run(ns, argv, **kwargs)

    def pin_gen_receive(self, core: int) -> list[int]:
        """Moves the generator side's receive work (its veth NAPI) to kernel threads pinned to core.

        On veth a frame's receive processing runs on the sending CPU: frames an NF sends back would
        otherwise be received on the NF's own core, and their cost counted as the NF's. Needs an XDP
        program on the generator's interfaces (gen_xdp). Returns the NAPI threads' pids."""
        return self._pin_receive(self.gen_ns, [link.gen_if for link in self.links], core, "generator side",
                                 "program (gen_xdp) on the generator's interfaces")

    def pin_dut_receive(self, core: int) -> list[int]:
        """Moves the DUT side's receive work, and with it an XDP NF's work, to NAPI threads pinned to core.

        Without it the DUT's XDP program runs in softirq on the generator's core (veth receives on the
        sending CPU), so generator and NF share one core. Needs the NF's XDP program attached."""
        return self._pin_receive(self.dut_ns, self.dut_ifaces, core, "DUT side",
                                 "program attached to the DUT's interfaces (start the NF first)")

    def _pin_receive(self, ns: str, ifaces: list[str], core: int, side: str, needs: str) -> list[int]:
        """Switches the interfaces to threaded NAPI and pins the threads that appear (their names,
        napi/IF-N, are the same in every topology, so the new pids are the ones that are ours)."""
        before = _napi_threads()
        for iface in ifaces:
            netns.run(ns, ["sh", "-c", f"echo 1 > /sys/class/net/{iface}/threaded"])
        deadline = time.monotonic() + 2
        pids: list[int] = []
        while time.monotonic() < deadline and len(pids) < len(ifaces) * self.queues:
            pids = sorted(set(_napi_threads()) - set(before))
            time.sleep(0.01)
        if not pids:
            raise XnfError(f"no NAPI thread appeared for the {side}: threaded NAPI on veth needs an XDP {needs}")
        for pid in pids:
            os.sched_setaffinity(pid, {core})
        return pids

    @property
    def dut_ifaces(self) -> list[str]:
        return [link.dut_if for link in self.links]


def _stop(proc: subprocess.Popen, grace_s: float = 5.0) -> None:
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, signal.SIGTERM)
        for _ in range(50):
            time.sleep(0.02)
            os.kill(pid, 0)
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def _napi_threads() -> list[int]:
    """Every NAPI kernel thread (napi/IF-N), of any interface."""
    pids = []
    for comm in Path("/proc").glob("[0-9]*/comm"):
        try:
            if comm.read_text().startswith("napi/"):
                pids.append(int(comm.parent.name))
        except (OSError, ValueError):
            continue
    return pids


def teardown_all() -> None:
    for topo in list(_live):
        topo.teardown()


def _exit_cleanly_on_sigterm() -> None:
    """A SIGTERM (timeout, kill) would end the process without running teardown, leaving namespaces,
    processes and XDP programs behind: turn it into SystemExit so `with` blocks and atexit clean up.
    Only where nobody installed a handler of their own, and only from the main thread (Python's rule)."""
    try:
        if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
            signal.signal(signal.SIGTERM, _raise_exit)
    except ValueError:
        pass  # not the main thread


def _raise_exit(signum, _frame) -> None:
    raise SystemExit(128 + signum)


def _maker_lives(pid: int, made_at: float) -> bool:
    """Whether the process that made a namespace runs: its pid, started before the namespace was made (a pid is
    reused once its process is gone). A second's slack: btime and the clock ticks round."""
    started = process_id.started_at(pid)
    return started is not None and started <= made_at + 1


def remove_stale() -> list[str]:
    """Deletes namespaces left by xnf runs whose process no longer runs (killed with SIGKILL, a machine's jobs
    stopped): their veths, addresses and journaled settings would meet the next run's."""
    removed = []
    pattern = re.compile(rf"^{NAME_PREFIX}-(\d+)-\d+-[a-z]+\d*$")   # the tag (pid, counter), then the role
    for path in netns.NETNS_DIR.glob(f"{NAME_PREFIX}-*") if netns.NETNS_DIR.is_dir() else []:
        match = pattern.match(path.name)
        try:
            made = path.lstat().st_mtime
        except FileNotFoundError:
            continue   # its live maker removed it since the listing
        if match and not _maker_lives(int(match.group(1)), made):
            for pid in netns.pids(path.name):
                _kill(pid)
            netns.delete(path.name)
            removed.append(path.name)
    return removed


atexit.register(teardown_all)

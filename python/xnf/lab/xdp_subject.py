"""An XDP program on the DUT's port for a measurement: one of xnf's NFs in XDP mode, or one of the hand-written
programs in bpf/ (the yardsticks: hand_macswap, hand_drop) loaded by xnf-xdp-load."""

from __future__ import annotations

from xnf import build
from xnf.errors import XnfError
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology


def attach(topology: Topology, how: tuple[str, str], ifaces: tuple[str, ...] = ("dut0",),
           redirect_to: str | None = None):
    """how: ("nf", NAME) or ("object", NAME of bpf/NAME.bpf.c) on ifaces; redirect_to: the port a redirecting
    object (hand_redirect) sends every frame to. Returns a handle for detach."""
    kind, what = how
    if kind == "nf":
        return NfInstance.start(topology, what, "xdp", topology.dut_ifaces)
    argv = [str(build.tool_binary("xnf-xdp-load")), "--object", str(build.bpf_object(what))]
    argv += [arg for iface in ifaces for arg in ("--iface", iface)]
    proc = topology.spawn(topology.dut_ns, argv + (["--redirect-to", redirect_to] if redirect_to else []))
    line = proc.stdout.readline()
    if "attached" not in line:
        raise XnfError(f"xnf-xdp-load failed: {proc.stderr.read()}")
    return proc


def detach(handle) -> None:
    if isinstance(handle, NfInstance):
        handle.stop()
    else:
        handle.terminate()
        handle.wait(timeout=10)

"""Network namespace primitives: create, delete, run in, and open sockets inside."""

from __future__ import annotations

import contextlib
import ctypes
import os
import subprocess
from pathlib import Path

from xnf import say
from xnf.errors import XnfError
from xnf.lab import pace

NETNS_DIR = Path("/var/run/netns")
CLONE_NEWNET = 0x40000000
_libc = ctypes.CDLL(None, use_errno=True)


def ip(*args: str, ns: str | None = None, check: bool = True) -> subprocess.CompletedProcess:
    cmd = ["ip"] + (["-n", ns] if ns else []) + list(args)
    say.command(cmd)
    result = subprocess.run(cmd, capture_output=True, text=True)
    if check and result.returncode != 0:
        raise XnfError(f"'{' '.join(cmd)}' failed: {result.stderr.strip()}")
    return result


def attach_own_xdp(ns: str, ifname: str, obj: Path, how: str = "xdp", multi_buffer: bool = False) -> None:
    """Attaches one of the lab's own XDP programs (build.bpf_object: bpf/xnf_pass, xnf_sink) to ifname with ip link
    (how: xdp, xdpdrv). multi_buffer: its twin that takes frames of several buffers, which a veth needs for a peer
    MTU above a page (and which costs the frames a little more where they do not need it)."""
    ip("link", "set", "dev", ifname, how, "obj", str(obj), "sec", "xdp.frags" if multi_buffer else "xdp", ns=ns)


def exec_argv(ns: str, argv: list[str]) -> list[str]:
    """argv run inside ns (ip netns exec: also remounts /sys for the namespace); shown with -v."""
    full = ["ip", "netns", "exec", ns] + [str(a) for a in argv]
    say.command(full)
    return full


def run(ns: str, argv: list[str], check: bool = True, timeout: float = 30) -> subprocess.CompletedProcess:
    result = subprocess.run(exec_argv(ns, argv), capture_output=True, text=True, timeout=pace.timeout(timeout))
    if check and result.returncode != 0:
        raise XnfError(f"'{' '.join(map(str, argv))}' in {ns} failed: {result.stderr.strip()}")
    return result


def exists(ns: str) -> bool:
    return (NETNS_DIR / ns).exists()


def create(ns: str) -> None:
    ip("netns", "add", ns)
    # Quiet namespaces: no IPv6 autoconfiguration chatter in captures.
    run(ns, ["sysctl", "-qw", "net.ipv6.conf.all.disable_ipv6=1", "net.ipv6.conf.default.disable_ipv6=1"])
    # A host, not a router, whatever the machine is: a new namespace inherits IPv4 forwarding from the root one
    # (net.core.devconf_inherit_init_net=0), which container runtimes turn on, and a forwarding DUT answers the
    # frames its NF passes with ICMP errors. Topologies that route turn it on themselves.
    run(ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
    ip("link", "set", "lo", "up", ns=ns)


def pids(ns: str) -> list[int]:
    result = ip("netns", "pids", ns, check=False)
    return [int(p) for p in result.stdout.split()]


def delete(ns: str) -> None:
    if exists(ns):
        ip("netns", "delete", ns, check=False)


@contextlib.contextmanager
def entered(ns: str):
    """Moves the calling thread into ns for the block; sockets made there stay in ns."""
    own = os.open("/proc/thread-self/ns/net", os.O_RDONLY)
    target = os.open(NETNS_DIR / ns, os.O_RDONLY)
    try:
        if _libc.setns(target, CLONE_NEWNET) != 0:
            raise XnfError(f"cannot enter namespace {ns}: {os.strerror(ctypes.get_errno())}")
        try:
            yield
        finally:
            _libc.setns(own, CLONE_NEWNET)
    finally:
        os.close(target)
        os.close(own)

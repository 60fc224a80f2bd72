"""Packet fixtures: an NF's logic as cases of (frame in, verdict, frame out), kept beside the NF
(nfs/<nf>/test_<nf>_fixtures.py) and run through its builds: each kernel build by BPF_PROG_RUN (XDP, and tc on an
skb without and with a complete checksum) beside the native function (tests/c/diff_main.c). They must agree frame
for frame (run_differential), and give what the fixture expects."""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from differential import KERNEL_BUILDS, run_differential

# Addresses fixtures use: a client on the generator side, the NF's own port, a backend or next hop.
CLIENT_MAC, PORT_MAC, NEXT_HOP_MAC = "02:00:00:00:00:01", "02:00:00:00:00:02", "02:00:00:00:01:01"
CLIENT_IP, SERVER_IP = "198.18.0.1", "198.18.0.2"
CLIENT_IP6, SERVER_IP6 = "2001:2::1", "2001:2::2"


@dataclass(frozen=True)
class Fixture:
    name: str
    frame: bytes
    verdict: str                  # the verdict counter that moves: drop, tx, pass, redirect, redirect_error, abort
    output: bytes | None = None   # the bytes that leave (tx, redirect, pass); None: the frame, unchanged
    malformed: bool = False       # counted as malformed besides its verdict
    port: int | None = None       # a redirect: the port it names
    wait_s: float = 0.0           # seconds to let pass before it (idle times)


def swap_macs(frame: bytes) -> bytes:
    return frame[6:12] + frame[0:6] + frame[12:]


def check(nf: str, fixtures: list[Fixture], tmp_path, rules: str | None = None, ports: int = 1,
          builds: tuple[str, ...] = tuple(KERNEL_BUILDS)) -> None:
    names = [f.name for f in fixtures]
    assert len(set(names)) == len(names), "fixture names must be unique"
    times = list(itertools.accumulate(f.wait_s for f in fixtures))
    records = run_differential(nf, tmp_path, rules=rules, ports=ports, frames=[(f.name, f.frame) for f in fixtures],
                               times=times if any(times) else None, builds=builds)
    for f in fixtures:
        kernel, native = records[f.name]["kernel"], records[f.name]["native"]
        assert (kernel["verdict"], kernel["malformed"]) == (f.verdict, f.malformed), \
            f"{nf}, {f.name}: {kernel['verdict']}{' (malformed)' * kernel['malformed']}, expected {f.verdict}"
        if f.verdict in ("tx", "redirect", "pass"):
            _assert_same_bytes(nf, f.name, bytes.fromhex(kernel["out"]), f.output if f.output is not None else f.frame)
        if f.port is not None:
            assert native["port"] == f.port, f"{nf}, {f.name}: redirected to port {native['port']}, expected {f.port}"


def _assert_same_bytes(nf: str, name: str, got: bytes, expected: bytes) -> None:
    if got == expected:
        return
    at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b), min(len(got), len(expected)))
    raise AssertionError(f"{nf}, {name}: the frame out differs from byte {at} on ({len(got)} bytes, expected "
                         f"{len(expected)}): got {got[at:at + 16].hex()}, expected {expected[at:at + 16].hex()}")

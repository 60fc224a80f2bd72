"""`xnf dump`: what a running NF received and what it decided, from its control socket's capture stream
(lib/runtime/capture_session.c), printed one line per frame or written as pcapng for tcpdump and Wireshark.

Frames are captured at the exit, as the NF left them, with their verdict (a tx frame with its addresses swapped),
at the entry, as they came in before anything ran, or both (xdpdump's --rx-capture); whole, or cut to a snap length
(-s), with their whole length kept; all of them or those a tcpdump filter expression matches (compiled by libpcap in
the instance). Each frame's pcapng comment says where it was taken, its verdict, port, queue and which side gave
the verdict ("point=exit verdict=drop port=0 iface=eth0 queue=0 side=xdp"; "point=entry port=0 ...")."""

from __future__ import annotations

import json
import signal
import socket
import struct
import sys
from dataclasses import dataclass
from typing import BinaryIO, Iterator

from xnf import contract, control
from xnf.errors import XnfError

# struct xnf_capture_header (include/xnf/internal/capture_abi.h)
HEADER = struct.Struct("=QIIIHBB")
END = 255


def _side_name(side: int) -> str:
    """A record's side byte by the runtime's names for enum xnf_capture_side (`describe`: capture_sides)."""
    names = contract.runtime()["capture_sides"]
    return names[side] if side < len(names) else str(side)

ENTRY = "entry"  # a frame taken as it came in: no verdict yet
AT = ("exit", "entry", "both")
ANSWER_TIMEOUT_S = 5.0


@dataclass
class Frame:
    time_ns: int        # wall clock
    verdict: str
    iface: str
    port: int
    queue: int
    side: str
    wire_len: int
    data: bytes

    def comment(self) -> str:
        where = "point=entry" if self.verdict == ENTRY else f"point=exit verdict={self.verdict}"
        return f"{where} port={self.port} iface={self.iface} queue={self.queue} side={self.side}"


class CaptureStream:
    """One capture: the stream's header, then frames until the count, the end, or close()."""

    def __init__(self, name: str, verdicts: list[str] | None, count: int, snap: int = 0, at: str = "exit",
                 expression: str = ""):
        request = f"capture {','.join(verdicts) if verdicts else 'all'} {count} {snap} {at} {expression}".rstrip()
        control.check_request(request)
        control.refuse_unless_running(name)
        self.name = name
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(ANSWER_TIMEOUT_S)
        path = control.socket_path(name)
        try:
            self.sock.connect(str(path))
        except FileNotFoundError:
            raise XnfError(f"no running instance named '{name}' (no {path}); see 'xnf ps'") from None
        except (ConnectionRefusedError, PermissionError) as e:
            raise XnfError(f"cannot reach instance '{name}' at {path}: {e.strerror}") from None
        self.file: BinaryIO = self.sock.makefile("rb")
        try:
            self.sock.sendall(f"{request}\n".encode())
            status = self.file.readline().decode(errors="replace").rstrip("\n")
            if status == "ok":
                self.header = json.loads(self.file.readline())
        except (OSError, ValueError) as e:
            self.close()
            raise XnfError(f"instance '{name}' did not start the capture: {e}") from None
        if status != "ok":
            self.close()
            raise XnfError(status.removeprefix("error: ") or f"instance '{name}' closed the connection")
        self.ports = {p["ifindex"]: p for p in self.header["ports"]}
        self.totals: dict | None = None
        self.stopping = False
        self.sock.settimeout(None)  # frames come when traffic does

    def stop(self) -> None:
        """Asks the instance to end the capture (it sends what it has, then the totals), waiting for that end no
        longer than the answer timeout."""
        self.stopping = True
        try:
            self.sock.shutdown(socket.SHUT_WR)
            self.sock.settimeout(ANSWER_TIMEOUT_S)
        except OSError:
            pass

    def frames(self) -> Iterator[Frame]:
        """The frames until the end record (then self.totals), or until the connection ends without one (the
        instance stopped or was killed: self.totals stays None)."""
        offset = self.header["realtime_minus_monotonic_ns"]
        while raw := self._read(HEADER.size):
            if len(raw) < HEADER.size:
                break
            mono_ns, wire_len, cap_len, ifindex, queue, slot, side = HEADER.unpack(raw)
            if side == END:
                self.totals = json.loads(self.file.readline())
                return
            data = self._read(cap_len)
            port = self.ports.get(ifindex, {"port": -1, "iface": f"ifindex {ifindex}"})
            verdict = ENTRY if slot == self.header["entry_slot"] else self.header["verdicts"][slot]
            yield Frame(mono_ns + offset, verdict, port["iface"], port["port"], queue, _side_name(side),
                        wire_len, data)

    def _read(self, size: int) -> bytes:
        try:
            return self.file.read(size)
        except (OSError, socket.timeout):
            return b""  # a reset, or no end within the timeout after stop(): no totals

    def close(self) -> None:
        self.file.close()
        self.sock.close()


def write_pcapng(stream: CaptureStream, path: str, quiet: bool) -> int:
    """Writes every frame of the stream to path ('-': standard output) with scapy's pcapng writer."""
    from scapy.layers.l2 import Ether
    from scapy.utils import PcapNgWriter

    target = "/dev/stdout" if path == "-" else path
    try:
        writer = PcapNgWriter(target)
    except OSError as e:
        raise XnfError(f"cannot write {path}: {e.strerror}") from None
    written = 0
    try:
        for frame in stream.frames():
            packet = Ether(frame.data)
            packet.time = frame.time_ns / 1e9
            packet.wirelen = frame.wire_len
            packet.sniffed_on = frame.iface
            packet.comments = [frame.comment().encode()]
            writer.write(packet)
            writer.flush()
            written += 1
    except BrokenPipeError:
        raise
    except OSError as e:
        stream.stop()
        raise XnfError(f"writing {path} failed after {written} frames ({e.strerror}): the capture stopped; the file "
                       "holds what was written") from None
    finally:
        try:
            writer.close()
        except OSError:
            pass
    if not quiet:
        _report(stream, written, path)
    return written



def print_frames(stream: CaptureStream) -> int:
    from scapy.layers.l2 import Ether

    shown = 0
    for frame in stream.frames():
        seconds, ns = divmod(frame.time_ns, 10**9)
        print(f"{seconds}.{ns // 1000:06d} {frame.iface} q{frame.queue} {frame.side:6s} {frame.verdict:14s} "
              f"{frame.wire_len:5d} {Ether(frame.data).summary()}", flush=True)
        shown += 1
    _report(stream, shown, None)
    return shown


def _report(stream: CaptureStream, frames: int, path: str | None) -> None:
    where = f" into {path}" if path and path != "-" else ""
    totals = stream.totals
    if totals is None:
        print(f"{frames} frames captured{where}; the capture was cut off without its totals: instance "
              f"'{stream.name}' stopped or was killed, and frames it held then are not counted", file=sys.stderr)
        return
    lost = [f"{totals[key]} {what}" for key, what in (
        ("lost_in_kernel", "lost in the kernel's ring"), ("lost_in_workers", "in the workers' queues"),
        ("filtered", "left out by the filter")) if totals.get(key)]
    ended = {"client": "; stopped here", "instance stopping": "; the instance is stopping"}.get(totals.get("ended_by"), "")
    print(f"{frames} frames captured{where}{ended}" + (f"; {', '.join(lost)}" if lost else ""), file=sys.stderr)


def dump(name: str, verdicts: list[str] | None, count: int, path: str | None, quiet: bool = False, snap: int = 0,
         at: str = "exit", expression: str = "") -> int:
    stream = CaptureStream(name, verdicts, count, snap, at, expression)
    if not quiet:
        what = {"exit": f"{', '.join(verdicts) if verdicts else 'every verdict'}",
                "entry": "every frame as it came in",
                "both": f"every frame as it came in and {', '.join(verdicts) if verdicts else 'every verdict'}"}[at]
        print(f"xnf dump: capturing {what} on {name}{f', {count} frames' if count else ''}"
              f"{f' matching {expression!r}' if expression else ''}, {stream.header['snap']} bytes of each at most",
              file=sys.stderr, flush=True)
    def interrupted(signum, frame):
        """Ctrl-C asks the instance to end the capture: what it already sent still comes, then the totals. A second
        one does not wait for them."""
        if stream.stopping:
            raise KeyboardInterrupt
        stream.stop()

    previous = signal.signal(signal.SIGINT, interrupted)
    try:
        if path:
            write_pcapng(stream, path, quiet)
        else:
            print_frames(stream)
    except KeyboardInterrupt:
        pass  # the connection closes: the instance stops capturing
    except BrokenPipeError:
        sys.stderr.close()  # the reader of our output (head, tcpdump -r -) has all it wanted
        return 0
    finally:
        signal.signal(signal.SIGINT, previous)
        stream.close()
    return 0 if stream.totals is not None else 1

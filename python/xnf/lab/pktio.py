"""Raw frames in and out of an interface inside a namespace (AF_PACKET)."""

from __future__ import annotations

import select
import socket
import struct
import time

from xnf.lab import netns, pace

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4
SOL_PACKET, PACKET_AUXDATA = 263, 8
TP_STATUS_VLAN_VALID, TP_STATUS_VLAN_TPID_VALID = 0x10, 0x40
AUXDATA = struct.Struct("=IIIHHHH")   # struct tpacket_auxdata


class PacketPort:
    """An AF_PACKET socket on one interface of a namespace: send frames, collect what arrives."""

    def __init__(self, ns: str, iface: str, tags: bool = False):
        """tags: frames come as they were on the wire, their outermost VLAN tag in place (the kernel takes it out
        of the bytes before a packet socket sees them, and says it beside them)."""
        with netns.entered(ns):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            self.sock.bind((iface, ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        if tags:
            self.sock.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
        self.sock.setblocking(False)
        self.iface = iface
        self.tags = tags

    def _read(self) -> tuple[bytes, int]:
        """One frame and its packet type; raises BlockingIOError when none is waiting."""
        if not self.tags:
            data, addr = self.sock.recvfrom(65535)
            return data, addr[2]
        data, ancillary, _, addr = self.sock.recvmsg(65535, socket.CMSG_SPACE(AUXDATA.size))
        for level, kind, raw in ancillary:
            if (level, kind) != (SOL_PACKET, PACKET_AUXDATA) or len(raw) < AUXDATA.size:
                continue
            status, _, _, _, _, tci, tpid = AUXDATA.unpack(raw[:AUXDATA.size])
            if status & TP_STATUS_VLAN_VALID:
                tpid = tpid if status & TP_STATUS_VLAN_TPID_VALID else 0x8100
                data = data[:12] + struct.pack("!HH", tpid, tci) + data[12:]
        return data, addr[2]

    def send(self, frames: list[bytes]) -> None:
        for frame in frames:
            self.sock.send(frame)

    def receive(self, quiet_s: float = 0.3, limit_s: float = 5.0, expect: int | None = None) -> list[bytes]:
        """Frames that arrived (not the ones we sent), until expect is reached or nothing came for quiet_s."""
        frames: list[bytes] = []
        deadline = time.monotonic() + pace.timeout(limit_s)
        while time.monotonic() < deadline and (expect is None or len(frames) < expect):
            ready, _, _ = select.select([self.sock], [], [], pace.timeout(quiet_s))
            if not ready:
                break
            self._take_waiting(frames)
        return frames

    def _take_waiting(self, frames: list[bytes], last=None) -> bool:
        """The frames waiting (not the ones we sent) onto frames, up to the first for which last(frame) holds:
        whether one did."""
        while True:
            try:
                data, kind = self._read()
            except BlockingIOError:
                return False
            if kind != PACKET_OUTGOING:
                frames.append(data)
                if last is not None and last(data):
                    return True

    def receive_through(self, last, limit_s: float = 30.0) -> list[bytes]:
        """Frames that arrived, up to and with the first for which last(frame) holds: sent after the others from one
        port, it comes after them, so no wait for quiet is needed. What came by limit_s if it never does."""
        frames: list[bytes] = []
        deadline = time.monotonic() + pace.timeout(limit_s)
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
            if ready and self._take_waiting(frames, last):
                break
        return frames

    def drain(self) -> int:
        """Throws away what has arrived and not been read (a flood's frames, say); how many frames that was."""
        count = 0
        while True:
            try:
                self.sock.recv(65535)
            except BlockingIOError:
                return count
            count += 1

    def receive_until(self, last, limit_s: float = 5.0) -> list[bytes]:
        """Frames that arrived up to and with the first for which last(frame) holds (a fence sent after the frames
        of interest: on one path, frames keep their order, so what has not come by then did not pass). Raises
        TimeoutError when the fence does not come within limit_s."""
        frames: list[bytes] = []
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline:
            ready, _, _ = select.select([self.sock], [], [], max(0.0, deadline - time.monotonic()))
            while ready:
                try:
                    data, kind = self._read()
                except BlockingIOError:
                    break
                if kind == PACKET_OUTGOING:
                    continue
                frames.append(data)
                if last(data):
                    return frames
        raise TimeoutError(f"the fence frame did not arrive on {self.iface} within {limit_s} s")

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "PacketPort":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

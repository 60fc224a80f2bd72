"""Raw frames in and out of an interface inside a namespace (AF_PACKET)."""

from __future__ import annotations

import select
import socket
import time

from xnf.lab import netns

ETH_P_ALL = 0x0003
PACKET_OUTGOING = 4


class PacketPort:
    """An AF_PACKET socket on one interface of a namespace: send frames, collect what arrives."""

    def __init__(self, ns: str, iface: str):
        with netns.entered(ns):
            self.sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
            self.sock.bind((iface, ETH_P_ALL))
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 8 << 20)
        self.sock.setblocking(False)
        self.iface = iface

    def send(self, frames: list[bytes]) -> None:
        for frame in frames:
            self.sock.send(frame)

    def receive(self, quiet_s: float = 0.3, limit_s: float = 5.0, expect: int | None = None) -> list[bytes]:
        """Frames that arrived (not the ones we sent), until expect is reached or nothing came for quiet_s."""
        frames: list[bytes] = []
        deadline = time.monotonic() + limit_s
        while time.monotonic() < deadline and (expect is None or len(frames) < expect):
            ready, _, _ = select.select([self.sock], [], [], quiet_s)
            if not ready:
                break
            while True:
                try:
                    data, addr = self.sock.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] != PACKET_OUTGOING:
                    frames.append(data)
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
                    data, addr = self.sock.recvfrom(65535)
                except BlockingIOError:
                    break
                if addr[2] == PACKET_OUTGOING:
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

"""A gNB for the lab: a UE's IP traffic tunnelled over GTP-U to a UPF, so real applications (ping, curl, iperf3)
reach the data network through the user plane function as a phone's traffic does.

The UE is a TUN device in the gNB's namespace, with the UE's address. What the applications send into it leaves
as a G-PDU (the session's uplink TEID, a PDU Session Container with its QFI) from the gNB's address to the UPF's
N3 address, UDP port 2152; G-PDUs that come back are stripped and written into the TUN device. The GTP-U
headers are scapy's (an implementation apart from xnf's), so a test through it checks the UPF against another
reading of TS 29.281. Tunnelling runs in Python: fine for applications' traffic, not for rates.

    python3 -m xnf.lab.gnb --ue 10.60.0.1 --gnb 198.18.0.1 --upf 198.18.0.2 --teid 100 --qfi 9 --route 198.18.1.0/24
"""

from __future__ import annotations

import argparse
import fcntl
import os
import select
import signal
import socket
import struct
import subprocess
import sys
from dataclasses import dataclass

from xnf.errors import XnfError
from xnf.lab import pace
from xnf.lab.topology import Topology

GTPU_PORT = 2152
TUN_NAME = "ue0"
# What the tunnel adds to a UE's packet (IPv4, UDP, GTP-U with the container): the UE's MTU is N3's less this.
TUNNEL_BYTES = 44
N3_MTU = 1500
START_TIMEOUT_S = 10.0
_TUNSETIFF, _IFF_TUN, _IFF_NO_PI = 0x400454CA, 0x0001, 0x1000


def _open_tun(name: str) -> int:
    fd = os.open("/dev/net/tun", os.O_RDWR)
    fcntl.ioctl(fd, _TUNSETIFF, struct.pack("16sH", name.encode(), _IFF_TUN | _IFF_NO_PI))
    return fd


def encapsulate(inner: bytes, teid: int, qfi: int) -> bytes:
    """A G-PDU (UDP payload) carrying inner, uplink."""
    from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer
    from scapy.packet import Raw

    return bytes(GTP_U_Header(teid=teid, gtp_type=255, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=qfi) /
                 Raw(inner))


def decapsulate(datagram: bytes) -> tuple[int, int | None, bytes] | None:
    """The TEID, QFI (None without a PDU Session Container) and inner packet of a G-PDU; None for anything else."""
    from scapy.contrib.gtp import GTP_U_Header, GTPPDUSessionContainer

    gtp = GTP_U_Header(datagram)
    if gtp.gtp_type != 255:
        return None
    layer, qfi = gtp.payload, None
    while isinstance(layer, GTPPDUSessionContainer):
        qfi, layer = layer.QFI, layer.payload
    return gtp.teid, qfi, bytes(layer)


def _serve(args: argparse.Namespace) -> None:
    tun = _open_tun(TUN_NAME)
    for argv in (["ip", "addr", "add", f"{args.ue}/32", "dev", TUN_NAME],
                 ["ip", "link", "set", TUN_NAME, "mtu", str(args.n3_mtu - TUNNEL_BYTES), "up"],
                 *[["ip", "route", "add", prefix, "dev", TUN_NAME, "src", args.ue] for prefix in args.route]):
        subprocess.run(argv, check=True)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind((args.gnb, GTPU_PORT))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("ready", flush=True)
    while True:
        readable, _, _ = select.select([tun, udp], [], [])
        if tun in readable:
            udp.sendto(encapsulate(os.read(tun, 65535), args.teid, args.qfi), (args.upf, GTPU_PORT))
        if udp in readable:
            got = decapsulate(udp.recv(65535))
            if got is not None:   # path management and the like are the UPF's business with a real gNB
                os.write(tun, got[2])


@dataclass
class Gnb:
    """The gNB emulator started in ns (stopped with the topology): the UE at ue, its traffic to the prefixes in
    route tunnelled from gnb to the UPF's upf with the uplink TEID and QFI."""
    t: Topology
    ns: str
    ue: str
    gnb: str
    upf: str
    teid: int
    qfi: int
    route: tuple[str, ...]
    n3_mtu: int = N3_MTU

    def __post_init__(self) -> None:
        argv = [sys.executable, "-m", "xnf.lab.gnb", "--ue", self.ue, "--gnb", self.gnb, "--upf", self.upf,
                "--teid", str(self.teid), "--qfi", str(self.qfi), "--n3-mtu", str(self.n3_mtu)]
        for prefix in self.route:
            argv += ["--route", prefix]
        self.process = self.t.spawn(self.ns, argv)
        ready, _, _ = select.select([self.process.stdout], [], [], pace.timeout(START_TIMEOUT_S))
        if not ready or self.process.stdout.readline().strip() != "ready":
            self.process.kill()
            raise XnfError(f"the gNB emulator did not start: {self.process.stderr.read().strip()[-400:]}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python3 -m xnf.lab.gnb", description=__doc__.split("\n\n")[0])
    parser.add_argument("--ue", required=True, help="the UE's IPv4 address (on the TUN device ue0)")
    parser.add_argument("--gnb", required=True, help="this gNB's N3 address (the tunnels' source)")
    parser.add_argument("--upf", required=True, help="the UPF's N3 address")
    parser.add_argument("--teid", type=int, required=True, help="the uplink TEID (the UPF's, for this session)")
    parser.add_argument("--qfi", type=int, default=9, help="the QFI in the PDU Session Container (default 9)")
    parser.add_argument("--route", action="append", default=[], help="a prefix the UE reaches through the tunnel")
    parser.add_argument("--n3-mtu", type=int, default=N3_MTU,
                        help=f"the MTU of the gNB's N3 link (default {N3_MTU}): the UE's is {TUNNEL_BYTES} less")
    args = parser.parse_args(argv)
    try:
        _serve(args)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"gnb: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

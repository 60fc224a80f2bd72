"""Sessions of the upf NF as the lab sets them up, and the traffic xnf-gen sends through them: session n's UE is
the n-th address from 10.60.0.1, its uplink TEID UPLINK_TEID + n and its downlink TEID DOWNLINK_TEID + n. The
rules (nfs/upf/README.md) and the generator's classes (its tunnel=gtpu) are written here only."""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

FIRST_UE = ipaddress.IPv4Address("10.60.0.1")
SERVER = "198.51.100.1"      # the data network's end of every flow
EDGE_APP = "198.51.100.200"  # an application at the edge, reached by local breakout
UPLINK_TEID, DOWNLINK_TEID, QFI = 100, 5000, 9
# xnf-gen varies the low 16 bits of an address: one flow per session up to this many.
MOST_FLOWS = 65535
# A G-PDU's headers after Ethernet and before the inner packet: IPv4, UDP, GTP-U with a PDU Session Container.
TUNNEL_BYTES = 44


def ue(n: int) -> str:
    return str(FIRST_UE + n)


@dataclass(frozen=True)
class Sides:
    """The UPF's two sides: N3's port, next hop and the UPF's address on it; N6's port and next hop; the gNB."""
    n3_port: int
    n3_gateway: str
    n3_addr: str
    n6_port: int
    n6_gateway: str
    gnb: str


def rules(sides: Sides, sessions: int) -> str:
    lines = [f"n3 port {sides.n3_port} gateway {sides.n3_gateway} address {sides.n3_addr}",
             f"n6 port {sides.n6_port} gateway {sides.n6_gateway}"]
    for n in range(sessions):
        lines += [f"pdr {n + 1} 1 uplink teid {UPLINK_TEID + n} far 1", f"far {n + 1} 1 forward n6",
                  f"pdr {n + 1} 2 downlink ue {ue(n)} far 2",
                  f"far {n + 1} 2 forward n3 teid {DOWNLINK_TEID + n} to {sides.gnb} qfi {QFI}"]
    return "\n".join(lines) + "\n"


def uplink_class(sides: Sides, sessions: int, share: float = 1.0, name: str = "up", to: str = SERVER,
                 teid: int = UPLINK_TEID, dport: int | None = None) -> str:
    """G-PDUs from the gNB, a session per flow (its UE and TEID), to the server (or to: the edge application, a
    service) and its dport; teid: the first flow's (another than the sessions' makes tunnels the UPF does not
    know)."""
    return (f"{name}:share={share},tunnel=gtpu,gnb={sides.gnb},upf={sides.n3_addr},teid={teid},qfi={QFI},"
            f"saddr={FIRST_UE},daddr={to},{f'dport={dport},' if dport else ''}flows={min(sessions, MOST_FLOWS)},"
            "vary=saddr+teid")


def downlink_class(sessions: int, share: float = 1.0, name: str = "down") -> str:
    """Plain packets from the data network to the UEs, a session per flow."""
    return f"{name}:share={share},saddr={SERVER},daddr={FIRST_UE},flows={min(sessions, MOST_FLOWS)},vary=daddr"

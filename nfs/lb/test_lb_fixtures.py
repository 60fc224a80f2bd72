"""The load balancer's logic, frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py).
One backend per service, so the choice does not depend on the hash (tests/integration/test_lb.py checks it)."""

from scapy.layers.inet import ICMP, IP, TCP, UDP
from scapy.layers.l2 import Ether

from nf_fixtures import CLIENT_IP, CLIENT_MAC, NEXT_HOP_MAC, PORT_MAC, Fixture, check

VIP, BACKEND = "10.99.0.1", "10.1.0.11"
RULES = f"""\
service udp {VIP} 53
backend udp {VIP} 53 slot 0 {BACKEND} 5353 mac {NEXT_HOP_MAC} port 0
service tcp {VIP} 80
"""


def udp(dst: str, dport: int, src_mac: str = CLIENT_MAC, dst_mac: str = PORT_MAC, checksum: int | None = None) -> bytes:
    return bytes(Ether(src=src_mac, dst=dst_mac) / IP(src=CLIENT_IP, dst=dst) / UDP(sport=40000, dport=dport,
                                                                                   chksum=checksum) / b"query")


def test_sessions_and_rewrites(tmp_path):
    # The first packet opens the session, the second hits it: both are rewritten to the backend (addresses,
    # port, checksums as a full recomputation gives them), from the MAC they were sent to, to the backend's.
    to_backend = udp(BACKEND, 5353, src_mac=PORT_MAC, dst_mac=NEXT_HOP_MAC)
    check("lb", [
        Fixture("a new flow to the service", udp(VIP, 53), "tx", to_backend),
        Fixture("the same flow again, from its session", udp(VIP, 53), "tx", to_backend),
        Fixture("udp checksum 0 stays 0", udp(VIP, 53, checksum=0), "tx",
                udp(BACKEND, 5353, src_mac=PORT_MAC, dst_mac=NEXT_HOP_MAC, checksum=0)),
        Fixture("not a service's port: to the local stack", udp(VIP, 54), "pass"),
        Fixture("icmp is no service", bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) / IP(src=CLIENT_IP, dst=VIP) / ICMP()),
                "pass"),
        Fixture("a service without backends drops", bytes(Ether(src=CLIENT_MAC, dst=PORT_MAC) /
                                                           IP(src=CLIENT_IP, dst=VIP) / TCP(sport=40000, dport=80)),
                "drop"),
        Fixture("a header cut short", udp(VIP, 53)[:20], "drop", malformed=True),
    ], tmp_path, rules=RULES)

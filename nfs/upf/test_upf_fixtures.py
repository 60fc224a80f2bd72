"""The user plane function frame by frame, in the kernel (BPF_PROG_RUN) and natively (tests/nf_fixtures.py), on
one port that is both N3 and N6: G-PDUs built by scapy's GTP-U layers (an implementation independent of ours)
decapsulated by TEID and QFI, downlink packets encapsulated byte for byte as scapy encapsulates them, echo
requests answered, and what is malformed, unknown or not the UPF's dropped or passed."""

from scapy.contrib.gtp import GTP_U_Header, GTPEchoRequest, GTPEchoResponse, GTPPDUSessionContainer, IE_Recovery
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from differential import BUILDS_OF_MOVING_NFS
from nf_fixtures import CLIENT_MAC, NEXT_HOP_MAC, PORT_MAC, Fixture, check

GNB_MAC, N6_MAC, EDGE_MAC = CLIENT_MAC, NEXT_HOP_MAC, "02:00:00:00:0e:0e"
N3_ADDR, N3_OTHER, GNB = "192.0.2.1", "192.0.2.2", "192.0.2.100"
UE, UE6, UE6_PREFIX, SERVER = "10.60.0.1", "2001:db8:60::1", "2001:db8:60::/64", "198.51.100.7"
RULES = f"""\
n3 port 0 gateway {GNB_MAC} address {N3_ADDR}
n3 address {N3_OTHER}
n6 port 0 gateway {N6_MAC}
pdr 1 1 uplink teid 100 far 1
pdr 1 2 downlink ue {UE} far 2
far 1 1 forward n6
far 1 2 forward n3 teid 1000 to {GNB} qfi 9
pdr 2 1 uplink teid 200 qfi 5 far 1
far 2 1 forward n6
pdr 3 1 uplink teid 300 far 1
pdr 3 2 downlink ue {UE6_PREFIX} far 2
far 3 1 drop
far 3 2 forward n3 teid 3000 to {GNB} qfi 3
pdr 4 1 uplink teid 400 far 1
far 4 1 buffer
pdr 5 1 uplink teid 500 far 1 qer 1
far 5 1 forward n6
qer 5 1 mbr 8k burst 250
breakout 198.51.100.96/28 port 0 mac {EDGE_MAC}
"""


def from_gnb(dst=N3_ADDR):
    return Ether(src=GNB_MAC, dst=PORT_MAC) / IP(src=GNB, dst=dst) / UDP(sport=2152, dport=2152)


def g_pdu(teid, inner, qfi=None, dst=N3_ADDR):
    if qfi is None:
        return from_gnb(dst) / GTP_U_Header(teid=teid) / inner
    return from_gnb(dst) / GTP_U_Header(teid=teid, next_ex=0x85) / GTPPDUSessionContainer(type=1, QFI=qfi) / inner


def to_n6(inner):
    return Ether(src=PORT_MAC, dst=N6_MAC) / inner


def uplink_inner(payload=b"uplink"):
    return IP(src=UE, dst=SERVER) / UDP(sport=40000, dport=53) / payload


def downlink_inner(payload=b"downlink"):
    return IP(src=SERVER, dst=UE) / UDP(sport=53, dport=40000) / payload


def tunnelled_down(teid, qfi, inner):
    """What the UPF sends to the gNB, as scapy builds it: outer IPv4 without DF, id 0, UDP checksum 0."""
    return (Ether(src=PORT_MAC, dst=GNB_MAC) / IP(src=N3_ADDR, dst=GNB, id=0, ttl=64) /
            UDP(sport=2152, dport=2152, chksum=0) / GTP_U_Header(teid=teid, next_ex=0x85) /
            GTPPDUSessionContainer(type=0, QFI=qfi) / inner)


def with_extension(ext_type: int, inner) -> bytes:
    """A G-PDU to TEID 100 carrying one extension header of the given type (4 bytes, no next one)."""
    gtp = bytes([0x34, 0xff]) + (len(bytes(inner)) + 8).to_bytes(2, "big") + (100).to_bytes(4, "big") + \
        bytes([0, 0, 0, ext_type]) + bytes([1, 0, 0, 0]) + bytes(inner)
    return bytes(from_gnb() / gtp)


def test_uplink_decapsulated_by_teid_and_qfi(tmp_path):
    inner, inner6 = uplink_inner(), IPv6(src=UE6, dst="2001:db8:1::7") / UDP(sport=4000, dport=53) / b"six"
    check("upf", [
        Fixture("a G-PDU with a PDU Session Container: the inner packet to N6",
                bytes(g_pdu(100, inner, qfi=9)), "tx", bytes(to_n6(inner))),
        Fixture("a G-PDU without extension headers", bytes(g_pdu(100, inner)), "tx", bytes(to_n6(inner))),
        Fixture("to the UPF's other N3 address", bytes(g_pdu(100, inner, dst=N3_OTHER)), "tx", bytes(to_n6(inner))),
        Fixture("an IPv6 inner packet", bytes(g_pdu(100, inner6, qfi=9)), "tx", bytes(to_n6(inner6))),
        Fixture("a rule for one QFI takes that QFI", bytes(g_pdu(200, inner, qfi=5)), "tx", bytes(to_n6(inner))),
        Fixture("and no other", bytes(g_pdu(200, inner, qfi=6)), "drop"),
        Fixture("an unknown TEID is dropped", bytes(g_pdu(999, inner, qfi=9)), "drop"),
        Fixture("a session whose FAR drops", bytes(g_pdu(300, inner)), "drop"),
        Fixture("a session whose FAR buffers: dropped, not buffered", bytes(g_pdu(400, inner)), "drop"),
        Fixture("an extension header that may be skipped is", with_extension(0x40, inner), "tx",
                bytes(to_n6(inner))),
        Fixture("one the endpoint must understand and does not: dropped", with_extension(0xc0, inner), "drop"),
        Fixture("to an edge application's prefix: broken out to it, decapsulated",
                bytes(g_pdu(100, IP(src=UE, dst="198.51.100.99") / UDP(sport=40000, dport=80) / b"edge", qfi=9)),
                "tx", bytes(Ether(src=PORT_MAC, dst=EDGE_MAC) / IP(src=UE, dst="198.51.100.99") /
                            UDP(sport=40000, dport=80) / b"edge")),
        Fixture("to an address that is not the UPF's: not a tunnel of ours",
                bytes(g_pdu(100, inner, dst="192.0.2.50")), "pass"),
    ], tmp_path, rules=RULES)


def test_malformed_tunnels_are_dropped(tmp_path):
    inner = uplink_inner()
    good = bytes(g_pdu(100, inner, qfi=9))
    gtp_at = 14 + 20 + 8
    longer = bytearray(good)
    longer[gtp_at + 3] += 4          # the GTP-U length says more than UDP carries
    version2 = bytearray(good)
    version2[gtp_at] = 0x48          # GTPv2-C's flags
    no_next = bytearray(good)
    no_next[gtp_at + 15] = 0x85      # the container says another follows: the inner packet is no container
    short_inner = bytes(from_gnb() / GTP_U_Header(teid=100, gtp_type=255) / bytes(inner)[:12])
    check("upf", [
        Fixture("GTP-U length beyond UDP's", bytes(longer), "drop", malformed=True),
        Fixture("not GTP-U version 1", bytes(version2), "drop", malformed=True),
        Fixture("an extension header chain that does not end", bytes(no_next), "drop", malformed=True),
        Fixture("an inner packet shorter than an IP header", short_inner, "drop", malformed=True),
    ], tmp_path, rules=RULES)


def test_downlink_encapsulated_towards_the_gnb(tmp_path):
    inner = downlink_inner()
    inner6 = IPv6(src="2001:db8:1::7", dst="2001:db8:60::abcd") / UDP(sport=53, dport=4000) / b"six"
    padded = bytes(Ether(src=N6_MAC, dst=PORT_MAC) / inner) + b"\0" * 20
    check("upf", [
        Fixture("to a UE: tunnelled with its session's TEID and QFI",
                bytes(Ether(src=N6_MAC, dst=PORT_MAC) / inner), "tx", bytes(tunnelled_down(1000, 9, inner))),
        Fixture("Ethernet padding after the packet is not the tunnel's: the outer lengths are the packet's",
                padded, "tx", bytes(tunnelled_down(1000, 9, inner)) + b"\0" * 20),
        Fixture("an IPv6 UE by its /64 prefix",
                bytes(Ether(src=N6_MAC, dst=PORT_MAC) / inner6), "tx", bytes(tunnelled_down(3000, 3, inner6))),
        Fixture("an address that is no UE's: the local stack's",
                bytes(Ether(src=N6_MAC, dst=PORT_MAC) / IP(src=SERVER, dst="10.60.0.2") / UDP() / b"x"), "pass"),
        Fixture("ARP: the local stack's", bytes(Ether(src=N6_MAC, dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=N3_ADDR)),
                "pass"),
    ], tmp_path, rules=RULES, builds=BUILDS_OF_MOVING_NFS)


def test_path_management_and_other_messages(tmp_path):
    request = from_gnb() / GTP_U_Header(seq=7, S=1) / GTPEchoRequest()
    response = (Ether(src=PORT_MAC, dst=GNB_MAC) / IP(src=N3_ADDR, dst=GNB, id=0, ttl=64) /
                UDP(sport=2152, dport=2152, chksum=0) / GTP_U_Header(seq=7, S=1, gtp_type=2) /
                GTPEchoResponse(IE_list=[IE_Recovery(restart_counter=0)]))
    padded_request = bytes(request) + b"\0" * 30
    check("upf", [
        Fixture("an echo request is answered with the same sequence number", bytes(request), "tx", bytes(response)),
        Fixture("one with padding too (the answer is cut to its size)", padded_request, "tx", bytes(response)),
        Fixture("an error indication is counted and dropped",
                bytes(from_gnb() / GTP_U_Header(teid=0, gtp_type=26) / b"\x10\x00\x00\x00\x64"), "drop"),
        Fixture("an end marker too", bytes(from_gnb() / GTP_U_Header(teid=100, gtp_type=254)), "drop"),
    ], tmp_path, rules=RULES, builds=BUILDS_OF_MOVING_NFS)


def test_a_maximum_bit_rate_drops_beyond_its_burst(tmp_path):
    inner = IP(src=UE, dst=SERVER) / UDP(sport=40000, dport=53) / (b"q" * 72)   # 100 bytes
    frame = bytes(g_pdu(500, inner))
    check("upf", [
        Fixture("the first packet fits the 250-byte burst", frame, "tx", bytes(to_n6(inner))),
        Fixture("the second too", frame, "tx", bytes(to_n6(inner))),
        Fixture("the third is over the rate", frame + b"\0", "drop"),
    ], tmp_path, rules=RULES)

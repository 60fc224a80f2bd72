"""The load balancer: sessions, return traffic, consistent backends on both paths, drain, expiry, errors."""

from __future__ import annotations

import time

import pytest
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import Ether

import lb_reference
from lab_helpers import assert_rules_rejected, wait_until
from differential import XDP_PASS, XDP_TX, run_differential
from test_xdp_nfs import exchange
from xnf import control
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab import paths

MODES = paths.Modes(paths.each_build)
VIP, VIP6, VPORT = "10.99.0.1", "fd99::1", 80
BACKENDS = [("10.1.0.11", 8080, "02:bb:00:00:00:11"), ("10.1.0.12", 8080, "02:bb:00:00:00:12"),
            ("10.1.0.13", 9090, "02:bb:00:00:00:13")]
BACKENDS6 = [("fd01::11", 8080, "02:bb:00:00:06:11"), ("fd01::12", 8080, "02:bb:00:00:06:12")]


def lb_rules(timeout: int | None = None) -> str:
    lines = [f"service tcp {VIP} {VPORT}", f"service udp {VIP} {VPORT}", f"service tcp {VIP6} {VPORT}"]
    for proto in ("tcp", "udp"):
        lines += [f"backend {proto} {VIP} {VPORT} slot {i} {a} {p} mac {m} port 0"
                  for i, (a, p, m) in enumerate(BACKENDS)]
    lines += [f"backend tcp {VIP6} {VPORT} slot {i} {a} {p} mac {m} port 0" for i, (a, p, m) in enumerate(BACKENDS6)]
    if timeout:
        lines.append(f"timeout {timeout}")
    return "\n".join(lines) + "\n"


def expected_backend(client: str, cport: int, vip: str, proto: int, backends):
    """The backend the hash picks for a flow to the tests' service port (lb_reference.py)."""
    return lb_reference.expected_backend(client, cport, vip, VPORT, proto, backends)


# ---- frames

def to_service(link, cport: int, proto=TCP, vip: str = VIP) -> bytes:
    ip = IPv6(src=link.gen_ip6, dst=vip) if ":" in vip else IP(src=link.gen_ip, dst=vip)
    l4 = proto(sport=cport, dport=VPORT, **({"flags": "S"} if proto is TCP else {}))
    return bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / ip / l4 / b"request")


def rewritten(frame: bytes, dst_mac: str, src_mac: str, **fields) -> bytes:
    """The frame with its MACs and addresses/ports changed and every checksum recomputed by scapy."""
    packet = Ether(frame)
    packet.dst, packet.src = dst_mac, src_mac
    ip = packet[IP] if IP in packet else packet[IPv6]
    l4 = packet[TCP] if TCP in packet else packet[UDP]
    for name, value in fields.items():
        setattr(ip if name in ("src", "dst") else l4, name, value)
    if IP in packet:
        del packet[IP].chksum
    del l4.chksum
    return bytes(packet)


def from_backend(link, backend, client: str, cport: int, proto=TCP) -> bytes:
    ip = IPv6(src=backend[0], dst=client) if ":" in client else IP(src=backend[0], dst=client)
    l4 = proto(sport=backend[1], dport=cport, **({"flags": "SA"} if proto is TCP else {}))
    return bytes(Ether(src=backend[2], dst=link.dut_mac) / ip / l4 / b"reply")


@pytest.mark.parametrize("mode", MODES)
def test_sessions_stick_and_return_traffic_is_rewritten_back(mode, rules_file, pair):
    nf = NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=rules_file(lb_rules()))
    link = pair.links[0]
    flows = [(cport, proto) for cport in range(40000, 40012) for proto in (TCP, UDP)]
    sent = [to_service(link, cport, proto) for cport, proto in flows] * 2     # every flow twice
    want = []
    for cport, proto in flows * 2:
        backend = expected_backend(link.gen_ip, cport, VIP, 6 if proto is TCP else 17, BACKENDS)
        want.append(rewritten(to_service(link, cport, proto), backend[2], link.dut_mac,
                              dst=backend[0], dport=backend[1]))
    got = exchange(pair, sent, expect=len(sent))
    assert sorted(got) == sorted(want)
    assert len({Ether(f)[IP].dst for f in got}) > 1, "every flow on one backend: the hash spreads nothing"

    replies = []
    for cport, proto in flows:
        backend = expected_backend(link.gen_ip, cport, VIP, 6 if proto is TCP else 17, BACKENDS)
        replies.append(from_backend(link, backend, link.gen_ip, cport, proto))
    got = exchange(pair, replies, expect=len(replies))
    assert sorted(got) == sorted(rewritten(r, link.gen_mac, link.dut_mac, src=VIP, sport=VPORT) for r in replies)
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["new_session"] == len(flows)
    assert counters["hit"] == len(flows) * 2          # the second packet of each flow, then each reply
    assert counters["not_service"] == 0 and counters["table_full"] == 0


@pytest.mark.parametrize("mode", MODES)
def test_ipv6_flows_land_where_the_hash_says(mode, rules_file, pair):
    NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=rules_file(lb_rules()))
    link = pair.links[0]
    sent = [to_service(link, cport, TCP, VIP6) for cport in range(50000, 50010)]
    want = []
    for cport, frame in zip(range(50000, 50010), sent):
        backend = expected_backend(link.gen_ip6, cport, VIP6, 6, BACKENDS6)
        want.append(rewritten(frame, backend[2], link.dut_mac, dst=backend[0], dport=backend[1]))
    assert sorted(exchange(pair, sent, expect=len(sent))) == sorted(want)


def test_a_flow_lands_on_the_same_backend_whichever_path_opened_it(rules_file):
    """Sessions opened by XDP, then by AF_XDP, for the same new flows: the same backends."""
    chosen = {}
    for mode in paths.modes(paths.kinds_at_xdp):
        with Topology("pair") as t:
            NfInstance.start(t, "lb", mode, t.dut_ifaces, rules=rules_file(lb_rules()))
            sent = [to_service(t.links[0], cport) for cport in range(41000, 41030)]
            got = exchange(t, sent, expect=len(sent))
            chosen[mode] = sorted((Ether(f)[TCP].sport, Ether(f)[IP].dst) for f in got)
    assert chosen["xdp"] == chosen["afxdp"] == chosen["hybrid"]
    assert len({dst for _, dst in chosen["xdp"]}) == len(BACKENDS)


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_drained_backend_keeps_its_sessions_and_takes_no_new_ones(mode, rules_file, pair):
    nf = NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=rules_file(lb_rules()))
    link = pair.links[0]
    old = [cport for cport in range(42000, 42100)
           if expected_backend(link.gen_ip, cport, VIP, 6, BACKENDS) == BACKENDS[0]][:5]
    exchange(pair, [to_service(link, c) for c in old], expect=len(old))
    slot0 = f"backend tcp {VIP} {VPORT} slot 0 {BACKENDS[0][0]} {BACKENDS[0][1]} mac {BACKENDS[0][2]} port 0"
    nf.request(f"rules add {slot0} drain")
    assert f"{slot0} drain" in nf.request("rules list").splitlines()
    # established sessions stay on the drained backend
    got = exchange(pair, [to_service(link, c) for c in old], expect=len(old))
    assert {Ether(f)[IP].dst for f in got} == {BACKENDS[0][0]}
    # new flows that backend would have won go to the others, as the hash without it says
    new = [cport for cport in range(43000, 43100)
           if expected_backend(link.gen_ip, cport, VIP, 6, BACKENDS) == BACKENDS[0]][:5]
    got = exchange(pair, [to_service(link, c) for c in new], expect=len(new))
    assert sorted(Ether(f)[IP].dst for f in got) == sorted(
        expected_backend(link.gen_ip, c, VIP, 6, BACKENDS[1:])[0] for c in new)


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_idle_sessions_expire(mode, rules_file, pair):
    nf = NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=rules_file(lb_rules(timeout=1)))
    link = pair.links[0]
    exchange(pair, [to_service(link, 44000)], expect=1)
    exchange(pair, [to_service(link, 44000)], expect=1)
    # past the timeout the sweeper, every second, takes both directions' entries
    wait_until(lambda: control.request_json(nf.name, "entries lb_sessions")["entries"] == 0, timeout_s=20,
               what="the idle session swept")
    exchange(pair, [to_service(link, 44000)], expect=1)
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["new_session"] == 2 and counters["hit"] == 1
    # the sweeper removed both directions of the idle session: none was met expired on the packet path
    assert counters["expired"] == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_a_backend_that_answers_after_a_long_one_way_stream_still_reaches_the_client(mode, rules_file, pair):
    """A session lives while either direction is used: the client streams past the timeout, the backend has
    been silent all along (a UDP upload), and its answer is still rewritten back from the service. The soak
    found this: the backend's direction expired alone, and its answers went to the stack unrewritten."""
    nf = NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=rules_file(lb_rules(timeout=1)))
    link = pair.links[0]
    for _ in range(6):                        # 3 s of the client's stream, one frame every half second
        exchange(pair, [to_service(link, 45000, UDP)], expect=1)
        time.sleep(0.5)                       # the sweeper runs every second meanwhile
    backend = expected_backend(link.gen_ip, 45000, VIP, 17, BACKENDS)
    reply = from_backend(link, backend, link.gen_ip, 45000, UDP)
    got = exchange(pair, [reply], expect=1)
    assert got == [rewritten(reply, link.gen_mac, link.dut_mac, src=VIP, sport=VPORT)]
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["new_session"] == 1 and counters["not_service"] == 0
    assert nf.stop() == 0


def test_no_backend_drops_and_other_traffic_goes_to_the_stack(rules_file, pair):
    nf = NfInstance.start(pair, "lb", "xdp", pair.dut_ifaces, rules=rules_file(f"service tcp {VIP} 443\n"))
    link = pair.links[0]
    frame = bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=VIP)
                  / TCP(sport=1234, dport=443))
    assert exchange(pair, [frame, to_service(link, 1235)]) == []
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["no_backend"] == 1 and counters["not_service"] == 1
    assert nf.stats()["pass"]["packets"] == 1 and nf.stats()["drop"]["packets"] == 1


@pytest.mark.parametrize("line,reason", [
    (f"backend tcp {VIP} 80 slot 32 10.1.0.1 80 mac 02:00:00:00:00:01 port 0", "is not a slot (0-31)"),
    (f"backend tcp {VIP} 80 slot 1 fd01::1 80 mac 02:00:00:00:00:01 port 0", "a service and its backends share"),
    (f"backend tcp {VIP} 80 slot 1 10.1.0.1 80 mac 02:00:00:00:00:01 port 0 now", "a backend reads:"),
    (f"backend sctp {VIP} 80 slot 1 10.1.0.1 80 mac 02:00:00:00:00:01 port 0", "use tcp or udp"),
    (f"service tcp {VIP} 0", "is not a port number"),
    ("timeout 0", "is not a timeout in seconds"),
    ("balance round-robin", "start it with service, backend or timeout"),
])
def test_lb_rules_errors_name_the_line(pair, rules_file, line, reason):
    path = rules_file(f"service tcp {VIP} 80\n{line}\n")
    assert_rules_rejected(pair.dut_ns, "lb", path, 2, reason)


def test_lb_kernel_and_native_agree(tmp_path):
    results = run_differential("lb", tmp_path, rules=lb_rules())
    actions = {r["kernel"]["action"] for r in results.values()}
    assert XDP_PASS in actions
    frames = [(f"flow{c}", to_service_raw(c)) for c in range(30000, 30040)]
    results = run_differential("lb", tmp_path, rules=lb_rules(), frames=frames)
    assert {r["kernel"]["action"] for r in results.values()} == {XDP_TX}


def to_service_raw(cport: int) -> bytes:
    return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="198.18.0.1", dst=VIP)
                 / TCP(sport=cport, dport=VPORT))

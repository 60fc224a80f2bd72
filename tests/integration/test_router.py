"""The router: the same frames give the same bytes out in XDP mode and in two AF_XDP modes."""

from __future__ import annotations

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.inet6 import IPv6
from scapy.layers.l2 import ARP, Ether

from lab_helpers import assert_rules_rejected, run_xnf, wait_until
from differential import XDP_DROP, XDP_PASS, XDP_REDIRECT, run_differential
from test_xdp_nfs import exchange
from xnf import control
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab import paths

MODES = paths.Modes(paths.each_build)
NEXT_HOP_B = "02:aa:00:00:00:01"


def routes(t: Topology) -> str:
    out = t.links[1]
    return (f"route 198.18.1.0/24 via {out.gen_mac} port 1\n"
            f"route 198.18.1.128/25 via {NEXT_HOP_B} port 1   # longer: wins for .128-.255\n"
            f"route 2001:2:0:1::/64 via {out.gen_mac} port 1\n"
            f"local {t.links[0].dut_ip}/32\n"
            f"port 1 mac {out.dut_mac}\n")


def udp(t: Topology, dst: str, ttl: int = 64, sport: int = 1000) -> bytes:
    link = t.links[0]
    return bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=dst, ttl=ttl)
                 / UDP(sport=sport, dport=7) / b"routed")


def udp6(t: Topology, dst: str, hops: int = 64) -> bytes:
    link = t.links[0]
    return bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IPv6(src=link.gen_ip6, dst=dst, hlim=hops)
                 / UDP(sport=1000, dport=7) / b"routed")


def expected(frame: bytes, dst_mac: str, src_mac: str) -> bytes:
    """What a router must make of a frame: next hop's MAC, the port's MAC, TTL - 1, checksum right."""
    packet = Ether(frame)
    packet.dst, packet.src = dst_mac, src_mac
    if IP in packet:
        packet[IP].ttl -= 1
        del packet[IP].chksum
    else:
        packet[IPv6].hlim -= 1
    return bytes(packet)


@pytest.mark.parametrize("mode", MODES)
def test_router_forwards_by_longest_prefix(mode, rules_file, two_port):
    # the local frame makes the DUT's stack answer: a static neighbour keeps it from ARPing (that reply
    # would pass through the router too, as one more non-IP frame)
    two_port.run(two_port.dut_ns, ["ip", "neigh", "replace", two_port.links[0].gen_ip, "lladdr", two_port.links[0].gen_mac, "dev", "dut0"])
    nf = NfInstance.start(two_port, "router", mode, two_port.dut_ifaces, rules=rules_file(routes(two_port)))
    out = two_port.links[1]
    to_24, to_25, to_v6 = udp(two_port, "198.18.1.5"), udp(two_port, "198.18.1.200"), udp6(two_port, "2001:2:0:1::9")
    dropped = [udp(two_port, "198.18.1.7", ttl=1), udp(two_port, "198.18.5.5")]           # expired, no route
    got = exchange(two_port, [to_24, to_25, to_v6] + dropped, send_link=0, recv_link=1, expect=3)
    assert sorted(got) == sorted([expected(to_24, out.gen_mac, out.dut_mac),
                                  expected(to_25, NEXT_HOP_B, out.dut_mac),
                                  expected(to_v6, out.gen_mac, out.dut_mac)])
    exchange(two_port, [udp(two_port, two_port.links[0].dut_ip), bytes(Ether(src=two_port.links[0].gen_mac, dst="ff:ff:ff:ff:ff:ff")
                                                  / ARP(pdst=two_port.links[0].dut_ip))], send_link=0, recv_link=1)
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters == {"forwarded": 3, "expired_ttl": 1, "no_route": 1, "local": 1, "non_ip": 1, "to_kernel": 0}


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_routes_change_while_running(mode, rules_file, two_port):
    nf = NfInstance.start(two_port, "router", mode, two_port.dut_ifaces, rules=rules_file(routes(two_port)))
    frame = udp(two_port, "198.18.5.5")
    assert exchange(two_port, [frame], send_link=0, recv_link=1) == []
    rule = f"route 198.18.5.0/24 via {two_port.links[1].gen_mac} port 1"
    added = run_xnf(["rules", "add", "--name", nf.name, *rule.split()])
    assert added.returncode == 0, added.stderr
    assert rule in nf.request("rules list").splitlines()
    assert exchange(two_port, [frame], send_link=0, recv_link=1, expect=1) == [
        expected(frame, two_port.links[1].gen_mac, two_port.links[1].dut_mac)]
    nf.request(f"rules del {rule}")
    assert exchange(two_port, [frame], send_link=0, recv_link=1) == []


@pytest.mark.parametrize("line,reason", [
    ("route 198.18.1.1/24 via 02:00:00:00:00:01 port 1", "host bits set beyond /24"),
    ("route 198.18.1.0/33 via 02:00:00:00:00:01 port 1", "prefix with a length of 0-32"),
    ("route 198.18.1.0/24 via 02:00:00:00:00 port 1", "is not a MAC address"),
    ("route 198.18.1.0/24 via 02:00:00:00:00:01 port 8", "is not a port number"),
    ("route 198.18.1.0/24 port 1", "route PREFIX via MAC port N"),
    ("gateway 198.18.1.0/24", "start it with route, local, port or fib"),
])
def test_routes_file_errors_name_the_line(pair, rules_file, line, reason):
    path = rules_file(f"local 198.18.0.2/32\n{line}\n")
    assert_rules_rejected(pair.dut_ns, "router", path, 2, reason)


def test_router_kernel_and_native_agree(tmp_path):
    rules = ("route 198.18.0.0/24 via 02:00:00:00:01:01 port 1\nroute 2001:2::/64 via 02:00:00:00:01:01 port 1\n"
             "local 198.18.0.1/32\nport 1 mac 02:00:00:00:01:02\n")
    results = run_differential("router", tmp_path, rules=rules, ports=2)
    actions = {name: r["kernel"]["action"] for name, r in results.items()}
    assert actions["udp4"] == XDP_REDIRECT and actions["tcp6"] == XDP_REDIRECT
    assert actions["arp"] == XDP_PASS and actions["ihl-below-5"] == XDP_DROP


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_fib_kernel_routes_by_the_hosts_table(mode, two_port):
    """--fib kernel: bpf_fib_lookup in XDP and at tc, the rtnetlink mirror in user space; same packets, same
    bytes."""
    out = two_port.links[1]
    for command in (["sysctl", "-qw", "net.ipv4.conf.all.forwarding=1"],
                    ["ip", "route", "add", "198.18.7.0/24", "via", out.gen_ip, "dev", "dut1"],
                    ["ip", "neigh", "replace", out.gen_ip, "lladdr", out.gen_mac, "dev", "dut1", "nud",
                     "permanent"],
                    ["ip", "route", "add", "blackhole", "198.18.8.0/24"]):
        two_port.run(two_port.dut_ns, command)
    nf = NfInstance.start(two_port, "router", mode, two_port.dut_ifaces, extra=["--fib", "kernel"])
    assert "fib kernel" in nf.request("rules list").splitlines()
    routed = udp(two_port, "198.18.7.5")
    got = exchange(two_port, [routed, udp(two_port, "198.18.7.6", ttl=1), udp(two_port, "198.18.8.1")], send_link=0, recv_link=1,
                   expect=1)
    assert got == [expected(routed, out.gen_mac, out.dut_mac)]
    counters = control.request_json(nf.name, "stats")["counters"]
    assert (counters["forwarded"], counters["expired_ttl"], counters["no_route"]) == (1, 1, 1)

    def to_kernel() -> int:
        return control.request_json(nf.name, "stats")["counters"]["to_kernel"]

    def forwarded(frame: bytes) -> bool:
        return exchange(two_port, [frame], send_link=0, recv_link=1, expect=1) == [
            expected(frame, out.gen_mac, out.dut_mac)]

    def handed_to_the_stack(frame: bytes) -> bool:
        before = to_kernel()
        exchange(two_port, [frame], send_link=0, recv_link=1, expect=1)
        return to_kernel() > before

    # a route the host gains while the router runs (user space sees it at its next refresh, within 1 s)
    two_port.run(two_port.dut_ns, ["ip", "route", "add", "198.18.9.0/24", "via", out.gen_ip, "dev", "dut1"])
    wait_until(lambda: forwarded(udp(two_port, "198.18.9.9")), what="a route the host gained, in use")

    # and one it loses: no longer forwarded by the router (left to the stack, which has no route either)
    two_port.run(two_port.dut_ns, ["ip", "route", "del", "198.18.7.0/24"])
    wait_until(lambda: handed_to_the_stack(udp(two_port, "198.18.7.5")), what="a route the host lost, left to it")
    assert exchange(two_port, [udp(two_port, "198.18.7.5")], send_link=0, recv_link=1) == []


def test_fib_option_takes_kernel_or_own(pair):
    result = run_xnf(["run", "router", "--mode", "xdp", "--iface", "dut0", "--fib", "host"], ns=pair.dut_ns)
    assert result.returncode == 2 and "--fib host: the table to route by reads: fib kernel" in result.stderr

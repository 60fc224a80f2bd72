"""Real applications through xnf, between hosts attached the way containers are (a plain veth each, kernel defaults:
checksum offload on, GRO off, no XDP program): ping, iperf3 (TCP over IPv4 and IPv6, UDP) and HTTP (nginx and
curl) through the router, the firewall as a bump in the wire, lb to backends running real servers, a chain and a
split chain, in every mode. In the XDP and AF_XDP modes xnf fixes the hosts' veths by its default (--peers fix); at
tc it must leave them exactly as they were, which each test compares while the NF runs. Each test checks that bytes
arrive intact (the download's SHA-256, iperf3's byte counts, no checksum error counted by any host's stack) and
that xnf's counters equal what the applications saw."""

from __future__ import annotations

import contextlib

import pytest

from xnf import contract, control
from xnf.lab import apps, paths
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

PINGS = 20
# (mode, the options that make it). The router walks every way xnf carries frames, both transmit paths of the workers
# (the runtime's mode table says which, python/xnf/lab/paths.py); the other NFs one path of each kind, whose paths run
# their code alike.
EVERY_PATH = paths.Selection()
MODES = paths.Selection(select=paths.representative)
USER_SPACE = [key for key, path in paths.representative().items() if not path.nf_in_kernel]


@contextlib.contextmanager
def hosts_left_alone(t: HostsTopology, mode: str):
    """At tc: every host's interface (link attributes, offloads) as it was before the NF started, after the
    applications ran through it."""
    before = t.host_settings() if contract.mode(mode)["hook"] == "tc" else None
    yield
    if before is not None:
        assert t.host_settings() == before


def counters(nf: NfInstance) -> dict:
    stats = control.request_json(nf.name, "stats")
    return {**stats["counters"], **{verdict: c["packets"] for verdict, c in stats["verdicts"].items()}}


def delta(before: dict, after: dict, *names: str) -> int:
    return sum(after[n] - before[n] for n in names)


def assert_applications_pass(t: HostsTopology, client: int, server: int, server_ips: tuple[str, str]) -> None:
    """iperf3 TCP over IPv4 and IPv6 and UDP, and an HTTP download over both, from host client to server's
    addresses: every byte of the downloads arrives intact (their SHA-256; iperf3's receiver stops counting at the
    end of its interval, so its totals are not exact), no datagram is lost, and no host's stack saw a bad
    checksum."""
    c, s = t.host(client), t.host(server)
    ip4, ip6 = server_ips
    for ip in (ip4, ip6):
        tcp = apps.iperf3(t, c.ns, s.ns, ip)
        assert tcp.received_bytes > 0, f"TCP to {ip}: {tcp}"
    udp = apps.iperf3(t, c.ns, s.ns, ip4, udp_datagrams=2000)
    assert udp.packets > 0 and udp.lost_packets == 0, f"UDP to {ip4}: {udp}"
    web = apps.WebServer(t, s.ns, ip4)
    web6 = apps.WebServer(t, s.ns, ip6, port=apps.HTTP_PORT + 1)
    assert apps.download_sha256(c.ns, web.url) == web.sha256
    assert apps.download_sha256(c.ns, web6.url) == web6.sha256
    assert [apps.checksum_errors(h.ns) for h in t.host_list] == [0] * t.hosts


@pytest.mark.parametrize("variant", EVERY_PATH)
def test_router_carries_real_applications(variant, rules_file):
    mode, extra = EVERY_PATH[variant]
    with HostsTopology(hosts=2) as t:
        with hosts_left_alone(t, mode):
            nf = NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(t.router_rules()), extra=extra)
            h0, h1 = t.host(0), t.host(1)
            for dst in (h1.ip, h1.ip6):
                before = counters(nf)
                assert apps.ping(h0.ns, dst, PINGS) == PINGS
                assert delta(before, counters(nf), "forwarded") == 2 * PINGS  # requests and replies, nothing else
            assert apps.ping(h0.ns, h0.dut_ip, 3) == 3 and apps.ping(h0.ns, h0.dut_ip6, 3) == 3  # the DUT itself
            assert_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
        assert nf.stop() == 0


@pytest.mark.parametrize("variant", MODES)
def test_firewall_as_a_bump_in_the_wire_carries_real_applications(variant, rules_file):
    """The hosts' own chatter crosses the wire too (IPv6's multicast listener reports and solicitations), so the
    pings are counted by rules of their own: their hits are the pings, requests and replies."""
    mode, extra = MODES[variant]
    with HostsTopology(kind="wire", hosts=2) as t:
        h0, h1 = t.host(0), t.host(1)
        rules = f"allow icmp {h0.ip} {h1.ip}\nallow icmp {h1.ip} {h0.ip}\ndefault allow\n"
        with hosts_left_alone(t, mode):
            nf = NfInstance.start(t, "firewall", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra)
            before = counters(nf)
            assert apps.ping(h0.ns, h1.ip, PINGS) == PINGS  # ARP crosses the wire first
            assert delta(before, counters(nf), "rule_allow") == 2 * PINGS
            assert apps.ping(h0.ns, h1.ip6, PINGS) == PINGS  # and neighbour discovery
            assert_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
        assert nf.stop() == 0


VIP, VIP6, IPERF_VPORT, HTTP_VPORT = "198.19.100.1", "2001:2:0:100::1", apps.IPERF_PORT, 80


def lb_rules(t: HostsTopology) -> str:
    """iperf3 to one backend (its control and data connections must meet one server); HTTP to two."""
    lines = [f"service tcp {VIP} {IPERF_VPORT}", f"service tcp {VIP6} {IPERF_VPORT}",
             f"service tcp {VIP} {HTTP_VPORT}", f"service tcp {VIP6} {HTTP_VPORT}"]
    lines += [f"backend tcp {VIP} {IPERF_VPORT} slot 0 {t.host(1).ip} {IPERF_VPORT} mac {t.host(1).mac} port 1",
              f"backend tcp {VIP6} {IPERF_VPORT} slot 0 {t.host(1).ip6} {IPERF_VPORT} mac {t.host(1).mac} port 1"]
    for slot, b in enumerate((t.host(1), t.host(2))):
        lines += [f"backend tcp {VIP} {HTTP_VPORT} slot {slot} {b.ip} {apps.HTTP_PORT} mac {b.mac} port {b.index}",
                  f"backend tcp {VIP6} {HTTP_VPORT} slot {slot} {b.ip6} {apps.HTTP_PORT} mac {b.mac} "
                  f"port {b.index}"]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("variant", MODES)
def test_lb_carries_real_applications_to_real_backends(variant, rules_file):
    mode, extra = MODES[variant]
    with HostsTopology(hosts=3) as t:
        with hosts_left_alone(t, mode):
            nf = NfInstance.start(t, "lb", mode, t.dut_ifaces, rules=rules_file(lb_rules(t)), extra=extra)
            client, b1, b2 = t.host(0), t.host(1), t.host(2)
            for vip, backend_ip in ((VIP, b1.ip), (VIP6, b1.ip6)):
                tcp = apps.iperf3(t, client.ns, b1.ns, backend_ip, port=IPERF_VPORT, connect_to=vip)
                assert tcp.received_bytes > 0
            sites = [apps.WebServer(t, b.ns, addr) for b in (b1, b2) for addr in (b.ip, b.ip6)]
            assert len({site.sha256 for site in sites}) == len(sites)
            before = counters(nf)
            for url in (f"http://{VIP}:{HTTP_VPORT}/file", f"http://[{VIP6}]:{HTTP_VPORT}/file"):
                for _ in range(4):
                    assert apps.download_sha256(client.ns, url) in {site.sha256 for site in sites}  # a backend's
            assert delta(before, counters(nf), "new_session") == 8  # one per connection
            assert [apps.checksum_errors(h.ns) for h in t.host_list] == [0, 0, 0]
        assert nf.stop() == 0


def chain_rules(t: HostsTopology) -> str:
    return "firewall default allow\n" + "".join(f"router {line}\n" for line in t.router_rules().splitlines())


CHAINS = [(variant, None) for variant in MODES] + [(variant, 1) for variant in USER_SPACE]


@pytest.mark.parametrize("variant,split", CHAINS, ids=[f"{v}{'-split' if s else ''}" for v, s in CHAINS])
def test_a_chain_carries_real_applications(variant, split, rules_file):
    """chain:firewall,router whole in every mode, and split (the firewall in XDP, the router in the workers)."""
    mode, extra = MODES[variant]
    with HostsTopology(hosts=2) as t:
        with hosts_left_alone(t, mode):
            nf = NfInstance.start(t, "chain:firewall,router", mode, t.dut_ifaces, rules=rules_file(chain_rules(t)),
                                  extra=extra + (["--split", str(split)] if split else []))
            h1 = t.host(1)
            for dst in (h1.ip, h1.ip6):
                before = counters(nf)
                assert apps.ping(t.host(0).ns, dst, PINGS) == PINGS
                assert delta(before, counters(nf), "router.forwarded") == 2 * PINGS
            assert_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
        assert nf.stop() == 0


def fwd_rules(t: HostsTopology) -> str:
    """Host 0 is the uplink's next hop; hosts 1.. are containers, each by its IPv4 and IPv6 address."""
    up, lines = t.host(0), []
    for c in t.host_list[1:]:
        lines += [f"container {c.ip} port {c.index} mac {c.mac}", f"container {c.ip6} port {c.index} mac {c.mac}"]
    return f"uplink via {up.mac} from {up.dut_mac}\n" + "\n".join(lines) + "\n"


@pytest.mark.parametrize("variant", MODES)
def test_fwd_serves_ipv4_and_ipv6_containers(variant, rules_file):
    """The containers resolve their gateway (the host) by ARP and neighbour discovery through fwd, and talk to the
    uplink's side over both families."""
    mode, extra = MODES[variant]
    with HostsTopology(hosts=2) as t:
        with hosts_left_alone(t, mode):
            nf = NfInstance.start(t, "fwd", mode, t.dut_ifaces, rules=rules_file(fwd_rules(t)), extra=extra)
            uplink, container = t.host(0), t.host(1)
            for dst in (container.ip, container.ip6):
                before = counters(nf)
                assert apps.ping(uplink.ns, dst, PINGS) == PINGS
                assert delta(before, counters(nf), "to_container") == PINGS
                assert delta(before, counters(nf), "to_uplink") == PINGS
            assert_applications_pass(t, 0, 1, (container.ip, container.ip6))
        assert nf.stop() == 0

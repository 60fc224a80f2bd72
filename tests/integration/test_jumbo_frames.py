"""Frames longer than a page: every host's veth and DUT port at MTU 9,000, real applications through the NFs in
every way xnf carries frames (XDP taking multi-buffer frames, AF_XDP sockets taking frames of several descriptors
on both transmit paths, hybrid, tc): pings of 9,000-byte packets with don't-fragment set, iperf3 TCP over both
families and UDP in 8,900-byte datagrams, HTTP downloads checked by SHA-256, no checksum error on any host, and the
NF's byte counters counting every buffer of a frame; a capture keeps every buffer; an MTU the sockets' descriptors
cannot hold is refused at start, and dropped whole and counted when it comes while running."""

from __future__ import annotations

import pytest
from scapy.layers.inet import ICMP
from scapy.utils import PcapNgReader

from xnf import contract, control
from xnf.lab import apps, netns, paths
from xnf.lab.gnb import TUNNEL_BYTES
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from lab_helpers import run_xnf, wait_until, xdp_attached
from test_capture import start_dump
from test_nat import hosts_behind_a_nat, nat_rules
from test_upf import ue_behind_a_gnb, upf_rules
from test_real_traffic import HTTP_VPORT, VIP, VIP6, chain_rules, fwd_rules, hosts_left_alone, lb_rules

MTU = 9000
PING_PAYLOAD = {4: MTU - 20 - 8, 6: MTU - 40 - 8}   # an IP packet of the whole MTU
DATAGRAM = 8900
PINGS = 10


JUMBO = paths.with_auto_tx(paths.representative)   # a live frame is one page: auto takes the xsk ring for a jumbo port


def first_contact(ns: str, dst: str) -> None:
    """A small ping answered first, so that the neighbours on the way are resolved: an ARP request or neighbour
    solicitation that met the program before it was in force (dropped, counted as not_ready) is retried a second
    later, and the packets waiting for it meanwhile overflow the neighbour's queue, which holds ~200 KB (about eight
    9,000-byte packets)."""
    wait_until(lambda: apps.ping(ns, dst, 1) == 1, what=f"a first ping from {ns} to {dst}")


def redirected(nf: NfInstance) -> tuple[int, int]:
    counted = control.request_json(nf.name, "stats")["verdicts"]["redirect"]
    return counted["packets"], counted["bytes"]


def assert_jumbo_pings(t: HostsTopology, nf: NfInstance, src: int, dst_ips: tuple[str, str]) -> None:
    """Both families' largest packets arrive whole, and the NF counts each frame's every byte."""
    for family, dst in zip((4, 6), dst_ips):
        first_contact(t.host(src).ns, dst)
        packets, bytes_ = redirected(nf)
        assert apps.ping(t.host(src).ns, dst, PINGS, size=PING_PAYLOAD[family]) == PINGS, dst
        more_packets, more_bytes = redirected(nf)
        assert more_packets - packets == 2 * PINGS   # requests and replies
        assert more_bytes - bytes_ == 2 * PINGS * (14 + MTU)


def assert_jumbo_applications_pass(t: HostsTopology, client: int, server: int, server_ips: tuple[str, ...],
                                   connect_to: tuple[str, ...] | None = None, udp: bool = True) -> None:
    """iperf3 TCP to each address (through connect_to where an lb stands between) and UDP in 8,900-byte
    datagrams to the first, none lost; no host's stack saw a bad checksum."""
    c, s = t.host(client), t.host(server)
    targets = connect_to or server_ips
    for ip, target in zip(server_ips, targets):
        tcp = apps.iperf3(t, c.ns, s.ns, ip, connect_to=target)
        assert tcp.received_bytes > 0, f"TCP to {target}: {tcp}"
    if udp:
        overflowed = apps.udp_receive_errors(s.ns)
        datagrams = apps.iperf3(t, c.ns, s.ns, server_ips[0], connect_to=targets[0], udp_datagrams=500,
                                datagram_bytes=DATAGRAM, bitrate="50M", socket_buffer=apps.BURST_RECEIVE_BUFFER)
        at_receiver = apps.udp_receive_errors(s.ns) - overflowed
        assert datagrams.packets == 500 and datagrams.lost_packets == 0, \
            f"{datagrams}; of them dropped by the receiving socket: {at_receiver}"
    assert [apps.checksum_errors(h.ns) for h in t.host_list] == [0] * t.hosts


def assert_downloads(t: HostsTopology, client: int, server: int, urls: tuple[str, str] | None = None) -> None:
    s = t.host(server)
    sites = [apps.WebServer(t, s.ns, s.ip), apps.WebServer(t, s.ns, s.ip6, port=apps.HTTP_PORT + 1)]
    for site, url in zip(sites, urls or [site.url for site in sites]):
        assert apps.download_sha256(t.host(client).ns, url) == site.sha256


@pytest.mark.parametrize("variant", JUMBO)
def test_router_carries_jumbo_frames(variant, rules_file):
    mode, extra = JUMBO[variant]
    with HostsTopology(hosts=2, mtu=MTU) as t:
        with hosts_left_alone(t, mode):
            with NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(t.router_rules()),
                                  extra=extra) as nf:
                h1 = t.host(1)
                assert_jumbo_pings(t, nf, 0, (h1.ip, h1.ip6))
                assert_jumbo_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
                assert_downloads(t, 0, 1)


@pytest.mark.parametrize("variant", JUMBO)
def test_firewall_carries_jumbo_frames(variant, rules_file):
    mode, extra = JUMBO[variant]
    with HostsTopology(kind="wire", hosts=2, mtu=MTU) as t:
        h0, h1 = t.host(0), t.host(1)
        rules = f"allow icmp {h0.ip} {h1.ip}\nallow icmp {h1.ip} {h0.ip}\ndefault allow\n"
        with NfInstance.start(t, "firewall", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra):
            first_contact(h0.ns, h1.ip)   # ARP crosses the wire first
            first_contact(h0.ns, h1.ip6)
            assert apps.ping(h0.ns, h1.ip, PINGS, size=PING_PAYLOAD[4]) == PINGS
            assert apps.ping(h0.ns, h1.ip6, PINGS, size=PING_PAYLOAD[6]) == PINGS
            assert_jumbo_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
            assert_downloads(t, 0, 1)


@pytest.mark.parametrize("variant", JUMBO)
def test_lb_carries_jumbo_frames_to_its_backends(variant, rules_file):
    mode, extra = JUMBO[variant]
    with HostsTopology(hosts=3, mtu=MTU) as t:
        with NfInstance.start(t, "lb", mode, t.dut_ifaces, rules=rules_file(lb_rules(t)), extra=extra):
            b1 = t.host(1)
            assert_jumbo_applications_pass(t, 0, 1, (b1.ip, b1.ip6), connect_to=(VIP, VIP6), udp=False)
            site = apps.WebServer(t, b1.ns, b1.ip, size=4 << 20)
            other = apps.WebServer(t, t.host(2).ns, t.host(2).ip, size=4 << 20)
            for _ in range(4):
                assert apps.download_sha256(t.host(0).ns, f"http://{VIP}:{HTTP_VPORT}/file") in \
                    {site.sha256, other.sha256}


@pytest.mark.parametrize("variant", JUMBO)
def test_nat_translates_jumbo_frames(variant, rules_file):
    mode, extra = JUMBO[variant]
    with HostsTopology(hosts=2, mtu=MTU) as t:
        hosts_behind_a_nat(t)
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(nat_rules(t)), extra=extra):
            outside = t.host(1)
            first_contact(t.host(0).ns, outside.ip)
            assert apps.ping(t.host(0).ns, outside.ip, PINGS, size=PING_PAYLOAD[4]) == PINGS
            assert_jumbo_applications_pass(t, 0, 1, (outside.ip,))   # IPv4: the NAT's rules translate no IPv6
            site = apps.WebServer(t, outside.ns, outside.ip, size=4 << 20)
            assert apps.download_sha256(t.host(0).ns, site.url) == site.sha256


@pytest.mark.parametrize("variant", JUMBO)
def test_fwd_and_a_chain_carry_jumbo_frames(variant, rules_file):
    mode, extra = JUMBO[variant]
    with HostsTopology(hosts=2, mtu=MTU) as t:
        h1 = t.host(1)
        with NfInstance.start(t, "fwd", mode, t.dut_ifaces, rules=rules_file(fwd_rules(t)), extra=extra) as nf:
            assert_jumbo_pings(t, nf, 0, (h1.ip, h1.ip6))
            assert_jumbo_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
        with NfInstance.start(t, "chain:firewall,router", mode, t.dut_ifaces, rules=rules_file(chain_rules(t)),
                              extra=extra):
            first_contact(t.host(0).ns, h1.ip)
            assert apps.ping(t.host(0).ns, h1.ip, PINGS, size=PING_PAYLOAD[4]) == PINGS
            assert_jumbo_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
            assert_downloads(t, 0, 1)


@pytest.mark.parametrize("variant", JUMBO)
def test_upf_tunnels_jumbo_packets(variant, rules_file):
    """N3 at 9,044 bytes, so that the UE's 9,000-byte packets travel in their tunnel: up, the UPF takes a G-PDU of
    9,058 bytes off a frame of three buffers; down, it wraps the server's 9,000-byte packets. At tc a TCP download
    would come down as GSO segments, which GTP-U cannot wrap (refused, counted: test_upf); ping and UDP still
    cross in both directions."""
    mode, extra = JUMBO[variant]
    with HostsTopology(hosts=2, mtu=MTU + TUNNEL_BYTES) as t:
        ue_behind_a_gnb(t, n3_mtu=MTU + TUNNEL_BYTES)
        ue_ns, server = t.host(0).ns, t.host(1)
        with NfInstance.start(t, "upf", mode, t.dut_ifaces, rules=rules_file(upf_rules(t)), extra=extra) as nf:
            first_contact(ue_ns, server.ip)   # both hops' neighbours
            assert apps.ping(ue_ns, server.ip, PINGS, interval=0.1, size=PING_PAYLOAD[4]) == PINGS
            for reverse in (False, True):
                udp = apps.iperf3(t, ue_ns, server.ns, server.ip, udp_datagrams=200, datagram_bytes=DATAGRAM,
                                  bitrate="20M", reverse=reverse)
                assert udp.packets >= 200 and udp.lost_packets == 0, udp   # -R may count one more sent
            if contract.mode(mode)["hook"] == "xdp":
                web = apps.WebServer(t, server.ns, server.ip, size=1 << 20)
                assert apps.download_sha256(ue_ns, web.url) == web.sha256
            counters = control.request_json(nf.name, "stats")["counters"]
            assert counters["malformed_tunnel"] == counters["no_room"] == 0, counters
            assert apps.checksum_errors(server.ns) == apps.checksum_errors(ue_ns) == 0


def test_xdp_finishes_the_unfinished_checksums_of_jumbo_segments(rules_file):
    """Peers left with checksum offload on (--peers check, GRO set by hand): their stacks send 9,000-byte TCP
    segments whose checksum holds only the pseudo-header's sum, in three buffers; xnf finishes each before it leaves
    as an XDP frame, which would otherwise reach the other host's stack as corrupt."""
    with HostsTopology(hosts=2, mtu=MTU) as t:
        for h in t.host_list:
            netns.run(h.ns, ["ethtool", "-K", "eth0", "gro", "on"])
        with NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=["--peers", "check"]):
            h1 = t.host(1)
            assert_jumbo_applications_pass(t, 0, 1, (h1.ip, h1.ip6))
            assert_downloads(t, 0, 1)


def test_a_frame_of_more_descriptors_than_a_frame_may_have_is_refused_at_start(rules_file):
    """With --frame-size 2048 a descriptor holds 1,792 bytes, so an MTU of 40,000 would make frames of 23
    descriptors, more than the 18 a frame may have (the kernel sends none longer): refused with the reason and
    the fix, nothing attached."""
    with HostsTopology(hosts=2, mtu=40000) as t:
        result = run_xnf(["run", "router", "--mode", "afxdp", "--frame-size", "2048", "--iface", "dut0", "--iface",
                          "dut1", "--rules", rules_file(t.router_rules())], ns=t.dut_ns)
        assert result.returncode != 0
        assert ("interface dut0 has an MTU of 40000: a frame would take 23 AF_XDP descriptors of --frame-size 2048, "
                "and a frame may have 18: use --frame-size 4096, or lower the MTU to 32238") in result.stderr
        assert "Traceback" not in result.stderr
        assert not xdp_attached(t.dut_ns, "dut0") and not xdp_attached(t.dut_ns, "dut1")


def test_a_frame_past_what_a_frame_may_have_is_dropped_whole_and_counted(rules_file):
    """The MTU raised past what --frame-size 2048 allows while the workers run (the start refuses it, above): each
    39,042-byte frame comes as 22 descriptors; the worker drops it whole, counts it (rx_too_many_buffers), and the
    frames after it go through."""
    with HostsTopology(hosts=2, mtu=MTU) as t:
        h0, h1 = t.host(0), t.host(1)
        with NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=["--frame-size", "2048", *paths.worker_options("afxdp")]) as nf:
            first_contact(h0.ns, h1.ip)
            for ns, iface in ((t.dut_ns, "dut0"), (h0.ns, "eth0")):
                netns.ip("link", "set", iface, "mtu", "40000", ns=ns)
            assert apps.ping(h0.ns, h1.ip, 3, interval=0.1, size=39000) == 0
            workers = control.request_json(nf.name, "stats")["workers"]
            assert sum(w["rx_too_many_buffers"] for w in workers) == 3
            assert apps.ping(h0.ns, h1.ip, PINGS, size=PING_PAYLOAD[4]) == PINGS


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_a_capture_keeps_every_buffer_of_a_jumbo_frame(mode, tmp_path, rules_file):
    """xnf dump of the router's forwarded frames: each 9,014-byte echo request and reply is written whole, the
    bytes of its further buffers included (the echo's payload is ping's own pattern to its last byte)."""
    with HostsTopology(hosts=2, mtu=MTU) as t:
        h0, h1 = t.host(0), t.host(1)
        with NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(t.router_rules()),
                              extra=paths.worker_options(mode)) as nf:
            first_contact(h0.ns, h1.ip)
            written = tmp_path / "jumbo.pcapng"
            dump = start_dump(nf.name, "--verdict", "redirect", "--count", "4", "-w", str(written))
            assert apps.ping(h0.ns, h1.ip, 2, interval=0.1, size=PING_PAYLOAD[4]) == 2
            _, err = dump.communicate(timeout=30)
            assert dump.returncode == 0, err
        frames = list(PcapNgReader(str(written)))
        assert len(frames) == 4
        for frame in frames:
            assert frame.wirelen == len(frame) == 14 + MTU
            payload = bytes(frame[ICMP].payload)   # ping's: a time stamp, then byte i = i
            assert payload[16:] == bytes(i & 0xFF for i in range(16, PING_PAYLOAD[4]))

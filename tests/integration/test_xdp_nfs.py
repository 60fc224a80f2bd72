"""The first NFs in XDP mode, with real frames through veth pairs in namespaces."""

from __future__ import annotations

import pytest

from lab_helpers import run_xnf, xdp_attached
from packets import arp_request, icmp4, swap_macs, tcp6, udp4
from xnf.lab import paths
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology

N = 200


def exchange(topology: Topology, frames: list[bytes], send_link: int = 0, recv_link: int = 0,
             expect: int | None = None) -> list[bytes]:
    """Sends frames on gen<send_link> and returns what comes back on gen<recv_link>."""
    links = topology.links
    with PacketPort(topology.gen_ns, links[send_link].gen_if) as tx, \
            PacketPort(topology.gen_ns, links[recv_link].gen_if) as rx:
        tx.send(frames)
        return rx.receive(expect=expect)


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("mode", paths.Modes(paths.xdp_attachments))
def test_macswap_returns_every_frame_with_macs_swapped(mode, queues):
    with Topology("pair", queues=queues) as t:
        nf = NfInstance.start(t, "macswap", mode, t.dut_ifaces)
        link = t.links[0]
        sent = [udp4(link, 1000 + i, 2000, seq=i) for i in range(N)]
        got = exchange(t, sent, expect=N)
        assert sorted(got) == sorted(swap_macs(f) for f in sent)
        stats = nf.stats()
        assert stats["tx"]["packets"] == N
        assert stats["tx"]["bytes"] == sum(len(f) for f in sent)
        assert stats["drop"]["packets"] == 0
        assert nf.stop() == 0
        assert not xdp_attached(t.dut_ns, "dut0")


def test_drop_drops_and_counts_every_frame(pair):
    nf = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces)
    link = pair.links[0]
    sent = [udp4(link, 1, 2, seq=i) for i in range(N)] + [arp_request(link), tcp6(link, 3, 4)]
    assert exchange(pair, sent) == []
    stats = nf.stats()
    assert stats["drop"]["packets"] == len(sent)
    assert stats["drop"]["bytes"] == sum(len(f) for f in sent)
    assert stats["tx"]["packets"] == 0


FW_RULES = """\
# the ACL of the firewall test
drop udp 198.18.0.1 1111 198.18.0.2 53
drop tcp 2001:2:0:0::1 4000 2001:2:0:0::2 80   # IPv6 too
drop icmp 198.18.0.1 198.18.0.2
"""


def firewall_traffic(link):
    """(frame, matches the ACL of FW_RULES)"""
    return [
        (udp4(link, 1111, 53, seq=1), True),
        (udp4(link, 1111, 54, seq=2), False),   # one port off
        (udp4(link, 1112, 53, seq=3), False),
        (udp4(link, 1111, 53, seq=4, dst="198.18.0.9"), False),
        (tcp6(link, 4000, 80), True),
        (tcp6(link, 4000, 81), False),
        (icmp4(link, seq=7), True),
        (arp_request(link), False),            # non-IP: always forwarded
        (udp4(link, 5555, 6666, seq=9), False),
    ]


def test_firewall_drops_exactly_the_acl_matches(pair, rules_file):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, rules=rules_file(FW_RULES))
    traffic = firewall_traffic(pair.links[0])
    passing = [f for f, match in traffic if not match]
    got = exchange(pair, [f for f, _ in traffic], expect=len(passing))
    assert sorted(got) == sorted(passing)  # forwarded untouched, back out of the only port
    stats = nf.stats()
    assert stats["drop"]["packets"] == len(traffic) - len(passing)
    assert stats["tx"]["packets"] == len(passing)


def test_firewall_rule_added_while_running_takes_effect(pair, rules_file):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, rules=rules_file(FW_RULES))
    link = pair.links[0]
    flow = udp4(link, 5555, 6666, seq=1)
    assert exchange(pair, [flow], expect=1) == [flow]

    added = run_xnf(["rules", "add", "--name", nf.name, "drop", "udp", link.gen_ip, "5555", link.dut_ip, "6666"])
    assert added.returncode == 0, added.stderr
    listed = run_xnf(["rules", "list", "--name", nf.name]).stdout
    assert f"drop udp {link.gen_ip} 5555 {link.dut_ip} 6666" in listed.splitlines()
    assert exchange(pair, [flow]) == []
    assert nf.stats()["drop"]["packets"] == 1

    deleted = run_xnf(["rules", "del", "--name", nf.name, "drop", "udp", link.gen_ip, "5555", link.dut_ip, "6666"])
    assert deleted.returncode == 0, deleted.stderr
    assert exchange(pair, [flow], expect=1) == [flow]


def test_firewall_default_drop_with_allow_rule(pair, rules_file):
    link = pair.links[0]
    rules = f"default drop\nallow udp {link.gen_ip} 7 {link.dut_ip} 7\n"
    NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, rules=rules_file(rules))
    allowed = udp4(link, 7, 7)
    got = exchange(pair, [udp4(link, 7, 8), allowed, udp4(link, 8, 7), arp_request(link)], expect=2)
    assert sorted(got) == sorted([allowed, arp_request(link)])


def test_firewall_two_ports_forwards_to_the_other_port(two_port, rules_file):
    nf = NfInstance.start(two_port, "firewall", "xdp", two_port.dut_ifaces, rules=rules_file(FW_RULES))
    traffic = firewall_traffic(two_port.links[0])
    passing = [f for f, match in traffic if not match]
    sent = [f for f, _ in traffic]
    assert sorted(exchange(two_port, sent, send_link=0, recv_link=1, expect=len(passing))) == sorted(passing)
    assert exchange(two_port, sent, send_link=0, recv_link=0) == []
    stats = nf.stats()
    assert stats["redirect"]["packets"] == 2 * len(passing)
    assert stats["redirect_error"]["packets"] == 0


def test_malformed_frames_are_dropped_and_counted(pair, rules_file):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, rules=rules_file(FW_RULES))
    good = udp4(pair.links[0], 1, 2)
    truncated = [good[:20], good[:34 + 4], good[:14 + 10]]  # inside IPv4, inside UDP, inside IPv4 again
    assert exchange(pair, truncated) == []
    stats = nf.stats()
    assert stats["malformed"]["packets"] == len(truncated)
    assert stats["drop"]["packets"] == len(truncated)


def test_stats_cli_reports_the_instance(pair):
    nf = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces)
    exchange(pair, [udp4(pair.links[0], 1, 2)] * 5)
    result = run_xnf(["stats", "--name", nf.name, "--json"])
    assert result.returncode == 0, result.stderr
    assert '"drop": {\n      "packets": 5' in result.stdout
    table = run_xnf(["stats", "--name", nf.name])
    assert "drop" in table.stdout and "5" in table.stdout


def test_edge_topology_reaches_local_apps_and_cleans_up():
    from xnf.lab import netns

    import socket

    with Topology("edge", apps=2) as t:
        assert [a.ns for a in t.app_list] == t.namespaces[2:]
        for app in t.app_list:
            with netns.entered(t.dut_ns):
                server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                server.bind((app.dut_ip, 5000))
            with netns.entered(app.ns):
                client = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            server.settimeout(2)
            client.settimeout(2)
            client.sendto(b"hello edge", (app.dut_ip, 5000))
            data, peer = server.recvfrom(100)
            assert data == b"hello edge" and peer[0] == app.app_ip
            server.sendto(b"back", peer)
            assert client.recvfrom(100)[0] == b"back"
            server.close()
            client.close()
        names = t.namespaces
    assert not any(netns.exists(ns) for ns in names)

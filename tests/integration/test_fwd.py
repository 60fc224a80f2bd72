"""The container forwarder on an edge topology: a client reaches the right container and the answer
comes back, in XDP mode and in two modes with AF_XDP workers."""

from __future__ import annotations

import socket

import pytest
from scapy.layers.inet import ICMP, IP, UDP
from scapy.layers.l2 import ARP, Dot1Q, Ether

from xnf import control
from xnf.lab import netns, paths
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology


def rules(t: Topology) -> str:
    uplink = t.links[0]
    lines = [f"uplink via {uplink.gen_mac} from {uplink.dut_mac}"]
    lines += [f"container {app.app_ip} port {app.index + 1} mac {app.app_mac}" for app in t.app_list]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mode", paths.Modes(paths.representative))
def test_clients_reach_their_container_and_get_answers(mode, rules_file):
    with Topology("edge", apps=2) as t:
        uplink = t.links[0]
        if not paths.find(mode).nf_in_kernel:
            # passed frames reach the host through a TAP device there: the containers' ARP for their gateway
            # would be answered on it, so their gateway is set statically (docs/afxdp.md)
            for app in t.app_list:
                netns.ip("neigh", "replace", app.dut_ip, "lladdr", app.dut_mac, "dev", app.app_if, ns=app.ns)
        ports = [uplink.dut_if] + [app.dut_if for app in t.app_list]
        nf = NfInstance.start(t, "fwd", mode, ports, rules=rules_file(rules(t)))
        servers = []
        for app in t.app_list:
            with netns.entered(app.ns):
                server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
                server.bind((app.app_ip, 7000))
                server.settimeout(3)
                servers.append(server)
        with PacketPort(t.gen_ns, uplink.gen_if) as port:
            for app in t.app_list:
                port.send([bytes(Ether(src=uplink.gen_mac, dst=uplink.dut_mac)
                                 / IP(src=uplink.gen_ip, dst=app.app_ip) / UDP(sport=5000 + app.index, dport=7000)
                                 / f"hello {app.index}".encode())])
            for app, server in zip(t.app_list, servers):
                data, peer = server.recvfrom(100)
                assert data == f"hello {app.index}".encode() and peer == (uplink.gen_ip, 5000 + app.index)
                server.sendto(f"answer {app.index}".encode(), peer)
            answers = [Ether(raw) for raw in port.receive(expect=2)]
        got = sorted(bytes(p[UDP].payload) for p in answers if UDP in p)
        assert got == [b"answer 0", b"answer 1"]
        for p in answers:
            assert p.dst == uplink.gen_mac and p.src == uplink.dut_mac
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["to_container"] == 2 and counters["to_uplink"] == 2
        for server in servers:
            server.close()


def test_fwd_kernel_and_native_agree(tmp_path):
    from differential import XDP_PASS, XDP_REDIRECT, run_differential

    rules = ("uplink via 02:00:00:00:00:01 from 02:00:00:00:00:02\n"
             "container 198.18.0.2 port 1 mac 02:00:00:01:00:02\n"
             "client 02:00:00:00:00:09 port 2 mac 02:00:00:01:01:02\n")
    results = run_differential("fwd", tmp_path, rules=rules, ports=3)
    assert results["udp4"]["kernel"]["action"] == XDP_REDIRECT
    assert results["udp4"]["kernel"]["out"][:12] == "020000010002"  # the container's MAC
    assert results["arp"]["kernel"]["action"] == XDP_PASS


def received(port: PacketPort, wanted: list) -> list:
    """Frames read until each predicate of wanted has held for one (whatever else the container says meanwhile,
    its router solicitations say)."""
    frames, left = [], list(wanted)
    while left:
        got = [Ether(f) for f in port.receive_until(lambda raw: any(w(Ether(raw)) for w in left))]
        frames += got
        left = [w for w in left if not any(w(p) for p in got)]
    return frames


VLAN = 100
VLAN_NET = "198.19.100"   # the VLAN's subnet: .1 a host on the trunk (the uplink's far end), .2 container 0
TRUNK_HOST_MAC = "02:00:00:00:64:01"


@pytest.mark.parametrize("mode", paths.Modes(paths.representative))
def test_a_vlan_of_the_trunk_bridged_to_a_container(mode, rules_file):
    """`vlan 100 port 1`: a host on the trunk's VLAN 100 and container 0, untagged, are one LAN. The host's tagged
    ARP request reaches the container, which answers it, and its echo request and UDP datagram get their answers,
    each back on the trunk tagged with VLAN 100 (this kernel has no VLAN devices: the trunk's host is frames sent
    and read on the uplink's far end). A frame of another VLAN goes to the host's stack as before."""
    with Topology("edge", apps=2) as t:
        uplink, app = t.links[0], t.app_list[0]
        netns.ip("addr", "add", f"{VLAN_NET}.2/24", "dev", app.app_if, ns=app.ns)
        ports = [uplink.dut_if] + [a.dut_if for a in t.app_list]
        nf = NfInstance.start(t, "fwd", mode, ports, rules=rules_file(rules(t) + f"vlan {VLAN} port 1\n"),
                              extra=paths.worker_options(mode))
        with netns.entered(app.ns):
            server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            server.bind((f"{VLAN_NET}.2", 7000))
            server.settimeout(5)
        tag = Ether(src=TRUNK_HOST_MAC, dst="ff:ff:ff:ff:ff:ff") / Dot1Q(vlan=VLAN)
        with PacketPort(t.gen_ns, uplink.gen_if, tags=True) as port:
            port.send([bytes(tag / ARP(hwsrc=TRUNK_HOST_MAC, psrc=f"{VLAN_NET}.1", pdst=f"{VLAN_NET}.2"))])
            arp = [r for r in received(port, [lambda p: ARP in p and p[ARP].op == 2]) if ARP in r and r[ARP].op == 2]
            assert arp[0][Dot1Q].vlan == VLAN and arp[0][ARP].psrc == f"{VLAN_NET}.2", arp
            to_app = Ether(src=TRUNK_HOST_MAC, dst=arp[0][ARP].hwsrc) / Dot1Q(vlan=VLAN)
            port.send([bytes(to_app / IP(src=f"{VLAN_NET}.1", dst=f"{VLAN_NET}.2") / ICMP(id=7, seq=1)),
                       bytes(to_app / IP(src=f"{VLAN_NET}.1", dst=f"{VLAN_NET}.2") / UDP(sport=5000, dport=7000)
                             / b"over the trunk")])
            data, peer = server.recvfrom(100)
            assert data == b"over the trunk" and peer == (f"{VLAN_NET}.1", 5000)
            server.sendto(b"and back", peer)
            is_echo = lambda p: ICMP in p and p[ICMP].type == 0
            is_answer = lambda p: UDP in p and bytes(p[UDP].payload) == b"and back"
            answers = received(port, [is_echo, is_answer])
        echo, udp = [a for a in answers if is_echo(a)], [a for a in answers if is_answer(a)]
        assert all(a[Dot1Q].vlan == VLAN and a.dst == TRUNK_HOST_MAC for a in echo + udp)
        server.close()
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["to_container"] >= 3 and counters["to_uplink"] >= 3 and counters["vlan_error"] == 0
        assert f"vlan {VLAN} port 1" in nf.request("rules list")
        assert nf.stop() == 0

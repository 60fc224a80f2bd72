"""The container forwarder on an edge topology: a client reaches the right container and the answer
comes back, in XDP mode and in two modes with AF_XDP workers."""

from __future__ import annotations

import socket

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

from xnf import control
from xnf.lab import netns
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology


def rules(t: Topology) -> str:
    uplink = t.links[0]
    lines = [f"uplink via {uplink.gen_mac} from {uplink.dut_mac}"]
    lines += [f"container {app.app_ip} port {app.index + 1} mac {app.app_mac}" for app in t.app_list]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("mode", ["xdp", "hybrid", "afxdp", "afxdp-poll"])
def test_clients_reach_their_container_and_get_answers(mode, rules_file):
    with Topology("edge", apps=2) as t:
        uplink = t.links[0]
        if mode.startswith("afxdp"):
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

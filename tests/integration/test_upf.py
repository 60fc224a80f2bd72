"""The user plane function between a gNB and a data network, with real applications: a UE behind the lab's gNB
emulator (a TUN device whose traffic goes through GTP-U tunnels built and read by scapy) pings a server, downloads
from it (checked by SHA-256) and sends it iperf3 datagrams; the UPF takes the tunnels off going up and puts them
on coming down, in every mode, and its rules count what they matched. The server has no route to the UE but the
UPF: what comes back was tunnelled by it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from scapy.contrib.gtp import GTP_U_Header
from scapy.layers.inet import IP, TCP, UDP
from scapy.layers.l2 import Ether
from differential import BUILDS_OF_MOVING_NFS, XDP_DROP, XDP_TX, run_differential
from test_lb import BACKENDS, VIP, VPORT, lb_rules
from test_real_traffic import MODES
from xnf import chain, control
from xnf.errors import XnfError
from xnf.lab import apps, netns, paths, upf_sessions
from xnf.lab.cores import DUT_CORE
from xnf.lab.generator import Generator
from xnf.lab.gnb import GTPU_PORT, N3_MTU, Gnb
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

UE, UP_TEID, DOWN_TEID, QFI = "10.60.0.1", 100, 1000, 9
FUZZ_RULES = Path(__file__).parents[1] / "fuzz" / "rules" / "upf.rules"


def upf_rules(t: HostsTopology, qer: str = "") -> str:
    gnb, server = t.host(0), t.host(1)
    return (f"n3 port 0 gateway {gnb.mac} address {gnb.dut_ip}\n"
            f"n6 port 1 gateway {server.mac}\n"
            f"pdr 1 1 uplink teid {UP_TEID} qfi {QFI} far 1{' qer 1' if qer else ''}\n"
            f"far 1 1 forward n6\n"
            f"pdr 1 2 downlink ue {UE} far 2\n"
            f"far 1 2 forward n3 teid {DOWN_TEID} to {gnb.ip} qfi {QFI}\n" + qer)


def ue_behind_a_gnb(t: HostsTopology, also_reaches: tuple[str, ...] = (), n3_mtu: int = N3_MTU) -> Gnb:
    """The UE reaches the server (host 1) and also_reaches through its tunnel; the server's way back to it is the
    UPF."""
    gnb, server = t.host(0), t.host(1)
    netns.ip("route", "add", f"{UE}/32", "via", server.dut_ip, ns=server.ns)
    return Gnb(t, gnb.ns, ue=UE, gnb=gnb.ip, upf=gnb.dut_ip, teid=UP_TEID, qfi=QFI,
               route=(f"{server.ip}/32", *also_reaches), n3_mtu=n3_mtu)


def usage(nf: NfInstance) -> dict[str, int]:
    """Packets each PDR counted, by direction, from `xnf rules list`."""
    counted = {}
    for line in nf.request("rules list").splitlines():
        found = re.match(r"pdr \d+ \d+ (uplink|downlink) .*# (\d+) packets", line)
        if found:
            counted[found[1]] = int(found[2])
    return counted


def _refuses_segments_down_the_tunnel(t: HostsTopology, nf: NfInstance, ue_ns: str, server) -> None:
    """At tc the server's TCP sends GSO segments of up to 64 KiB, which GTP-U cannot wrap (every frame cut from one
    would carry its length): the upf refuses them, counted, and sends nothing wrong. A reply of one frame and UDP go
    down the tunnel as in XDP."""
    small = apps.WebServer(t, server.ns, server.ip, size=1024)
    assert apps.download_sha256(ue_ns, small.url) == small.sha256
    udp = apps.iperf3(t, ue_ns, server.ns, server.ip, udp_datagrams=500, bitrate="2M")
    assert udp.packets == 500 and udp.lost_packets == 0, udp
    big = apps.WebServer(t, server.ns, server.ip, size=1 << 20, port=apps.HTTP_PORT + 1)
    with pytest.raises(XnfError):
        apps.download_sha256(ue_ns, big.url, timeout_s=3)
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["segment_refused"] > 0 and counters["no_room"] == 0, counters
    assert apps.checksum_errors(ue_ns) == 0


@pytest.mark.parametrize("subject", MODES)
def test_a_ue_reaches_the_data_network_through_the_tunnels(subject, rules_file):
    """ping, an HTTP download checked by SHA-256, iperf3 TCP and UDP, from the UE to the server, in every way xnf
    carries frames."""
    with HostsTopology(hosts=2) as t:
        ue_behind_a_gnb(t)
        ue_ns, server = t.host(0).ns, t.host(1)
        mode, extra = MODES[subject]
        with NfInstance.start(t, "upf", mode, t.dut_ifaces, rules=rules_file(upf_rules(t)), extra=extra) as nf:
            assert apps.ping(ue_ns, server.ip, 10) == 10
            if mode == "tc":
                _refuses_segments_down_the_tunnel(t, nf, ue_ns, server)
                return
            web = apps.WebServer(t, server.ns, server.ip, size=1 << 20)
            assert apps.download_sha256(ue_ns, web.url) == web.sha256
            tcp = apps.iperf3(t, ue_ns, server.ns, server.ip)
            assert tcp.received_bytes > 0, tcp
            udp = apps.iperf3(t, ue_ns, server.ns, server.ip, udp_datagrams=500, bitrate="2M")
            assert udp.packets == 500 and udp.lost_packets == 0, udp
            assert apps.checksum_errors(server.ns) == 0
            counters = control.request_json(nf.name, "stats")["counters"]
            assert counters["uplink"] > 100 and counters["downlink"] > 700, counters   # ACKs up, 1 MiB down
            assert counters["unknown_teid"] == counters["malformed_tunnel"] == counters["no_room"] == 0, counters
            counted = usage(nf)
            assert counted["uplink"] == counters["uplink"] and counted["downlink"] == counters["downlink"], counted
        assert nf.process.returncode == 0


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_echo_requests_are_answered(subject, rules_file):
    """Path management as a gNB does it: an echo request (built by scapy) gets an echo response with its sequence
    number and a Recovery IE, from the UPF's N3 address and port 2152."""
    with HostsTopology(hosts=2) as t:
        gnb = t.host(0)
        mode, extra = paths.find(subject).mode_and_options()
        with NfInstance.start(t, "upf", mode, t.dut_ifaces, rules=rules_file(upf_rules(t)), extra=extra) as nf:
            answer = netns.run(gnb.ns, ["python3", "-c", _ECHO, gnb.ip, gnb.dut_ip], timeout=15).stdout.split()
            assert answer == [gnb.dut_ip, str(GTPU_PORT), "2", "4321", "14"], answer
            assert control.request_json(nf.name, "stats")["counters"]["echo_answered"] == 1


_ECHO = f"""
import socket, sys
from scapy.contrib.gtp import GTP_U_Header, GTPEchoRequest
gnb, upf = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((gnb, 0))
s.settimeout(5)
s.sendto(bytes(GTP_U_Header(S=1, seq=4321, gtp_type=1) / GTPEchoRequest()), (upf, {GTPU_PORT}))
data, (addr, port) = s.recvfrom(2048)
answer = GTP_U_Header(data)
print(addr, port, answer.gtp_type, answer.seq, answer.payload.IE_list[0].ietype)
"""


def test_a_maximum_bit_rate_holds_a_session_to_it(rules_file, bare_pair):
    """The generator offers a session's tunnel 80,000 frames a second, over six times its 4 Mbit/s (the QER counts
    the inner packets, 40-odd bytes): the QER lets a part through (about a sixth; judged against half, so that a slow
    spell of the generator cannot fail it) and drops the rest, every frame counted as one or the other. The frames reach the UPF as the generator sends them
    (veth: on its own core), so the rate the QER sees is the one offered, not one a slow sender stretched."""
    link = bare_pair.links[0]
    sides = on_a_stick(link)
    uplink = f"pdr 1 1 uplink teid {upf_sessions.UPLINK_TEID} far 1"
    rules = upf_sessions.rules(sides, 1).replace(uplink, uplink + " qer 1") + "qer 1 1 mbr 4M\n"
    with NfInstance.start(bare_pair, "upf", "xdp", bare_pair.dut_ifaces, rules=rules_file(rules)) as nf:
        out = Generator(bare_pair, receive_on=0).run("--count", "80000", "--rate", "80000", "--class",
                                                    upf_sessions.uplink_class(sides, 1)).summary
        up = out["classes"][0]
        counters = control.request_json(nf.name, "stats")["counters"]
    assert up["sent"] == 80000 and 0 < up["received"] < up["sent"] / 2, up
    assert counters["qer_drop"] == up["sent"] - up["received"], (counters, up)


def test_refused_rules_say_what_to_write(rules_file):
    with HostsTopology(hosts=2) as t:
        with NfInstance.start(t, "upf", "xdp", t.dut_ifaces, rules=rules_file(upf_rules(t))) as nf:
            for line, says in [("pdr 1 3 uplink teid 0 far 1", "TEID"), ("pdr 1 3 uplink teid 5 qfi 64 far 1", "QFI"),
                               ("pdr 1 3 downlink ue 2001:db8::/48 far 1", "/64"),
                               ("far 1 3 forward n3 teid 7 to 2001:db8::1", "IPv4"),
                               ("far 1 3 forward somewhere", "a FAR reads"), ("qer 1 2 mbr fast", "bits per second"), ("qer 1 2 mbr 0.5", "1 or more"),
                               ("n3 port 9 gateway 02:00:00:00:00:01 address 10.0.0.1", "port index"),
                               ("pdr 1 3 downlink ue 0.0.0.0 far 1", "unicast IPv4"),
                               ("far 1 3 forward n3 teid 7 to 224.0.0.1 qfi 9", "multicast"),
                               ("pdr 01x 3 uplink teid 5 far 1", "SEID"),
                               ("session 1", "unknown line")]:
                with pytest.raises(XnfError, match=says):
                    nf.request(f"rules add {line}")
            # A deletion names a whole rule: a line that only shares its key (the TEID, the UE) deletes nothing.
            for other in (f"pdr 99 1 uplink teid {UP_TEID} qfi {QFI} far 1", f"pdr 1 2 downlink ue {UE} far 9",
                          "far 1 1 drop"):
                with pytest.raises(XnfError, match="the rule in force under this key is"):
                    nf.request(f"rules del {other}")
            listed = [line.split("  #")[0] for line in nf.request("rules list").splitlines()]
            assert sorted(listed) == sorted(upf_rules(t).splitlines())


def test_the_corpus_through_both_builds(tmp_path):
    """Every frame of the differential corpus (the GTP-U ones built by scapy, and the broken ones) gets the same
    verdict and bytes from the XDP object and the native build, with the fuzzing rules loaded."""
    results = run_differential("upf", tmp_path, rules=FUZZ_RULES.read_text(), builds=BUILDS_OF_MOVING_NFS)
    verdicts = {name: (r["kernel"]["verdict"], r["kernel"]["malformed"]) for name, r in results.items()}
    assert verdicts["gtpu-udp4"] == verdicts["gtpu-tcp6-no-container"] == ("tx", False)
    assert verdicts["gtpu-echo-request"] == verdicts["udp4"] == ("tx", False)    # answered; tunnelled down to the UE
    assert verdicts["gtpu-unknown-teid"] == verdicts["gtpu-must-know-extension"] == ("drop", False)
    for broken in ("gtpu-length-beyond-udp", "gtpu-version-2", "gtpu-extension-never-ends",
                   "gtpu-extension-length-0", "gtpu-cut-at-56"):
        assert verdicts[broken] == ("drop", True), broken


def on_a_stick(link) -> upf_sessions.Sides:
    """The UPF on one port: N3 and N6 both the generator's side, the generator its gNB."""
    return upf_sessions.Sides(n3_port=0, n3_gateway=link.gen_mac, n3_addr=link.dut_ip, n6_port=0,
                              n6_gateway=link.gen_mac, gnb=link.gen_ip)


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_the_generator_tunnels_up_and_reads_tunnels_down(mode, rules_file, bare_pair):
    """xnf-gen's tunnelled class goes up through 64 sessions and comes back decapsulated; its plain class comes
    back tunnelled, and the receiver finds its probes inside: every frame of each class counted, none lost."""
    link = bare_pair.links[0]
    sides = on_a_stick(link)
    nf = NfInstance.start(bare_pair, "upf", mode, bare_pair.dut_ifaces, rules=rules_file(upf_sessions.rules(sides, 64)),
                          extra=paths.worker_options(mode))
    classes = ["--class", upf_sessions.uplink_class(sides, 64, 0.5), "--class", upf_sessions.downlink_class(64, 0.5)]
    out = Generator(bare_pair, receive_on=0).run("--count", "8192", "--rate", "100000", *classes).summary
    classes = {c["name"]: c for c in out["classes"]}
    for name in ("up", "down"):
        assert classes[name]["received"] == classes[name]["sent"] == 4096, classes[name]
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["uplink"] == counters["downlink"] == 4096, counters
    assert out["size"] == 106   # the tunnelled class's smallest frame: 44 bytes of tunnel on IPv4/UDP/probe
    assert nf.stop() == 0


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_sessions_come_and_go_while_it_runs(subject, rules_file):
    """A session's lines added with `xnf rules add` carry the UE's traffic at once; deleted, its tunnel is an
    unknown TEID and its UE no one's."""
    with HostsTopology(hosts=2) as t:
        ue_behind_a_gnb(t)
        server = t.host(1)
        interfaces, session = upf_rules(t).splitlines()[:2], upf_rules(t).splitlines()[2:]
        mode, extra = paths.find(subject).mode_and_options()
        with NfInstance.start(t, "upf", mode, t.dut_ifaces, rules=rules_file("\n".join(interfaces) + "\n"),
                              extra=extra) as nf:
            assert apps.ping(t.host(0).ns, server.ip, 3) == 0
            for line in session:
                nf.request(f"rules add {line}")
            assert apps.ping(t.host(0).ns, server.ip, 5) == 5
            for line in session:
                nf.request(f"rules del {line}")
            assert apps.ping(t.host(0).ns, server.ip, 3) == 0
            counters = control.request_json(nf.name, "stats")["counters"]
            assert counters["unknown_teid"] >= 6 and counters["uplink"] == counters["downlink"] == 5, counters


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_a_hundred_thousand_sessions(subject, rules_file, bare_pair):
    """100,000 sessions (400,002 rule lines) load in one start and list back whole."""
    rules = rules_file(upf_sessions.rules(on_a_stick(bare_pair.links[0]), 100_000))
    mode, extra = paths.find(subject).mode_and_options()
    with NfInstance.start(bare_pair, "upf", mode, bare_pair.dut_ifaces, rules=rules, extra=extra) as nf:
        held = {m: control.request_json(nf.name, f"entries {m}")["entries"]
                for m in ("upf_uplink", "upf_downlink", "upf_fars")}
        assert held == {"upf_uplink": 100_000, "upf_downlink": 100_000, "upf_fars": 200_000}
        assert len(nf.request("rules list").splitlines()) == 400_002


EDGE_CHAIN = "chain:upf,firewall,lb"
BACKENDS_BY_ADDR = {(addr, port, mac) for addr, port, mac in BACKENDS}


def test_the_edge_chain_takes_tunnels_off_before_the_firewall_and_lb(tmp_path):
    """chain:upf,firewall,lb, kernel and native alike: a UE's G-PDU to a service is decapsulated by the upf,
    judged by the firewall on its inner 5-tuple and balanced by lb to a backend; a G-PDU the firewall refuses,
    and one of an unknown TEID, end there."""
    chain.ensure_chain(EDGE_CHAIN, test_harness=True)
    upf = ("n3 port 0 gateway 02:00:00:00:00:01 address 198.18.0.2\nn6 port 0 gateway 02:00:00:00:01:01\n"
           "pdr 1 1 uplink teid 100 far 1\nfar 1 1 forward n6\n")
    rules = ("".join(f"upf {line}\n" for line in upf.splitlines()) + f"firewall drop tcp {UE} 45001 {VIP} {VPORT}\n"
             + "".join(f"lb {line}\n" for line in lb_rules().splitlines()))

    def g_pdu(sport: int, teid: int = 100) -> bytes:
        return bytes(Ether(src="02:00:00:00:00:01", dst="02:00:00:00:00:02") / IP(src="198.18.0.1", dst="198.18.0.2")
                     / UDP(sport=GTPU_PORT, dport=GTPU_PORT) / GTP_U_Header(teid=teid, gtp_type=255)
                     / IP(src=UE, dst=VIP) / TCP(sport=sport, dport=VPORT, flags="S"))

    frames = [("allowed", g_pdu(45000)), ("refused", g_pdu(45001)), ("unknown", g_pdu(45002, teid=7))]
    results = run_differential("chain-upf+firewall+lb", tmp_path, rules=rules, frames=frames,
                               builds=BUILDS_OF_MOVING_NFS)
    assert [results[name]["kernel"]["action"] for name, _ in frames] == [XDP_TX, XDP_DROP, XDP_DROP]
    balanced = Ether(bytes.fromhex(results["allowed"]["kernel"]["out"]))
    assert balanced[IP].src == UE and (balanced[IP].dst, balanced[TCP].dport, balanced.dst) in BACKENDS_BY_ADDR


@pytest.mark.parametrize("nf, mode", [("chain:upf@xdp,firewall@xdp", None), ("chain:upf@xdp,firewall@afxdp", None),
                                      ("chain:upf,firewall", "afxdp")])
def test_a_ue_through_the_edge_chain_wherever_it_is_split(nf, mode, rules_file):
    """The UE's traffic through upf then firewall, both in XDP, split after the upf (tunnels off in the kernel,
    the firewall in the AF_XDP workers) and both in user space: the firewall judges the inner packets (it drops
    the UE's UDP to port 9) and everything else arrives."""
    with HostsTopology(hosts=2) as t:
        ue_behind_a_gnb(t)
        server = t.host(1)
        rules = ("".join(f"upf {line}\n" for line in upf_rules(t).splitlines())
                 + f"firewall drop udp {UE} 40009 {server.ip} 9\n")
        extra = [] if nf.endswith("@xdp") else ["--cores", str(DUT_CORE)]
        with NfInstance.start(t, nf, mode, t.dut_ifaces, rules=rules_file(rules), extra=extra) as instance:
            assert apps.ping(t.host(0).ns, server.ip, 5) == 5
            web = apps.WebServer(t, server.ns, server.ip, size=256 << 10)
            assert apps.download_sha256(t.host(0).ns, web.url) == web.sha256
            apps.UdpReflector(t, server.ns, server.ip, 9)
            assert apps.udp_seen_as(t.host(0).ns, UE, 40009, server.ip, 9) == "no answer"
            assert apps.udp_seen_as(t.host(0).ns, UE, 40010, server.ip, 9) == f"{UE}:40010"
            counters = control.request_json(instance.name, "stats")["counters"]
            assert counters["firewall.rule_drop"] >= 1 and counters["upf.uplink"] > 50, counters


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_local_breakout_to_an_edge_application(subject, rules_file):
    """A breakout prefix sends the UE's traffic to an edge application (on a port of its own) decapsulated, whatever
    its session's FAR says; the application's answers come back into the UPF as downlink and reach the UE
    tunnelled. Traffic to the data network still goes there."""
    with HostsTopology(hosts=3) as t:
        server, edge = t.host(1), t.host(2)
        ue_behind_a_gnb(t, also_reaches=(f"{edge.ip}/32",))
        netns.ip("route", "add", f"{UE}/32", "via", edge.dut_ip, ns=edge.ns)
        rules = upf_rules(t) + f"breakout {edge.ip}/32 port 2 mac {edge.mac}\n"
        mode, extra = paths.find(subject).mode_and_options()
        with NfInstance.start(t, "upf", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra) as nf:
            web = apps.WebServer(t, edge.ns, edge.ip, size=256 << 10)
            assert apps.download_sha256(t.host(0).ns, web.url) == web.sha256
            assert apps.ping(t.host(0).ns, server.ip, 3) == 3
            counters = control.request_json(nf.name, "stats")["counters"]
            assert counters["breakout"] > 50 and counters["downlink"] > 180, counters
            assert f"breakout {edge.ip}/32 port 2 mac {edge.mac}" in nf.request("rules list").splitlines()


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_every_frame_is_accounted_for(mode, rules_file, bare_pair):
    """A mix of sessions' tunnels and packets, tunnels of no session and packets to no UE: every frame sent gets a
    verdict, what the receiver counts is what the UPF sent on, and each drop and pass has its counter."""
    link = bare_pair.links[0]
    sides = on_a_stick(link)
    nf = NfInstance.start(bare_pair, "upf", mode, bare_pair.dut_ifaces, rules=rules_file(upf_sessions.rules(sides, 64)),
                          extra=paths.worker_options(mode))
    classes = ["--class", upf_sessions.uplink_class(sides, 64, 0.4),
               "--class", upf_sessions.uplink_class(sides, 64, 0.2, name="no-session", teid=90000),
               "--class", upf_sessions.downlink_class(64, 0.3),
               "--class", f"no-ue:share=0.1,saddr={upf_sessions.SERVER},daddr=10.99.0.1"]
    out = Generator(bare_pair, receive_on=0).run("--count", "10240", "--rate", "100000", *classes).summary
    sent = {c["name"]: c["sent"] for c in out["classes"]}
    received = {c["name"]: c["received"] for c in out["classes"]}
    assert received == {"up": sent["up"], "no-session": 0, "down": sent["down"], "no-ue": 0}, (sent, received)
    verdicts = {v: c["packets"] for v, c in nf.stats().items()}
    counters = control.request_json(nf.name, "stats")["counters"]
    assert sum(verdicts.values()) == out["sent"] == 10240, verdicts
    assert verdicts["tx"] == sent["up"] + sent["down"]
    assert verdicts["drop"] == counters["unknown_teid"] == sent["no-session"]
    assert verdicts["pass"] == counters["not_a_session"] == sent["no-ue"]
    assert nf.stop() == 0


@pytest.mark.parametrize("nf, mode", [("chain:upf,firewall,lb", "xdp"), ("chain:upf@xdp,firewall@afxdp,lb@afxdp", None),
                                      ("chain:upf@xdp,firewall@xdp,lb@afxdp", None), ("chain:upf,firewall,lb", "afxdp")])
def test_the_edge_chain_split_at_every_point_carries_every_frame(nf, mode, rules_file, bare_pair):
    """G-PDUs from 64 sessions to a service: the upf takes the tunnel off, the firewall lets them by, lb sends each
    to a backend; whole in XDP, split after the upf or after the firewall, or whole in the workers, every frame
    comes back balanced (the receiver finds its probe behind the rewritten headers)."""
    link = bare_pair.links[0]
    sides = on_a_stick(link)
    rules = ("".join(f"upf {line}\n" for line in upf_sessions.rules(sides, 64).splitlines())
             + f"firewall drop udp 203.0.113.1 1 {VIP} {VPORT}\n"
             + "".join(f"lb {line}\n" for line in lb_rules().splitlines()))
    instance = NfInstance.start(bare_pair, nf, mode, bare_pair.dut_ifaces, rules=rules_file(rules),
                                extra=paths.worker_options(mode, nf))
    to_service = upf_sessions.uplink_class(sides, 64, to=VIP, dport=VPORT)
    out = Generator(bare_pair, receive_on=0).run("--count", "4096", "--rate", "100000", "--class", to_service).summary
    assert out["received"] == out["sent"] == 4096, out
    counters = control.request_json(instance.name, "stats")["counters"]
    assert counters["upf.uplink"] == 4096 and counters["lb.new_session"] >= 1, counters
    assert instance.stop() == 0

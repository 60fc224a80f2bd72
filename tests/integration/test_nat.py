"""The NAT between an inside host and an outside one, beside Linux's own (nftables masquerade and conntrack) on the
same hosts: what the outside server sees of the inside's flows (the public address; the inside port kept where free;
one public port per inside endpoint whatever the remote), what comes back (answers, ICMP port unreachable as a
refused connection), and real applications (ping, iperf3 TCP and UDP, an HTTP download checked by SHA-256). The
outside host has no route to the inside: only the translation brings its answers back."""

from __future__ import annotations

import select
import sys
import threading
import time
from contextlib import contextmanager

import pytest

from xnf import control
from xnf.errors import XnfError
from xnf.lab import apps, netfilter, netns, paths
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance
from npt_reference import npt
from lab_helpers import wait_until, xdp_attached

SECOND_INSIDE = "198.18.0.5"   # another inside address on host 0: another endpoint with the same port
SERVER_PORTS = (7000, 7001)
CLOSED_PORT = 7999
MODES = paths.Selection(select=paths.representative)


FORWARD = ("tcp", 8081, 8080)   # a public port forwarded to the inside host's web server
CLOSED_FORWARD = ("udp", 5353, 5300)   # one forwarded to a port nothing listens on inside


def nat_rules(t: HostsTopology) -> str:
    inside, outside = t.host(0), t.host(1)
    return (f"inside port 0\noutside port 1 gateway {outside.mac}\npublic {outside.dut_ip}\n" +
            "".join(f"forward {proto} {public_port} to {inside.ip} {server_port} mac {inside.mac}\n"
                    for proto, public_port, server_port in (FORWARD, CLOSED_FORWARD)))


def hosts_behind_a_nat(t: HostsTopology) -> None:
    netns.ip("addr", "add", f"{SECOND_INSIDE}/24", "dev", t.host(0).iface, ns=t.host(0).ns)
    netns.ip("route", "del", "default", ns=t.host(1).ns)   # answers can only go to the public address


@contextmanager
def translating(t: HostsTopology, subject: str, rules_file, inside_prefixes: tuple[str, ...] = (),
                more_public: tuple[str, ...] = ()):
    """nftables or xnf's NAT between the two hosts; more_public: public addresses after the DUT's own outside one
    (in a row, for nftables' range)."""
    if subject == "nftables":
        netfilter.masquerade(t.dut_ns, t.host(0).dut_if, t.host(1).dut_if,
                             forwards=[(proto, public_port, t.host(0).ip, server_port)
                                       for proto, public_port, server_port in (FORWARD, CLOSED_FORWARD)],
                             sources=inside_prefixes,
                             pool=f"{t.host(1).dut_ip}-{more_public[-1]}" if more_public else None)
        yield None
        return
    mode, extra = MODES[subject]
    rules = nat_rules(t) + "".join(f"inside from {prefix}\n" for prefix in inside_prefixes) + \
        "".join(f"public {address}\n" for address in more_public)
    with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra) as nf:
        yield nf


def what_the_server_sees(t: HostsTopology) -> dict:
    inside, outside = t.host(0), t.host(1)
    for port in SERVER_PORTS:
        apps.UdpReflector(t, outside.ns, outside.ip, port)
    seen = {
        "first": apps.udp_seen_as(inside.ns, inside.ip, 40000, outside.ip, SERVER_PORTS[0]),
        "the same endpoint to another port": apps.udp_seen_as(inside.ns, inside.ip, 40000, outside.ip,
                                                               SERVER_PORTS[1]),
        "another inside address, the same port": apps.udp_seen_as(inside.ns, SECOND_INSIDE, 40000, outside.ip,
                                                                   SERVER_PORTS[0]),
        "a closed port": apps.udp_seen_as(inside.ns, inside.ip, 40001, outside.ip, CLOSED_PORT),
    }
    # The port a clash moves to is each NAT's own choice: only that it moved is compared.
    clash = seen["another inside address, the same port"]
    if clash.startswith(f"{outside.dut_ip}:") and clash != f"{outside.dut_ip}:40000":
        seen["another inside address, the same port"] = f"{outside.dut_ip}:another port"
    return seen


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_the_nat_translates_as_linux_does(subject, rules_file):
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        public = t.host(1).dut_ip
        with translating(t, subject, rules_file) as nf:
            assert what_the_server_sees(t) == {
                "first": f"{public}:40000",
                "the same endpoint to another port": f"{public}:40000",
                "another inside address, the same port": f"{public}:another port",
                "a closed port": "refused",
            }
            if nf:
                counters = control.request_json(nf.name, "stats")["counters"]
                assert counters["new_mapping"] == 3 and counters["icmp_error_in"] >= 1, counters


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_sources_beyond_the_inside_prefixes_go_as_they_are(subject, rules_file):
    """Only the inside host's first address is named inside: its flow is translated, one from its second address
    is forwarded with its own source (the outside host routes answers to that address back through the box)."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        netns.ip("route", "add", f"{SECOND_INSIDE}/32", "via", outside.dut_ip, ns=outside.ns)
        apps.UdpReflector(t, outside.ns, outside.ip, SERVER_PORTS[0])
        with translating(t, subject, rules_file, inside_prefixes=(f"{inside.ip}/32",)) as nf:
            seen = [apps.udp_seen_as(inside.ns, source, 40000, outside.ip, SERVER_PORTS[0])
                    for source in (inside.ip, SECOND_INSIDE)]
            if nf:
                counters = control.request_json(nf.name, "stats")["counters"]
                assert counters["new_mapping"] == 1 and counters["untranslated"] >= 2, counters
        assert seen == [f"{outside.dut_ip}:40000", f"{SECOND_INSIDE}:40000"]


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_a_pool_of_addresses_keeps_each_inside_host_on_one(subject, rules_file):
    """Two public addresses: each inside address's flows, to any remote port, leave from one of them with their own
    port (paired pooling, RFC 4787 REQ-2), in xnf as in Linux's snat to a range, persistent."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        pool = (outside.dut_ip, "198.18.1.3")
        netns.ip("addr", "add", f"{pool[1]}/24", "dev", outside.dut_if, ns=t.dut_ns)   # so the outside's ARP finds it
        for port in SERVER_PORTS:
            apps.UdpReflector(t, outside.ns, outside.ip, port)
        with translating(t, subject, rules_file, more_public=pool[1:]):
            seen = {(source, sport): {apps.udp_seen_as(inside.ns, source, sport + i, outside.ip, port)
                                      for i, port in enumerate(SERVER_PORTS)}
                    for source, sport in ((inside.ip, 40000), (SECOND_INSIDE, 41000))}
    for (source, sport), endpoints in seen.items():
        addresses = {e.rpartition(":")[0] for e in endpoints}
        assert len(addresses) == 1 and addresses <= set(pool), (source, endpoints)
        assert {e.rpartition(":")[2] for e in endpoints} == {str(sport), str(sport + 1)}, (source, endpoints)


PREFIX6 = ("2001:2::/64", "2001:db8:1:5::/64")   # the inside host's subnet, and the prefix the outside sees it in


def an_ipv6_server_reaching_inside_only_by_the_outside_prefix(t: HostsTopology) -> None:
    outside = t.host(1)
    netns.ip("-6", "route", "del", "default", ns=outside.ns)
    netns.ip("-6", "route", "add", PREFIX6[1], "via", outside.dut_ip6, ns=outside.ns)
    apps.UdpReflector(t, outside.ns, outside.ip6, SERVER_PORTS[0])


@pytest.mark.parametrize("subject", ["ip6tables", *MODES])
def test_ipv6_prefixes_translated_as_linux_does(subject, rules_file):
    """NPTv6 beside Linux's SNPT and DNPT: the outside server sees the inside host at the address RFC 6296 gives
    (tests/npt_reference.py), with its own port, and its answers and echo replies come back; the outside host can
    reach the inside only through the outside prefix."""
    with HostsTopology(hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        an_ipv6_server_reaching_inside_only_by_the_outside_prefix(t)
        if subject == "ip6tables":
            netfilter.prefix_translation6(t.dut_ns, outside.dut_if, *PREFIX6)
            seen = apps.udp_seen_as(inside.ns, inside.ip6, 40000, outside.ip6, SERVER_PORTS[0])
            answered = apps.ping(inside.ns, outside.ip6, 5)
        else:
            mode, extra = MODES[subject]
            rules = rules_file(nat_rules(t) + f"prefix6 {PREFIX6[0]} to {PREFIX6[1]}\n")
            with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules, extra=extra) as nf:
                seen = apps.udp_seen_as(inside.ns, inside.ip6, 40000, outside.ip6, SERVER_PORTS[0])
                answered = apps.ping(inside.ns, outside.ip6, 5)
                counters = control.request_json(nf.name, "stats")["counters"]
                assert counters["prefix6_out"] >= 6 and counters["prefix6_in"] >= 6, counters
    assert seen == f"{npt(inside.ip6, *PREFIX6)}:40000" and answered == 5


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_an_ipv6_prefix_pair_added_and_deleted_while_running(subject, rules_file):
    """A prefix6 rule added while the NAT runs translates at once, both ways; deleted, the inside host's datagrams
    leave untranslated (prefix6_out stands still; the outside host has no way back to them) and `rules list` no
    longer has it."""
    with HostsTopology(hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        an_ipv6_server_reaching_inside_only_by_the_outside_prefix(t)
        mode, extra = paths.find(subject).mode_and_options()
        rule = f"prefix6 {PREFIX6[0]} to {PREFIX6[1]}"
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(nat_rules(t)), extra=extra) as nf:
            nf.request(f"rules add {rule}")
            assert apps.udp_seen_as(inside.ns, inside.ip6, 40001, outside.ip6, SERVER_PORTS[0]) == \
                f"{npt(inside.ip6, *PREFIX6)}:40001"
            assert rule in nf.request("rules list").splitlines()
            nf.request(f"rules del {rule}")
            translated = control.request_json(nf.name, "stats")["counters"]["prefix6_out"]
            assert apps.udp_seen_as(inside.ns, inside.ip6, 40002, outside.ip6, SERVER_PORTS[0]) == "no answer"
            assert control.request_json(nf.name, "stats")["counters"]["prefix6_out"] == translated
            assert not [ln for ln in nf.request("rules list").splitlines() if ln.startswith("prefix6")]


BEYOND = ("198.19.5.1", "198.19.5.2")   # the outside host's address towards a server beyond it, and the server's


def a_server_beyond_the_outside_host(t: HostsTopology) -> str:
    """A namespace behind the outside host, which routes to it: traceroute's probes meet a router on their way."""
    outside, far = t.host(1), f"{t.host(1).ns}-far"
    netns.create(far)
    t.on_teardown(lambda: netns.delete(far))
    netns.ip("link", "add", "beyond", "netns", outside.ns, "type", "veth", "peer", "name", "eth0", "netns", far)
    for ns, iface, address in ((outside.ns, "beyond", BEYOND[0]), (far, "eth0", BEYOND[1])):
        netns.ip("addr", "add", f"{address}/24", "dev", iface, ns=ns)
        netns.ip("link", "set", iface, "up", ns=ns)
    netns.ip("route", "add", "default", "via", BEYOND[0], ns=far)
    netns.run(outside.ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
    netns.ip("route", "add", "default", "via", outside.ip, ns=t.dut_ns)   # Linux's way there (xnf sends out anyway)
    return BEYOND[1]


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_traceroute_sees_the_hops_beyond_the_nat(subject, rules_file):
    """Each hop's time exceeded, and the server's port unreachable at the end, come back translated by their inner
    header. Linux forwards as a router (the DUT is a hop of its own); xnf's NAT does not lower the TTL, so the hops
    are those beyond it."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        server = a_server_beyond_the_outside_host(t)
        inside, outside = t.host(0), t.host(1)
        with translating(t, subject, rules_file) as nf:
            hops = apps.traceroute_hops(inside.ns, server)
            if nf:
                counters = control.request_json(nf.name, "stats")["counters"]
                assert counters["icmp_error_in"] >= 2, counters
        assert hops == ([inside.dut_ip] if subject == "nftables" else []) + [outside.ip, server]


@pytest.mark.parametrize("subject", ["nftables", *MODES])
def test_an_inside_error_about_a_forwarded_port_reaches_the_outside(subject, rules_file):
    """A datagram from outside to a forwarded port that nothing listens on inside: the inside host's ICMP port
    unreachable goes out translated (from the public address, its inner header to the public port), and the
    outside application sees a refused port, as through Linux."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        outside = t.host(1)
        _, public_port, _ = CLOSED_FORWARD
        with translating(t, subject, rules_file) as nf:
            assert apps.udp_seen_as(outside.ns, outside.ip, 41000, outside.dut_ip, public_port) == "refused"
            if nf:
                assert control.request_json(nf.name, "stats")["counters"]["icmp_error_out"] == 1


# Who downloads from the forwarded port: the outside host, or the inside host itself (hairpinning, xnf only).
CLIENTS = [("outside", "nftables"), *[("outside", mode) for mode in MODES], *[("inside", mode) for mode in MODES]]


@pytest.mark.parametrize("client,subject", CLIENTS)
def test_a_port_forward_reaches_an_inside_server(client, subject, rules_file):
    """A download from the public address's forwarded port gets what the inside host serves: from outside, and
    from the inside host itself, translated both ways and sent back inside (hairpinning)."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        _, public_port, server_port = FORWARD
        with translating(t, subject, rules_file) as nf:
            web = apps.WebServer(t, inside.ns, inside.ip, port=server_port)
            url = web.url.replace(f"{inside.ip}:{server_port}", f"{outside.dut_ip}:{public_port}")
            assert apps.download_sha256((outside if client == "outside" else inside).ns, url) == web.sha256
            if nf:
                counter = "forward_in" if client == "outside" else "hairpin"
                assert control.request_json(nf.name, "stats")["counters"][counter] > 0


@pytest.mark.parametrize("subject", MODES)
def test_real_applications_through_the_nat(subject, rules_file):
    """ping, iperf3 TCP and UDP and an HTTP download through the NAT, in every way xnf carries frames."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        mode, extra = MODES[subject]
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(nat_rules(t)), extra=extra) as nf:
            assert apps.ping(inside.ns, outside.ip, 10) == 10
            assert apps.ping(inside.ns, inside.dut_ip, 3) == 3      # the box itself: not translated
            tcp = apps.iperf3(t, inside.ns, outside.ns, outside.ip)
            assert tcp.received_bytes > 0, tcp
            udp = apps.iperf3(t, inside.ns, outside.ns, outside.ip, udp_datagrams=2000)
            assert udp.packets > 0 and udp.lost_packets == 0, udp
            web = apps.WebServer(t, outside.ns, outside.ip)
            assert apps.download_sha256(inside.ns, web.url) == web.sha256
            assert [apps.checksum_errors(h.ns) for h in t.host_list] == [0, 0]
            counters = control.request_json(nf.name, "stats")["counters"]
            assert counters["out"] > 0 and counters["in"] > 0 and counters["filtered"] == 0, counters
        assert nf.process.returncode == 0


def entries(nf: NfInstance, table: str) -> int:
    return control.request_json(nf.name, f"entries {table}")["entries"]


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_closed_tcp_connections_leave_the_tables(subject, rules_file):
    """After FIN or RST a connection's session and public port live the closing idle time (here 2 s, against 2 h
    for an open one), then the sweeper takes them, the mapping with them; a UDP flow's stay."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        mode, extra = paths.find(subject).mode_and_options()
        rules = rules_file(nat_rules(t) + "timeout tcp-closing 2\n")
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules, extra=extra) as nf:
            apps.UdpReflector(t, outside.ns, outside.ip, SERVER_PORTS[0])
            assert apps.udp_seen_as(inside.ns, inside.ip, 40000, outside.ip, SERVER_PORTS[0]).endswith(":40000")
            web = apps.WebServer(t, outside.ns, outside.ip)
            for _ in range(3):   # three connections, each closed by FIN
                assert apps.download_sha256(inside.ns, web.url) == web.sha256
            assert entries(nf, "nat_mappings") == 4 and entries(nf, "nat_sessions") == 4
            wait_until(lambda: (entries(nf, "nat_mappings"), entries(nf, "nat_bindings"),
                                entries(nf, "nat_sessions")) == (1, 1, 1),
                       timeout_s=20, what="the closed connections' entries swept after their 2 s")


def test_refused_rules_say_what_to_write(rules_file):
    with HostsTopology(hosts=2) as t:
        with NfInstance.start(t, "nat", "xdp", t.dut_ifaces, rules=rules_file(nat_rules(t))) as nf:
            for line, says in [("public 2001:db8::1", "NAT44"), ("public 10.0.0.1 ports 9-1", "range LOW-HIGH"),
                               ("public 255.255.255.255", "broadcast"), ("public 224.0.0.1", "multicast"),
                               ("public 127.0.0.1", "loopback"), ("public 0.0.0.0", "0.0.0.0/8"),
                               ("forward tcp 80 to 0.0.0.0 80 mac 02:00:00:00:00:01", "0.0.0.0/8"),
                               ("outside port 9 gateway 02:00:00:00:00:01", "port index"),
                               ("outside port 1 gateway ff:ff:ff:ff:ff:ff", "a multicast or broadcast MAC"),
                               ("forward tcp 80 to 10.0.0.1 80 mac 00:00:00:00:00:00", "the all-zero MAC"),
                               ("timeout sctp 10", "tcp, udp, icmp or tcp-closing"), ("masquerade", "unknown line"),
                               ("forward tcp 80 to 10.0.0.1 80", "a port forward reads")]:
                with pytest.raises(XnfError, match=says):
                    nf.request(f"rules add {line}")
            with pytest.raises(XnfError, match="the rule in force under this key is"):   # the address alone is not it
                nf.request(f"rules del public {t.host(1).dut_ip} ports 1-2")
            assert sorted(nf.request("rules list").splitlines()) == sorted(nat_rules(t).replace(
                f"public {t.host(1).dut_ip}", f"public {t.host(1).dut_ip} ports 1024-65535").splitlines())


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_a_second_public_address_paired_and_taken_away(subject, rules_file):
    """With two public addresses, the inside host (an odd address) leaves from the second; once that address is
    deleted from the rules, its next datagram leaves from the first, on a mapping made afresh."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        second = "198.18.1.3"
        netns.ip("addr", "add", f"{second}/24", "dev", outside.dut_if, ns=t.dut_ns)   # so the outside's ARP finds it
        mode, extra = paths.find(subject).mode_and_options()
        rules = nat_rules(t) + f"public {second}\n"
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(rules), extra=extra) as nf:
            apps.UdpReflector(t, outside.ns, outside.ip, SERVER_PORTS[0])
            assert apps.udp_seen_as(inside.ns, inside.ip, 40000, outside.ip, SERVER_PORTS[0]) == f"{second}:40000"
            nf.request(f"rules del public {second}")
            assert apps.udp_seen_as(inside.ns, inside.ip, 40000, outside.ip, SERVER_PORTS[0]) == \
                f"{outside.dut_ip}:40000"
            assert [ln for ln in nf.request("rules list").splitlines() if ln.startswith("public")] == \
                [f"public {outside.dut_ip} ports 1024-65535"]


_STAMPED_SENDER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
with open(sys.argv[3], "w", buffering=1) as log:
    while True:
        stamp = repr(time.monotonic())
        log.write(stamp + "\\n")
        s.sendto(stamp.encode(), (sys.argv[1], int(sys.argv[2])))
        time.sleep(0.001)
"""
_RECORDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    data, peer = s.recvfrom(64)
    print(peer[0], data.decode(), flush=True)
"""
# Port forwards enough that loading them keeps the NAT held for a while (tens of thousands of map updates).
HELD_FORWARDS = 4000


@pytest.mark.parametrize("subject", paths.Modes(paths.kernel_and_user))
def test_a_starting_nat_drops_and_counts_until_it_is_in_force(subject, rules_file, tmp_path):
    """Datagrams stamped with the time they left the inside host stream through the DUT while the NAT starts with a
    long rules file. Until xnf attaches its program, Linux forwards them as they are; from the attach on, one either
    leaves from the public address or is dropped and counted as not_ready while the rules load, never forwarded
    untranslated; once the control socket is there, every one is translated."""
    with HostsTopology(hosts=2) as t:
        inside, outside = t.host(0), t.host(1)
        recorder = t.spawn(outside.ns, [sys.executable, "-c", _RECORDER, outside.ip, str(SERVER_PORTS[0])])
        assert recorder.stdout.readline().strip() == "ready"
        sent_log = tmp_path / "sent"
        t.spawn(inside.ns, [sys.executable, "-c", _STAMPED_SENDER, outside.ip, str(SERVER_PORTS[0]), str(sent_log)])
        # Linux forwards the stream untranslated before the NAT starts: the first datagram is waited for, so that the
        # check below of what went before the attach has something to see, however slowly the sender started.
        assert select.select([recorder.stdout], [], [], 30)[0], "no datagram came through Linux's forwarding"
        seen = [recorder.stdout.readline().split()]
        mode, extra = paths.find(subject).mode_and_options()
        name = f"{t.dut_ns}-nat"
        rules = nat_rules(t) + "".join(f"forward tcp {20000 + i} to {inside.ip} {20000 + i} mac {inside.mac}\n"
                                       for i in range(HELD_FORWARDS))
        starting = threading.Thread(target=NfInstance.start, args=(t, "nat", mode, t.dut_ifaces),
                                    kwargs={"rules": rules_file(rules), "name": name, "extra": extra})
        starting.start()
        attached = None
        while not control.socket_path(name).exists():
            assert starting.is_alive(), "the NAT did not start"
            if attached is None and xdp_attached(t.dut_ns, t.dut_ifaces[0]):
                attached = time.monotonic()   # the program was on the port before this moment
            time.sleep(0.001)
        socket_seen = time.monotonic()
        starting.join()
        deadline = time.monotonic() + 60
        while len([1 for _, sent in seen if float(sent) > socket_seen]) < 100:   # a hundred sent since
            assert select.select([recorder.stdout], [], [], max(0.0, deadline - time.monotonic()))[0], \
                f"the outside host got {len(seen)} datagrams, then none"
            seen.append(recorder.stdout.readline().split())
        not_ready = control.request_json(name, "stats")["verdicts"]["not_ready"]["packets"]
    assert attached is not None, "the control socket appeared before the program was seen on the port"
    untranslated = [float(sent) for src, sent in seen if src == inside.ip]
    assert untranslated, "the datagrams went through Linux before the NAT took the port"
    assert max(untranslated) < attached, "a datagram sent after the attach left untranslated"
    after = [src for src, sent in seen if float(sent) > socket_seen]
    assert set(after) == {outside.dut_ip}, (len(after), set(after))
    arrived = {sent for _, sent in seen}
    held = [stamp for stamp in sent_log.read_text().split() if attached <= float(stamp) < socket_seen]
    lost = [stamp for stamp in held if stamp not in arrived]
    assert lost, f"none of the {len(held)} datagrams sent while the NAT loaded its rules was held back"
    assert not_ready >= len(lost), f"{len(lost)} datagrams lost while the NAT started, {not_ready} counted not_ready"


_COUNTED_SENDER = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
for i in range(int(sys.argv[5])):
    s.sendto(f"{sys.argv[4]}-{i}".encode(), (sys.argv[2], int(sys.argv[3])))
"""
UNTRANSLATABLE = 200


def send_datagrams(ns: str, src: str, dst: str, port: int, tag: str, count: int) -> None:
    netns.run(ns, [sys.executable, "-c", _COUNTED_SENDER, src, dst, str(port), tag, str(count)])


def nat_rules_without(t: HostsTopology, setting: str) -> str:
    return "".join(line + "\n" for line in nat_rules(t).splitlines() if not line.startswith(setting))


def untranslatable_cases(t: HostsTopology) -> dict[str, tuple[str, str, str]]:
    """How a NAT comes to be unable to translate: (the rules it starts with, the change made while it runs, the rule
    that mends it)."""
    rules = {line.split()[0]: line for line in nat_rules(t).splitlines()}
    return {
        "started without an outside line": (nat_rules_without(t, "outside"), "", rules["outside"]),
        "its outside deleted": (nat_rules(t), rules["outside"], rules["outside"]),
        "its only public address deleted": (nat_rules(t), rules["public"], rules["public"]),
        "its inside port deleted": (nat_rules(t), rules["inside"], rules["inside"]),
    }


@pytest.mark.parametrize("case", ["started without an outside line", "its outside deleted",
                                  "its only public address deleted", "its inside port deleted"])
@pytest.mark.parametrize("subject", MODES)
def test_a_nat_that_cannot_translate_drops_and_counts(subject, case, rules_file):
    """A NAT whose rules leave it nothing to translate with drops what the inside sends out and counts it
    (`untranslatable`): Linux would forward it with the inside source. The rule given back, the next datagrams leave
    translated, behind which the outside host has seen none of the dropped ones."""
    with HostsTopology(hosts=2) as t:
        hosts_behind_a_nat(t)
        inside, outside = t.host(0), t.host(1)
        start_rules, deleted, mending = untranslatable_cases(t)[case]
        recorder = t.spawn(outside.ns, [sys.executable, "-c", _RECORDER, outside.ip, str(SERVER_PORTS[0])])
        assert recorder.stdout.readline().strip() == "ready"
        mode, extra = MODES[subject]
        with NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=rules_file(start_rules), extra=extra) as nf:
            if deleted:
                nf.request(f"rules del {deleted}")
            send_datagrams(inside.ns, inside.ip, outside.ip, SERVER_PORTS[0], "lost", UNTRANSLATABLE)
            wait_until(lambda: control.request_json(nf.name, "stats")["counters"]["untranslatable"] >= UNTRANSLATABLE,
                       what="every datagram counted untranslatable")
            nf.request(f"rules add {mending}")
            seen, deadline = [], time.monotonic() + 30
            while not any(tag.startswith("mended") for _, tag in seen):
                send_datagrams(inside.ns, inside.ip, outside.ip, SERVER_PORTS[0], "mended", 1)
                while select.select([recorder.stdout], [], [], max(0.0, min(1.0, deadline - time.monotonic())))[0]:
                    seen.append(recorder.stdout.readline().split())
                assert time.monotonic() < deadline, f"nothing came through once the NAT was mended: {seen}"
            counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["untranslatable"] == UNTRANSLATABLE, counters
    assert {source for source, _ in seen} == {outside.dut_ip}, seen
    assert not [tag for _, tag in seen if tag.startswith("lost")], seen

"""The user-space data path: the same NFs, the same frames and the same expected results in every
AF_XDP mode as in XDP mode, with one and with two queues and workers."""

from __future__ import annotations

import pytest

from lab_helpers import wait_until
from packets import arp_request, swap_macs, udp4
from test_xdp_nfs import FW_RULES, exchange, firewall_traffic
from xnf import control
from xnf.lab import paths
from xnf.lab.cores import DUT_CORE
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.pktio import PacketPort
from xnf.lab.topology import Topology

MODES = paths.Modes(paths.at_native_xdp)
USER_SPACE = paths.Modes(paths.worker_waits)
N = 200


def start(topology: Topology, nf: str, mode: str, queues: int, rules: str | None = None,
          extra: list[str] | None = None) -> NfInstance:
    instance = NfInstance.start(topology, nf, mode, topology.dut_ifaces, rules=rules,
                                extra=[] if mode == "xdp" else ["--queues", str(queues), "--workers", str(queues)]
                                + (extra or []))
    return instance


def flows(link, count: int) -> list[bytes]:
    """Many flows, so that with two queues the generator side's hashing spreads them over both."""
    return [udp4(link, 1000 + i, 2000 + i % 7, seq=i) for i in range(count)]


def assert_workers_shared_the_load(instance: NfInstance, mode: str, queues: int, tx_path: str | None = None) -> None:
    """In user space: every worker had frames, and sent on tx_path (by default what auto picks on veth: live frames
    where the kernel runs them, else the xsk ring)."""
    if mode not in USER_SPACE:
        return
    tx_path = tx_path or paths.default_tx_path()
    workers = control.request_json(instance.name, "stats")["workers"]
    assert len(workers) == queues
    assert all(w["rx_packets"] > 0 for w in workers), workers
    assert all(w["tx_path"] == {"dut0": tx_path} for w in workers), workers


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_macswap(mode, queues):
    with Topology("pair", queues=queues) as t:
        nf = start(t, "macswap", mode, queues)
        sent = flows(t.links[0], N)
        assert sorted(exchange(t, sent, expect=N)) == sorted(swap_macs(f) for f in sent)
        stats = nf.stats()
        assert stats["tx"]["packets"] == N and stats["tx"]["bytes"] == sum(map(len, sent))
        assert_workers_shared_the_load(nf, mode, queues)
        assert nf.stop() == 0


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("mode", paths.Modes(paths.with_workers))
def test_macswap_on_the_xsk_ring(mode, queues):
    """--tx-path xsk: the socket's own tx ring, copy mode's skb path, as before the live path existed."""
    with Topology("pair", queues=queues) as t:
        nf = start(t, "macswap", mode, queues, extra=["--tx-path", "xsk"])
        sent = flows(t.links[0], N)
        assert sorted(exchange(t, sent, expect=N)) == sorted(swap_macs(f) for f in sent)
        assert nf.stats()["tx"]["packets"] == N
        assert_workers_shared_the_load(nf, mode, queues, tx_path="xsk")
        workers = control.request_json(nf.name, "stats")["workers"]
        assert sum(w["tx_packets"] for w in workers) == N and sum(w["live_frames"] for w in workers) == 0
        assert nf.stop() == 0


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_drop(mode, queues):
    with Topology("pair", queues=queues) as t:
        nf = start(t, "drop", mode, queues)
        sent = flows(t.links[0], N) + [arp_request(t.links[0])]
        assert exchange(t, sent) == []
        assert nf.stats()["drop"]["packets"] == len(sent)
        assert_workers_shared_the_load(nf, mode, queues)


@pytest.mark.parametrize("queues", [1, 2])
@pytest.mark.parametrize("mode", MODES)
def test_firewall(mode, queues, rules_file):
    with Topology("pair", queues=queues) as t:
        nf = start(t, "firewall", mode, queues, rules=rules_file(FW_RULES))
        traffic = firewall_traffic(t.links[0])
        passing = [f for f, match in traffic if not match]
        assert sorted(exchange(t, [f for f, _ in traffic], expect=len(passing))) == sorted(passing)
        stats = nf.stats()
        assert stats["drop"]["packets"] == len(traffic) - len(passing)
        assert stats["tx"]["packets"] == len(passing)
        link = t.links[0]
        flow = udp4(link, 5555, 6666)
        nf.request(f"rules add drop udp {link.gen_ip} 5555 {link.dut_ip} 6666")
        assert exchange(t, [flow]) == []
        nf.request(f"rules del drop udp {link.gen_ip} 5555 {link.dut_ip} 6666")
        assert exchange(t, [flow], expect=1) == [flow]


@pytest.mark.parametrize("mode", USER_SPACE)
def test_firewall_redirects_between_ports(mode, rules_file, two_port):
    nf = NfInstance.start(two_port, "firewall", mode, two_port.dut_ifaces, rules=rules_file(FW_RULES))
    traffic = firewall_traffic(two_port.links[0])
    passing = [f for f, match in traffic if not match]
    got = exchange(two_port, [f for f, _ in traffic], send_link=0, recv_link=1, expect=len(passing))
    assert sorted(got) == sorted(passing)
    assert nf.stats()["redirect"]["packets"] == len(passing)


def frames_settled(instance: NfInstance, timeout_s: float = 5.0) -> list[dict]:
    """Frame accounting once the kernel holds none (traffic has stopped; copy-mode sends complete)."""
    import time

    deadline = time.monotonic() + timeout_s
    while True:
        workers = control.request_json(instance.name, "frames")["workers"]
        if all(w["kernel"] == 0 for w in workers) or time.monotonic() > deadline:
            return workers


@pytest.mark.parametrize("queues", [1, 2])
def test_no_frame_is_lost_under_overload_drops_and_redirects(queues, rules_file):
    """Overload with drops, redirects between ports and full rings on the xsk ring path; afterwards every
    UMEM frame is in exactly one place (a scan finds none twice and none missing). The live path's own
    accounting is tested in test_live_tx.py."""


    with Topology("two-port", queues=queues, gen_xdp="drop") as t:
        link = t.links[0]
        rules = f"drop udp {link.gen_ip} 1 {link.dut_ip} 1\n"
        nf = NfInstance.start(t, "firewall", "afxdp", t.dut_ifaces, rules=rules_file(rules),
                              extra=["--queues", str(queues), "--workers", str(queues), "--ring-size", "512",
                                     "--tx-path", "xsk"])
        cores = "0,1" if queues == 2 else "0"
        gen = Generator(t).run("--count", "2000000", "--cores", cores, "--call-ms", "100")
        assert gen.summary["sent"] == 2000000
        with_drops = [udp4(link, 1, 1, seq=i) for i in range(100)]
        exchange(t, with_drops, send_link=0, recv_link=1)

        stats = control.request_json(nf.name, "stats")
        assert stats["verdicts"]["redirect"]["packets"] > 0
        assert stats["verdicts"]["drop"]["packets"] >= 100
        overflowed = sum(w["tx_ring_full"] + w["rx_ring_full"] + w["kernel_rx_dropped"] for w in stats["workers"])
        assert overflowed > 0, "the run never filled a ring: it does not test what it claims"

        # After an rx ring overflow, copy mode keeps the buffer it had taken from the fill ring in the
        # kernel's pool and uses it for the next packet: a light trickle on every queue brings it back.
        before = nf.stats()["redirect"]["packets"]
        with PacketPort(t.gen_ns, link.gen_if) as port:
            port.send(flows(link, 100))
        wait_until(lambda: nf.stats()["redirect"]["packets"] == before + 100)
        for account in frames_settled(nf):
            assert account["duplicates"] == 0 and account["invalid"] == 0, account
            assert account["kernel"] == 0, account
            places = ("free", "fill", "rx", "worker_held", "tx", "completion")
            assert sum(account[p] for p in places) == account["total"], account
        assert nf.stop() == 0


def test_frames_request_needs_sockets(pair):
    nf = NfInstance.start(pair, "drop", "xdp", pair.dut_ifaces)
    with pytest.raises(Exception, match="no AF_XDP sockets"):
        control.request(nf.name, "frames")


def test_rules_change_under_load_in_user_space(rules_file):
    """Hundreds of rule changes through the control socket while the generator floods the workers:
    the data path keeps running and the final rule set is exactly what was left."""
    import threading


    with Topology("pair", gen_xdp="drop") as t:
        link = t.links[0]
        nf = NfInstance.start(t, "firewall", "afxdp", t.dut_ifaces, rules=rules_file(FW_RULES))
        done = threading.Event()

        def churn():
            for i in range(300):
                rule = f"drop udp 198.18.5.{i % 200} {i} {link.dut_ip} 53"
                nf.request(f"rules add {rule}")
                if i % 2:
                    nf.request(f"rules del {rule}")
            done.set()

        worker = threading.Thread(target=churn)
        worker.start()
        gen = Generator(t).run("--duration", "2", "--cores", "0", "--call-ms", "100")
        worker.join(timeout=60)
        assert done.is_set()
        sent = gen.summary["sent"]
        stats = control.request_json(nf.name, "stats")
        assert stats["workers"][0]["rx_packets"] > 0 and sent > 0
        listed = nf.request("rules list").splitlines()
        assert len(listed) == 3 + 150 + 1  # the file's three, the even half of the churn, the default
        assert nf.process.poll() is None
        assert nf.stop() == 0


def test_hybrid_passes_in_the_kernel_and_forwards_from_user_space(pair):
    """csum_rewrite passes TTL-1 frames to the stack and rewrites and sends back the rest: in hybrid mode
    the pass happens in XDP, the send in the workers, and the rewritten bytes are the kernel's."""
    from scapy.layers.inet import IP, UDP
    from scapy.layers.l2 import Ether

    link = pair.links[0]
    nf = NfInstance.start(pair, "csum_rewrite", "hybrid", pair.dut_ifaces)

    def frame(ttl: int, sport: int) -> bytes:
        return bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=link.dut_ip, ttl=ttl)
                     / UDP(sport=sport, dport=53) / b"hybrid")

    forwarded = [frame(64, 1000 + i) for i in range(20)]
    passed = [frame(1, 2000 + i) for i in range(5)]
    from scapy.layers.inet import ICMP

    got = [Ether(raw) for raw in exchange(pair, forwarded + passed)]
    rewritten = [p for p in got if UDP in p and ICMP not in p]
    assert len(rewritten) == len(forwarded)
    for packet in rewritten:
        assert packet[IP].dst == "198.18.9.9" and packet[IP].ttl == 63 and packet[UDP].dport == 4242
    # the passed frames reached the DUT's own stack, which answered: no one listens on port 53 there
    from scapy.layers.inet import UDPerror

    quoted = {p[UDPerror].sport for p in got if ICMP in p and p[ICMP].type == 3 and UDPerror in p}
    assert quoted == {2000 + i for i in range(len(passed))}
    from scapy.layers.l2 import ARP

    arp_requests = [p for p in got if ARP in p and p[ARP].op == 1]
    stats = control.request_json(nf.name, "stats")
    # passed: our TTL-1 frames, and the ARP reply to each request the DUT's stack sent (not IP: passed)
    assert stats["verdicts"]["pass"]["packets"] == len(passed) + len(arp_requests)
    assert stats["verdicts"]["tx"]["packets"] == len(forwarded)
    assert stats["workers"][0]["tx_packets"] == len(forwarded)
    assert stats["workers"][0]["rx_packets"] == len(forwarded)  # passed frames never reached user space


@pytest.mark.parametrize("mode", paths.Modes(paths.worker_kinds))
def test_pass_reaches_the_local_stack(mode, pair):
    """csum_rewrite passes TTL-1 frames to the stack: in user space through the port's TAP device, in hybrid
    mode in XDP. Either way the DUT's own stack answers them (no one listens on port 53 there).

    In user space the passed frames arrive on the TAP device, so an ARP reply passed that way does not
    resolve the port's neighbours: the generator's address is set statically here (docs/afxdp.md)."""
    from scapy.layers.inet import ICMP, IP, UDP, UDPerror
    from scapy.layers.l2 import Ether

    link = pair.links[0]
    pair.run(pair.dut_ns, ["ip", "neigh", "replace", link.gen_ip, "lladdr", link.gen_mac, "dev", link.dut_if])
    nf = NfInstance.start(pair, "csum_rewrite", mode, pair.dut_ifaces)
    taps = [name for name in _links_in(pair.dut_ns) if name.startswith("xnfp")]
    assert len(taps) == (1 if mode == "afxdp" else 0)
    passed = [bytes(Ether(src=link.gen_mac, dst=link.dut_mac) / IP(src=link.gen_ip, dst=link.dut_ip, ttl=1)
                    / UDP(sport=3000 + i, dport=53) / b"to the stack") for i in range(5)]
    got = [Ether(raw) for raw in exchange(pair, passed)]
    quoted = {p[UDPerror].sport for p in got if ICMP in p and p[ICMP].type == 3 and UDPerror in p}
    assert quoted == {3000 + i for i in range(5)}
    if mode == "afxdp":
        worker = control.request_json(nf.name, "stats")["workers"][0]
        assert worker["pass_injected"] == 5 and worker["pass_dropped"] == 0
    assert nf.stop() == 0
    assert not [name for name in _links_in(pair.dut_ns) if name.startswith("xnfp")]


def _links_in(ns: str) -> list[str]:
    import subprocess

    out = subprocess.run(["ip", "-n", ns, "-o", "link", "show"], capture_output=True, text=True).stdout
    return [line.split(":")[1].strip().split("@")[0] for line in out.splitlines()]


@pytest.mark.parametrize("mode", paths.Modes(paths.kinds_at_xdp))
def test_nf_counters_are_the_same_on_every_path(mode, rules_file, pair):
    """The firewall's own counters (rule and default hits, non-IP) count the same frames in every mode."""
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces, rules=rules_file(FW_RULES + "allow udp "
                          f"{pair.links[0].gen_ip} 7 {pair.links[0].dut_ip} 7\n"))
    traffic = firewall_traffic(pair.links[0]) + [(udp4(pair.links[0], 7, 7), False)]
    exchange(pair, [f for f, _ in traffic], expect=sum(1 for _, m in traffic if not m))
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters == {"rule_drop": 3, "rule_allow": 1, "default_drop": 0, "default_allow": 5, "non_ip": 1}


def _cores_allowed(task_status: str) -> set[int]:
    line = next(l for l in task_status.splitlines() if l.startswith("Cpus_allowed_list:"))
    cores = set()
    for part in line.split(":", 1)[1].strip().split(","):
        first, _, last = part.partition("-")
        cores.update(range(int(first), int(last or first) + 1))
    return cores


def test_only_the_worker_runs_on_the_workers_core(pair):
    """A spinning worker preempted for a millisecond overflows its rings at line rate: the NF's other threads
    (control, housekeeping) may run anywhere but on the workers' cores, and frames still go through."""
    import os
    from pathlib import Path

    if os.cpu_count() < 2:
        pytest.skip("needs a core besides the worker's")
    nf = start(pair, "macswap", "afxdp", 1, extra=["--cores", str(DUT_CORE)])
    sent = flows(pair.links[0], N)
    assert sorted(exchange(pair, sent, expect=N)) == sorted(swap_macs(f) for f in sent)
    tasks = [Path(p) for p in Path(f"/proc/{nf.process.pid}/task").iterdir()]
    on_core_1 = [p.name for p in tasks if 1 in _cores_allowed((p / "status").read_text())]
    assert len(tasks) > 1 and len(on_core_1) == 1, (len(tasks), on_core_1)
    assert nf.stop() == 0

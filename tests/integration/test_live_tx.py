"""The live-frames transmit path (--tx-path live): the bytes XDP mode sends, in every mode whose workers send,
in order within a flow, every frame accounted for under overload, and a clear message for what it cannot do."""

from __future__ import annotations

import time

import pytest
from scapy.layers.inet import TCP, UDP

from lab_helpers import run_xnf, wait_until
from packets import swap_macs, udp4
from test_chains import chain_rules, traffic as chain_traffic
from test_lb import BACKENDS, VIP, expected_backend, from_backend, lb_rules, to_service
from test_router import routes, udp, udp6
from test_xdp_nfs import FW_RULES, exchange, firewall_traffic
from xnf import build, control
from xnf.lab import netns, paths, veth_stats
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab.cores import DUT_CORE

SENDING_MODES = paths.Modes(paths.with_workers)
LIVE = ["--tx-path", "live"]
# Every test here is about the live path: on a kernel without live frames, --tx-path live is refused by name
# (test_kernel.py), and these are skipped saying so.
pytestmark = pytest.mark.kernel("live_frames")


def lb_traffic(link) -> list[bytes]:
    """New flows to the service, TCP and UDP, and the chosen backends' replies (rewritten back to the VIP)."""
    frames = [to_service(link, cport, proto) for cport in range(40000, 40012) for proto in (TCP, UDP)]
    replies = [from_backend(link, expected_backend(link.gen_ip, cport, VIP, 6, BACKENDS), link.gen_ip, cport)
               for cport in range(40000, 40012)]
    return frames + replies


def router_traffic(t: Topology) -> list[bytes]:
    return [udp(t, "198.18.1.5"), udp(t, "198.18.1.200"), udp6(t, "2001:2:0:1::9"), udp(t, "198.18.1.7", ttl=1),
            udp(t, "198.18.5.5")]


# name: (topology, NF, rules for the topology, frames for the topology, port frames come back on)
CASES = {
    "macswap": ("pair", "macswap", None, lambda t: [udp4(t.links[0], 1000 + i, 2000 + i % 7, seq=i)
                                                      for i in range(100)], 0),
    "firewall": ("pair", "firewall", lambda t: FW_RULES, lambda t: [f for f, _ in firewall_traffic(t.links[0])], 0),
    "lb": ("pair", "lb", lambda t: lb_rules(), lambda t: lb_traffic(t.links[0]), 0),
    "router": ("two-port", "router", routes, router_traffic, 1),
    "chain": ("pair", "chain:firewall,lb", lambda t: chain_rules(t.links[0]),
              lambda t: chain_traffic(t.links[0]), 0),
}
_through_xdp: dict[str, list[bytes]] = {}


def send_through(case: str, mode: str, rules_file, extra: list[str]) -> tuple[list[bytes], list[dict]]:
    """Runs the case's NF in mode and returns the frames that came out, and the workers' stats."""
    kind, nf, rules, frames, out_link = CASES[case]
    with Topology(kind) as t:
        # The router's local frame makes the DUT's stack answer: a static neighbour keeps it from ARPing.
        t.run(t.dut_ns, ["ip", "neigh", "replace", t.links[0].gen_ip, "lladdr", t.links[0].gen_mac, "dev", "dut0"])
        instance = NfInstance.start(t, nf, mode, t.dut_ifaces, rules=rules_file(rules(t)) if rules else None,
                                    extra=extra)
        got = exchange(t, frames(t), send_link=0, recv_link=out_link)
        workers = control.request_json(instance.name, "stats").get("workers", [])
        assert instance.stop() == 0
    return got, workers


@pytest.mark.parametrize("mode", SENDING_MODES)
@pytest.mark.parametrize("case", list(CASES))
def test_live_path_sends_what_xdp_mode_sends(case, mode, rules_file):
    if case not in _through_xdp:
        _through_xdp[case] = send_through(case, "xdp", rules_file, [])[0]
    expected = _through_xdp[case]
    got, workers = send_through(case, mode, rules_file, LIVE)
    assert expected, "the case sends nothing back: it would prove nothing"
    assert sorted(got) == sorted(expected)
    assert all(set(w["tx_path"].values()) == {"live"} for w in workers), workers
    sent = sum(w["live_frames"] for w in workers)
    assert sent == sum(w["live_device_sent"] for w in workers) > 0
    assert sum(w["xsk_fallback"] + w["live_refused"] + w["live_redirect_errors"] for w in workers) == 0


def test_every_frame_length_is_copied_whole(pair):
    """The program copies short frames itself, 8 bytes at a time, and long ones with the kernel's helper: every
    length from the shortest Ethernet frame to 200 bytes, and a full-size one, comes back byte for byte."""
    link = pair.links[0]
    header = bytes.fromhex(link.dut_mac.replace(":", "")) + bytes.fromhex(link.gen_mac.replace(":", "")) + b"\x88\xb5"
    frames = [header + bytes((n + i) & 0xff for i in range(n - len(header))) for n in range(14, 201)]
    frames.append(header + bytes(i & 0xff for i in range(1514 - len(header))))
    nf = NfInstance.start(pair, "macswap", "afxdp", pair.dut_ifaces, extra=LIVE)
    got = exchange(pair, frames, expect=len(frames))
    assert sorted(got) == sorted(swap_macs(f) for f in frames)
    worker = control.request_json(nf.name, "stats")["workers"][0]
    assert worker["live_frames"] == len(frames) and worker["xsk_fallback"] == 0 and worker["live_refused"] == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.worker_waits))
def test_several_workers_and_ports(mode, rules_file):
    """Two queues, two workers, two ports: frames leave by the port the firewall redirects them to."""
    with Topology("two-port", queues=2) as t:
        nf = NfInstance.start(t, "firewall", mode, t.dut_ifaces, rules=rules_file(FW_RULES),
                              extra=LIVE + ["--queues", "2", "--workers", "2"])
        traffic = firewall_traffic(t.links[0]) + [(udp4(t.links[0], 3000 + i, 4000 + i), False) for i in range(64)]
        passing = [f for f, match in traffic if not match]
        got = exchange(t, [f for f, _ in traffic], send_link=0, recv_link=1, expect=len(passing))
        assert sorted(got) == sorted(passing)
        workers = control.request_json(nf.name, "stats")["workers"]
        assert all(w["live_frames"] > 0 for w in workers), workers
        assert sum(w["live_device_sent"] for w in workers) == len(passing)


@pytest.mark.parametrize("queues", [1, 2])
def test_no_reordering_within_a_flow(queues):
    """100,000 frames over 64 flows through macswap on the live path: every frame back, none out of order."""
    with Topology("pair", queues=queues, gen_xdp=None) as t:
        # GRO on gen0 lets dut0 take XDP frames before xnf-gen's receiver attaches its program there
        t.run(t.gen_ns, ["ethtool", "-K", "gen0", "gro", "on"])
        NfInstance.start(t, "macswap", "afxdp", t.dut_ifaces,
                         extra=LIVE + ["--queues", str(queues), "--workers", str(queues)])
        cores = "0,1" if queues == 2 else "0"
        out = Generator(t, receive_on=0).run("--count", "100000", "--flows", "64", "--rate", "100000",
                                             "--cores", cores).summary
        assert out["sent"] == 100000
        assert out["reordered"] == 0 and out["lost"] == 0 and out["received"] == 100000, out


def worker_settled(nf: NfInstance) -> dict | None:
    """The stats once the worker has no frame between its receive and its live path's account (else None)."""
    stats = control.request_json(nf.name, "stats")
    w = stats["workers"][0]
    taken = sum(w["verdicts"].values()) - w["verdicts"]["malformed"]
    accounted = w["live_refused"] + w["live_redirect_errors"] + w["live_device_sent"] + w["live_device_dropped"]
    return stats if w["rx_packets"] == taken and w["live_frames"] == accounted else None


def test_every_frame_is_accounted_for_under_overload(rules_file):
    """A flood through a two-port firewall (drops, redirects) on the live path, with the returned frames
    received on a core of their own so the generator side's rings overflow: the workers' counts, the
    transmit program's, the tracepoints' and veth's own agree frame for frame, and the UMEM is whole."""
    with Topology("two-port", gen_xdp="drop") as t:
        t.pin_gen_receive(0)
        link = t.links[0]
        nf = NfInstance.start(t, "firewall", "afxdp", t.dut_ifaces,
                              rules=rules_file(f"drop udp {link.gen_ip} 1 {link.dut_ip} 1\n"),
                              extra=LIVE + ["--ring-size", "512", "--cores", str(DUT_CORE)])
        before = {p: veth_stats.read(t.dut_ns, p) for p in ("dut0", "dut1")}
        gen = Generator(t).run("--count", "2000000", "--cores", "0", "--call-ms", "100", "--flows", "16")
        assert gen.summary["sent"] == 2000000
        exchange(t, [udp4(link, 1, 1, seq=i) for i in range(100)], send_link=0, recv_link=1)
        stats = wait_until(lambda: worker_settled(nf), timeout_s=10, what="the worker's counts settled")
        after = {p: veth_stats.read(t.dut_ns, p) for p in ("dut0", "dut1")}
        w = stats["workers"][0]
        verdicts = stats["verdicts"]
        assert verdicts["drop"]["packets"] >= 100 and verdicts["redirect"]["packets"] > 0
        # received = every verdict; sent on = handed to the live path (nothing too long for it here)
        assert w["rx_packets"] == sum(w["verdicts"].values()) - w["verdicts"]["malformed"]
        assert w["live_frames"] == w["verdicts"]["tx"] + w["verdicts"]["redirect"] and w["xsk_fallback"] == 0
        # handed to the live path = refused by the program + by the kernel + taken + refused by the devices
        assert w["live_frames"] == (w["live_refused"] + w["live_redirect_errors"] + w["live_device_sent"]
                                    + w["live_device_dropped"]) and w["live_unsent"] == 0
        # the devices' own counters say the same
        xmit = sum(after[p]["tx_xdp_xmit"] - before[p]["tx_xdp_xmit"] for p in after)
        errors = sum(after[p]["tx_xdp_xmit_errors"] - before[p]["tx_xdp_xmit_errors"] for p in after)
        assert (xmit, errors) == (w["live_device_sent"], w["live_device_dropped"])
        assert w["rx_ring_full"] + w["kernel_rx_dropped"] + w["live_device_dropped"] > 0, \
            "nothing overflowed: the run does not test what it claims"
        account = control.request_json(nf.name, "frames")["workers"][0]
        assert account["duplicates"] == 0 and account["invalid"] == 0, account
        assert nf.stop() == 0


# ---------------------------------------------------------------- what it cannot do, said clearly

@pytest.mark.parametrize("args, message", [
    (["--mode", "afxdp", "--tx-path", "fast"], "--tx-path takes auto, xsk or live, not 'fast'"),
    (["--mode", "afxdp", "--tx-path", "live", "--zerocopy"], "zero-copy sockets send fastest on their own ring"),
    (["--mode", "xdp-sk", "--tx-path", "live"], "the workers send nothing"),
    (["--mode", "afxdp", "--live-batch", "5000"], "--live-batch 5000 is out of range 1-4096"),
    (["--mode", "xdp", "--tx-path", "live"], "only applies to the AF_XDP modes"),
])
def test_wrong_settings_are_refused_with_one_message(pair, args, message):
    result = run_xnf(["run", "macswap", "--iface", "dut0", *args], ns=pair.dut_ns)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr, result.stderr


def test_a_port_whose_frames_a_live_frame_cannot_hold(pair):
    pair.run(pair.dut_ns, ["ip", "link", "set", "dut0", "mtu", "3500"])
    pair.run(pair.gen_ns, ["ip", "link", "set", "gen0", "mtu", "3500"])
    refused = run_xnf(["run", "macswap", "--mode", "afxdp", "--iface", "dut0", "--tx-path", "live"], ns=pair.dut_ns)
    assert refused.returncode == 2 and "MTU of 3500" in refused.stderr and "--tx-path xsk" in refused.stderr
    nf = NfInstance.start(pair, "macswap", "afxdp", pair.dut_ifaces)  # auto: the xsk ring, and it works
    sent = [udp4(pair.links[0], 1000 + i, 2000) for i in range(10)]
    assert len(exchange(pair, sent, expect=10)) == 10
    assert control.request_json(nf.name, "stats")["workers"][0]["tx_path"] == {"dut0": "xsk"}


def test_a_port_that_refuses_xdp_frames(bare_pair):
    """dut0's peer has no XDP program and no GRO, so dut0 takes no frames from XDP (xnf leaves it so with --peers
    check): live refuses to start; auto sends on the xsk ring until the peer gets a program, then through live
    frames."""
    bare_pair.run(bare_pair.gen_ns, ["ethtool", "-K", "gen0", "gro", "off"])  # the lab turns it on where gen0 has no XDP
    refused = run_xnf(["run", "macswap", "--mode", "afxdp", "--iface", "dut0", "--tx-path", "live", "--peers",
                       "check"], ns=bare_pair.dut_ns)
    assert refused.returncode == 2 and "dut0 does not take frames sent from XDP" in refused.stderr
    assert "ethtool -K PEER gro on" in refused.stderr
    nf = NfInstance.start(bare_pair, "macswap", "afxdp", bare_pair.dut_ifaces, extra=["--peers", "check"])
    sent = [udp4(bare_pair.links[0], 1000 + i, 2000) for i in range(10)]
    assert len(exchange(bare_pair, sent, expect=10)) == 10
    assert control.request_json(nf.name, "stats")["workers"][0]["tx_path"] == {"dut0": "xsk"}
    netns.attach_own_xdp(bare_pair.gen_ns, "gen0", build.bpf_object("xnf_pass"), how="xdpdrv")
    deadline = time.monotonic() + 5
    while control.request_json(nf.name, "stats")["workers"][0]["tx_path"] != {"dut0": "live"}:
        assert time.monotonic() < deadline, "auto never moved to the live path"
        time.sleep(0.1)
    assert len(exchange(bare_pair, sent, expect=10)) == 10
    assert control.request_json(nf.name, "stats")["workers"][0]["live_device_sent"] == 10
    nf.process.send_signal(2)
    _, err = nf.process.communicate(timeout=10)
    assert "dut0 does not take frames sent from XDP now" in err and "sending to it through live frames" in err

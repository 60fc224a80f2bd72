"""xnf-gen and its receiver: what they count must be exactly what happened."""

from __future__ import annotations


import pytest

from lab_helpers import gen
from xnf.lab import netfilter, netns, veth_stats
from xnf.lab.generator import Generator
from xnf.lab.measure import TrafficSpec, run_trial
from xnf.lab.nf_process import NfInstance
from xnf.lab.rfc2544 import search_once
from xnf.lab.topology import Topology
from xnf.lab.cores import DUT_CORE


@pytest.mark.parametrize("traffic", [
    [], ["--proto", "tcp"], ["--ipv6"], ["--ipv6", "--proto", "tcp"],
    ["--flows", "1000", "--vary", "sport,dport,saddr,daddr", "--flow-mode", "random"],
    ["--size", "1518"],
])
def test_macswap_returns_every_frame(bare_pair, traffic):
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    out = gen(bare_pair, "--count", "50000", *traffic)
    assert out["sent"] == out["received"] == 50000
    assert out["lost"] == 0 and out["reordered"] == 0 and out["not_probes"] == 0
    assert out["latency_ns"]["samples"] == 50000
    assert 0 < out["latency_ns"]["p50"] <= out["latency_ns"]["p99"] <= out["latency_ns"]["max"]


def test_drop_loses_everything(bare_pair):
    NfInstance.start(bare_pair, "drop", "xdp", bare_pair.dut_ifaces)
    out = gen(bare_pair, "--count", "50000")
    assert out["received"] == 0 and out["lost"] == 50000 and out["loss_ratio"] == 1.0


def test_injected_loss_is_measured_exactly(bare_pair):
    nf = NfInstance.start(bare_pair, "drop_every_7th", "xdp", bare_pair.dut_ifaces)
    out = gen(bare_pair, "--count", "70000", "--flows", "10")
    assert out["lost"] == 10000 and out["received"] == 60000
    assert out["loss_ratio"] == pytest.approx(1 / 7)
    assert nf.stats()["drop"]["packets"] == 10000


def test_generator_counts_match_the_interfaces():
    """One queue per sender thread: every frame built is sent, and every counter on both ends agrees."""
    with Topology("pair", queues=2, gen_xdp=None) as t:
        NfInstance.start(t, "macswap", "xdp", t.dut_ifaces)
        before_dut, before_gen = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0")
        out = gen(t, "--count", "123457", "--cores", "0,1", "--flows", "64")
        after_dut, after_gen = veth_stats.read(t.dut_ns, "dut0"), veth_stats.read(t.gen_ns, "gen0")
        assert out["requested"] == out["built"] == 123457
        assert out["send_errors"] == 0 and out["sent"] == 123457
        if out["sender"] == "live":   # the tc sender's frames leave as skbs, which veth's XDP counters do not see
            assert after_gen["tx_xdp_xmit"] - before_gen["tx_xdp_xmit"] == 123457
        assert after_dut["rx_xdp_packets"] - before_dut["rx_xdp_packets"] == 123457
        assert after_dut["rx_xdp_tx"] - before_dut["rx_xdp_tx"] == 123457
        assert after_gen["rx_xdp_drops"] - before_gen["rx_xdp_drops"] == out["received"] == 123457
        assert out["lost"] == 0 and out["flows_with_loss"] == 0


def test_threads_sharing_a_queue_are_warned_about_and_refusals_counted():
    with Topology("pair", queues=1, gen_xdp=None) as t:
        NfInstance.start(t, "macswap", "xdp", t.dut_ifaces)
        before_gen, refused_before = veth_stats.read(t.gen_ns, "gen0"), veth_stats.refused_to_send(t.gen_ns, "gen0")
        result = Generator(t, receive_on=0).run("--count", "123457", "--cores", "0,1")
        after_gen, refused_after = veth_stats.read(t.gen_ns, "gen0"), veth_stats.refused_to_send(t.gen_ns, "gen0")
        out = result.summary
        assert "2 sender threads on gen0 with 1 tx queue" in result.stderr
        assert out["send_errors"] == refused_after - refused_before
        assert out["sent"] + out["send_errors"] == out["built"]
        # what came back is exactly what veth delivered back, whatever was lost on the way in
        assert out["received"] == after_gen["rx_xdp_drops"] - before_gen["rx_xdp_drops"]
        assert out["lost"] == out["sent"] - out["received"]


def test_paced_run_offers_exactly_rate_times_duration(bare_pair):
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    out = gen(bare_pair, "--rate", "200000", "--duration", "1")
    assert out["sent"] == 200000
    assert out["seconds"] == pytest.approx(1.0, abs=0.05)


def test_receiver_refuses_a_busy_interface(pair):
    result = Generator(pair, receive_on=0).run("--count", "10", check=False)
    assert result.returncode == 1
    assert "needs the interface to itself" in result.stderr and "Traceback" not in result.stderr


def test_search_finds_a_known_capacity(bare_pair):
    """ratelimit passes 200 kpps and drops the excess: the search must land under it, no further below than its
    step (precision × the flat-out rate it bisects from, which moves with the machine) and the bucket's jitter."""
    capacity, precision = 200_000, 0.002
    NfInstance.start(bare_pair, "ratelimit", "xdp", bare_pair.dut_ifaces)
    result = search_once(lambda rate: run_trial(bare_pair, rate, 1.0, TrafficSpec()), precision=precision)
    assert not result.generator_limited
    step = precision * result.generator_max_pps
    assert 0.98 * capacity - step <= result.throughput_pps <= 1.025 * capacity, (result.throughput_pps, step)
    passing = [t for t in result.trials if t.loss_ratio < 0.001]
    assert all(t.offered_pps <= 1.025 * capacity for t in passing if t.offered_pps)


def test_trial_accounts_for_cpu_and_cost(bare_pair):
    """CPU time here is sampled in 4 ms ticks: an unpaced second gives the DUT's softirq hundreds of them."""
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    trial = run_trial(bare_pair, 0, 1.0, TrafficSpec(), tsc_hz=2.5e9)
    assert trial.sent > 200_000 and trial.lost == 0
    assert set(trial.cpu) == {0, 1}
    assert trial.dut_ns_per_packet and trial.dut_ns_per_packet > 0
    assert trial.dut_cycles_per_packet == pytest.approx(trial.dut_ns_per_packet * 2.5)


def test_a_sink_is_measured_by_what_it_processed(bare_pair):
    """drop sends nothing back: its loss is what it never processed, so a paced trial it keeps up with
    shows no loss, and the latency histogram stays empty."""
    nf = NfInstance.start(bare_pair, "drop", "xdp", bare_pair.dut_ifaces)
    trial = run_trial(bare_pair, 300_000, 1.0, TrafficSpec(), nf=nf)
    assert trial.sent == 300_000 and trial.received == 0
    assert trial.lost == 0 and trial.loss_ratio == 0.0


def test_recycled_frames_carry_no_change_the_dut_made(rules_file, bare_pair):
    """On veth the NF rewrites the generator's own page, which live frames recycle: the generator must
    write its headers back, or the lb's rewritten addresses would come back in later frames as non-service
    traffic (found by the lb benchmark)."""
    from xnf import control
    from xnf.lab import nf_setup

    setup = nf_setup.lb_sessions(1000, bare_pair.links[0].gen_mac)
    nf = NfInstance.start(bare_pair, "lb", "xdp", bare_pair.dut_ifaces, rules=rules_file(setup.rules), extra=setup.extra)
    trial = run_trial(bare_pair, 0, 0.5, TrafficSpec(**setup.traffic))
    counters = control.request_json(nf.name, "stats")["counters"]
    assert counters["not_service"] == 0
    assert counters["new_session"] == 1000 and counters["hit"] == trial.sent - 1000


TRIAL_S = 0.5


def test_a_busy_poll_dut_that_refuses_frames_is_measured_by_what_it_took(bare_pair, rules_file):
    """The busy-poll AF_XDP worker leaves its receive ring to fill while it works, and veth then refuses the
    generator's frames instead of losing them. Every trial the search passes took what it offered (frames the
    DUT refused count as lost), so the rate it finds came back, not just went out: the search once passed offered
    rates the DUT took half of (docs/methodology.md). The NF spends enough that any of xnf-gen's senders outpaces it."""
    rules = rules_file("cycles 3000\n")
    NfInstance.start(bare_pair, "taskemu", "afxdp-sysc", bare_pair.dut_ifaces, rules=rules, extra=["--cores", str(DUT_CORE)])
    result = search_once(lambda rate: run_trial(bare_pair, rate, TRIAL_S, TrafficSpec()), loss_threshold=0.01)
    passing = [t for t in result.trials if t.passes(0.01)]
    assert passing and not result.generator_limited
    for t in passing:   # a paced trial offers exactly rate x duration frames
        offered = t.offered_pps * TRIAL_S if t.offered_pps else t.sent
        assert t.received >= 0.98 * offered, (t.offered_pps, t.received, t.send_errors)
    assert any(t.send_errors for t in result.trials if t.offered_pps), "the DUT never refused: nothing was tested"


def test_frames_carry_the_interfaces_source_address_through_a_linux_bridge():
    """A bridge drops frames from a zero source address: the generator's frames cross one, port 0 to port 1."""
    with Topology("two-port", gen_xdp="drop") as t:
        netfilter.bridge_ports(t.dut_ns, t.dut_ifaces)
        for iface in t.dut_ifaces:   # the generator's XDP frames enter a veth without XDP by GRO
            netns.run(t.dut_ns, ["ethtool", "-K", iface, "gro", "on"])
        out = t.links[1]
        before = veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"]
        Generator(t).run("--count", "1000", "--rate", "10000", "--flows", "10", "--dst-mac", out.gen_mac)
        assert veth_stats.read(t.gen_ns, out.gen_if)["rx_xdp_drops"] - before >= 1000

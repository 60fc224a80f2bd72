"""Rules added and deleted as fast as the control socket takes them while traffic flows, in XDP and in the
user-space modes: every frame is accounted for (returned, or dropped by the firewall and counted), the
legitimate class loses nothing, and no frame meets a half-written rule (no abort, no redirect error)."""

from __future__ import annotations

import threading
from contextlib import contextmanager

import pytest

from lab_helpers import wait_until
from xnf import control
from xnf.lab import paths
from xnf.lab.generator import Generator
from xnf.model import cases
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

ATTACKERS = "203.0.113"
FRAMES = 200000


@contextmanager
def churning(nf: NfInstance, rules: list[str]):
    """Each rule added and deleted again, as fast as the control socket takes them, while the block runs; yields
    the count of changes made (a list of one, read after the block)."""
    stop, changes = threading.Event(), [0]

    def churn():
        while not stop.is_set():
            for rule in rules:
                control.request(nf.name, f"rules add {rule}")
                control.request(nf.name, f"rules del {rule}")
                changes[0] += 2

    thread = threading.Thread(target=churn)
    thread.start()
    try:
        yield changes
    finally:
        stop.set()
        thread.join()


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_rule_churn_under_traffic_accounts_for_every_frame(mode, bare_pair):
    churn_under_traffic(bare_pair, mode)


def churn_under_traffic(pair: Topology, mode: str) -> None:
    link = pair.links[0]
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces, extra=paths.find(mode).lab_options())
    rules = [f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9" for i in range(16)]
    with churning(nf, rules) as changes:
        out = Generator(pair, receive_on=0).run(
            "--count", str(FRAMES), "--rate", "100000", "--dst-ip", link.dut_ip,
            "--class", "legit:share=0.5,flows=16", "--class", f"churned:saddr={ATTACKERS}.0/28,share=0.5").summary
    wait_until(lambda: sum(v["packets"] for v in control.request_json(nf.name, "stats")["verdicts"].values())
               >= FRAMES, what="a verdict for every frame sent")   # the last frames leave the workers
    stats = control.request_json(nf.name, "stats")
    verdicts = {v: c["packets"] for v, c in stats["verdicts"].items()}
    classes = {c["name"]: c for c in out["classes"]}
    assert changes[0] > 500, "the churn must be real"
    assert out["sent"] == FRAMES
    assert out["received"] + verdicts["drop"] == FRAMES, (out, verdicts)
    assert classes["legit"]["lost"] == 0 and 0 < classes["churned"]["lost"] < classes["churned"]["sent"]
    assert verdicts["abort"] == verdicts["redirect_error"] == 0
    assert stats["counters"]["rule_drop"] == verdicts["drop"]
    assert nf.stop() == 0


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_inside_prefixes_churned_never_let_a_frame_out_untranslated(mode, bare_pair, rules_file):
    """The NAT's only inside prefix, the generator's own address, added and deleted as fast as the control socket
    takes it while the generator's flows go through: with it or without it (then every source is inside) each
    frame is translated; none goes out as it came (the moment between a change and its commit once let 160 out)."""
    link = bare_pair.links[0]
    nf = NfInstance.start(bare_pair, "nat", mode, bare_pair.dut_ifaces, rules=rules_file(cases.nat_on_a_stick()),
                          extra=paths.worker_options(mode))
    with churning(nf, [f"inside from {link.gen_ip}/32"]) as changes:
        out = Generator(bare_pair, receive_on=0).run("--count", str(FRAMES), "--rate", "100000",
                                                     *cases.nat_flows(64)).summary
    stats = control.request_json(nf.name, "stats")
    assert changes[0] > 500, "the churn must be real"
    assert out["sent"] == FRAMES
    assert stats["counters"]["untranslated"] == 0, stats["counters"]
    assert nf.stop() == 0


@pytest.mark.parametrize("setting", ["public", "outside"])
@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_a_nat_whose_only_public_or_outside_churns_never_forwards_untranslated(mode, setting, bare_pair, rules_file):
    """The NAT's only public address (a renumbering is one deleted, another added) or its outside (a gateway
    changed) deleted and added again as fast as the control socket takes it while the generator's flows go through:
    each frame leaves translated or is dropped and counted `untranslatable`; none is handed on as it came."""
    rules = cases.nat_on_a_stick()
    churned = next(line for line in rules.splitlines() if line.startswith(setting))
    nf = NfInstance.start(bare_pair, "nat", mode, bare_pair.dut_ifaces, rules=rules_file(rules),
                          extra=paths.worker_options(mode))
    with churning(nf, [churned]) as changes:
        out = Generator(bare_pair, receive_on=0).run("--count", str(FRAMES), "--rate", "100000",
                                                     *cases.nat_flows(64)).summary
    stats = wait_until(lambda: (s := control.request_json(nf.name, "stats")) and nat_accounted(s) >= FRAMES and s,
                       timeout_s=20, what="every frame sent accounted for by the NAT")   # the workers catch up
    counters = stats["counters"]
    assert changes[0] > 500, "the churn must be real"
    assert out["sent"] == FRAMES
    assert counters["untranslated"] == 0, counters
    assert counters["untranslatable"] > 0, "the churn never met a frame"
    assert nat_accounted(stats) == FRAMES, stats
    assert nf.stop() == 0


def nat_accounted(stats: dict) -> int:
    """The frames the NAT has accounted for: translated out, dropped as untranslatable, or refused a port (a frame
    that met the pool emptied between its checks: pool_full), and in the user-space modes those its workers' rings
    overflowed with while a rule change held them (counted by the kernel, XDP_STATISTICS)."""
    counters = stats["counters"]
    overflowed = sum(w["rx_ring_full"] + w["kernel_rx_dropped"] for w in stats.get("workers", []))
    return counters["out"] + counters["untranslatable"] + counters["pool_full"] + overflowed


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_port_forwards_churned_keep_their_servers_answers_on_their_port(mode, bare_pair, rules_file):
    """The generator as an inside server behind a port forward, answering from its forwarded endpoint while another
    forward is added and deleted as fast as the control socket takes it: every answer leaves from its forward's
    public port; none is given a mapping of its own (the moment the reverse table was rebuilt once did that)."""
    link = bare_pair.links[0]
    rules = cases.nat_on_a_stick() + f"forward udp 5000 to {link.gen_ip} 2000 mac {cases.GEN_MAC}\n"
    nf = NfInstance.start(bare_pair, "nat", mode, bare_pair.dut_ifaces, rules=rules_file(rules),
                          extra=paths.worker_options(mode))
    with churning(nf, [f"forward udp 6000 to {link.gen_ip} 3000 mac {cases.GEN_MAC}"]) as changes:
        out = Generator(bare_pair, receive_on=0).run("--count", str(FRAMES), "--rate", "100000",
                                                     *cases.nat_flows(1)).summary
    counters = control.request_json(nf.name, "stats")["counters"]
    assert changes[0] > 500, "the churn must be real"
    assert out["sent"] == FRAMES and counters["out"] == FRAMES, (out, counters)
    assert counters["new_mapping"] == 0 and counters["untranslated"] == 0, counters
    assert nf.stop() == 0

"""Dynamic offload of hot drop rules (--offload-drops): the firewall runs in user space; under a generated attack
the controller copies its hot drop rules into the XDP pre-filter and takes them out when the attack stops, with
every legitimate frame delivered and every attack frame counted once, against its rule, wherever it was dropped."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from lab_helpers import run_xnf
from xnf import control
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.cores import DUT_CORE

ATTACKERS = "203.0.113"
OFFLOAD = ["--offload-drops", "--offload-above", "5000", "--offload-below", "500", "--offload-interval-ms", "100",
           "--cores", str(DUT_CORE)]


def attack_rules(link, sources: range) -> str:
    return "".join(f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9\n" for i in sources)


def offload_of(nf: NfInstance) -> dict:
    return control.request_json(nf.name, "stats")["offload"]


def rules_where(nf: NfInstance) -> dict[str, str]:
    return {r["rule"]: r["where"] for r in offload_of(nf)["rules"]}


def wait_for(condition, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def by_name(summary: dict) -> dict[str, dict]:
    return {c["name"]: c for c in summary["classes"]}


def test_hot_rules_move_in_and_out_with_no_legitimate_loss(rules_file, bare_pair):
    """Four attackers at 25 kpps each (above 5 kpps) go into the kernel within the run, a fifth rule nobody
    hits stays in user space; when the attack stops they come back. The legitimate class loses nothing, and
    each rule's hits (kernel + user) add up to exactly the attack frames sent."""
    link = bare_pair.links[0]
    acl = attack_rules(link, range(4)) + attack_rules(link, range(100, 101))
    nf = NfInstance.start(bare_pair, "firewall", "afxdp", bare_pair.dut_ifaces, rules=rules_file(acl), extra=OFFLOAD)
    gen = Generator(bare_pair, receive_on=0)
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(gen.run, "--duration", "3", "--rate", "200000", "--dst-ip", link.dut_ip,
                          "--class", "legit:share=0.5,flows=16",
                          "--class", f"attack:saddr={ATTACKERS}.0/30,share=0.5")
        all_in = wait_for(lambda: list(rules_where(nf).values()).count("kernel") == 4, 2.5)
        summary = run.result().summary
    assert all_in, offload_of(nf)
    classes = by_name(summary)
    assert classes["legit"]["received"] == classes["legit"]["sent"] > 0 and classes["legit"]["lost"] == 0
    assert classes["attack"]["received"] == 0
    assert wait_for(lambda: set(rules_where(nf).values()) == {"user"}, 3), offload_of(nf)
    offload = offload_of(nf)
    stats = control.request_json(nf.name, "stats")
    assert len(offload["rules"]) == 4, "a rule nobody hits has no hits to show"
    assert sum(r["hits"] for r in offload["rules"]) == classes["attack"]["sent"]
    assert all(r["kernel_hits"] > 0 and r["user_hits"] > 0 for r in offload["rules"])
    assert offload["installs"] == offload["removals"] == 4
    assert stats["verdicts"]["drop"]["packets"] == classes["attack"]["sent"]
    kernel_drops = sum(r["kernel_hits"] for r in offload["rules"])
    assert sum(w["rx_packets"] for w in stats["workers"]) == summary["sent"] - kernel_drops
    assert nf.stop() == 0


def test_a_rule_deleted_while_offloaded_stops_dropping_at_once(rules_file, bare_pair):
    """The controller withdraws its copies before a rule changes: deleting an offloaded rule lets its traffic
    through from then on (the firewall's default allows it), in the same run."""
    link = bare_pair.links[0]
    rule = attack_rules(link, range(1)).strip()
    nf = NfInstance.start(bare_pair, "firewall", "afxdp", bare_pair.dut_ifaces, rules=rules_file(rule + "\n"), extra=OFFLOAD)
    gen = Generator(bare_pair, receive_on=0)
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(gen.run, "--duration", "3", "--rate", "100000", "--dst-ip", link.dut_ip,
                          "--class", "legit:share=0.5,flows=16",
                          "--class", f"attack:saddr={ATTACKERS}.0,share=0.5")
        offloaded = wait_for(lambda: "kernel" in rules_where(nf).values(), 2)
        deleted = run_xnf(["rules", "del", "--name", nf.name, *rule.split()])
        summary = run.result().summary
    assert offloaded and deleted.returncode == 0, deleted.stderr
    classes = by_name(summary)
    assert classes["legit"]["lost"] == 0
    assert 0 < classes["attack"]["received"] < classes["attack"]["sent"]
    assert "kernel" not in rules_where(nf).values()
    assert nf.stop() == 0


def test_a_full_table_holds_the_hottest_rule(rules_file, bare_pair):
    """With room for one rule, the 80 kpps attacker gets the kernel and the 20 kpps one stays in user space."""
    link = bare_pair.links[0]
    nf = NfInstance.start(bare_pair, "firewall", "afxdp", bare_pair.dut_ifaces, rules=rules_file(attack_rules(link, range(2))),
                          extra=OFFLOAD + ["--offload-table", "1"])
    hot, warm = (f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9" for i in range(2))
    gen = Generator(bare_pair, receive_on=0)
    with ThreadPoolExecutor(1) as pool:
        run = pool.submit(gen.run, "--duration", "3", "--rate", "200000", "--dst-ip", link.dut_ip,
                          "--class", "legit:share=0.5", "--class", f"hot:saddr={ATTACKERS}.0,share=0.4",
                          "--class", f"warm:saddr={ATTACKERS}.1,share=0.1")
        settled = wait_for(lambda: rules_where(nf) == {hot: "kernel", warm: "user"}, 2.5)
        summary = run.result().summary
    assert settled, control.request_json(nf.name, "stats")
    assert by_name(summary)["legit"]["lost"] == 0
    assert nf.stop() == 0


@pytest.mark.parametrize("nf,args,message", [
    ("macswap", ["--mode", "afxdp", "--offload-drops"], "macswap declares no pure-drop rules"),
    ("firewall", ["--mode", "xdp", "--offload-drops"], "--offload-drops only applies to the AF_XDP modes"),
    ("firewall", ["--mode", "hybrid", "--offload-drops"], "give a user-space mode"),
    ("firewall", ["--mode", "afxdp", "--offload-above", "100"], "--offload-above sets how --offload-drops works"),
    ("firewall", ["--mode", "afxdp", "--offload-drops", "--offload-above", "100", "--offload-below", "100"],
     "--offload-below 100 must be less than --offload-above 100"),
    ("firewall", ["--mode", "afxdp", "--offload-drops", "--offload-table", "5000"], "--offload-table"),
])
def test_a_wrong_offload_is_refused(pair, nf, args, message):
    result = run_xnf(["run", nf, "--iface", "dut0", *args], ns=pair.dut_ns)
    assert result.returncode == 2 and message in result.stderr and "Traceback" not in result.stderr

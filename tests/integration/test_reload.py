"""`xnf reload` and SIGHUP: a running instance reads its --rules file again and puts it in force in place of what
it held, whole and at once (xnf/rules_tables.h), without a restart. Under traffic, reloaded as fast as it goes
between two files that share the rules dropping an attack and differ in one more: no attack frame ever gets
through (a rule both files have is never absent), the legitimate class loses nothing, and the last file is what is
in force; between two files that let one flow through by different lines, it loses nothing; a file that does not
parse changes nothing and says where."""

from __future__ import annotations

import os
import signal
import subprocess
import threading

import pytest

from lab_helpers import run_xnf, wait_until
from xnf import control
from xnf.errors import XnfError
from xnf.lab import paths
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

ATTACKERS = "203.0.113"
FRAMES = 100000
SIGHUP_EVERY = 25


def write(path, lines: list[str]) -> None:
    """The file replaced whole (a reload reads either the old file or the new one, never half of one)."""
    tmp = path.with_suffix(".tmp")
    tmp.write_text("".join(f"{line}\n" for line in lines))
    os.replace(tmp, path)


def dropped_before_the_nf(stats: dict) -> int:
    """Frames a port's veth peer could not hand to it (its receive ring full while its core was busy)."""
    return sum(port["dropped_before_xdp"] for port in stats.get("ports", []))


def seen_or_counted_before(nf: NfInstance) -> int:
    """Frames the NF gave a verdict, and those veth dropped before it could."""
    stats = control.request_json(nf.name, "stats")
    return sum(v["packets"] for v in stats["verdicts"].values()) + dropped_before_the_nf(stats)


# Traffic goes on, a generator run at a time, until this many reloads were made under it: waited for, not timed.
MAX_RUNS = 60


def reloaded_under_traffic(pair, mode: str, path, first: list[str], reload, reloads_wanted: int,
                           *generator_options: str):
    """The firewall started on the rules first, reloaded by reload(nf, count) over and over while xnf-gen sends at
    100,000 frames/s, in runs until reloads_wanted reloads were made: (the instance, each class's frames received
    and lost over every run, how many frames were sent, how many reloads were made)."""
    write(path, first)
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces, rules=str(path),
                          extra=paths.find(mode).lab_options())
    stop, reloads = threading.Event(), [0]

    def churn():
        while not stop.is_set():
            reload(nf, reloads[0])
            reloads[0] += 1

    thread = threading.Thread(target=churn)
    thread.start()
    classes, sent = {}, 0
    try:
        for _ in range(MAX_RUNS):
            out = Generator(pair, receive_on=0).run(*generator_options, "--rate", "100000",
                                                    "--dst-ip", pair.links[0].dut_ip).summary
            sent += out["sent"]
            for c in out["classes"]:
                total = classes.setdefault(c["name"], {"received": 0, "lost": 0})
                total["received"] += c["received"]
                total["lost"] += c["lost"]
            if reloads[0] >= reloads_wanted:
                break
    finally:
        stop.set()
        thread.join()
    return nf, classes, sent, reloads[0]


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_reloads_under_traffic_never_let_a_rule_both_files_hold_lapse(mode, bare_pair, tmp_path):
    link = bare_pair.links[0]
    attack = [f"drop udp {ATTACKERS}.{i} 9 {link.dut_ip} 9" for i in range(16)]
    files = [attack + [f"drop udp 198.51.100.{k} 9 {link.dut_ip} 9"] for k in (1, 2)]
    path = tmp_path / "fw.rules"

    def reload(nf, count: int) -> None:
        """Through the control socket, and every SIGHUP_EVERY-th time by SIGHUP (whose line goes to the instance's
        stdout, a pipe here that nobody reads until the end)."""
        write(path, files[count % 2])
        if count % SIGHUP_EVERY == SIGHUP_EVERY - 1:
            nf.process.send_signal(signal.SIGHUP)
        else:
            control.request(nf.name, "reload")

    nf, classes, sent, reloads = reloaded_under_traffic(bare_pair, mode, path, files[0], reload, 51, "--count",
                                                        str(FRAMES), "--class", "legit:share=0.5,flows=16",
                                                        "--class", f"attack:saddr={ATTACKERS}.0/28,share=0.5")
    assert reloads > 50, "the reloads must be real"
    assert classes["attack"]["received"] == 0, classes["attack"]        # never absent
    assert classes["legit"]["lost"] == 0, classes["legit"]
    wait_until(lambda: seen_or_counted_before(nf) >= sent, what="a verdict for every frame")

    write(path, files[0])
    control.request(nf.name, "reload")        # served after any SIGHUP sent before it: the signal is read first
    write(path, files[1])
    answer = control.request(nf.name, "reload")
    assert answer.strip() == f"reloaded {path}: 17 rules in force, 1 deleted"
    listed = control.request(nf.name, "rules list")
    assert "198.51.100.2" in listed and "198.51.100.1 " not in listed

    path.write_text("\n".join(files[0]) + "\ndrop udp 198.51.100.9 9\n")
    refused = run_xnf(["reload", "--name", nf.name])
    assert refused.returncode == 1 and f"{path}:18:" in refused.stderr and "Traceback" not in refused.stderr
    assert control.request(nf.name, "rules list") == listed              # nothing changed
    nf.process.send_signal(signal.SIGHUP)
    assert control.request(nf.name, "rules list") == listed
    assert nf.stop() == 0
    _, err = nf.process.communicate(timeout=10)
    assert f"not reloaded: {path}:18:" in err


KEPT = "198.51.100.7"
FILLER = 5000


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_a_reload_puts_the_whole_file_in_force_at_once(mode, bare_pair, tmp_path):
    """A flow both files let through never loses a frame while reloads go back and forth between them: one file
    drops by default and allows the flow by a rule thousands of lines after its default, the other allows by
    default. Put in force rule by rule, every change to the first left the default drop in force before the flow's
    rule for as long as the lines between took (fails so: checked)."""
    link = bare_pair.links[0]
    flow = f"udp {KEPT} 5000 {link.dut_ip} 9"
    filler = [f"drop udp 10.{i // 256}.{i % 256}.1 9 {link.dut_ip} 9" for i in range(FILLER)]
    files = [["default drop", *filler, f"allow {flow}"], ["default allow", *filler]]
    path = tmp_path / "fw.rules"

    def reload(nf, count: int) -> None:
        write(path, files[(count + 1) % 2])
        control.request(nf.name, "reload")

    nf, classes, sent, reloads = reloaded_under_traffic(bare_pair, mode, path, files[0], reload, 10, "--count",
                                                        str(2 * FRAMES), "--class",
                                                        f"kept:share=1,saddr={KEPT}/32,sport=5000,dport=9,flows=1")
    kept = classes["kept"]
    assert reloads >= 10, "the reloads must be real"
    wait_until(lambda: seen_or_counted_before(nf) >= sent, what="a verdict for every frame")
    stats = control.request_json(nf.name, "stats")
    before = dropped_before_the_nf(stats)
    # The NF never dropped the flow; a frame lost is one veth dropped before the NF saw it (its core busy), counted.
    assert stats["verdicts"]["drop"]["packets"] == 0 and kept["lost"] <= before, (kept, stats)
    listed = control.request(nf.name, "rules list")
    assert len(listed.splitlines()) == len(files[reloads % 2]), "the last file is what is in force"
    assert (f"allow {flow}" in listed) == (reloads % 2 == 0)
    assert nf.stop() == 0


def test_an_instance_without_a_rules_file_says_it_has_none_to_reload(bare_pair):
    nf = NfInstance.start(bare_pair, "firewall", "xdp", bare_pair.dut_ifaces)
    with pytest.raises(XnfError, match="started without --rules"):
        control.request(nf.name, "reload")
    assert nf.stop() == 0


GATEWAYS = ("02:00:00:00:0a:01", "02:00:00:00:0a:02")
PUBLIC = ("203.0.113.1", "203.0.113.2")
NAT_FILLER = 4000          # port forwards between a file's gateway line and its public address line
NAT_FRAMES = 300000        # a run's: runs go on until the reloads are real


def nat_file(which: int) -> list[str]:
    """One of two NAT files: its own gateway, then thousands of port forwards, then its own public address."""
    return ["inside port 0", f"outside port 1 gateway {GATEWAYS[which]}",
            *[f"forward tcp {10000 + i} to 10.9.{i // 250}.{i % 250 + 1} 80 mac 02:00:00:00:0b:01"
              for i in range(NAT_FILLER)],
            f"public {PUBLIC[which]} ports 1024-65535"]


def captured(t: Topology, iface: str, path, count: int):
    """tcpdump on the generator side's iface, started and listening (stopped at teardown at the latest); it ends by
    itself after count UDP frames."""
    capture = t.spawn(t.gen_ns, ["tcpdump", "-i", iface, "-nn", "-s", "64", "-B", "65536", "-c", str(count),
                                 "-w", str(path), "udp"])
    wait_until(lambda: "listening on" in capture.stderr.readline(), what="tcpdump listening")
    return capture


def gateway_and_source(path) -> dict[tuple[str, str], int]:
    """How many captured frames went to each (gateway MAC, source address): tcpdump -e's lines read
    "TIME SRC_MAC > DST_MAC, ethertype IPv4 (0x0800), length N: SADDR.SPORT > DADDR.DPORT: UDP, ..."."""
    read = subprocess.run(["tcpdump", "-r", str(path), "-nn", "-e"], capture_output=True, text=True, check=True)
    pairs: dict[tuple[str, str], int] = {}
    for line in read.stdout.splitlines():
        gateway = line.split()[3].rstrip(",")
        source = line.split(": ", 1)[1].split(" > ")[0].rsplit(".", 1)[0]
        pairs[(gateway, source)] = pairs.get((gateway, source), 0) + 1
    return pairs


@pytest.mark.parametrize("mode", paths.Modes(paths.each_build))
def test_a_nat_reload_never_sends_with_one_files_gateway_and_the_others_address(mode, tmp_path):
    """The NAT's reloads between two files that change its gateway and its public address together: every frame
    leaves with one file's pair, never the gateway of one and the address of the other. Entry by entry the new
    gateway was in force while the thousands of lines up to the new address were written (fails so: checked)."""
    with Topology("two-port", gen_xdp=None) as t:
        path = tmp_path / "nat.rules"
        write(path, nat_file(0))
        nf = NfInstance.start(t, "nat", mode, t.dut_ifaces, rules=str(path), extra=paths.find(mode).lab_options())
        stop, reloads = threading.Event(), [0]

        def churn():
            while not stop.is_set():
                write(path, nat_file((reloads[0] + 1) % 2))
                control.request(nf.name, "reload")
                reloads[0] += 1

        thread = threading.Thread(target=churn)
        thread.start()
        pairs: dict[tuple[str, str], int] = {}
        runs = 0
        try:
            # Traffic goes on, a captured run at a time, until ten reloads were made under it: waited for, not timed.
            while reloads[0] < 10 and runs < MAX_RUNS:
                runs += 1
                capture = captured(t, t.links[1].gen_if, tmp_path / "out.pcap", NAT_FRAMES)
                sent = Generator(t).run("--count", str(NAT_FRAMES), "--rate", "100000", "--dst-ip", "198.51.100.9",
                                        "--class", "inside:share=1,saddr=10.1.0.0/28,flows=16").summary
                assert sent["sent"] == NAT_FRAMES, sent
                wait_until(lambda: control.request_json(nf.name, "stats")["counters"]["out"] >= runs * NAT_FRAMES,
                           what="every frame translated out")
                try:
                    _, said = capture.communicate(timeout=30)
                except subprocess.TimeoutExpired:
                    capture.send_signal(signal.SIGINT)
                    pytest.fail(f"tcpdump did not see every frame leave: {capture.communicate()[1]}")
                assert f"{NAT_FRAMES} packets captured" in said, said
                for pair, count in gateway_and_source(tmp_path / "out.pcap").items():
                    pairs[pair] = pairs.get(pair, 0) + count
        finally:
            stop.set()
            thread.join()
        counted = control.request_json(nf.name, "stats")["counters"]
        assert nf.stop() == 0
    assert reloads[0] >= 10, "the reloads must be real"
    assert counted["out"] == runs * NAT_FRAMES, counted
    assert set(pairs) <= {(GATEWAYS[0], PUBLIC[0]), (GATEWAYS[1], PUBLIC[1])}, pairs
    assert sum(pairs.values()) == runs * NAT_FRAMES and len(pairs) == 2, pairs

"""A rules file is read once: given through a pipe (--rules <(...), /dev/stdin) the NF runs with every rule in
it, and a FIFO nobody writes to leaves the start waiting where Ctrl-C and SIGTERM still end it."""

from __future__ import annotations

import os
import shlex
import signal
import time

from test_xdp_nfs import exchange
from packets import udp4
from xnf import programs
from xnf.lab.nf_process import NfInstance


def start_through_shell(t, name: str, rules_argument: str, stdin_text: str = "") -> NfInstance:
    """The firewall started by bash (which then becomes it), so that the rules can come from a pipe."""
    binary = shlex.quote(str(programs.nf_binary("firewall")))
    command = (f"exec {binary} run --mode xdp --iface dut0 --name {name} --rules {rules_argument} "
               f"< <(printf %s {shlex.quote(stdin_text)})")
    instance = NfInstance(t, "firewall", name, t.spawn(t.dut_ns, ["bash", "-c", command]))
    instance._wait_ready()
    return instance


def test_rules_through_a_pipe_are_all_loaded(pair):
    link = pair.links[0]
    rule = f"drop udp {link.gen_ip} 7 {link.dut_ip} 7"
    for argument, stdin_text in ((f"<(printf '%s\\n' {shlex.quote(rule)})", ""), ("/dev/stdin", rule + "\n")):
        nf = start_through_shell(pair, f"{pair.dut_ns}-pipe", argument, stdin_text)
        assert nf.request("rules list").splitlines() == [rule, "default allow"], argument
        assert exchange(pair, [udp4(link, 7, 7)]) == [], argument
        assert nf.stop() == 0


def test_a_fifo_without_a_writer_can_be_interrupted(pair, tmp_path):
    fifo = tmp_path / "rules.fifo"
    os.mkfifo(fifo)
    proc = pair.spawn(pair.dut_ns, [str(programs.nf_binary("firewall")), "run", "--mode", "xdp", "--iface", "dut0",
                                    "--rules", str(fifo)])
    time.sleep(0.5)
    assert proc.poll() is None, "it waits for a writer"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=5) != 0

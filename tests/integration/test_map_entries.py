"""`xnf entries MAP`: how many entries an NF's map holds, read from whichever side runs the NF."""

from __future__ import annotations

import json

import pytest

from lab_helpers import run_xnf
from xnf.lab.nf_setup import GEN_DST, GEN_PORT, lb_sessions
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab import paths

FLOWS = 300


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_entries_counts_lb_sessions_and_firewall_rules(mode, tmp_path, pair):
    setup = lb_sessions(FLOWS, pair.links[0].gen_mac)
    rules = tmp_path / "lb.rules"
    rules.write_text(setup.rules)
    nf = NfInstance.start(pair, "lb", mode, pair.dut_ifaces, rules=str(rules), extra=setup.extra)
    before = entries(nf.name, "lb_sessions")
    Generator(pair).run("--dst-ip", GEN_DST, "--dport", str(GEN_PORT), "--count", str(3 * FLOWS),
                        "--rate", "100000", "--flows", str(FLOWS), "--vary", "sport")
    after = entries(nf.name, "lb_sessions")
    assert before["entries"] == 0
    assert after["entries"] == 2 * FLOWS  # a session is two entries: each direction
    assert after["capacity"] == int(setup.extra[1].split("=")[1])
    assert nf.stop() == 0


def test_entries_of_a_map_the_nf_does_not_have_says_so(pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    nf.request("rules add drop udp 10.0.0.1 1 10.0.0.2 2")
    assert entries(nf.name, "fw_acl")["entries"] == 1
    out = run_xnf(["entries", "lb_sessions", "--name", nf.name])
    assert out.returncode == 1 and "no map 'lb_sessions'" in out.stderr and "Traceback" not in out.stderr
    assert nf.stop() == 0


def entries(name: str, map_name: str) -> dict:
    out = run_xnf(["entries", map_name, "--name", name, "--json"])
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)[0]

"""--verifier-stats: how much of the verifier's budget the kernel program took, said as it loads, at each kernel
hook; a program the verifier rejects still gets one clear error with the verifier's reason beside the figures."""

from __future__ import annotations

import re

import pytest

from lab_helpers import run_xnf, xdp_attached
from xnf.lab.nf_process import NfInstance

VERIFIER_LIMIT = 1_000_000
PROCESSED = re.compile(r"xnf: verifier, (XDP|tc) program: processed (\d+) insns \(limit (\d+)\)")


@pytest.mark.parametrize("mode,program", [("xdp", "XDP"), ("tc", "tc")])
def test_the_verifiers_figures_are_said_for_the_program_that_runs(mode, program, pair):
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces, extra=["--verifier-stats"])
    assert nf.stop() == 0
    _, err = nf.process.communicate(timeout=10)
    said = PROCESSED.findall(err)
    assert len(said) == 1, err
    hook, processed, limit = said[0]
    assert hook == program and int(limit) == VERIFIER_LIMIT
    assert 0 < int(processed) < VERIFIER_LIMIT


def test_a_rejected_program_keeps_its_one_error_and_the_verifiers_reason(pair):
    result = run_xnf(["run", "bad_bounds", "--mode", "xdp", "--iface", "dut0", "--verifier-stats"],
                     ns=pair.dut_ns)
    assert result.returncode != 0 and "Traceback" not in result.stderr
    assert [line for line in result.stderr.splitlines() if line.startswith("xnf: error:")] == [
        "xnf: error: the kernel's verifier rejected the NF's XDP program"]
    assert "invalid access to packet" in result.stderr and PROCESSED.search(result.stderr)
    assert not xdp_attached(pair.dut_ns, "dut0")

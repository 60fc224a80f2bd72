"""testpmd's readiness is read from its output however the lines arrive."""

from __future__ import annotations

import subprocess

import pytest

from xnf.errors import XnfError
from xnf.lab.testpmd import Testpmd


def _printing(script: str) -> subprocess.Popen:
    return subprocess.Popen(["sh", "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            stdin=subprocess.PIPE, text=True)


def test_readiness_among_lines_that_arrive_together_is_seen():
    # every line in one write, then the process waits as testpmd does at its prompt
    proc = _printing("printf 'EAL: ready\\nPort 0: up\\nPress enter to exit\\n'; exec sleep 30")
    try:
        Testpmd(proc, "af_xdp", "dut0", "ns")._wait_ready(timeout_s=5)
    finally:
        proc.kill()
        proc.communicate()


def test_a_silent_start_ends_in_an_error_with_what_it_printed():
    proc = _printing("echo 'EAL: probing'; echo 'libxdp: fell back' >&2; exec sleep 30")
    with pytest.raises(XnfError, match=r"did not start within 1 s: libxdp: fell back EAL: probing"):
        Testpmd(proc, "af_xdp", "dut0", "ns")._wait_ready(timeout_s=1)

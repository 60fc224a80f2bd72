"""Unit tests run without a build: what the cost model reads of the modes from `xnf-NF describe` comes, here, from
this copy of the runtime's mode table (lib/runtime/modes.c). tests/integration/test_contract.py checks the model's
paths against the real one."""

import pytest

MODES = [
    {"name": "xdp", "datapath": "kernel", "sockets": False, "workers": None},
    {"name": "afxdp", "datapath": "user", "sockets": True, "workers": "spin"},
    {"name": "afxdp-sysc", "datapath": "user", "sockets": True, "workers": "syscall"},
    {"name": "afxdp-poll", "datapath": "user", "sockets": True, "workers": "poll"},
    {"name": "hybrid", "datapath": "hybrid", "sockets": True, "workers": "spin"},
]


@pytest.fixture(autouse=True)
def described_modes(monkeypatch):
    monkeypatch.setattr("xnf.contract.runtime", lambda: {"modes": MODES})

"""Unit tests run without a build: what Python reads of the modes from `xnf-NF describe` comes, here, from the
runtime's mode table as `make` wrote it out (python/xnf/mode_table.json, from lib/runtime/modes.c).
tests/integration/test_contract.py checks that file against the binary. And they hold on any kernel: here it gives
every facility (python/xnf/kernel.py reads none), whatever this machine's does or XNF_KERNEL_WITHOUT says."""

import json
from pathlib import Path

import pytest

MODE_TABLE = json.loads((Path(__file__).parents[2] / "python" / "xnf" / "mode_table.json").read_text())


@pytest.fixture(autouse=True)
def described_modes(monkeypatch):
    monkeypatch.setattr("xnf.contract.runtime", lambda: MODE_TABLE)
    monkeypatch.setattr("xnf.kernel.table", lambda: {"release": "unit", "override": "", "facilities": [],
                                                     "helpers": []})
    monkeypatch.setattr("xnf.kernel.has", lambda name: True)
    monkeypatch.setattr("xnf.kernel.missing", lambda names: [])
    from xnf.lab import paths
    from xnf.model import lab_paths

    paths.carrying.cache_clear()
    paths.default_tx_path.cache_clear()
    lab_paths._priced_paths.cache_clear()

"""Unit tests run without a build: what Python reads of the modes from `xnf-NF describe` comes, here, from the
runtime's mode table as `make` wrote it out (python/xnf/mode_table.json, from lib/runtime/modes.c).
tests/integration/test_contract.py checks that file against the binary."""

import json
from pathlib import Path

import pytest

MODE_TABLE = json.loads((Path(__file__).parents[2] / "python" / "xnf" / "mode_table.json").read_text())


@pytest.fixture(autouse=True)
def described_modes(monkeypatch):
    monkeypatch.setattr("xnf.contract.runtime", lambda: MODE_TABLE)
    from xnf.lab import paths
    from xnf.model import lab_paths

    paths.carrying.cache_clear()
    lab_paths._priced_paths.cache_clear()

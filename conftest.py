"""What a test needs is said by where it lives. tests/unit: nothing (pure Python: no root, no build, no
network namespace). Everything else (tests/integration, tests/c, the packet fixtures beside each NF in
nfs/<nf>/): root, a built tree and a lab without stale namespaces, checked once before the first test."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

PURE = Path(__file__).resolve().parent / "tests" / "unit"


def pytest_collection_finish(session):
    if all(Path(item.path).resolve().is_relative_to(PURE) for item in session.items):
        return
    from xnf.build import ensure_built
    from xnf.lab import topology

    if os.geteuid() != 0:
        pytest.exit("these xnf tests need root (namespaces, XDP): run them with sudo ./scripts/test.sh "
                    "(tests/unit alone runs without)", returncode=2)
    ensure_built()
    topology.remove_stale()
    # SIGTERM (a CI timeout, kill) becomes KeyboardInterrupt, so fixtures still tear down.
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def pytest_sessionfinish(session, exitstatus):
    from xnf.lab import topology

    topology.teardown_all()

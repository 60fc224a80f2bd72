"""What a test needs is said by where it lives. tests/unit: nothing (pure Python: no root, no build, no
network namespace). Everything else (tests/integration, tests/c, the packet fixtures beside each NF in
nfs/<nf>/): root, a built tree and a lab without stale namespaces, checked once before the first test."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

PURE = Path(__file__).resolve().parent / "tests" / "unit"


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    """Root and a built tree for anything but tests/unit, checked once; then the tiers' markers (tests/tiers.py),
    before -m selects by them."""
    if all(Path(item.path).resolve().is_relative_to(PURE) for item in items):
        return
    from xnf.build import ensure_built
    from xnf.lab import paths, quiet_core, topology

    if os.geteuid() != 0:
        pytest.exit("these xnf tests need root (namespaces, XDP): run them with sudo ./scripts/test.sh "
                    "(tests/unit alone runs without)", returncode=2)
    ensure_built()
    topology.remove_stale()
    quiet_core.give_back_left()   # what a killed run kept off the DUT's core
    import tiers

    representative = set(paths.representative()) | {p.mode for p in paths.representative().values()}
    for item in items:
        if tiers.functional(item.nodeid, _path_params(item), representative):
            item.add_marker(pytest.mark.functional)
    # SIGTERM (a CI timeout, kill) becomes KeyboardInterrupt, so fixtures still tear down.
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def pytest_configure(config):
    config.addinivalue_line("markers", "kernel(*facilities): the test cannot run without these kernel facilities "
                            "(python/xnf/kernel.py); skipped, naming them, on a kernel that refuses one")
    config.addinivalue_line("markers", "functional: the functional tier (tests/tiers.py): -m functional runs it")


def _path_params(item) -> list[str]:
    """The data paths ("afxdp/live") and modes ("hybrid") a test is parametrized over."""
    from xnf import contract
    from xnf.lab import paths

    params = getattr(item, "callspec", None)
    words = [v for v in (params.params.values() if params else []) if isinstance(v, str)]
    return [w for w in words if w in paths.carrying() or w in contract.mode_names()]


def _kernel_needs(item) -> list[str]:
    """The facilities a test names (@pytest.mark.kernel), and those of the data paths or modes it is parametrized
    over: read from the runtime's mode table, never written in the test."""
    from xnf.lab import paths

    needs = [name for marker in item.iter_markers("kernel") for name in marker.args]
    needs += [n for p in _path_params(item) for n in paths.needs_of(p)]
    return list(dict.fromkeys(needs))


_affinity_before: dict[str, set[int]] = {}
_affinity_changed: list[str] = []


def pytest_runtest_setup(item):
    if Path(item.path).resolve().is_relative_to(PURE):
        return
    _affinity_before[item.nodeid] = os.sched_getaffinity(0)
    from xnf import kernel

    missing = kernel.missing(_kernel_needs(item))
    if missing:
        pytest.skip("; ".join(kernel.refusal(name) for name in missing))


def pytest_runtest_teardown(item):
    """A test that leaves this process off a core it had (a lab run killed while it kept the DUT's core quiet:
    python/xnf/lab/quiet_core.py) would make every later measurement share one core: it is named, and undone."""
    before = _affinity_before.pop(item.nodeid, None)
    if before is not None and os.sched_getaffinity(0) != before:
        _affinity_changed.append(f"{item.nodeid} (cores {sorted(before)} -> {sorted(os.sched_getaffinity(0))})")
        os.sched_setaffinity(0, before)


_left_behind: list[str] = []


def pytest_sessionfinish(session, exitstatus):
    """Every topology torn down; then no control socket or owner record of this run may be left in the run
    directory (a test that leaves one has a hole in its clean-up): the run fails, naming them, and they go."""
    from xnf import control
    from xnf.lab import topology

    topology.teardown_all()
    folder = control.run_dir()
    ours = sorted(folder.glob(f"{topology.NAME_PREFIX}-{os.getpid()}-*")) if folder.is_dir() else []
    for path in ours:
        if path.suffix in (".sock", ".owner"):
            _left_behind.append(path.name)
            path.unlink(missing_ok=True)
    if _left_behind or _affinity_changed:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


# The suite's time per tier, printed at its end: where a slower suite grew (tests/unit, the NFs' packet fixtures
# in nfs/, tests/integration, tests/c).
ROOT = Path(__file__).resolve().parent
TIERS = {"unit": ROOT / "tests" / "unit", "fixtures": ROOT / "nfs", "integration": ROOT / "tests" / "integration",
         "c": ROOT / "tests" / "c"}
_tier_time: dict[str, list[float]] = {}


def _tier_of(path: str) -> str:
    where = (ROOT / path).resolve()
    return next((name for name, folder in TIERS.items() if where.is_relative_to(folder)), "other")


def pytest_runtest_logreport(report):
    spent = _tier_time.setdefault(_tier_of(report.location[0]), [0.0, 0])
    spent[0] += report.duration
    spent[1] += report.when == "call"


def pytest_terminal_summary(terminalreporter):
    if _left_behind:
        terminalreporter.write_line(f"left behind in the run directory (removed now): {', '.join(_left_behind)}",
                                    red=True)
    if _affinity_changed:
        terminalreporter.write_line("left the test process off cores it had (put back): "
                                    f"{'; '.join(_affinity_changed)}", red=True)
    if _tier_time:
        terminalreporter.write_line("time per tier: " + ", ".join(
            f"{name} {seconds:.0f} s ({tests} tests)" for name, (seconds, tests) in sorted(_tier_time.items())))

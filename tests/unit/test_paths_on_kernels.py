"""The lab's paths on the kernel it has: one of each kind, the workers on live frames where the kernel runs them and on
the xsk ring where it refuses them, and never a path it cannot run among those measured or recommended."""

import copy

import pytest

from tiers import functional
from xnf.lab import paths


@pytest.fixture
def without_live_frames(monkeypatch):
    monkeypatch.setattr("xnf.kernel.missing", lambda names: [n for n in names if n == "live_frames"])
    paths.carrying.cache_clear()
    paths.default_tx_path.cache_clear()
    yield
    paths.carrying.cache_clear()
    paths.default_tx_path.cache_clear()


def test_one_path_of_each_kind_on_the_kernels_transmit_path():
    kinds = {(p.described["datapath"], p.hook) for p in paths.representative().values()}
    assert len(kinds) == len(paths.representative()) == 4
    assert list(paths.representative()) == ["xdp", "afxdp/live", "hybrid/live", "tc"]


def test_without_live_frames_the_workers_send_on_the_xsk_ring(without_live_frames):
    assert list(paths.representative()) == ["xdp", "afxdp/xsk", "hybrid/xsk", "tc"]
    assert "afxdp/live" in paths.carrying() and "afxdp/live" not in paths.runnable()
    assert paths.needs_of("afxdp/live") == ["afxdp", "live_frames"]
    assert paths.keys("xdp", "afxdp-poll", "afxdp/live") == ["xdp", "afxdp-poll/xsk", "afxdp/live"]
    assert paths.find("hybrid").tx_path == "xsk"


def test_the_functional_tier_walks_the_representative_paths_of_the_files_it_names():
    rep = set(paths.representative()) | {p.mode for p in paths.representative().values()}
    assert functional("nfs/acl/test_acl_fixtures.py::test_x[a]", [], rep)
    assert functional("tests/integration/test_kernel.py::test_y", [], rep)
    router = "tests/integration/test_real_traffic.py::test_router_carries_real_applications"
    assert functional(f"{router}[tc]", ["tc"], rep)
    assert not functional(f"{router}[afxdp-poll/live]", ["afxdp-poll/live"], rep)
    assert not functional("tests/integration/test_real_traffic.py::test_fwd_serves_ipv4_and_ipv6_containers[xdp]",
                          ["xdp"], rep)
    assert not functional("tests/integration/test_kernel_other.py::test_z", [], rep)


@pytest.fixture
def with_a_new_mode(monkeypatch):
    """The mode table with a throwaway mode added after afxdp-poll: a user-space mode whose workers wait in a way of
    their own and send, as a new mode would be declared in lib/runtime/modes.c."""
    from xnf import contract

    table = copy.deepcopy(contract.runtime())
    new = {**next(m for m in table["modes"] if m["name"] == "afxdp-poll"), "name": "afxdp-new", "workers": "irq"}
    at = next(i for i, m in enumerate(table["modes"]) if m["name"] == "afxdp-poll") + 1
    table["modes"].insert(at, new)
    monkeypatch.setattr("xnf.contract.runtime", lambda: table)
    paths.carrying.cache_clear()
    yield
    paths.carrying.cache_clear()


def test_a_mode_added_to_the_table_is_walked_wherever_its_kind_is(with_a_new_mode):
    """Nothing but the table changed: the selections that walk every carrying path, every mode, every way workers
    wait and every path with workers take the new mode, and so do the benchmarks and studies built on them; those
    that walk one path of each kind do not (the new mode is of a kind they already have)."""
    from xnf.bench import catalog
    from xnf.bench.studies import advisor_check, nat_rates

    assert "afxdp-new/live" in paths.carrying() and paths.find("afxdp-new").tx_path == "live"
    for select in (paths.each_mode, paths.worker_waits, paths.with_workers, paths.at_xdp, paths.at_native_xdp,
                   paths.every_mode):
        assert "afxdp-new" in paths.Modes(select), select.__name__
    for select in (paths.representative, paths.kernel_and_user, paths.each_build, paths.kinds_at_xdp):
        assert "afxdp-new" not in paths.Modes(select), select.__name__
    modes_throughput = next(b for b in catalog.BENCHMARKS if b.name == "modes-throughput")
    assert "afxdp-new" in modes_throughput.modes and "afxdp-new" in advisor_check.DEFAULT_MODES
    assert "afxdp-new/live" in nat_rates.PATHS

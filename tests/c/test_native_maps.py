"""Native maps against real kernel maps, and what the sweepers build on them (tests/c/ does the work)."""

import subprocess

from xnf.build import BUILD_DIR


def test_native_maps_behave_like_kernel_maps():
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-native-maps")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[-1] == "4 passed, 0 failed"
    assert {line.split(":")[0] for line in lines[:-1]} == {"hash", "hash_growing", "array", "lpm_v4"}


def test_updates_are_safe_while_workers_read():
    """Readers (RCU, like AF_XDP workers) against a writer; AddressSanitizer catches any use after free."""
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-maps-concurrent")], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "AddressSanitizer" not in result.stderr
    assert result.stdout.splitlines()[-1] == "2 passed, 0 failed"


def test_a_walk_in_batches_gives_every_entry_once_on_both_sides():
    """xnf_map_ref_read_batch, which the connection and NAT sweepers read their tables with (tests/c/test_map_walk.c)."""
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-map-walk")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-3:] == ["kernel: ok", "native: ok", "2 passed, 0 failed"]


def test_the_connection_sweeper_rests_until_an_entry_can_be_over():
    """xnf_ct_sweep after a whole pass: no reads until the soonest an entry can be over, a change of the idle times
    ends the rest, and the pass's start plus the shortest idle time bounds it (tests/c/test_ct_sweep.c)."""
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-ct-sweep")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-3:] == ["kernel: ok", "native: ok", "2 passed, 0 failed"]


def test_the_lb_sweeper_rests_until_a_session_can_be_over():
    """The lb's sweeper after a whole pass: no reads until the soonest a session can be over, a direction whose other
    direction is in use bounds the rest by that one, and a change of the idle time ends it (tests/c/test_lb_sweep.c)."""
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-lb-sweep")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-3:] == ["kernel: ok", "native: ok", "2 passed, 0 failed"]

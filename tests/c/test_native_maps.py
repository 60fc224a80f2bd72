"""Native maps against real kernel maps, and what the sweepers build on them (tests/c/ does the work)."""

import subprocess

import pytest

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


# The tests of control-side code that run on kernel and native maps alike (tests/c/two_sides.h), by binary, and what
# each shows.
ON_BOTH_SIDES = {
    "test-map-walk": "xnf_map_ref_read_batch, which the sweepers read their tables with, gives every entry once",
    "test-ct-sweep": "xnf_ct_sweep after a whole pass: no reads until the soonest an entry can be over, a change of "
                     "the idle times ends the rest, and the pass's start plus the shortest idle time bounds it",
    "test-lb-sweep": "the lb's sweeper: the same rest, and a direction whose other direction is in use bounds it by "
                     "that one",
    "test-nat-sweep": "the NAT's sweeper: the same rest for each table, and a binding that goes ends the mappings' "
                      "rest, so that its mapping goes with it",
}


@pytest.mark.parametrize("binary", sorted(ON_BOTH_SIDES))
def test_control_code_does_the_same_on_kernel_and_native_maps(binary):
    result = subprocess.run([str(BUILD_DIR / "tests" / binary)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, f"{ON_BOTH_SIDES[binary]}: " + result.stdout + result.stderr
    assert result.stdout.splitlines()[-3:] == ["kernel: ok", "native: ok", "2 passed, 0 failed"]

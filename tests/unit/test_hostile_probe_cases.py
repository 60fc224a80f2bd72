"""scripts/hostile-probes names the tests that hold each probe's case: each must still be there, or the case would
report "FAILS (no tests ran)" for a rename, not for xnf doing other than it was told again."""

from __future__ import annotations

import runpy

from xnf.build import REPO_ROOT

CASES = runpy.run_path(str(REPO_ROOT / "scripts" / "hostile-probes"))["CASES"]


def test_every_case_names_tests_that_exist():
    missing = []
    for what, _, tests in CASES:
        for test in tests:
            path, _, name = test.partition("::")
            source = REPO_ROOT / path
            if not source.exists() or (name and f"def {name}(" not in source.read_text()):
                missing.append(f"{what}: {test}")
    assert CASES and missing == []

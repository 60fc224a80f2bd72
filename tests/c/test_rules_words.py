"""The word parsers of every rules codec (tests/c/test_rules_words.c does the work)."""

import subprocess

from xnf.build import BUILD_DIR


def test_rule_words_are_taken_whole_or_refused():
    """The word parsers of every rules codec (tests/c/test_rules_words.c): zero-padded numbers exact, values past
    their range refused however long, no sign, blank or other script's digit, host bits and non-unicast hosts
    refused; VLAN ids 1-4094, one or OUTER.INNER."""
    result = subprocess.run([str(BUILD_DIR / "tests" / "test-rules-words")], capture_output=True, text=True,
                            timeout=60)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.splitlines()[-1] == "5 passed, 0 failed"

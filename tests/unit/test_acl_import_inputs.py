"""xnf acl import on broken input: whatever a ruleset's JSON or an iptables-save file holds, the answer is rules,
rules left out with their reason, or one message, never a traceback. The JSON is nft's own listing of the lab's
nftables form of an acl (nft_ruleset.json), mutated at random."""

from __future__ import annotations

import copy
import json
import random
from pathlib import Path

import pytest

from xnf import acl_import
from xnf.errors import XnfError

RULESET = json.loads((Path(__file__).parent / "nft_ruleset.json").read_text())
ODD_VALUES = [None, 12345, "x", {"a": 1}, [1, "y"], -1, {"prefix": {"addr": "no", "len": 99}}, {"range": [9]}]


def mutated(value, rng: random.Random):
    if isinstance(value, dict):
        if value and rng.random() < 0.15:
            value.pop(rng.choice(list(value)))
        return {k: mutated(v, rng) for k, v in value.items()}
    if isinstance(value, list):
        if value and rng.random() < 0.15:
            value.pop(rng.randrange(len(value)))
        return [mutated(v, rng) for v in value]
    return rng.choice(ODD_VALUES) if rng.random() < 0.15 else value


def test_the_listing_itself_converts():
    conversion = acl_import.convert(json.dumps(RULESET))
    assert len(conversion.lines) >= 5 and conversion.default == "drop"


def test_mutated_json_gives_rules_or_one_message():
    rng = random.Random(2544)
    for _ in range(2000):
        text = json.dumps(mutated(copy.deepcopy(RULESET), rng))
        try:
            acl_import.rules_text(acl_import.convert(text))
        except XnfError:
            pass


@pytest.mark.parametrize("line", ["-A FORWARD -s", "-A FORWARD -p tcp --dport x -j DROP", "-A FORWARD -j",
                                  "-A FORWARD --tcp-flags SYN -j DROP", "-A FORWARD -s 10.0.0.0/99 -j DROP",
                                  '-A FORWARD -m comment --comment "unterminated -j DROP',
                                  "-A FORWARD -p tcp --tcp-flags BOGUS SYN -j DROP", "-A FORWARD -j MASQUERADE"])
def test_broken_iptables_lines_are_left_out_with_their_reason(line):
    conversion = acl_import.convert(f"*filter\n:FORWARD ACCEPT [0:0]\n{line}\nCOMMIT\n")
    assert conversion.lines == [] and len(conversion.skipped) == 1

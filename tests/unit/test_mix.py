"""A traffic mix as `xnf cost` and `xnf advise` take it: an option given twice is refused, not left to the last."""

from __future__ import annotations

import pytest

from xnf import mix
from xnf.errors import XnfError


@pytest.mark.parametrize("text", ["--flows 4 --flows 8", "--size 128 --vary sport --size=256"])
def test_an_option_twice_in_a_mix_is_refused_and_named(text):
    with pytest.raises(XnfError, match="is given twice"):
        mix.parse(text)


def test_a_mix_option_also_given_as_the_commands_own_is_refused():
    with pytest.raises(XnfError, match="--flows is given twice"):
        mix.refuse_twice(["--flows", "1", *mix.parse("--flows 1000 --vary sport")])


def test_classes_may_be_repeated():
    words = mix.parse("a:share=0.5,flows=4; b:share=0.5,flows=8")
    mix.refuse_twice(words)
    assert words.count("--class") == 2

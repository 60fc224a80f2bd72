"""An option's value read from a command line's words, written either way (`--mode xdp` or `--mode=xdp`): what
a mix, and a running instance's command line, are read with."""

from __future__ import annotations


def option_value(words: list[str], name: str) -> str | None:
    """The first value given to name, or None."""
    for i, word in enumerate(words):
        if word == name and i + 1 < len(words):
            return words[i + 1]
        if word.startswith(name + "="):
            return word.split("=", 1)[1]
    return None


def without_option(words: list[str], name: str, takes_value: bool = True) -> list[str]:
    """The words with every name and its value (if it takes one) left out."""
    out, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word == name:
            skip = takes_value
        elif not word.startswith(name + "="):
            out.append(word)
    return out

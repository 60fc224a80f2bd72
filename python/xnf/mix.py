"""A traffic mix as a user gives it to `xnf cost` and `xnf advise` (--mix FILE|SPEC): xnf-gen's options that shape
the traffic, on a line or in a file (one or more per line, '#' starts a comment), or just its classes:

    --mix "legit:share=0.75,flows=64,vary=sport; attack:saddr=203.0.113.0/28,share=0.25"
    --mix "--flows 1000 --vary sport --size 128"
    --mix mix.txt
    --mix "--segment 65160 --flows 1"       (xnf advise: bulk TCP from a local stack, python/xnf/model/segments.py)

xnf-gen checks the values (docs/lab.md lists them); here only which options a mix may set: what is sent, not how
fast or for how long, which the lab decides."""

from __future__ import annotations

import shlex

from xnf import user_files
from xnf.errors import XnfError

# xnf-gen's options that say what the frames are (its --help has them all).
TRAFFIC_OPTIONS = ("--src-ip", "--dst-ip", "--ipv6", "--proto", "--sport", "--dport", "--flows", "--vary",
                   "--flow-mode", "--class", "--size")
# What only `xnf advise` weighs: the TCP segments a local stack hands the path (python/xnf/model/segments.py).
SEGMENT_OPTION = "--segment"


def _classes(text: str) -> list[str]:
    specs = [spec.strip() for line in text.splitlines() for spec in line.split("#", 1)[0].split(";")]
    return [word for spec in specs if spec for word in ("--class", spec)]


def refuse_twice(options: list[str]) -> None:
    """xnf-gen takes each traffic option once (--class may be repeated): the same option given as a command's own
    and in --mix is refused here, where both can be named."""
    given = [w.split("=", 1)[0] for w in options if w.startswith("--")]
    twice = next((w for w in given if w != "--class" and given.count(w) > 1), None)
    if twice:
        raise XnfError(f"{twice} is given twice (as an option and in --mix, or twice in --mix): give it once")


def parse(spec: str | None, segments: bool = False) -> list[str]:
    """xnf-gen options for the mix (none: one flow of 64-byte UDP frames, xnf-gen's default); with segments, the mix
    may also state --segment (the caller takes it out: python/xnf/model/segments.py)."""
    if not spec:
        return []
    text = user_files.read_text(spec, "mix") if user_files.is_file(spec) else spec
    try:
        words = shlex.split(text, comments=True)
    except ValueError as err:
        raise XnfError(f"the mix {spec!r} cannot be read: {err}") from None
    if words and not words[0].startswith("-"):
        return _classes(text)
    allowed = TRAFFIC_OPTIONS + ((SEGMENT_OPTION,) if segments else ())
    wrong = [w for w in words if w.startswith("-") and w.split("=", 1)[0] not in allowed]
    if wrong and wrong[0].split("=", 1)[0] == SEGMENT_OPTION:
        raise XnfError(f"{SEGMENT_OPTION} states the TCP segments a local stack hands the path, which 'xnf advise' "
                       "weighs; here give the frames themselves (--size, --proto tcp)")
    if wrong:
        raise XnfError(f"a mix sets what is sent ({', '.join(allowed)}), not {wrong[0]}")
    refuse_twice(words)
    return words

"""A traffic mix as a user gives it to `xnf cost` and `xnf advise` (--mix FILE|SPEC): xnf-gen's options that shape
the traffic, on a line or in a file (one or more per line, '#' starts a comment), or just its classes:

    --mix "legit:share=0.75,flows=64,vary=sport; attack:saddr=203.0.113.0/28,share=0.25"
    --mix "--flows 1000 --vary sport --size 128"
    --mix mix.txt

xnf-gen checks the values (docs/lab.md lists them); here only which options a mix may set: what is sent, not how
fast or for how long, which the lab decides."""

from __future__ import annotations

import shlex

from xnf import user_files
from xnf.errors import XnfError

# xnf-gen's options that say what the frames are (its --help has them all).
TRAFFIC_OPTIONS = ("--src-ip", "--dst-ip", "--ipv6", "--proto", "--sport", "--dport", "--flows", "--vary",
                   "--flow-mode", "--class", "--size")


def _classes(text: str) -> list[str]:
    specs = [spec.strip() for line in text.splitlines() for spec in line.split("#", 1)[0].split(";")]
    return [word for spec in specs if spec for word in ("--class", spec)]


def parse(spec: str | None) -> list[str]:
    """xnf-gen options for the mix (none: one flow of 64-byte UDP frames, xnf-gen's default)."""
    if not spec:
        return []
    text = user_files.read_text(spec, "mix") if user_files.is_file(spec) else spec
    try:
        words = shlex.split(text, comments=True)
    except ValueError as err:
        raise XnfError(f"the mix {spec!r} cannot be read: {err}") from None
    if words and not words[0].startswith("-"):
        return _classes(text)
    wrong = [w for w in words if w.startswith("-") and w.split("=", 1)[0] not in TRAFFIC_OPTIONS]
    if wrong:
        raise XnfError(f"a mix sets what is sent ({', '.join(TRAFFIC_OPTIONS)}), not {wrong[0]}")
    return words

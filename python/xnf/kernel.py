"""What this kernel gives xnf: the facility table (lib/util/kernel_facilities.c, written out by `xnf-kernel
--json`). Each facility xnf uses, whether this kernel gives it (probed once per boot; XNF_KERNEL_WITHOUT treats
named ones as refused), the upstream version that has it, what xnf does without it. The lab, the tests and the
advisor ask here; no facility, version or refusal text is written anywhere else in Python."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

from xnf import build
from xnf.errors import XnfError

# The environment variable the table reads (kernel.h's XNF_KERNEL_WITHOUT_ENV): facilities treated as refused.
WITHOUT_ENV = "XNF_KERNEL_WITHOUT"


@lru_cache(maxsize=None)
def table() -> dict:
    """The whole table: release, override, facilities (name, title, since, without, state, why), helpers."""
    result = subprocess.run([str(build.tool_binary("xnf-kernel")), "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise XnfError(f"cannot read what this kernel gives xnf: {result.stderr.strip()}")
    return json.loads(result.stdout)


def facility(name: str) -> dict:
    for found in table()["facilities"]:
        if found["name"] == name:
            return found
    raise XnfError(f"no kernel facility of xnf is called '{name}': choose from "
                   f"{', '.join(f['name'] for f in table()['facilities'])}")


def has(name: str) -> bool:
    """Whether this kernel gives facility name (one that could not be probed, as a non-root user, counts as
    given: what then uses it fails with its own message)."""
    return facility(name)["state"] != "refused"


def refusal(name: str) -> str:
    """One line: what is refused, since when upstream, why, and what xnf does without it."""
    f = facility(name)
    return f"this kernel refuses {f['title']} ({f['name']}, {f['since']}): {f['why']}; without it, {f['without']}"


def missing(names) -> list[str]:
    """Those of names this kernel refuses, in the order given."""
    return [name for name in names if not has(name)]

"""What an NF binary says it is and takes (`xnf-NF describe`): modes, options with their types, ranges and
defaults, stat names, counter names, limits. The C side declares each of these once; Python reads them here and
restates none of them."""

from __future__ import annotations

import json
import subprocess
from functools import lru_cache

from xnf import build
from xnf.errors import XnfError

# Any NF binary answers the runtime's part of the contract (modes, runtime options, stat names, limits).
RUNTIME_REFERENCE_NF = "drop"


@lru_cache(maxsize=None)
def describe(nf: str) -> dict:
    """The JSON that xnf-NF describe writes (built first if needed)."""
    binary = build.nf_binary(nf)
    result = subprocess.run([str(binary), "describe", "--json"], capture_output=True, text=True)
    if result.returncode != 0:
        raise XnfError(f"cannot ask xnf-{nf} what it is: {result.stderr.strip()}")
    return json.loads(result.stdout)


def runtime() -> dict:
    """The runtime's part of the contract, the same in every NF binary."""
    return describe(RUNTIME_REFERENCE_NF)


def limit(name: str) -> int:
    """One of the runtime's limits: ports, queues, workers, nf_counters, chain_members, map_sizes, rule_text,
    rule_line (a rules file's longest line), control_request (a control request's longest line)."""
    return runtime()["limits"][name]


def mode_names() -> list[str]:
    return [mode["name"] for mode in runtime()["modes"]]


def mode(name: str) -> dict:
    """One mode as the runtime describes it: datapath (kernel, user, hybrid), sockets, workers (how AF_XDP
    workers wait: spin, syscall, poll; None without sockets), summary."""
    for found in runtime()["modes"]:
        if found["name"] == name:
            return found
    raise XnfError(f"unknown mode '{name}': choose from {', '.join(mode_names())}")


def help_text(nf: str | None = None) -> str:
    """The options and modes, as the NF binary's own --help would list them (for 'xnf run --help')."""
    doc = describe(nf or RUNTIME_REFERENCE_NF)
    lines, section = [], None
    for option in doc["options"]:
        if option["section"] != section:
            section = option["section"]
            if section:
                lines += ["", f"{section}:"]
        flag = (f"-{option['short']}, " if option["short"] else "    ") + f"--{option['name']}"
        flag += f" {option['value']}" if option["value"] else ""
        text = option["help"].replace("\n", " ")
        if option["default"] is not None:
            text += f" (default {option['default']})"
        lines.append(f"  {flag:<25}{text}")
    lines += ["", "modes:"] + [f"  {mode['name']:<12} {mode['summary']}" for mode in doc["modes"]]
    return "\n".join(lines)

"""The XDP programs on an instance's interfaces, seen from its own network namespace (`ip -d -j link`): what
`xnf ps` shows beside each instance, so an operator sees what else runs on the hook (another XDP program in the
other attach mode, libxdp's dispatcher and its programs)."""

from __future__ import annotations

import json
import subprocess

# The kernel's XDP_ATTACHED_* values, as `ip -j` reports them.
ATTACH_MODES = {1: "native", 2: "generic", 3: "offload", 4: "multi"}
XNF_PROGRAM = "xnf_xdp_main"   # the name of every xnf NF's XDP entry point (include/xnf/internal/xdp_glue.h)


def programs_on(pid: int, iface: str) -> list[dict]:
    """Every XDP program on iface in the network namespace of process pid: name, id, attach mode. Empty when
    the namespace or the interface cannot be read (the instance just stopped)."""
    out = subprocess.run(["nsenter", f"--net=/proc/{pid}/ns/net", "ip", "-d", "-j", "link", "show", "dev", iface],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return []
    try:
        xdp = json.loads(out.stdout)[0].get("xdp") or {}
    except (ValueError, IndexError):
        return []
    entries = xdp.get("attached") or ([xdp] if "prog" in xdp else [])
    return [{"name": e["prog"].get("name", "?"), "id": e["prog"]["id"],
             "mode": ATTACH_MODES.get(e.get("mode"), str(e.get("mode")))} for e in entries if "prog" in e]


def others_on(info: dict) -> dict[str, list[dict]]:
    """Per port of the instance (its `info` answer): the programs that are not xnf's."""
    found = {}
    for port in info["ports"]:
        others = [p for p in programs_on(info["pid"], port["iface"]) if p["name"] != XNF_PROGRAM]
        if others:
            found[port["iface"]] = others
    return found

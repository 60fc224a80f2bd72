"""The programs on an instance's interfaces besides its own: what `xnf ps` shows beside each instance, so an
operator sees what else runs on the hook. XDP's are read from the instance's own network namespace (`ip -d -j
link`: another XDP program in the other attach mode, libxdp's dispatcher and its programs); what runs at a tc
instance's TCX ingress the instance itself lists in its info (`tc_ingress`, each port's programs in the order they
run, since iproute2 6.1 does not show TCX), and the clsact filters behind them (`clsact_ingress`)."""

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


def _tc_others(port: dict) -> list[dict]:
    """The port's TCX ingress programs (the instance's `tc_ingress`) but the instance's own, then its clsact ingress
    filters (`clsact_ingress`), which the kernel runs after every TCX program."""
    tcx = [{"name": p["name"], "id": p["id"], "mode": "tcx"} for p in port.get("tc_ingress", []) if not p["own"]]
    return tcx + [{"name": f["name"] or f["kind"], "id": f["id"], "mode": f"clsact pref {f['pref']}, after TCX"}
                  for f in port.get("clsact_ingress", []) if not f["own"]]


def others_on(info: dict) -> dict[str, list[dict]]:
    """Per port of the instance (its `info` answer): the programs that are not xnf's."""
    found = {}
    for port in info["ports"]:
        others = [p for p in programs_on(info["pid"], port["iface"]) if p["name"] != XNF_PROGRAM]
        others += _tc_others(port)
        if others:
            found[port["iface"]] = others
    return found

"""What a result was measured on, stored with every results file."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from xnf import build, kernel
from xnf.lab import quiet_core


def _cpu_model() -> str:
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


VULNERABILITIES = Path("/sys/devices/system/cpu/vulnerabilities")


def cpu_mitigations(folder: Path = VULNERABILITIES) -> dict[str, str]:
    """What the kernel does against each CPU vulnerability that applies ("Not affected" left out). Retpolines and
    return thunks tax every indirect call and return, of which Linux's own forwarding makes many more per frame than
    a compact XDP program: a ratio to a Linux yardstick may move with them between machines (research/lab-notebook.md,
    2026-11-29)."""
    found = {}
    try:
        entries = sorted(folder.iterdir())
    except OSError:
        return found
    for entry in entries:
        try:
            said = entry.read_text().strip()
        except OSError:
            continue
        if said != "Not affected":
            found[entry.name] = said
    return found


def _tsc_hz() -> float | None:
    """The TSC rate the kernel calibrated, from its boot log (no perf counters here)."""
    try:
        log = subprocess.run(["dmesg"], capture_output=True, text=True, timeout=5).stdout
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = None
    for line in log.splitlines():
        # "tsc: Detected 2596.124 MHz processor", later maybe "tsc: Refined TSC clocksource calibration: ..."
        match = re.search(r"tsc: (?:Detected|Refined TSC clocksource calibration:) ([\d.]+) MHz", line)
        if match:
            found = float(match.group(1)) * 1e6
    return found


def _version() -> str:
    """The commit of a checkout, or the version of an installed xnf."""
    where = build.layout()
    if where.checkout:
        commit = subprocess.run(["git", "-C", str(where.root), "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
        if commit:
            return commit
    try:
        return "xnf " + importlib.metadata.version("xnf")
    except importlib.metadata.PackageNotFoundError:
        return "unknown"


def kernel_facilities() -> dict:
    """What this kernel gave xnf for the run (the facility table): each facility's state, and the override in force
    (XNF_KERNEL_WITHOUT), so that a result taken without live frames says so."""
    table = kernel.table()
    return {"override": table["override"], **{f["name"]: f["state"] for f in table["facilities"]}}


def describe() -> dict:
    return {
        "kernel": platform.release(),
        "kernel_facilities": kernel_facilities(),
        "cpu_model": _cpu_model(),
        "cpu_mitigations": cpu_mitigations(),
        "cores": os.cpu_count(),
        "tsc_hz": _tsc_hz(),
        "commit": _version(),
        "command_line": " ".join(sys.argv),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "dut_core_kept": quiet_core.state(),
    }

"""What a result was measured on, stored with every results file."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
import time

from xnf.build import REPO_ROOT


def _cpu_model() -> str:
    with open("/proc/cpuinfo") as info:
        for line in info:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown"


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


def describe() -> dict:
    commit = subprocess.run(["git", "-C", str(REPO_ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True).stdout.strip()
    return {
        "kernel": platform.release(),
        "cpu_model": _cpu_model(),
        "cores": os.cpu_count(),
        "tsc_hz": _tsc_hz(),
        "commit": commit or "unknown",
        "command_line": " ".join(sys.argv),
        "started_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }

"""Runs build/tests/xnf-diff-<nf> over frames and returns its per-frame records, asserting agreement."""

from __future__ import annotations

import json
import subprocess

from corpus import corpus, write_pcap
from xnf.build import BUILD_DIR

XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = 0, 1, 2, 3, 4

# The kernel builds each frame runs through beside the native build: XDP, tc on an skb whose checksum state is
# none, and tc on a CHECKSUM_COMPLETE skb (whose sum the kernel checks after the program).
CSUM_COMPLETE_BUILD = "tc-csum-complete"
KERNEL_BUILDS = {"xdp": ["--hook", "xdp"], "tc": ["--hook", "tc"],
                 CSUM_COMPLETE_BUILD: ["--hook", "tc", "--skb-csum-complete"]}
# An NF that moves the frame's start (a tunnel's encapsulation, an answer written over the request) does not keep a
# CHECKSUM_COMPLETE skb's sum (include/xnf/frame_start.h: a NIC's skbs, never a veth's): its fixtures run the others.
BUILDS_OF_MOVING_NFS = tuple(build for build in KERNEL_BUILDS if build != CSUM_COMPLETE_BUILD)
# What the kernel's skb test run cannot take (diff_main.c says so in the record): frames a real skb brings to tc.
TC_TEST_RUN_REFUSES = ("shorter than its IP header", "longer than the kernel's skb test run takes")


def tc_test_run_refused(record: dict) -> bool:
    return any(why in record.get("skipped", "") for why in TC_TEST_RUN_REFUSES)


def _run_build(argv: list[str], frames: list[tuple[str, bytes]], build: str) -> dict[str, dict]:
    result = subprocess.run(argv + KERNEL_BUILDS[build], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    summary = lines[-1]["summary"]
    assert summary["frames"] == len(frames)
    by_name = {name: record for (name, _), record in zip(frames, lines[:-1])}
    refused = {name for name, r in by_name.items()
               if build != "xdp" and tc_test_run_refused(r)}
    different = [name for name, record in by_name.items() if not record.get("same") and name not in refused]
    assert different == [], f"{build} and native disagree on {different[:10]}: {by_name[different[0]]}"
    assert summary["mismatches"] == 0
    return by_name


def run_differential(nf: str, tmp_path, rules: str | None = None, ports: int = 1,
                     frames: list[tuple[str, bytes]] | None = None, times: list[float] | None = None,
                     builds: tuple[str, ...] = tuple(KERNEL_BUILDS)) -> dict[str, dict]:
    """Every kernel build (BPF_PROG_RUN) and native must agree on every frame; returns the XDP build's records by
    frame name. times: when each frame runs, in seconds from the first (an idle time's fixtures wait)."""
    frames = frames if frames is not None else corpus()
    pcap = tmp_path / "corpus.pcap"
    write_pcap(pcap, frames, times)
    argv = [str(BUILD_DIR / "tests" / f"xnf-diff-{nf}"), str(pcap), "--ports", str(ports)]
    if rules:
        rules_path = tmp_path / "rules.txt"
        rules_path.write_text(rules)
        argv += ["--rules", str(rules_path)]
    records = {build: _run_build(argv, frames, build) for build in builds}
    return records[builds[0]]

"""Runs build/tests/xnf-diff-<nf> over frames and returns its per-frame records, asserting agreement."""

from __future__ import annotations

import json
import subprocess

from corpus import corpus, write_pcap
from xnf.build import BUILD_DIR

XDP_ABORTED, XDP_DROP, XDP_PASS, XDP_TX, XDP_REDIRECT = 0, 1, 2, 3, 4


def run_differential(nf: str, tmp_path, rules: str | None = None, ports: int = 1,
                     frames: list[tuple[str, bytes]] | None = None, times: list[float] | None = None
                     ) -> dict[str, dict]:
    """Kernel (BPF_PROG_RUN) and native must agree on every frame; returns the records by frame name. times: when
    each frame runs, in seconds from the first (an idle time's fixtures wait)."""
    frames = frames if frames is not None else corpus()
    pcap = tmp_path / "corpus.pcap"
    write_pcap(pcap, frames, times)
    argv = [str(BUILD_DIR / "tests" / f"xnf-diff-{nf}"), str(pcap), "--ports", str(ports)]
    if rules:
        rules_path = tmp_path / "rules.txt"
        rules_path.write_text(rules)
        argv += ["--rules", str(rules_path)]
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    summary = lines[-1]["summary"]
    assert summary["frames"] == len(frames)
    by_name = {name: record for (name, _), record in zip(frames, lines[:-1])}
    different = [name for name, record in by_name.items() if not record.get("same")]
    assert different == [], f"kernel and native disagree on {different[:10]}: {by_name[different[0]]}"
    assert summary["mismatches"] == 0
    return by_name

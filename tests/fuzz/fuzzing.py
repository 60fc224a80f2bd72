"""The fuzz targets (build/fuzz/bin, `make fuzz-bins`) driven from Python: their seeds, one run of a target,
and the kernel-side replay of what a data-path target found. Used by scripts/fuzz (long runs, results file)
and by the test suite (short runs, regressions, the replay)."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from corpus import corpus, write_pcap  # the differential test's corpus (scapy)
from differential import KERNEL_BUILDS, tc_test_run_refused
from xnf.build import BUILD_DIR, REPO_ROOT

ROOT = REPO_ROOT

FUZZ = BUILD_DIR / "fuzz"
REGRESSIONS = ROOT / "tests" / "fuzz" / "regressions"
# The longest input: a port byte and a frame of 9,216 bytes (jumbo frames and then some; past 3,520 bytes the
# data-path targets hand the NF a frame of several buffers, fuzz_nf.c).
MAX_INPUT = 1 + 9216
CONTROL_SEEDS = ["info", "stats", "frames", "rules list", "rules add drop udp 198.18.0.1 1 198.18.0.2 2",
                 "rules del drop udp 198.18.0.1 1 198.18.0.2 2", "rules add default drop", "rules nonsense"]


def write_seeds() -> dict[str, Path]:
    """Seed folders per kind of target: frames (a port byte, then the frame), rules lines per NF, requests."""
    folders = {"frames": FUZZ / "seeds" / "frames", "control": FUZZ / "seeds" / "control"}
    for folder in folders.values():
        folder.mkdir(parents=True, exist_ok=True)
    for i, (_, frame) in enumerate(corpus()):
        (folders["frames"] / f"frame-{i:04d}").write_bytes(bytes([i % 2]) + frame)
    for i, line in enumerate(CONTROL_SEEDS):
        (folders["control"] / f"request-{i}").write_text(line)
    for rules in (ROOT / "tests" / "fuzz" / "rules").glob("*.rules"):
        folder = FUZZ / "seeds" / f"rules-{rules.stem}"
        folder.mkdir(parents=True, exist_ok=True)
        lines = [ln.split("#")[0].strip() for ln in rules.read_text().splitlines()]
        for i, line in enumerate(ln for ln in lines if ln):
            (folder / f"rule-{i}").write_text(line)
        folders[f"rules-{rules.stem}"] = folder
    return folders


def seeds_for(target: str, folders: dict[str, Path]) -> Path | None:
    if target.startswith("nf-"):
        return folders["frames"]
    if target == "control":
        return folders["control"]
    return folders.get(target)


def rules_for(target: str) -> str:
    path = ROOT / "tests" / "fuzz" / "rules" / f"{target.removeprefix('nf-')}.rules"
    return str(path) if target.startswith("nf-") and path.exists() else ""


def target_env(target: str) -> dict:
    """A data-path target loads its NF's fuzzing rules (tests/fuzz/rules/NF.rules)."""
    return dict(os.environ, XNF_FUZZ_RULES=rules_for(target))


def run_target(binary: Path, seconds: int, seeds: Path | None, runs: int | None = None) -> dict:
    """One run of a target, for seconds (or a fixed number of inputs, seeded, for tests): its corpus grows in
    build/fuzz/corpus/TARGET, a crash's input goes to build/fuzz/crashes/."""
    corpus = FUZZ / "corpus" / binary.name
    crashes = FUZZ / "crashes"
    corpus.mkdir(parents=True, exist_ok=True)
    crashes.mkdir(parents=True, exist_ok=True)
    limit = [f"-runs={runs}", "-seed=1"] if runs else [f"-max_total_time={seconds}"]
    argv = [str(binary), *limit, "-print_final_stats=1", f"-max_len={MAX_INPUT}",
            f"-artifact_prefix={crashes}/{binary.name}-", str(corpus)] + ([str(seeds)] if seeds else [])
    result = subprocess.run(argv, capture_output=True, text=True, env=target_env(binary.name))
    log = result.stderr
    (FUZZ / "logs").mkdir(parents=True, exist_ok=True)
    (FUZZ / "logs" / f"{binary.name}.log").write_text(log)
    executions = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    coverage = re.findall(r"cov: (\d+) ft: (\d+)", log)
    return {"target": binary.name, "seconds": seconds, "executions": int(executions.group(1)) if executions else 0,
            "coverage_edges": int(coverage[-1][0]) if coverage else 0,
            "features": int(coverage[-1][1]) if coverage else 0,
            "corpus_inputs": len(list(corpus.iterdir())), "crashed": result.returncode != 0,
            "crash_inputs": sorted(p.name for p in crashes.glob(f"{binary.name}-*"))}



def replay_in_kernel(target: str, tmp_dir: Path) -> dict:
    """A data-path target's corpus (what it found interesting) through each of the NF's kernel builds (BPF_PROG_RUN:
    XDP, tc, tc on a complete sum) and its native build side by side (the differential harness, port 0, the same
    rules): how many disagree, per build."""
    import json

    nf = target.removeprefix("nf-")
    inputs = sorted((FUZZ / "corpus" / target).glob("*"))
    frames = [(p.name, p.read_bytes()[1:]) for p in inputs if 15 <= len(p.read_bytes()) <= MAX_INPUT]
    if not frames:
        return {"frames": 0, "mismatches": 0}
    pcap = tmp_dir / f"{target}.pcap"
    write_pcap(pcap, frames)
    argv = [str(BUILD_DIR / "tests" / f"xnf-diff-{nf}"), str(pcap), "--ports", "2"]
    if rules_for(target):
        argv += ["--rules", rules_for(target)]
    different = []
    for build, options in KERNEL_BUILDS.items():
        result = subprocess.run(argv + options, capture_output=True, text=True, timeout=300)
        if result.returncode != 0:
            raise RuntimeError(f"xnf-diff-{nf} ({build}) failed: {result.stderr.strip()}")
        records = [json.loads(line) for line in result.stdout.splitlines()]
        different += [f"{build}: {name}" for (name, _), r in zip(frames, records[:-1])
                      if not r.get("same") and not tc_test_run_refused(r)]
    return {"frames": len(frames), "mismatches": len(different), "different": different[:10]}


def regression_inputs(target: str) -> list[Path]:
    """Inputs that once made the target fail, kept after the fix (tests/fuzz/regressions/TARGET/)."""
    folder = REGRESSIONS / target
    return sorted(folder.glob("*")) if folder.is_dir() else []

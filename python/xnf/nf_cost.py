"""`xnf cost NF`: what an NF costs per frame on a traffic mix, without a topology (the c_task of the cost model,
docs/cost-model.md). xnf-gen builds the mix's frames (--write-pcap: the same program and classes as a real run)
and the NF binary times its native build and its XDP program on them (xnf-NF cost, lib/runtime/nf_cost.c)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from xnf import build, contract, programs, say, user_files
from xnf.errors import XnfError

# Any MAC will do: the frames are written to a file, never sent.
PLACEHOLDER_MAC = "02:00:00:00:00:02"
# The sample of the mix an NF is timed on holds every flow of the mix at least once, so that its per-flow state
# (sessions, table entries hit, cache lines) is as large as in a run: 1,024 frames of a 10,000-flow mix timed lb on
# a tenth of its sessions, all warm in cache. At least MIN_FRAMES; at most MAX_FRAMES, xnf-gen's most flows.
MIN_FRAMES = 1024
MAX_FRAMES = 65536
MAX_REPEAT = 1_000_000  # the NF binary's own bound on --repeat
# Timed frame runs per side: the bigger the sample, the fewer passes over it, never fewer than MIN_PASSES.
FRAME_RUNS = 102_400
MIN_PASSES = 5
# What a frame costs, by the state its flow finds: the fields of the NF binary's report that hold it. Established:
# the passes after the first (sessions open, caches warm). New: each frame's first run, where its flow's state is
# made (a NAT's session and mapping), priced on a sample in which every frame is a flow of its own.
SESSIONS = {"established": ("native_ns_per_frame", "xdp_ns_per_frame"),
            "new": ("native_first_ns_per_frame", "xdp_first_ns_per_frame")}
SESSIONS_HELP = ("established: frames of flows already seen (the default); new: every frame a new flow's first, "
                 "its state made (a NAT's session), on a sample of one frame per flow")


def mix_frames(path: Path, frames: int, gen_options: list[str]) -> dict:
    """Writes the mix's first `frames` frames to path (pcap); xnf-gen's report of it (frames_per_cycle: how many
    frames the mix takes to send every flow once)."""
    argv = [str(build.tool_binary("xnf-gen")), "--iface", "lo", "--dst-mac", PLACEHOLDER_MAC, "--count", str(frames),
            "--write-pcap", str(path), *gen_options]
    say.command(argv)
    made = subprocess.run(argv, capture_output=True, text=True)
    if made.returncode != 0:
        raise XnfError(f"the mix's frames could not be made: {made.stderr.strip().removeprefix('xnf: error: ')}")
    return json.loads(made.stdout.strip().splitlines()[-1])


def _frames_per_cycle(gen_options: list[str]) -> int:
    with tempfile.TemporaryDirectory() as folder:
        return int(mix_frames(Path(folder) / "one.pcap", 1, gen_options)["frames_per_cycle"])


def sample_frames(gen_options: list[str]) -> int:
    """Frames enough to hold every flow of the mix once (MIN_FRAMES..MAX_FRAMES)."""
    return max(MIN_FRAMES, min(MAX_FRAMES, _frames_per_cycle(gen_options)))


def new_session_frames(gen_options: list[str], frames: int | None) -> int:
    """A sample in which every frame is a flow's first: the mix's flows once each (at most MAX_FRAMES). Only a mix
    of one class sends each flow once a cycle: classes of different lengths repeat the shorter ones' flows."""
    if gen_options.count("--class") > 1:
        raise XnfError("new sessions are priced on a mix of one class (--flows N, --vary ..., or one --class): with "
                       "several, the shorter ones repeat their flows within the sample, and those frames would find "
                       "their sessions")
    cycle = _frames_per_cycle(gen_options)
    if frames and frames > cycle:
        raise XnfError(f"--frames {frames} with new sessions: the mix repeats its flows after {cycle} frames, so "
                       f"frames after those would find their sessions made; give at most {cycle} or more --flows")
    return frames or min(cycle, MAX_FRAMES)


def passes(frames: int) -> int:
    return max(MIN_PASSES, FRAME_RUNS // frames)


def _copy_rules(rules: str, folder: Path) -> str:
    """The rules read here and handed over as a file: a pipe (--rules <(...), /dev/stdin) is this process's, and
    the NF binary would find it closed."""
    copy = folder / "rules"
    user_files.copy_rules(rules, copy, contract.limit("rule_line"))
    return str(copy)


def measure(nf: str, gen_options: list[str], rules: str | None = None, frames: int | None = None,
            repeat: int | None = None, map_sizes: list[str] | None = None) -> dict:
    """The NF's native and XDP time per frame on the mix, and the verdicts it gave (one JSON object). frames: the
    sample's size (default: every flow once, sample_frames); repeat: the timed passes over it (default: passes)."""
    frames = frames or sample_frames(gen_options)
    repeat = repeat or passes(frames)
    with tempfile.TemporaryDirectory() as folder:
        pcap = Path(folder) / "mix.pcap"
        mix_frames(pcap, frames, gen_options)
        argv = [str(programs.nf_binary(nf)), "cost", "--frames", str(pcap), "--repeat", str(repeat)]
        copy = _copy_rules(rules, Path(folder)) if rules else None
        if copy:
            argv += ["--rules", copy]
        for size in map_sizes or []:
            argv += ["--map-size", size]
        say.command(argv)
        out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:  # the copy's errors name the user's file
        reason = out.stderr.strip().removeprefix("xnf: error: ")
        raise XnfError(reason.replace(copy, rules) if copy else reason or f"xnf-{nf} cost failed")
    return json.loads(out.stdout.strip().splitlines()[-1])

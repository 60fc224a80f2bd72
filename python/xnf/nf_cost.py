"""`xnf cost NF`: what an NF costs per frame on a traffic mix, without a topology (the c_task of the cost model,
docs/cost-model.md). xnf-gen builds the mix's frames (--write-pcap: the same program and classes as a real run)
and the NF binary times its native build and its XDP program on them (xnf-NF cost, lib/runtime/nf_cost.c)."""

from __future__ import annotations

import json
import subprocess
import tempfile
from pathlib import Path

from xnf import build, programs, say
from xnf.errors import XnfError

# Any MAC will do: the frames are written to a file, never sent.
PLACEHOLDER_MAC = "02:00:00:00:00:02"


def mix_frames(path: Path, frames: int, gen_options: list[str]) -> None:
    """Writes the mix's first `frames` frames to path (pcap)."""
    argv = [str(build.tool_binary("xnf-gen")), "--iface", "lo", "--dst-mac", PLACEHOLDER_MAC, "--count", str(frames),
            "--write-pcap", str(path), *gen_options]
    say.command(argv)
    made = subprocess.run(argv, capture_output=True, text=True)
    if made.returncode != 0:
        raise XnfError(f"the mix's frames could not be made: {made.stderr.strip()}")


def _copy_rules(rules: str, folder: Path) -> str:
    """The rules read here and handed over as a file: a pipe (--rules <(...), /dev/stdin) is this process's, and
    the NF binary would find it closed."""
    try:
        text = Path(rules).read_bytes()
    except OSError as err:
        raise XnfError(f"cannot read rules file {rules}: {err.strerror}") from None
    copy = folder / "rules"
    copy.write_bytes(text)
    return str(copy)


def measure(nf: str, gen_options: list[str], rules: str | None = None, frames: int = 1000, repeat: int = 100,
            map_sizes: list[str] | None = None) -> dict:
    """The NF's native and XDP time per frame on the mix, and the verdicts it gave (one JSON object)."""
    with tempfile.TemporaryDirectory() as folder:
        pcap = Path(folder) / "mix.pcap"
        mix_frames(pcap, frames, gen_options)
        argv = [str(programs.nf_binary(nf)), "cost", "--frames", str(pcap), "--repeat", str(repeat)]
        if rules:
            argv += ["--rules", _copy_rules(rules, Path(folder))]
        for size in map_sizes or []:
            argv += ["--map-size", size]
        say.command(argv)
        out = subprocess.run(argv, capture_output=True, text=True)
    if out.returncode != 0:
        raise XnfError(out.stderr.strip().removeprefix("xnf: error: ") or f"xnf-{nf} cost failed")
    return json.loads(out.stdout.strip().splitlines()[-1])

"""Where a stand-alone benchmark script's results go: one timestamped JSON file with everything (the set-up,
the environment, the summary, every raw sample, the command line) and a CSV of the summary beside it."""

from __future__ import annotations

import csv
import json
import sys
import time
from pathlib import Path


def write(out_dir: str | Path, name: str, header: dict, summary: list[dict], samples: list[dict]) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = out / f"{name}-{stamp}.json"
    doc = {"benchmark": name, **header, "command": " ".join(sys.argv), "summary": summary, "samples": samples}
    path.write_text(json.dumps(doc, indent=2))
    with open(out / f"{name}-{stamp}.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=list(summary[0]) if summary else [])
        writer.writeheader()
        writer.writerows(summary)
    return path

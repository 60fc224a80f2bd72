"""Where every benchmark's results go (the grids and the studies alike): NAME-STAMP.json with everything
(the set-up, the environment, the same-run yardsticks, the summary, every raw sample, the command line) and
NAME-STAMP.csv beside it, one row per summary line (or per sample, where the summary is not a table)."""

from __future__ import annotations

import csv
import json
import lzma
import sys
import time
from pathlib import Path


# A results file kept compressed (the research record's larger ones, research/results): NAME-STAMP.json.xz.
COMPRESSED = ".xz"


def load_json(path: str | Path):
    """A results file's JSON, compressed (.json.xz) or not."""
    path = Path(path)
    if path.name.endswith(COMPRESSED):
        with lzma.open(path, "rt") as f:
            return json.load(f)
    return json.loads(path.read_text())


def read(path: str | Path, study: str) -> dict:
    """The document of a results file that `write` wrote for the study (its name as `xnf bench run` takes it);
    anything else ends the study with what is wrong."""
    try:
        doc = load_json(path)
    except (OSError, ValueError, lzma.LZMAError) as err:
        raise SystemExit(f"{study}: {path} is not a {study} results file ({err})") from None
    if not isinstance(doc, dict) or doc.get("benchmark") != study.replace("-", "_"):
        found = doc.get("benchmark") if isinstance(doc, dict) else None
        raise SystemExit(f"{study}: {path} is not a {study} results file (it holds {found!r})")
    return doc


def write(out_dir: str | Path, name: str, doc: dict, rows: list[dict]) -> Path:
    """Writes doc (with "benchmark": name unless doc names it itself, and the command line) and the rows;
    returns the JSON's path. Lists and tuples in a row become comma-separated cells."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y%m%d-%H%M%S")
    path = out / f"{name}-{stamp}.json"
    path.write_text(json.dumps({"benchmark": name, "command": " ".join(sys.argv), **doc}, indent=1, default=list))
    columns = list(dict.fromkeys(k for row in rows for k in row))
    with open(path.with_suffix(".csv"), "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows({k: ",".join(map(str, v)) if isinstance(v, (list, tuple)) else v for k, v in row.items()}
                         for row in rows)
    return path

"""Which data paths a test, study or benchmark walks is a named selection of python/xnf/lab/paths.py, read from the
runtime's mode table (lib/runtime/modes.c), never a list typed by hand: a mode added to the table then shows up
wherever "every carrying path" or "one path of each kind" is walked, without touching the walkers. A literal list,
tuple, set or call of two or more mode names (or path keys, "afxdp/live") outside paths.py fails here, named with
its file and line; prose and command lines ("--modes xdp,tc") are strings, not lists, and pass."""

from __future__ import annotations

import ast
import json
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TABLE = json.loads((ROOT / "python" / "xnf" / "mode_table.json").read_text())
MODES = {mode["name"] for mode in TABLE["modes"]}
TX_PATHS = set(TABLE["tx_paths"])
WHERE = ("python", "tests", "nfs", "scripts", "research/scripts")
# paths.py is where the selections are made from the table. The unit tests run on synthetic profiles and results,
# whose path names are data, not a choice of paths to walk.
EXEMPT = ("python/xnf/lab/paths.py", "tests/unit/")


def names_a_path(word: object) -> bool:
    if not isinstance(word, str):
        return False
    mode, _, tx_path = word.partition("/")
    return mode in MODES and (not tx_path or tx_path in TX_PATHS)


def elements(node: ast.AST) -> list[ast.AST]:
    """The words of a literal list, tuple or set, or of a call's arguments; none for a command line (a list with an
    option in it: `["--mode", "xdp", "--mode", "tc"]` tests the runtime's refusal of it)."""
    found = node.elts if isinstance(node, (ast.List, ast.Tuple, ast.Set)) else \
        node.args if isinstance(node, ast.Call) else []
    options = any(isinstance(e, ast.Constant) and isinstance(e.value, str) and e.value.startswith("-") for e in found)
    return [] if options else found


def hand_typed_lists(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        named = [e.value for e in elements(node) if isinstance(e, ast.Constant) and names_a_path(e.value)]
        if len(set(named)) >= 2:
            found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {', '.join(named)}")
    return found


def python_files() -> list[Path]:
    found = {p for where in WHERE for p in (ROOT / where).rglob("*.py")}
    return sorted(p for p in found
                  if not str(p.relative_to(ROOT)).startswith(EXEMPT) and "build" not in p.relative_to(ROOT).parts)


def test_no_list_of_modes_is_typed_by_hand():
    found = [line for path in python_files() for line in hand_typed_lists(path)]
    assert not found, ("lists of modes typed by hand: take a named selection of python/xnf/lab/paths.py "
                       "instead:\n" + "\n".join(found))

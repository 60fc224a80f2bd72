"""The layers of the Python side: the lab (namespaces, generators, NF processes, measurements) under the model (the
cost model, which measures through the lab), both under bench (the studies). A lower layer imports nothing from a
higher one, so that the model runs without the studies (xnf advise) and the lab without either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "xnf"
ABOVE = {"lab": ("xnf.model", "xnf.bench", "xnf.analysis"), "model": ("xnf.bench", "xnf.analysis")}


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found |= {f"{node.module}.{alias.name}" for alias in node.names}
    return found


@pytest.mark.parametrize("layer", ABOVE)
def test_a_layer_imports_nothing_above_it(layer):
    wrong = {f"{path.relative_to(PACKAGE)}: {module}"
             for path in (PACKAGE / layer).rglob("*.py")
             for module in imported_modules(path)
             if module.startswith(ABOVE[layer])}
    assert not wrong

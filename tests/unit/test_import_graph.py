"""The layers of the Python side, in the folder names: the foundation (python/xnf/*.py: errors, the contract, control,
build, results files, output) under the lab (namespaces, generators, NF processes, measurements) and the service
(the configuration file, apply, the daemon, move), which stand beside each other; then the model (the cost model,
which measures through the lab), bench (the benchmarks, the studies and their figures), analysis (reports, the
research's findings judged) and commands (one module per `xnf` subcommand). A unit imports only from the units
below it, at the top of a file or inside a function alike, so that the model runs without the studies (xnf advise)
and the lab without either; and no module imports itself back through others (a cycle)."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[2] / "python" / "xnf"
RANK = {"foundation": 0, "lab": 1, "service": 1, "model": 2, "bench": 3, "analysis": 4, "commands": 5}


def unit_of(module: str) -> str | None:
    """The unit of a module of xnf ("xnf.lab.paths" -> lab), None for another package's. `python -m xnf` is the
    command line's entry, so xnf.__main__ is of the commands."""
    parts = module.split(".")
    if parts[0] != "xnf" or len(parts) < 2:
        return None
    if module == "xnf.__main__":
        return "commands"
    return parts[1] if parts[1] in RANK else "foundation"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(path): path for path in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: dict[str, Path]) -> set[str]:
    """The modules of xnf that path imports, anywhere in it (a function's import counts as much as the file's)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            # "from xnf.lab import paths" imports xnf.lab.paths where that is a module, else a name of xnf.lab
            found |= {f"{node.module}.{a.name}" if f"{node.module}.{a.name}" in known else node.module
                      for a in node.names}
    return {m for m in found if m in known}


def graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path, known) - {name} for name, path in known.items()}


def test_a_unit_imports_only_from_the_units_below_it():
    wrong = sorted(f"{module} ({unit_of(module)}) imports {imported} ({unit_of(imported)})"
                   for module, imported_set in graph().items() for imported in imported_set
                   if unit_of(imported) != unit_of(module)
                   and RANK[unit_of(imported)] >= RANK[unit_of(module)])
    assert not wrong, "\n".join(wrong)


def test_no_module_imports_itself_back():
    """Package __init__ files that gather their submodules (xnf.commands) are not part of a cycle by that alone."""
    edges = {m: {i for i in imported if not m.startswith(i + ".")} for m, imported in graph().items()}
    cycles, done, on_path = [], set(), []

    def visit(module: str) -> None:
        if module in on_path:
            cycles.append(" -> ".join(on_path[on_path.index(module):] + [module]))
            return
        if module in done:
            return
        on_path.append(module)
        for imported in sorted(edges[module]):
            visit(imported)
        on_path.pop()
        done.add(module)

    for module in sorted(edges):
        visit(module)
    assert not cycles, "\n".join(cycles)

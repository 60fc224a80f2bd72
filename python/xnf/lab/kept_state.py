"""What `--state DIR` keeps, read as bpftool formats it from BTF: for tests and studies that check a restart or a
move left the tables as they were."""

from __future__ import annotations

import json
from pathlib import Path

from xnf import contract
from xnf.errors import XnfError
from xnf.lab import bpf_maps


def _dump(state: Path, map_name: str) -> list[dict]:
    try:
        return bpf_maps.pinned_entries(state / "maps" / map_name)
    except XnfError as e:
        raise XnfError(f"cannot read the kept map {map_name} in {state}: {e}") from None


def in_force(state: Path, map_name: str) -> str:
    """The kept map holding a table as it is in force: for a rules table (xnf/rules_tables.h), its generation in
    force; any other map is itself."""
    names = contract.runtime()["rules_generations"]
    second = map_name + names["second_suffix"]
    if not (state / "maps" / second).exists():
        return map_name
    return second if _dump(state, names["in_force"])[0]["value"] & 1 else map_name


def entries(state: Path, map_name: str) -> list[dict]:
    """A kept map's entries: [{"key": ..., "value": ...}] (a rules table's as in force)."""
    return _dump(state, in_force(state, map_name))


def nat_mappings(state: Path) -> dict:
    """The NAT's kept mappings: inside endpoint (as JSON) -> (public port, address slot)."""
    return {json.dumps(e["key"], sort_keys=True): (e["value"]["public_port"], e["value"]["addr_index"])
            for e in entries(state, "nat_mappings")}

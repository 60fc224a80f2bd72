"""The data paths the lab runs, from the runtime's own mode table (lib/runtime/modes.c, which `xnf-NF describe`
writes out) and its transmit paths: each mode that carries frames its own way, and where AF_XDP workers send, the
transmit path. What places a path on the lab's cores (the workers on the DUT's core) is said here once. Studies and
tests take their paths from here, so that a mode added to the table is measured and tested wherever paths are
iterated over.

    for path in paths.carrying().values():
        NfInstance.start(t, "router", path.mode, t.dut_ifaces, extra=path.lab_options())

Keys: the mode's name, and "mode/tx-path" where the workers send ("afxdp/live", "afxdp/xsk").
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache

from xnf import chain, contract, kernel
from xnf.errors import XnfError
from xnf.lab.cores import DUT_CORE

# The transmit path a sending mode runs when none is named, where the kernel gives what it needs (the runtime's
# tx_path_needs), else the one that needs nothing; the first user-space mode is measured on each of the runtime's
# transmit paths (describe's tx_paths) but "auto".
PREFERRED_TX_PATH = "live"
FALLBACK_TX_PATH = "xsk"


@lru_cache(maxsize=None)
def default_tx_path() -> str:
    needs = contract.runtime().get("tx_path_needs", {}).get(PREFERRED_TX_PATH, [])
    return FALLBACK_TX_PATH if kernel.missing(needs) else PREFERRED_TX_PATH


@dataclass(frozen=True)
class Path:
    key: str
    mode: str
    tx_path: str | None = None

    @property
    def described(self) -> dict:
        return contract.mode(self.mode)

    @property
    def nf_in_kernel(self) -> bool:
        return self.described["datapath"] != "user"

    @property
    def hook(self) -> str:
        """Where the kernel part runs: "xdp" or "tc"."""
        return self.described.get("hook", "xdp")

    @property
    def has_workers(self) -> bool:
        return self.described["sockets"]

    @property
    def needs(self) -> list[str]:
        """The kernel facilities the path cannot run without (python/xnf/kernel.py names them): its mode's, and its
        transmit path's."""
        tx_needs = contract.runtime().get("tx_path_needs", {})
        return list(dict.fromkeys(self.described.get("needs", []) + tx_needs.get(self.tx_path or "", [])))

    def lab_options(self) -> list[str]:
        """The options of `xnf run` besides --mode that make the path on the lab: its transmit path, and its
        workers on the DUT's core."""
        return (["--tx-path", self.tx_path] if self.tx_path else []) + \
            (["--cores", str(DUT_CORE)] if self.has_workers else [])

    def mode_and_options(self) -> tuple[str, list[str]]:
        return self.mode, self.lab_options()


def _carries(mode: dict) -> bool:
    """A mode that carries frames a way of its own: not generic XDP (the driver-less fallback of xdp) and not XDP
    beside idle sockets (xdp-sk, a measurement of what open sockets cost)."""
    return mode["available"] and not mode.get("generic") and not (mode["datapath"] == "kernel" and mode["sockets"])


@lru_cache(maxsize=None)
def carrying() -> dict[str, Path]:
    """Every way xnf carries frames, in the table's order: each carrying mode, the first user-space mode with each
    of its transmit paths, the other sending modes with the default one."""
    runtime = contract.runtime()
    tx_paths = [t for t in runtime["tx_paths"] if t != "auto"]
    first_user = next(m["name"] for m in runtime["modes"] if m["datapath"] == "user")
    found = []
    for mode in filter(_carries, runtime["modes"]):
        if not mode["workers_send"]:
            found.append(Path(mode["name"], mode["name"]))
            continue
        for tx in (tx_paths if mode["name"] == first_user else [default_tx_path()]):
            found.append(Path(f"{mode['name']}/{tx}", mode["name"], tx))
    return {p.key: p for p in found}


def representative() -> dict[str, Path]:
    """One path of each kind, the first of it in the table's order (workers on the default transmit path): the NF in
    the kernel at XDP, at tc, in user space, and split between XDP and the workers (hybrid). What a quick fit measures
    and the functional tests walk."""
    found: dict[tuple[str, str], Path] = {}
    for path in carrying().values():
        if path.tx_path in (None, default_tx_path()):
            found.setdefault((path.described["datapath"], path.hook), path)
    return {p.key: p for p in found.values()}


def runnable() -> dict[str, Path]:
    """The carrying paths this kernel runs: what the benchmarks measure and the advisor weighs."""
    return {key: path for key, path in carrying().items() if not kernel.missing(path.needs)}


def runs_workers(nf: str, mode: str | None) -> bool:
    """Whether the NF run in mode has AF_XDP workers; mode None: a chain whose members say where they run
    (chain:upf@xdp,lb@afxdp)."""
    places = [p for _, _, p in (w.partition("@") for w in nf.removeprefix(chain.PREFIX).split(","))]
    return any(contract.mode(m)["sockets"] for m in [mode, *places] if m)


def worker_options(mode: str | None, nf: str = "") -> list[str]:
    """What places a run's AF_XDP workers on the lab's DUT core (none for a run without workers)."""
    return ["--cores", str(DUT_CORE)] if runs_workers(nf, mode) else []


def needs_of(key: str) -> list[str]:
    """The kernel facilities a path key ("afxdp/live") or a mode name ("hybrid") cannot run without; none for a word
    that is neither."""
    if key in carrying():
        return carrying()[key].needs
    if key in contract.mode_names():
        return Path(key, key).needs
    return []


def keys(*names: str) -> list[str]:
    """The path keys of names, each a key already or a mode (taken on this kernel's default transmit path)."""
    return [find(name).key for name in names]


def find(key: str) -> Path:
    """A path by key; a bare sending mode ("hybrid") is its default transmit path's."""
    every = carrying()
    key = key if key in every else f"{key}/{default_tx_path()}"
    if key not in every:
        raise XnfError(f"unknown data path '{key}': choose from {', '.join(every)}")
    return every[key]


def with_auto_tx() -> dict[str, tuple[str, list[str]]]:
    """key -> (mode, lab options) of every carrying path, but with `--tx-path auto` where the path names live frames:
    a live frame is one page, and `--tx-path live` refuses a port whose MTU allows longer (docs/afxdp.md), where auto
    takes the xsk ring. What a lab at a jumbo MTU runs; a mode that has an xsk path of its own keeps only that."""
    found = {}
    for key, path in carrying().items():
        if path.tx_path != "live":
            found[key] = path.mode_and_options()
        elif f"{path.mode}/xsk" not in carrying():
            found[f"{path.mode}/auto"] = (path.mode, [o if o != "live" else "auto" for o in path.lab_options()])
    return found


def options_by_key(*keys: str) -> dict[str, tuple[str, list[str]]]:
    """key -> (mode, lab options) for the named paths, or every carrying one: what tests parametrize over."""
    return {key: find(key).mode_and_options() for key in (keys or carrying())}


class Selection(Mapping):
    """key -> (mode, lab options) of the named paths (every carrying one if none is named), read from the mode table
    when first used: a study's or a test module's constant that asks no NF binary at import."""

    def __init__(self, *keys: str):
        self._keys = keys
        self._table: dict[str, tuple[str, list[str]]] | None = None

    def _resolved(self) -> dict[str, tuple[str, list[str]]]:
        if self._table is None:
            self._table = options_by_key(*self._keys)
        return self._table

    def __getitem__(self, key: str) -> tuple[str, list[str]]:
        return self._resolved()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())

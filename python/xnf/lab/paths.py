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

from collections.abc import Iterator, Mapping, Sequence
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
    first_user = _first_user_mode()
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
    return _first_of_each(lambda p: True)


# Named selections: which paths a test, study or benchmark walks, each read from the mode table. A list of modes typed
# by hand anywhere else is refused by tests/unit/test_mode_lists.py.

def each_build() -> dict[str, Path]:
    """The NF's three builds, one path each: its BPF object at XDP, its BPF object at tc, its native build in user
    space (workers on the default transmit path). What a test of the NF's own decisions walks: the other paths run
    one of these builds the same way."""
    return _first_of_each(lambda p: p.described["datapath"] in ("kernel", "user"))


def kernel_and_user() -> dict[str, Path]:
    """The NF in the kernel at XDP and in user space, one path each: where a test's subject is the NF's tables on
    either side of the kernel boundary (the native maps, the kept state, the control socket's view of them)."""
    return _first_of_each(lambda p: p.hook == "xdp" and p.described["datapath"] in ("kernel", "user"))


def kernel_hooks() -> dict[str, Path]:
    """The NF's BPF object at each hook the kernel runs it from: XDP and tc."""
    return _first_of_each(lambda p: p.described["datapath"] == "kernel", kind=lambda p: p.hook)


def kinds_at_xdp() -> dict[str, Path]:
    """One path of each kind that an XDP program starts: the NF in the kernel, in user space, and split (hybrid)."""
    return _first_of_each(lambda p: p.hook == "xdp")


def at_xdp() -> dict[str, Path]:
    """Every carrying mode an XDP program starts, each on the default transmit path: what the cost model fits."""
    return _first_of_each(lambda p: p.hook == "xdp", kind=lambda p: p.mode)


def each_mode() -> dict[str, Path]:
    """Every carrying mode, each on the default transmit path."""
    return _first_of_each(lambda p: True, kind=lambda p: p.mode)


def worker_kinds() -> dict[str, Path]:
    """One path of each kind whose AF_XDP workers forward: the NF in user space, and hybrid (the NF in XDP)."""
    return _first_of_each(lambda p: p.has_workers)


def worker_waits() -> dict[str, Path]:
    """One user-space path for each way its workers wait (spinning, in syscalls, in poll), on the default transmit
    path."""
    return _first_of_each(lambda p: p.described["datapath"] == "user", kind=lambda p: p.described["workers"])


def with_workers() -> dict[str, Path]:
    """Every carrying mode whose AF_XDP workers forward (the NF in user space, or hybrid's), on the default transmit
    path."""
    return _first_of_each(lambda p: p.has_workers, kind=lambda p: p.mode)


def transmit_paths() -> dict[str, Path]:
    """The first user-space mode on each of the runtime's transmit paths (its workers sending on the xsk ring, or
    through live frames)."""
    first_user = _first_user_mode()
    return {key: path for key, path in carrying().items() if path.mode == first_user}


def at_native_xdp() -> list[str]:
    """Every mode attached at native XDP, idle sockets beside the NF included (xdp-sk)."""
    return _available_modes(lambda m: m.get("hook", "xdp") == "xdp" and not m.get("generic"))


def every_mode() -> list[str]:
    """Every mode the runtime has but generic XDP (the driver-less fallback of xdp): what 'every mode' measures."""
    return _available_modes(lambda m: not m.get("generic"))


def xdp_attachments() -> list[str]:
    """The NF in the kernel at XDP, each way the program can be attached: native (the driver's) and generic."""
    return _available_modes(lambda m: m["datapath"] == "kernel" and m.get("hook", "xdp") == "xdp"
                            and not m["sockets"])


def _available_modes(wanted) -> list[str]:
    """The names of the table's modes this build has that are wanted, in the table's order (idle-socket and generic
    modes included, unlike the carrying paths)."""
    return [m["name"] for m in contract.runtime()["modes"] if m["available"] and wanted(m)]


def _first_user_mode() -> str:
    """The first mode that runs the NF in user space: the one measured on each transmit path."""
    return next(m["name"] for m in contract.runtime()["modes"] if m["datapath"] == "user")


def _first_of_each(wanted, kind=lambda p: (p.described["datapath"], p.hook)) -> dict[str, Path]:
    """The first carrying path of each kind among those wanted, on the default transmit path where workers send."""
    found: dict[object, Path] = {}
    for path in carrying().values():
        if wanted(path) and path.tx_path in (None, default_tx_path()):
            found.setdefault(kind(path), path)
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


def with_auto_tx(among=carrying) -> dict[str, tuple[str, list[str]]]:
    """key -> (mode, lab options) of the paths of a selection (every carrying one by default), but with `--tx-path
    auto` where the path names live frames: a live frame is one page, and `--tx-path live` refuses a port whose MTU
    allows longer (docs/afxdp.md), where auto takes the xsk ring. What a lab at a jumbo MTU runs; a mode that has an
    xsk path of its own in the selection keeps only that."""
    chosen = among()
    found = {}
    for key, path in chosen.items():
        if path.tx_path != "live":
            found[key] = path.mode_and_options()
        elif f"{path.mode}/xsk" not in chosen:
            found[f"{path.mode}/auto"] = (path.mode, [o if o != "live" else "auto" for o in path.lab_options()])
    return found


def options_by_key(*keys: str) -> dict[str, tuple[str, list[str]]]:
    """key -> (mode, lab options) for the named paths, or every carrying one: what tests parametrize over."""
    return {key: find(key).mode_and_options() for key in (keys or carrying())}


class Selection(Mapping):
    """key -> (mode, lab options) of the named paths, or of a named selection above (`select=representative`), or of
    every carrying one, read from the mode table each time it is used: a study's or a test module's constant that
    asks no NF binary at import."""

    def __init__(self, *keys: str, select=None):
        self._keys, self._select = keys, select

    def _resolved(self) -> dict[str, tuple[str, list[str]]]:
        if self._select:
            return {key: path.mode_and_options() for key, path in self._select().items()}
        return options_by_key(*self._keys)

    def __getitem__(self, key: str) -> tuple[str, list[str]]:
        return self._resolved()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())

    def __len__(self) -> int:
        return len(self._resolved())


class Modes(Sequence):
    """The mode names of a named selection (a function above), read from the mode table each time they are used: a
    test module's or a benchmark's constant that asks no NF binary at import. Parametrize over it as over a list."""

    def __init__(self, select):
        self._select = select

    def _resolved(self) -> list[str]:
        chosen = self._select()
        return list(chosen) if isinstance(chosen, list) else list(dict.fromkeys(p.mode for p in chosen.values()))

    def __getitem__(self, index):
        return self._resolved()[index]

    def __iter__(self) -> Iterator[str]:
        return iter(self._resolved())   # once, not once per index as Sequence's own would

    def __len__(self) -> int:
        return len(self._resolved())

    def __repr__(self) -> str:
        return f"Modes({self._select.__name__})"


def modes(select) -> list[str]:
    """The mode names of a named selection, now."""
    return list(Modes(select))

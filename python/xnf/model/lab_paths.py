"""The data paths the cost model knows, as the veth lab lays them out on its two cores (docs/lab.md): which roles
each has, where the NF runs, and which cores spin.

On veth a frame's receive runs on the core that sent it. The generator (core 0) sends, so the DUT's receive runs
there: the XDP program and its XDP_TX (and the generator side's receive of what comes back) for the kernel path, the
redirect and the copy into the UMEM for the AF_XDP paths. The AF_XDP workers (core 1) run the NF natively and send;
what they send is received on their own core. So there are two roles, "sender" and "worker", and an NF's work lands
on the sender in XDP and hybrid (the NF is the XDP program) and on the worker in the user-space modes.

Split chains and dynamic offload are composed from these by the advisor (python/xnf/model/advisor.py): the AF_XDP
path's roles, with the kernel part's work (or the offloaded drops) on the sender as in hybrid.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from xnf.lab import paths
from xnf.lab.cores import DUT_CORE, GEN_CORE

SENDER, WORKER = "sender", "worker"
SENDER_WHAT = f"core {GEN_CORE}: the generator, and the DUT's receive of what it sends (softirq)"
WORKER_WHAT = f"core {DUT_CORE}: the AF_XDP workers, and the receive of what they send"


def quick_paths() -> list[str]:
    """The paths a quick fit measures (model-fit --quick, what `xnf advise` makes on first use): one of each kind
    (python/xnf/lab/paths.py's representative(): the kernel path, the user-space path and the split that win most
    cases of docs/cost-model.md, and the skb path, tc), each on the transmit path this kernel runs."""
    return list(paths.representative())


@dataclass(frozen=True)
class LabPath(paths.Path):
    """A lab path (python/xnf/lab/paths.py) as the model sees it; what it needs of the mode it reads from the
    runtime's description of it (`xnf-NF describe`), which states each mode's properties once."""

    @property
    def task_role(self) -> str:
        return SENDER if self.nf_in_kernel else WORKER

    @property
    def task_side(self) -> str:
        """Where the NF's c_task is read: "xdp" (its XDP build) or "native"."""
        return "xdp" if self.nf_in_kernel else "native"

    @property
    def worker_spins(self) -> bool | None:
        """None: no worker role; False for workers that sleep in poll()."""
        workers = self.described["workers"]
        return None if workers is None else workers != "poll"

    @property
    def drops_in(self) -> str:
        """The fate of a frame the NF drops: dropped in the kernel, or by a worker."""
        return "drop_kernel" if self.nf_in_kernel else "drop_user"

    @property
    def roles(self) -> list[str]:
        return [SENDER] if self.worker_spins is None else [SENDER, WORKER]

    def run_options(self) -> list[str]:
        return run_options(self.mode, self.tx_path)


def run_options(mode: str, tx_path: str | None) -> list[str]:
    """The options of `xnf run` that choose a data path (a profile's or the lab's). The lab's cores are not among
    them: lab_rate puts the workers on the worker core where a run has any."""
    return ["--mode", mode] + (["--tx-path", tx_path] if tx_path else [])


@lru_cache(maxsize=None)
def _priced_paths() -> dict[str, LabPath]:
    """Every carrying path of the lab's (python/xnf/lab/paths.py, from the runtime's mode table). The skb path (tc)
    is priced per frame, as the lab floods it; what a GSO segment costs there is not (docs/cost-model.md)."""
    return {k: LabPath(k, p.mode, p.tx_path) for k, p in paths.carrying().items()}


def __getattr__(name: str):
    """PATHS, read from the runtime's mode table when first used (not at import: that asks an NF binary)."""
    if name == "PATHS":
        return _priced_paths()
    raise AttributeError(name)


def runnable() -> dict[str, LabPath]:
    """The priced paths this kernel runs (what a fit can measure here)."""
    return {k: p for k, p in _priced_paths().items() if k in paths.runnable()}


def kernel_drop_with_sockets(keys) -> str | None:
    """Of the paths keys, the one whose kernel-side drop (an XDP program dropping while AF_XDP sockets are open) the
    composed paths use: the split's (hybrid), on whichever transmit path it was fitted."""
    return next((k for k in keys if k in _priced_paths() and find(k).described["datapath"] == "hybrid"), None)


def find(key: str) -> LabPath:
    from xnf.errors import XnfError

    priced = _priced_paths()
    if key not in priced:
        raise XnfError(f"unknown data path '{key}': choose from {', '.join(priced)}")
    return priced[key]

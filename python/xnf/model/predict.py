"""The per-packet cost model: time per frame = c_IO(path) + c_task(NF), per role, and a path forwards as fast as
its busiest role allows.

On each role (the cores doing one kind of work, python/xnf/model/profile.py) a frame costs the path's own fixed time
for the frame's fate (forwarded, dropped in XDP, dropped in user space) plus the NF's work that runs there, scaled
from what `xnf cost` measured to what it takes in the run; a forwarded frame takes at least the role's floor, where
it has one (work that overlaps with the NF's). Throughput is min over roles of cores / time per frame; the
CPU a frame costs is the sum over roles of its time there, except on cores that spin (busy-polling workers): those
are taken whole whatever the rate (c_busy), so they cost cores / rate.
"""

from __future__ import annotations

from dataclasses import dataclass

from xnf.errors import XnfError
from xnf.model.profile import FATES, PathCost

NS_PER_S = 1e9
# A role can not take less than this per frame however cheap the NF is against the baseline.
MIN_ROLE_NS = 1.0


@dataclass
class Part:
    """A piece of the NF's work: where it runs and its c_task there per frame that reaches it."""
    role: str
    ns: float           # c_task over the baseline, from xnf cost on the side the role runs (xdp or native)
    scale: float        # ns in the run per ns measured
    reach: float = 1.0  # the share of frames it runs on (earlier parts may have dropped the rest)


@dataclass
class Load:
    """What a mix asks of a path: the share of frames of each fate and the NF's parts."""
    fates: dict[str, float]
    parts: list[Part]


@dataclass
class Prediction:
    mpps: float
    bottleneck: str
    role_ns: dict[str, float]         # time per frame on one core of each role
    role_task_ns: dict[str, float]    # of which the NF's own work
    cores: dict[str, int]
    cpu_ns_per_frame: float           # the DUT's CPU per frame at that rate (spinning cores whole; no generator)

    @property
    def io_share(self) -> float:
        """The share of the busiest role's time that is the path's own work (the rest is the NF's)."""
        t = self.role_ns[self.bottleneck]
        return max(0.0, min(1.0, (t - self.role_task_ns[self.bottleneck]) / t))


def role_times(path: PathCost, load: Load) -> tuple[dict[str, float], dict[str, float]]:
    """(time per frame, of which the NF's work) on one core of each role."""
    _check(path, load)
    task = {role: 0.0 for role in path.roles}
    for part in load.parts:
        task[part.role] += part.reach * part.ns * part.scale
    total = {}
    for role, r in path.roles.items():
        own = sum(share * path.fixed(role, fate) for fate, share in load.fates.items()) + task[role]
        # a forwarded frame takes at least the floor: what its own time falls short of it is added
        short = max(0.0, r.floor_ns - path.fixed(role, "forward") - task[role])
        total[role] = max(MIN_ROLE_NS, own + load.fates.get("forward", 0.0) * short)
    return total, task


def _check(path: PathCost, load: Load) -> None:
    if set(load.fates) - set(FATES) or abs(sum(load.fates.values()) - 1) > 1e-6 or \
            any(s < 0 for s in load.fates.values()):
        raise XnfError(f"fates must be shares of {', '.join(FATES)} adding up to 1, not {load.fates}")
    for part in load.parts:
        if part.role not in path.roles:
            raise XnfError(f"the NF's work is placed on role '{part.role}', which the path does not have")


def allocate(path: PathCost, times: dict[str, float], cores: int | None) -> dict[str, int]:
    """Cores per role: the profile's own, or `cores` shared out so that the slowest role is as fast as it can be
    (every role needs one). Assumes a role's rate grows with its cores, as RSS spreads flows over queues."""
    if cores is None:
        return {role: r.cores for role, r in path.roles.items()}
    roles = list(path.roles)
    if cores < len(roles):
        raise XnfError(f"{path.mode} needs at least {len(roles)} cores here ({', '.join(roles)}), not {cores}")
    # Water-filling: one core each, then every next core to the slowest role. A role's rate grows by the same
    # step with every core it gets, so this gives the slowest role the best rate any split does, in one pass.
    given = dict.fromkeys(roles, 1)
    for _ in range(cores - len(roles)):
        slowest = min(roles, key=lambda role: given[role] / times[role])
        given[slowest] += 1
    return given


def predict(path: PathCost, load: Load, cores: int | None = None) -> Prediction:
    times, task = role_times(path, load)
    given = allocate(path, times, cores)
    per_role_mpps = {role: given[role] / times[role] * NS_PER_S / 1e6 for role in times}
    bottleneck = min(per_role_mpps, key=per_role_mpps.get)
    mpps = per_role_mpps[bottleneck]
    cpu = 0.0
    for role, r in path.roles.items():
        # The generator's part comes off a sender's time; a profile fitted on a busy host can make that part the
        # larger, and a frame never costs the DUT less than nothing.
        cpu += given[role] * 1e3 / mpps if r.spins else max(0.0, times[role] - r.load_ns)
    return Prediction(mpps=mpps, bottleneck=bottleneck, role_ns=times, role_task_ns=task, cores=given,
                      cpu_ns_per_frame=cpu)

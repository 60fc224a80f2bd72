"""Fitting a path's c_IO from a sweep: measured RFC 2544 rates of an NF whose c_task is known (taskemu, spending a
set number of cycles or walking a list of a set size, its c_task measured by `xnf cost` the same way a user's NF is).

Time per frame y = 1/rate. On a path whose NF runs on one role and nothing else binds, y = F + s x, x the NF's c_task
over the baseline: F is the path's own time on that role (c_IO), s how a measured nanosecond of NF work translates
into the run (caches shared with the generator, the clock the kernel side waits on). With a second role (the AF_XDP
paths: the sender's core receives and copies, the worker's core runs the NF), y = max(F + s x, G): G is the other
role's time, the floor a cheap NF sits on. Fits minimise the relative error of the predicted rate, on the cycles
series (_line_points says why not the memory series too).

A drop point (the `drop` NF on the path) gives the time of a dropped frame on the role that drops it. Where that
role is the AF_XDP worker, the drop point is the sender's (every frame dropped leaves the worker idle): a drop-mix
point (taskemu dropping a set share of its frames, forwarding the rest) loads the worker and says what a frame it
drops saves it (drop_in_mix).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from xnf.errors import XnfError

FLOOR_GRID = 400          # candidate floors tried between the fastest point and the slowest
FLOOR_TOLERANCE = 0.05    # a drop this much faster than the floor says the floor is not the sender's
FAR_MOST_NS, FAR_STEP_NS = 400.0, 2.0   # the far placement's time per crossing frame tried, per role
FAR_TIE = 1e-9            # errors this close (relative and absolute) are one: they differ by rounding only

# The sweeps a point comes from: taskemu spending cycles, walking a list; the drop NF; taskemu dropping a share
CYCLES, MEMORY, DROP, DROP_MIX = "cycles", "memory", "drop", "drop-mix"
TASK_SERIES = (CYCLES, MEMORY)   # the points of the line: an NF's work over the baseline, every frame forwarded


@dataclass
class Point:
    x_ns: float       # c_task over the baseline on the path's task side
    y_ns: float       # measured time per frame, 1e3 / Mpps
    series: str = ""  # CYCLES, MEMORY...: which sweep it comes from (residuals are reported per series)


@dataclass
class LineFit:
    fixed_ns: float   # F
    scale: float      # s
    floor_ns: float   # G (0: no floor)

    def y(self, x: float) -> float:
        return max(self.fixed_ns + self.scale * x, self.floor_ns)


def _weighted_line(xs: np.ndarray, ys: np.ndarray) -> tuple[float, float]:
    """F, s minimising sum(((F + s x) - y) / y)^2."""
    a = np.stack([1 / ys, xs / ys], axis=1)
    (fixed, scale), *_ = np.linalg.lstsq(a, np.ones_like(ys), rcond=None)
    return float(fixed), float(scale)


def _relative_errors(fit: LineFit, points: list[Point]) -> np.ndarray:
    """Error of the predicted rate relative to the measured one, per point."""
    return np.array([p.y_ns / fit.y(p.x_ns) - 1 for p in points])


def fit_line(points: list[Point], floor: bool) -> LineFit:
    """y = F + s x, or with floor y = max(F + s x, G)."""
    if len({p.x_ns for p in points}) < 2:
        raise XnfError("a path's fit needs points at two task costs at least")
    xs = np.array([p.x_ns for p in points])
    ys = np.array([p.y_ns for p in points])
    fixed, scale = _weighted_line(xs, ys)
    best = LineFit(fixed, scale, 0.0)
    if not floor:
        return best
    best_err = float(np.sum(_relative_errors(best, points) ** 2))
    for g in np.linspace(ys.min() * 0.8, ys.max(), FLOOR_GRID):
        above = ys > g * 1.02
        if len(set(xs[above])) < 2:
            continue
        f, s = _weighted_line(xs[above], ys[above])
        candidate = LineFit(f, s, float(g))
        err = float(np.sum(_relative_errors(candidate, points) ** 2))
        if err < best_err:
            best, best_err = candidate, err
    return best


def fit_line_at_scale(points: list[Point], scale: float, floor: bool) -> LineFit:
    """y = F + s x, or with floor y = max(F + s x, G), s given: where a path's points cannot tell it (every one sat on
    the other role's time), another path's with the NF on the same role and side. F from the points above the floor;
    where none is, the most the NF's role can take with every point still on the floor (the safe side)."""
    xs = np.array([p.x_ns for p in points])
    ys = np.array([p.y_ns for p in points])
    if not floor:
        return LineFit(float(np.median(ys - scale * xs)), scale, 0.0)
    above = ys > ys.min() * 1.02
    on_floor = ys[~above]
    if above.any():
        return LineFit(float(np.median(ys[above] - scale * xs[above])), scale, float(on_floor.max()))
    return LineFit(float(ys.min() - scale * xs.max()), scale, float(ys.min()))


def quality(fit: LineFit, points: list[Point]) -> dict:
    """rms and largest relative error of the rate, over all points and per series."""
    def summary(ps: list[Point]) -> dict:
        errs = _relative_errors(fit, ps)
        return {"points": len(ps), "rms_error": round(math.sqrt(float(np.mean(errs ** 2))), 4),
                "max_error": round(float(np.max(np.abs(errs))), 4)}

    out = summary(points)
    for series in sorted({p.series for p in points if p.series}):
        out[series] = summary([p for p in points if p.series == series])
    return out


@dataclass
class DropMix:
    point: Point      # the mix's measured time per frame and its c_task (over the baseline, all frames together)
    share: float      # the share of its frames the NF drops


def drop_time(y_ns: float, x_ns: float, scale: float) -> float:
    """The dropping role's own time for a dropped frame, from the drop NF's measured time per frame (y) and its
    c_task (x). When that rate sat on another role's floor, this is only a bound (the drop is at least that fast):
    enough where the NF drops every frame, not for a mix, where the dropping role may still bind (drop_in_mix)."""
    return max(y_ns - scale * x_ns, 0.0)


def drop_in_mix(mix: DropMix, forward_ns: float, scale: float, short_ns: float) -> float:
    """The task role's own time for a frame its NF drops, from a mix of forwarded and dropped frames measured on the
    path: T = (1-p)(F + short) + p d + s x, solved for d. short: what a forwarded frame falls short of the role's
    floor. Where the mix sat on the other role's time this is a bound from above, the safe side."""
    forwarded = (1 - mix.share) * (forward_ns + short_ns)
    return max((mix.point.y_ns - scale * mix.point.x_ns - forwarded) / mix.share, 0.0)


def fit_path(lab_path, points: list[Point], drop: Point | None, load_ns: float = 0.0, drop_mix: DropMix | None = None,
             scale: float | None = None):
    """A PathCost for one of the lab's paths (python/xnf/model/lab_paths.py) from its sweep points, its drop point
    (the drop NF on the path, x its c_task over the baseline) and its drop-mix point, where it was measured. scale:
    the NF's scale taken as given (fit_line_at_scale) rather than fitted."""
    from xnf.model.lab_paths import SENDER, SENDER_WHAT, WORKER, WORKER_WHAT
    from xnf.model.profile import PathCost, Role

    floor = len(lab_path.roles) > 1
    line = fit_line(_line_points(points), floor) if scale is None else \
        fit_line_at_scale(_line_points(points), scale, floor)
    other_ns = line.floor_ns or min(p.y_ns for p in points)   # never bound in the sweep: at most its fastest
    overlap = _floor_is_the_nfs_own(lab_path, line, drop)
    if drop is not None and _workers_drop(lab_path):
        # a frame the NF drops passes the sender as a forwarded one does: the sender is at most as slow as the whole
        # path was on drops (a floor drops went under is the NF's own role's, not the sender's; and a path whose
        # worker bound every point, the xsk ring's, would otherwise leave the sender at the worker's time)
        other_ns = min(other_ns, drop.y_ns)
    roles = {}
    for name in lab_path.roles:
        forward = line.fixed_ns if name == lab_path.task_role else other_ns
        roles[name] = Role(cores=1, fixed_ns={"forward": round(forward, 2)},
                           spins=bool(lab_path.worker_spins) if name == WORKER else False,
                           load_ns=round(load_ns, 2) if name == SENDER else 0.0,
                           what=SENDER_WHAT if name == SENDER else WORKER_WHAT,
                           floor_ns=round(line.floor_ns, 2) if overlap and name == lab_path.task_role else 0.0)
    fit = {**quality(line, points), "floor_bound": not line.floor_ns and len(roles) > 1,
           "floor_on": lab_path.task_role if overlap else ("other role" if line.floor_ns else None)}
    if drop is not None:
        dropping = lab_path.task_role if lab_path.drops_in == "drop_user" or len(roles) == 1 else SENDER
        own = _dropped_frame_time(lab_path, roles[dropping], line, drop, drop_mix)
        for name, role in roles.items():
            # a drop costs the role that drops at most what a forward does there (it leaves out the transmit): a
            # measurement slower than that sat on another role's time and bounds nothing here
            role.fixed_ns[lab_path.drops_in] = round(min(own, role.fixed_ns["forward"]), 2) \
                if name == dropping else (role.fixed_ns["forward"] if name == SENDER else 0.0)
        fit["drop_point_ns"] = round(drop.y_ns, 2)
    path = PathCost(mode=lab_path.mode, tx_path=lab_path.tx_path, roles=roles, task_role=lab_path.task_role,
                    task_side=lab_path.task_side, task_scale=round(line.scale, 4), fit=fit)
    if drop_mix is not None:
        fit["drop_mix_ns"] = round(drop_mix.point.y_ns, 2)
        predicted = _predicted_mix_ns(path, lab_path.drops_in, drop_mix)
        fit["drop_mix_error"] = round(drop_mix.point.y_ns / predicted - 1, 4)
    return path


def _workers_drop(lab_path) -> bool:
    """Whether the NF's drops happen on a worker role apart from the sender (the AF_XDP paths)."""
    return lab_path.drops_in == "drop_user" and len(lab_path.roles) > 1


def _dropped_frame_time(lab_path, role, line: LineFit, drop: Point, drop_mix: DropMix | None) -> float:
    """The dropping role's time for a frame its NF drops: from the drop-mix point where the workers drop (the drop
    point only bounds it there), else from the drop point."""
    if drop_mix is not None and _workers_drop(lab_path):
        short = max(0.0, role.floor_ns - role.fixed_ns["forward"] - line.scale * drop_mix.point.x_ns)
        return drop_in_mix(drop_mix, role.fixed_ns["forward"], line.scale, short)
    return drop_time(drop.y_ns, drop.x_ns, line.scale)


def _predicted_mix_ns(path, drops_in: str, drop_mix: DropMix) -> float:
    """The fitted path's time per frame for the drop-mix point: how well its drops and forwards add up (on the paths
    the point was not fitted to, a check of the model's mixing)."""
    from xnf.model import predict

    return 1e3 / predict.predict(path, point_load(path, drops_in, drop_mix.point.x_ns, drop_mix.share)).mpps


def point_load(path, drops_in: str, x_ns: float, drop_share: float = 0.0):
    """What a fit point asks of the path: the NF's c_task x_ns on its role, drop_share of the frames dropped."""
    from xnf.model import predict

    fates = {"forward": 1 - drop_share, drops_in: drop_share} if drop_share else {"forward": 1.0}
    return predict.Load(fates, [predict.Part(path.task_role, x_ns, path.task_scale)])


def far_times(path, far: list[tuple[object, float]]) -> dict[str, float]:
    """Per role, what a frame that crosses between the cores takes more at the far placement: the times (0 to
    FAR_MOST_NS) that bring the path's predictions closest to its far measurements, each a point's load and its
    measured time per frame (least squares on the relative error of the rate, as the line). A role's time at the far
    placement (profile.far_path) grows in step with its far time, so each point's role times are taken twice, as
    fitted and with every role FAR_MOST_NS more, and the grid spans the line between (a step as long as the grid's:
    a role time held at predict.MIN_ROLE_NS would not move by a shorter one)."""
    from xnf.model import predict
    from xnf.model.profile import far_path

    if not far:
        return {}
    roles = list(path.roles)
    furthest = far_path(path, {r: FAR_MOST_NS for r in roles})
    base, slope = [], []
    for load, _ in far:
        near, _ = predict.role_times(path, load)
        far_off, _ = predict.role_times(furthest, load)
        base.append([near[r] for r in roles])
        slope.append([(far_off[r] - near[r]) / FAR_MOST_NS for r in roles])
    cores = np.array([path.roles[r].cores for r in roles])
    grid = np.arange(0.0, FAR_MOST_NS + FAR_STEP_NS, FAR_STEP_NS)
    adds = np.stack(np.meshgrid(*[grid] * len(roles), indexing="ij"), axis=-1).reshape(-1, len(roles))
    measured = np.array([y for _, y in far])
    predicted = np.max((np.array(base)[None, :, :] + adds[:, None, :] * np.array(slope)[None, :, :]) / cores,
                       axis=2)
    errors = np.sum((measured[None, :] / predicted - 1) ** 2, axis=1)
    # where the measurements cannot tell times apart (a role that bound no far point), the smallest: the first in
    # the grid's order among those as good as the best but for rounding
    best = adds[int(np.flatnonzero(errors <= errors.min() * (1 + FAR_TIE) + FAR_TIE)[0])]
    return {r: float(best[i]) for i, r in enumerate(roles)}


def _line_points(points: list[Point]) -> list[Point]:
    """The points the line goes through: the cycles series where there is one. taskemu's list walk (the memory
    series) is a chain of dependent loads that the run overlaps with other work in its own way (on XDP 212 ns of it
    measured alone took 128 ns more per frame in the run); fitted together with the cycles, it pulled the line below
    the compute points and every cheap NF was predicted 5-10 % too fast. The memory series stays in the fit's
    quality, per series: how far a memory-bound NF can be off."""
    cycles = [p for p in points if p.series == CYCLES]
    return cycles if len({p.x_ns for p in cycles}) >= 2 else points


def _floor_is_the_nfs_own(lab_path, line: LineFit, drop: Point | None) -> bool:
    """Whose is the floor a cheap NF sits on? A frame the NF drops in user space passes the sender as a forwarded
    one does; if drops went clearly faster than the floor, the floor cannot be the sender's: it is work on the NF's
    own role that its work overlaps with (the xsk ring's transmit)."""
    return bool(line.floor_ns and drop is not None and _workers_drop(lab_path)
                and drop.y_ns < line.floor_ns * (1 - FLOOR_TOLERANCE))


def add_kernel_drop(path, with_sockets) -> None:
    """Gives a user-space path the time of a frame dropped in XDP before it crosses (what a split chain's kernel
    part and offloaded drop rules do): the sender's, as measured on the path that drops in XDP with sockets open."""
    from xnf.model.lab_paths import SENDER

    for name, role in path.roles.items():
        role.fixed_ns["drop_kernel"] = with_sockets.roles[SENDER].fixed_ns["drop_kernel"] if name == SENDER else 0.0

"""How a machine profile is fitted (docs/cost-model.md): the points taskemu and the drop NF are measured at, one
sample of a point on a path, and the profile fitted from the samples. `xnf bench run model-fit` measures them in
interleaved rounds (python/xnf/bench/studies/model_fit.py says what each series is); `xnf advise` makes its quick
fit with the same (python/xnf/model/quick_fit.py)."""

from __future__ import annotations

import statistics
from dataclasses import replace
from pathlib import Path

from xnf import nf_cost
from xnf.lab import placement
from xnf.model import fit, lab_paths, lab_rate, rate_statistic
from xnf.model.profile import Profile

CYCLES = [0, 250, 750, 1500, 3000, 5000]
MEMORY_BYTES = [256 << 10, 16 << 20, 256 << 20]
NODE_BYTES = 64
BASELINE_LABEL = "cycles-0"
DROP_LABEL = "drop"
DROP_MIX_PERCENT = 25
DROP_MIX_LABEL = f"drop-{DROP_MIX_PERCENT}"
BASELINE = {"nf": "taskemu", "rules": "cycles 0\n"}
YARDSTICK_SUBJECT = ("yardstick", None)


def _size(n: int) -> str:
    for unit, shift in (("M", 20), ("K", 10)):
        if n >= 1 << shift:
            return f"{n >> shift}{unit}"
    return str(n)


def points() -> dict[str, tuple[str, lab_rate.NfCase]]:
    """label: (series, the case)."""
    out = {f"cycles-{c}": (fit.CYCLES, lab_rate.NfCase(f"cycles-{c}", "taskemu", f"cycles {c}\n")) for c in CYCLES}
    for size in MEMORY_BYTES:
        label = f"memory-{_size(size)}"
        out[label] = (fit.MEMORY, lab_rate.NfCase(label, "taskemu", "cycles 0\n",
                                                  map_sizes=[f"te_list={size // NODE_BYTES}"]))
    out[DROP_LABEL] = (fit.DROP, lab_rate.NfCase(DROP_LABEL, "drop"))
    out[DROP_MIX_LABEL] = (fit.DROP_MIX, lab_rate.NfCase(DROP_MIX_LABEL, "taskemu",
                                                         f"cycles 0\ndrop {DROP_MIX_PERCENT}\n"))
    return out


def c_task(case: lab_rate.NfCase, folder: Path, frames: int | None = None, repeat: int | None = None) -> dict:
    rules = case.write_rules(folder)
    return nf_cost.measure(case.nf, case.gen_options, rules, frames, repeat, case.map_sizes)


def measure(subject: tuple[str, str | None], seconds: float, tsc_hz: float | None, folder: Path,
            frames: int | None = None, repeat: int | None = None, cost: dict | None = None) -> dict:
    """One sample of a fit: the yardstick's rate, or a point's on a path with its c_task measured beside it (in the
    same round; cost: one measured for the point already, as the quick fit does once per point)."""
    label, key = subject
    if subject == YARDSTICK_SUBJECT:
        return {"point": label, "path": None, "mpps": lab_rate.yardstick(seconds, tsc_hz)}
    case = points()[label][1]
    cost = cost or c_task(case, folder, frames, repeat)
    rate = lab_rate.measure(case, case.nf, lab_paths.find(key).run_options(), seconds, tsc_hz)
    return {"point": label, "path": key, **rate, "native_ns": cost["native_ns_per_frame"],
            "xdp_ns": cost["xdp_ns_per_frame"]}


def subjects(keys: list[str], labels: list[str]) -> list[tuple[str, str | None]]:
    """What a fit measures in each round: the yardstick, then every point on every path."""
    return [YARDSTICK_SUBJECT] + [(label, key) for label in labels for key in keys]


def _found(samples: list[dict], field: str, **match) -> list[float]:
    found = [s[field] for s in samples if all(s[k] == v for k, v in match.items())]
    if not found:
        what = ", ".join(f"{k} {v}" for k, v in match.items())
        raise SystemExit(f"model-fit: no measurement of {what} at the placement kept: more --rounds, or "
                         f"--placement all")
    return found


def _median(samples: list[dict], field: str, **match) -> float:
    return statistics.median(_found(samples, field, **match))


def _rate(samples: list[dict], statistic: str, **match) -> float:
    """The rate (Mpps) of the rounds that match, as the statistic takes it (python/xnf/model/rate_statistic.py)."""
    return rate_statistic.of(_found(samples, "mpps", **match), statistic)


def _left_out(samples: list[dict], label: str, key: str) -> bool:
    """A task point or the drop mix the path has no measurement of at the placement kept (every one of its rounds
    straddled the host moving the vCPUs, say) is left out of the path's fit. The baseline and the drop point are
    not: the line's fixed time and the drop's come from them (_median says what to do)."""
    if label in (BASELINE_LABEL, DROP_LABEL):
        return False
    return not any(s["point"] == label and s["path"] == key for s in samples)


def _borrow_undetermined_scales(paths: dict, inputs: dict) -> None:
    """A path whose points all sat on its other role's time (hybrid's worker on the xsk ring, slower than the NF's
    heaviest point in XDP) tells nothing of the NF's scale: its fit finds none above zero. It takes the scale of a
    path with the NF on the same role and side (xdp for hybrid), and says so; without one it is marked undetermined."""
    for key, path in paths.items():
        if path.task_scale > 0:
            continue
        donor = next((k for k, p in paths.items() if p.task_scale > 0 and p.task_side == path.task_side
                      and p.task_role == path.task_role), None)
        if donor is None:
            path.fit["scale_undetermined"] = True
            continue
        task_points, drop, load, mix = inputs[key]
        paths[key] = fit.fit_path(lab_paths.find(key), task_points, drop, load_ns=load, drop_mix=mix,
                                  scale=paths[donor].task_scale)
        paths[key].fit["scale_from"] = donor


def fit_profile(samples: list[dict], keys: list[str], env: dict, placement_kept: str = placement.ALL,
                labels: list[str] | None = None,
                statistic: str = rate_statistic.DEFAULT) -> tuple[Profile, list[dict]]:
    """The profile from the rounds' rates as statistic takes them (of the measurements at placement_kept; c_task
    from their medians), and the table it was fitted on. labels: the points the run measured (by default those in
    samples; a placement kept may hold fewer)."""
    measured = set(labels or (s["point"] for s in samples)) | {BASELINE_LABEL, DROP_LABEL}
    series = {label: s for label, (s, _) in points().items() if label in measured}
    table = []
    paths, inputs, notes = {}, {}, {}
    for key in keys:
        side = lab_paths.find(key).task_side + "_ns"
        base = _median(samples, side, point=BASELINE_LABEL)
        rows = []
        left_out = [label for label in series if _left_out(samples, label, key)]
        for label in series:
            if label in left_out:
                continue
            mpps = _rate(samples, statistic, point=label, path=key)
            x = _median(samples, side, point=label) - base
            bound = any(s.get("generator_limited") for s in samples if s["point"] == label and s["path"] == key)
            rows.append({"path": key, "point": label, "series": series[label], "x_ns": round(x, 2),
                         "mpps": round(mpps, 4), "y_ns": round(1e3 / mpps, 2), "generator_bound": bound})
        table += rows
        task_points = [fit.Point(r["x_ns"], r["y_ns"], r["series"]) for r in rows
                       if r["series"] in fit.TASK_SERIES]
        drop = next(fit.Point(r["x_ns"], r["y_ns"], fit.DROP) for r in rows if r["series"] == fit.DROP)
        mix = next((fit.DropMix(fit.Point(r["x_ns"], r["y_ns"], fit.DROP_MIX), DROP_MIX_PERCENT / 100)
                    for r in rows if r["series"] == fit.DROP_MIX), None)
        load = statistics.median(s["generator_ns_per_packet"] for s in samples
                                 if s["path"] == key and s.get("generator_ns_per_packet"))
        inputs[key] = (task_points, drop, load, mix)
        paths[key] = fit.fit_path(lab_paths.find(key), task_points, drop, load_ns=load, drop_mix=mix)
        notes[key] = {"points_left_out": left_out,
                      # their rates are xnf-gen's: the path is at least that fast there (docs/cost-model.md)
                      "generator_bound_points": [r["point"] for r in rows if r["generator_bound"]]}
    _borrow_undetermined_scales(paths, inputs)
    for key, said in notes.items():
        paths[key].fit.update({name: points for name, points in said.items() if points})
    kernel_drop = paths.get(lab_paths.kernel_drop_with_sockets(paths))
    for key, path in paths.items():
        if kernel_drop and path.task_side == "native":
            fit.add_kernel_drop(path, kernel_drop)
    baseline = {**BASELINE, "native_ns": round(_median(samples, "native_ns", point=BASELINE_LABEL), 2),
                "xdp_ns": round(_median(samples, "xdp_ns", point=BASELINE_LABEL), 2)}
    yard = _rate(samples, statistic, point=YARDSTICK_SUBJECT[0])
    rounds = 1 + max(s["round"] for s in samples)
    profile = Profile(
        name=f"this machine, {env['started_utc'][:10]}", source="measured",
        description=f"fitted by model-fit from taskemu ({rounds} rounds, {rate_statistic.WHAT[statistic]}"
                    + ("" if placement_kept == placement.ALL
                       else f" of the measurements at the {placement_kept} placement") + ")",
        platform=f"veth lab: {lab_paths.SENDER_WHAT}; {lab_paths.WORKER_WHAT}; 64-byte UDP frames",
        baseline=baseline, paths=paths, yardsticks={lab_rate.YARDSTICK_KEY: round(yard, 4)}, environment=env,
        statistic=statistic)
    return profile, table


def far_adds_ns(samples: list[dict], profile: Profile, table: list[dict]) -> dict[str, dict[str, float] | None]:
    """Per path, what the far placement adds to each role's time for a frame that crosses between the cores
    (fit.far_times), from the path's far measurements of the points it was fitted on (each with its point's c_task
    in the fit's table); None where it has none. Times per role and not a ratio of rates: on the live path the far
    level added about 80 ns to a cheap frame's time, where the sender binds, and nothing measurable to a dear
    one's, where the worker does (research/cost-model-notebook.md)."""
    out = {}
    for key, path in profile.paths.items():
        rows = {r["point"]: r for r in table if r["path"] == key}
        drops_in = lab_paths.find(key).drops_in
        far = [(_point_load(path, drops_in, rows[s["point"]]), 1e3 / s["mpps"]) for s in samples
               if s.get("path") == key and s.get("placement") == placement.FAR and s["point"] in rows]
        out[key] = {r: round(ns, 1) for r, ns in fit.far_times(path, far).items()} if far else None
    return out


def _point_load(path, drops_in: str, row: dict):
    share = {fit.DROP: 1.0, fit.DROP_MIX: DROP_MIX_PERCENT / 100}.get(row["series"], 0.0)
    return fit.point_load(path, drops_in, row["x_ns"], share)


def profile_from(samples: list[dict], env: dict, which: str = placement.ALL,
                 statistic: str = rate_statistic.DEFAULT, study: str = "model-fit") -> tuple[Profile, list[dict],
                                                                                              list[str]]:
    """The profile from a fit's samples (measured now or an earlier file's) at the placement kept (which), with
    the far level's times where it keeps the near one; the table it was fitted on; the points measured."""
    keys = list(dict.fromkeys(s["path"] for s in samples if s["path"]))
    labels = list(dict.fromkeys(s["point"] for s in samples if s["path"]))
    kept, placed = placement.keep(samples, which, study)
    profile, table = fit_profile(kept, keys, env, placed["kept"], labels, statistic)
    profile = replace(profile, placement=placed)
    if profile.near_level:
        profile = replace(profile, placement={**placed, "far_adds_ns": far_adds_ns(samples, profile, table)})
    return profile, table, labels

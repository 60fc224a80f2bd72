"""`xnf advise`: where should this NF run for this mix? Every data path of the profile, and what can be composed from
them (a chain split between XDP and user space at each point, a user-space NF whose drop rules move into XDP), is
predicted by the cost model from the NF's own c_task on the mix; the one that can be counted on for the most is
recommended (its prediction less how far its path fell short of its predictions in the profile's check), with what
decides it and how sure the profile's measured error lets us be.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from xnf import chain, kernel
from xnf.errors import XnfError
from xnf.lab import placement
from xnf.model import lab_paths
from xnf.model.lab_paths import run_options
from xnf.model.segments import SegmentMix, gbit_s
from xnf.model.predict import Load, Part, Prediction, predict
from xnf.model.profile import PathCost, Profile
from xnf.model.task import NfCost, TaskCost

# A path the profile's validation (model-check) did not measure is taken as this far off (the aim is 10 %).
UNVALIDATED_ERROR = 0.15
KERNEL_SIDE, USER_SIDE = "xdp", "native"
# Below this a native build's time is timer noise (the drop NF: about 1 ns), and a ratio to it says nothing.
RATIO_FLOOR_NS = 5.0


@dataclass
class Candidate:
    label: str                 # how the advice names it
    path_key: str              # the profile's path it is built on
    nf: str                    # the NF as `xnf run` takes it (a split chain names its members' places)
    options: list[str]         # the rest of `xnf run`'s options (mode, transmit path, offload)
    load: Load
    notes: list[str] = field(default_factory=list)   # what the prediction assumes beyond the profile
    # Built from a path plus XDP work on the sender (a split chain, offloaded drops): the profile's check measures
    # whole NFs on plain paths, so nothing measured how well such a composition is predicted.
    composed: bool = False


def counted_on(mpps: float, shortfall: float) -> float:
    """The rate a path can be counted on for: its prediction less how far the path fell short of its predictions in
    the profile's check (shortfall, as predicted / measured - 1). The pick goes by it, not by the bare prediction: on
    veth the AF_XDP paths' rates move between two levels that hold for minutes, so a path predicted a few per cent
    ahead but measured 15 % below its predictions is no safer a bet than one predicted a little behind and 3 % below
    (docs/cost-model.md, "The pick")."""
    return mpps / (1 + shortfall)


def shortfall(errors: list[float]) -> float:
    """How far below its predictions a path fell in the check, from each case's error (predicted / measured - 1, the
    measured rate the median of the case's rounds, what the path typically did, whatever the fit's statistic): the
    upper quartile of the errors, and 0 where the path beat its predictions in three cases of four. One-sided on
    purpose: a path the model predicts too low is a safe bet at its prediction (the median of the errors' sizes, either
    way, counted XDP down by predictions it had beaten in every case)."""
    upper = errors[0] if len(errors) == 1 else statistics.quantiles(errors, n=4, method="inclusive")[2]
    return max(0.0, upper)


@dataclass
class Ranked:
    candidate: Candidate
    prediction: Prediction
    shortfall: float           # how far it may fall short of its prediction (candidate_shortfall())
    spread: float              # the size of the errors to expect either way (candidate_spread())
    # A segment mix: the TCP payload each frame (or skb) the candidate's hook sees carries; None for a frame mix.
    payload_per_unit: float | None = None

    @property
    def counted_mpps(self) -> float:
        return counted_on(self.prediction.mpps, self.shortfall)

    @property
    def counted(self) -> float:
        """What the pick goes by: the rate counted on in Mpps, or for a segment mix the TCP payload in Gbit/s (a
        path that sees a segment whole carries a frame's worth of work for 45 frames' payload)."""
        if self.payload_per_unit is None:
            return self.counted_mpps
        return gbit_s(self.counted_mpps, self.payload_per_unit)

    @property
    def predicted(self) -> float:
        """The bare prediction in the unit `counted` is in."""
        if self.payload_per_unit is None:
            return self.prediction.mpps
        return gbit_s(self.prediction.mpps, self.payload_per_unit)


def _drop_fate(path: PathCost) -> str:
    return "drop_kernel" if path.task_side == KERNEL_SIDE else "drop_user"


def _side_ns(cost: NfCost, side: str) -> float:
    return cost.xdp_ns if side == KERNEL_SIDE else cost.native_ns


def _local_note(cost: NfCost) -> list[str]:
    share = cost.local_share
    return [f"{share:.0%} of the frames go to the local stack: their stack work is not in the model, they are "
            "costed as forwarded"] if share else []


def whole_nf(key: str, path: PathCost, nf: str, cost: NfCost) -> Candidate:
    drop = cost.drop_share
    load = Load(fates={"forward": 1 - drop, _drop_fate(path): drop},
                parts=[Part(path.task_role, _side_ns(cost, path.task_side), path.task_scale)])
    return Candidate(key, key, nf, run_options(path.mode, path.tx_path), load, _local_note(cost))


def _kernel_scale(profile: Profile) -> float:
    """How XDP work measured by xnf cost translates into the run on the sender: from a path whose NF is in XDP."""
    kernel = [p for p in profile.paths.values() if p.task_side == KERNEL_SIDE]
    return kernel[0].task_scale if kernel else 1.0


def _survives(members: list[NfCost]) -> float:
    share = 1.0
    for m in members:
        share *= 1 - m.drop_share
    return share


def split_chain(key: str, path: PathCost, members: list[NfCost], at: int, kernel_scale: float) -> Candidate:
    """members[:at] in XDP on the sender, the rest in the path's workers; frames the kernel part drops never cross."""
    kernel, user = members[:at], members[at:]
    reach = _survives(kernel)
    user_drop = reach * (1 - _survives(user))
    sender = next(name for name in path.roles if name != path.task_role)
    load = Load(fates={"forward": reach - user_drop, "drop_kernel": 1 - reach, "drop_user": user_drop},
                parts=[Part(sender, sum(m.xdp_ns for m in kernel), kernel_scale),
                       Part(path.task_role, sum(m.native_ns for m in user), path.task_scale, reach)])
    nf = chain.PREFIX + ",".join([f"{m.nf}@{chain.KERNEL_PLACE}" for m in kernel] +
                                 [f"{m.nf}@{path.mode}" for m in user])
    options = ["--tx-path", path.tx_path] if path.tx_path else []
    notes = ["each member's c_task is measured alone on the whole mix; in the chain it sees what the members "
             "before it sent on"]
    return Candidate(f"split {'+'.join(m.nf for m in kernel)}@xdp | {'+'.join(m.nf for m in user)}@{key}", key, nf,
                     options, load, notes, composed=True)


def offload(key: str, path: PathCost, nf: str, cost: NfCost, kernel_scale: float) -> Candidate:
    """The NF in the path's workers, its hot drop rules in an XDP pre-filter on the sender: dropped frames never
    cross. The pre-filter looks every frame up by the key the NF's drop rules match on, as the NF's own XDP build
    does: its time is costed as the NF's XDP time, on every frame."""
    drop = cost.drop_share
    sender = next(name for name in path.roles if name != path.task_role)
    load = Load(fates={"forward": 1 - drop, "drop_kernel": drop},
                parts=[Part(sender, cost.xdp_ns, kernel_scale),
                       Part(path.task_role, cost.native_ns, path.task_scale, 1 - drop)])
    notes = ["assumes every dropped frame hits a drop rule hot enough to be offloaded (--offload-above)",
             f"the pre-filter's lookup on the {sender} is costed as the NF's own XDP time"]
    return Candidate(f"offload {key}", key, nf, run_options(path.mode, path.tx_path) + ["--offload-drops"], load,
                     notes, composed=True)


def weighs_offload(profile: Profile) -> bool:
    """Whether the profile can price a pre-filter of drop rules. A quick profile cannot: it measures no drop mix (a
    busy worker's saving per dropped frame), and in its held-out check the offload it picked for both firewalls under
    attack forwarded 0.87-0.89 of the fastest (docs/results.md, "The quick profile's own accuracy")."""
    return not profile.quick


def unweighed_paths(profile: Profile) -> list[dict]:
    """The lab's paths at another hook than any the profile measured (a profile fitted before tc existed), each with
    why. Paths a quick fit leaves out are said once, with its confidence."""
    from xnf.lab import paths

    hooks = {lab_paths.find(k).hook for k in profile.paths if k in lab_paths.PATHS}
    return [{"label": key, "why": NO_SKB_PATH_FITTED} for key, p in paths.carrying().items()
            if key not in profile.paths and p.hook not in hooks]


NO_SKB_PATH_FITTED = ("the profile was fitted without the skb path (tc): a new fit weighs it ('xnf bench run "
                      "model-fit --paths tc' adds it, or a quick fit)")
# Said with every answer that weighs tc: what a frame mix cannot show.
SKB_PATH_SEGMENTS = ("tc is weighed per frame, as the lab floods it; in front of containers a local stack's TCP "
                     "segment of 64 KiB crosses tc whole and is cut into frames before XDP: there tc carries bulk "
                     "TCP at Linux's speed and XDP a sixth of it (docs/results.md, 'The skb path'); a mix that "
                     "states its segments (--mix \"--segment 65160\") is weighed so")

OFFLOAD_UNWEIGHED = ("the quick profile measures no drop mix, so it cannot price drop rules offloaded to the kernel "
                     "(a full fit, 'xnf bench run model-fit', weighs them)")


def refused_here(key: str) -> str | None:
    """Why this kernel cannot run the profile's path key (a profile fitted on a machine whose kernel gave more), or
    None where it can."""
    missing = kernel.missing(lab_paths.find(key).needs) if key in lab_paths.PATHS else []
    return "; ".join(kernel.refusal(name) for name in missing) or None


def unrunnable_paths(profile: Profile) -> list[dict]:
    """The profile's paths this kernel cannot run, each with why: never recommended here."""
    return [{"label": key, "why": why} for key in profile.paths if (why := refused_here(key))]


def candidates(profile: Profile, nf: str, task: TaskCost, drop_rules: bool) -> list[Candidate]:
    out = []
    kernel_scale = _kernel_scale(profile)
    for key, path in profile.paths.items():
        if refused_here(key):
            continue
        out.append(whole_nf(key, path, nf, task.whole))
        user_space = path.task_side == USER_SIDE and len(path.roles) > 1
        if user_space:
            out += [split_chain(key, path, task.members, at, kernel_scale) for at in range(1, len(task.members))]
        if user_space and drop_rules and task.whole.drop_share > 0 and weighs_offload(profile):
            out.append(offload(key, path, nf, task.whole, kernel_scale))
    return out


def path_shortfall(profile: Profile, key: str) -> float:
    """How far the path fell short of its predictions in the profile's validation (its shortfall; an older profile
    stores only the median of the errors' sizes: that). A path the validation did not measure gets
    UNVALIDATED_ERROR, not the other paths' figure: how well a line describes one path says nothing about another
    (the busy-poll path's rms was 6.5 % where the others' were 0.2-1.4 %)."""
    checked = _validated(profile, key)
    return checked.get("shortfall", checked.get("median_error", UNVALIDATED_ERROR))


def path_spread(profile: Profile, key: str) -> float:
    """The median size of the path's prediction errors in the validation, either way: how sure a lead can be."""
    return _validated(profile, key).get("median_error", UNVALIDATED_ERROR)


def candidate_shortfall(profile: Profile, candidate: Candidate) -> float:
    """How far the candidate may fall short of its prediction: its path's shortfall, and for a composed candidate
    at least UNVALIDATED_ERROR, as for a path the check did not measure. (Without the floor, a split onto busy-poll
    sockets, whose path had fallen 8 % short as a whole NF, was picked 1 % ahead of the split onto live frames and
    forwarded half of it in an advisor check: research/cost-model-notebook.md.)"""
    return _floored(candidate, path_shortfall(profile, candidate.path_key))


def candidate_spread(profile: Profile, candidate: Candidate) -> float:
    """The size of the errors to expect of the candidate's prediction either way, floored as candidate_shortfall is."""
    return _floored(candidate, path_spread(profile, candidate.path_key))


def _floored(candidate: Candidate, path_figure: float) -> float:
    """A figure the check measured on the candidate's path, at least UNVALIDATED_ERROR for a composition."""
    return max(path_figure, UNVALIDATED_ERROR) if candidate.composed else path_figure


def _validated(profile: Profile, key: str) -> dict:
    """What the profile's validation measured on the path ({} if it did not measure it)."""
    return profile.validation.get("paths", {}).get(key, {})


def rank(profile: Profile, nf: str, task: TaskCost, drop_rules: bool, cores: int | None = None,
         skipped: list[dict] | None = None, segments: SegmentMix | None = None) -> list[Ranked]:
    """Every candidate that fits in `cores`, the one that can be counted on for most first; those that do not fit go
    to skipped, with why. A segment mix ranks by the TCP payload each can carry (python/xnf/model/segments.py)."""
    ranked = []
    for c in candidates(profile, nf, task, drop_rules):
        try:
            per_unit = segments.payload_per_unit(lab_paths.find(c.path_key).hook) if segments else None
            ranked.append(Ranked(c, predict(profile.path(c.path_key), c.load, cores), candidate_shortfall(profile, c),
                                 candidate_spread(profile, c), per_unit))
        except XnfError as err:
            if skipped is None:
                raise
            skipped.append({"label": c.label, "why": str(err)})
    if not ranked:
        raise XnfError("no path fits: " + "; ".join(f"{s['label']}: {s['why']}" for s in skipped or []))
    return sorted(ranked, key=lambda r: -r.counted)


def confidence(ranked: list[Ranked], judged_on: str = placement.ALL) -> tuple[str, str]:
    """(level, why) from the lead of the best over the next against the size of the errors to expect of both
    (candidate_spread: a lead smaller than the scatter is no lead). judged_on: the placement the profile's check kept
    (a check judged on its near measurements expects smaller errors than the host will give)."""
    counted = [(r.counted, r.spread) for r in ranked]
    level = level_of(counted)
    if len(ranked) < 2:
        return level, "it is the only path"
    best, second = ranked[0], ranked[1]
    lead, _ = _lead_and_band(counted)
    composed = best.candidate.composed or second.candidate.composed
    judged = {placement.ALL: "", placement.EACH: ", each measurement judged at the placement it ran at"}.get(
        judged_on, f", judged on its measurements at the {judged_on} placement")
    why = (f"{best.candidate.label} can be counted on for {lead:.0%} more than {second.candidate.label}; the "
           f"errors to expect are {best.spread:.0%} and {second.spread:.0%} (the profile's check's median on these "
           f"paths{judged}" + (f", at least {UNVALIDATED_ERROR:.0%} for a split or an offload, which it did not "
                               f"measure)" if composed else ")"))
    return level, why + (": too close to call, measure them (--verify)" if level == "low" else "")


def _lead_and_band(counted: list[tuple[float, float]]) -> tuple[float, float]:
    """The best's lead over the next (on the rates counted on) and the band of errors to expect of the two."""
    (best, best_spread), (second, second_spread) = counted[:2]
    return best / second - 1, best_spread + second_spread


def level_of(counted: list[tuple[float, float]]) -> str:
    """The confidence in the first of candidates given best first as (rate counted on, error to expect): high when
    its lead over the next is over twice the sum of their expected errors, medium over once; high when alone."""
    if len(counted) < 2:
        return "high"
    lead, band = _lead_and_band(counted)
    if lead > 2 * band:
        return "high"
    return "medium" if lead > band else "low"


def far_mpps(profile: Profile, r: Ranked) -> float | None:
    """The candidate's rate at the far placement, when the profile describes the near one (Profile.near_level) and
    measured the candidate's path at the far one too (docs/methodology.md, "Where the host puts the two vCPUs")."""
    key = r.candidate.path_key
    if profile.far_adds_ns(key) is None:
        return None
    return predict(profile.at_placement(key, placement.FAR), r.candidate.load, sum(r.prediction.cores.values())).mpps


def _far_placement(profile: Profile, best: Ranked) -> str | None:
    """What the host's placing the vCPUs apart costs the pick."""
    far = far_mpps(profile, best)
    if far is None:
        return None
    counts = profile.placement.get("measurements", {})
    share = counts.get(placement.FAR, 0) / max(sum(counts.values()), 1)
    return (f"these rates are for the two cores sharing a cache (the profile describes them there); where the host "
            f"put them apart ({share:.0%} of the fit's measurements), {best.candidate.path_key} would forward "
            f"{far:.2f} Mpps")


def reasons(ranked: list[Ranked], task: TaskCost, profile: Profile) -> list[str]:
    """A few lines on what decides it: I/O or the NF's work on the busiest role, the mix, the NF's two sides."""
    best = ranked[0]
    p, path = best.prediction, profile.path(best.candidate.path_key)
    role = path.roles[p.bottleneck]
    lines = [f"the limit is the {p.bottleneck} ({role.what or p.bottleneck}): {p.role_ns[p.bottleneck]:.0f} ns per "
             f"frame, {p.io_share:.0%} of it the data path's own work (c_IO), {1 - p.io_share:.0%} the NF's (c_task)"]
    w = task.whole
    native_total, xdp_total = w.native_ns + task.baseline["native_ns"], w.xdp_ns + task.baseline["xdp_ns"]
    line = (f"the NF costs {w.native_ns:+.0f} ns natively and {w.xdp_ns:+.0f} ns in XDP over the baseline "
            f"({task.baseline['nf']})")
    if native_total >= RATIO_FLOOR_NS:
        line += f"; its XDP build takes {xdp_total / native_total:.1f}x the native one's time"
    lines.append(line)
    if w.drop_share:
        lines.append(f"the mix: {w.drop_share:.0%} of frames are dropped; where they are dropped decides how much "
                     "of the user-space path's receive they take")
    kernel = next((r for r in ranked if profile.path(r.candidate.path_key).task_side == KERNEL_SIDE
                   and r.candidate.label == r.candidate.path_key), None)
    user = next((r for r in ranked if profile.path(r.candidate.path_key).task_side == USER_SIDE
                 and r.candidate.label == r.candidate.path_key), None)
    unit = rate_unit(best)
    faster = max(ranked, key=lambda r: r.predicted)
    if faster is not best:
        lines.append(f"{faster.candidate.label} is predicted faster ({faster.predicted:.2f} against "
                     f"{best.predicted:.2f} {unit}), but {_why_counted_down(faster)}: "
                     f"{best.candidate.label} can be counted on for more ({best.counted:.2f} against "
                     f"{faster.counted:.2f} {unit})")
    far = _far_placement(profile, best)
    if far:
        lines.append(far)
    if kernel and user:
        lines.append(f"best in the kernel: {kernel.candidate.label} {kernel.predicted:.2f} {unit}; best in user "
                     f"space: {user.candidate.label} {user.predicted:.2f} {unit}")
    return lines + best.candidate.notes


def rate_unit(r: Ranked) -> str:
    return "Mpps" if r.payload_per_unit is None else "Gbit/s of TCP payload"


def _segment_reasons(segments: SegmentMix, ranked: list[Ranked]) -> list[str]:
    """What a segment mix changes: per skb at tc, per frame at XDP, and what the model leaves out."""
    first = {lab_paths.find(r.candidate.path_key).hook: r for r in reversed(ranked)}
    lines = [f"the mix: {segments.describe()}"]
    if len(first) > 1:
        lines.append("per segment, " + "; ".join(
            f"{r.candidate.label} sees {segments.frames_per_segment(hook)} "
            f"{'skb' if hook == 'tc' else 'frames'} (predicted {r.prediction.mpps:.2f} M of them per second)"
            for hook, r in first.items()))
    return lines + [SEGMENTS_UNPRICED]


# Said with every answer on a segment mix: what the model leaves out, and which way that leans.
SEGMENTS_UNPRICED = ("not priced: the work per byte (a veth copies each cloned TCP skb to run XDP on it, and the "
                     "sender's stack cuts segments in software once XDP has turned its offload off), which falls on "
                     "the XDP paths alone; the goodput the containers' own stacks allow caps every path ('--verify' "
                     "measures it with iperf3)")


def _why_counted_down(r: Ranked) -> str:
    if r.candidate.composed:
        return (f"it is counted {r.shortfall:.0%} down: the profile's check did not measure such a composition, only "
                "whole NFs on plain paths")
    return f"its path fell {r.shortfall:.0%} short of its predictions in the profile's check"


def advice(profile: Profile, nf: str, task: TaskCost, drop_rules: bool, cores: int | None = None,
           segments: SegmentMix | None = None) -> dict:
    """The whole answer, as JSON-ready data: every candidate's prediction, the pick, the reasons, the confidence.
    segments: the mix is bulk TCP from a local stack (python/xnf/model/segments.py)."""
    skipped: list[dict] = unweighed_paths(profile) + unrunnable_paths(profile)
    if segments and not any(lab_paths.find(k).hook == "tc" for k in profile.paths if k in lab_paths.PATHS):
        raise XnfError(f"the mix is bulk TCP in segments of {segments.payload} bytes, whose best path is likely the "
                       "skb path (tc), and the profile never weighed tc: fit it in ('xnf bench run model-fit --paths "
                       "tc', or a quick fit: 'xnf bench run model-fit --quick'), then ask again")
    if drop_rules and task.whole.drop_share > 0 and not weighs_offload(profile):
        skipped.append({"label": "offload (--offload-drops)", "why": OFFLOAD_UNWEIGHED})
    ranked = rank(profile, nf, task, drop_rules, cores, skipped, segments)
    weighs_tc = any(lab_paths.find(k).hook == "tc" for k in profile.paths if k in lab_paths.PATHS)
    mix_lines = _segment_reasons(segments, ranked) if segments else ([SKB_PATH_SEGMENTS] if weighs_tc else [])
    level, why = confidence(ranked, profile.validation.get("placement", placement.ALL))
    answer = {
        "nf": nf, "profile": {"name": profile.name, "source": profile.source, "platform": profile.platform,
                              "scale": profile.scale, "statistic": profile.statistic, "quick": profile.quick,
                              **({"host": profile.host} if profile.host else {})},
        "task": {"native_ns_over_baseline": round(task.whole.native_ns, 1),
                 "xdp_ns_over_baseline": round(task.whole.xdp_ns, 1), "baseline": task.baseline,
                 "verdicts": task.whole.verdicts, "drop_share": round(task.whole.drop_share, 4),
                 "sessions": task.sessions, "members": [{"nf": m.nf, "native_ns_over_baseline": round(m.native_ns, 1),
                              "xdp_ns_over_baseline": round(m.xdp_ns, 1), "drop_share": round(m.drop_share, 4)}
                             for m in task.members]},
        "recommendation": {"label": ranked[0].candidate.label, "run": ["xnf", "run", ranked[0].candidate.nf,
                                                                         *ranked[0].candidate.options],
                           "confidence": level, "why": why},
        "reasons": reasons(ranked, task, profile) + mix_lines,
        "unit": rate_unit(ranked[0]),
        **({"segments": {"payload": segments.payload, "frame": segments.frame,
                         "ip_version": segments.ip_version}} if segments else {}),
        "candidates": [_row(r, far_mpps(profile, r)) for r in ranked],
        "skipped": skipped,
    }
    bound = sorted(k for k, p in profile.paths.items() if p.fit.get("generator_bound_points"))
    if bound:
        lower_confidence(answer, "low", f"the profile's rates of {', '.join(bound)} were the generator's at some points "
                         "(it sent slower than those paths forward: a kernel without live frames, docs/kernels.md): "
                         "they are at least that fast there, and may win by more than predicted")
    unknown = sorted(k for k, p in profile.paths.items() if p.fit.get("scale_undetermined"))
    if unknown:
        lower_confidence(answer, "low", f"the profile could not tell what the NF's work costs on {', '.join(unknown)} "
                         "(every point sat on the other role's time, and no path ran the NF on the same role)")
    if profile.quick:
        lower_confidence(answer, "medium", f"the profile is a quick fit ({len(profile.paths)} paths, three rounds): the "
                         "paths it did not measure are not weighed ('xnf bench run model-fit' refines it, about 40 "
                         "minutes)")
    return answer


LEVELS = ("low", "medium", "high")


def lower_confidence(answer: dict, at_most: str, why: str) -> None:
    """The answer's confidence brought down to at_most (if it was above), with why among its reasons."""
    rec = answer["recommendation"]
    if LEVELS.index(rec["confidence"]) > LEVELS.index(at_most):
        rec["confidence"] = at_most
    rec["why"] += f"; {why}"


def _row(r: Ranked, far: float | None) -> dict:
    p = r.prediction
    return {"label": r.candidate.label, "path": r.candidate.path_key, "mpps": round(p.mpps, 3),
            "far_mpps": round(far, 3) if far is not None else None,
            "shortfall": round(r.shortfall, 3), "spread": round(r.spread, 3), "counted_mpps": round(r.counted_mpps, 3),
            "bottleneck": p.bottleneck, "cores": p.cores,
            "ns_per_frame": {k: round(v, 1) for k, v in p.role_ns.items()},
            "cpu_ns_per_frame": round(p.cpu_ns_per_frame, 1), "io_share": round(p.io_share, 3),
            "run": ["xnf", "run", r.candidate.nf, *r.candidate.options], "notes": r.candidate.notes,
            **({"gbit_s": round(r.predicted, 2), "counted_gbit_s": round(r.counted, 2),
                "payload_per_unit": round(r.payload_per_unit, 1)} if r.payload_per_unit is not None else {})}

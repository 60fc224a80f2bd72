"""A machine profile: what each data path costs per frame on one machine, the c_IO of the cost model.

A profile is fitted from a taskemu sweep (`xnf bench run model-fit`, python/xnf/model/fit.py) or written by hand
from published figures (python/xnf/model/profiles/), and says which. It is JSON, one file:

  paths      one entry per data path ("xdp", "afxdp/live", "afxdp/xsk", "hybrid/live", ...): the mode and transmit
             path to run, and its work split by role. A role is the cores that do one kind of work (on the veth lab:
             "sender", core 0, where the generator and the kernel's receive of what it sends run; "worker", core 1,
             where the AF_XDP workers run). Each role has a fixed time per frame for each fate a frame can have, and
             the path names the role the NF runs on, which of `xnf cost`'s two times (xdp or native) it costs there,
             and the scale from that time to the time it takes in the run.
  baseline   the NF whose cost is the zero of c_task (taskemu spending no cycles): an NF's c_task is what `xnf cost`
             measures for it less what it measures for the baseline, on the same machine.
  yardsticks rates measured in the same run as the fit (Mpps), so that a profile can be scaled to the machine of
             the day (machines differ by up to 2.6x between sessions here): `Profile.scaled`.
  statistic  which of each point's rounds the fit took as its rate: "best" or "median"
             (python/xnf/model/rate_statistic.py); the profile's checks take the same of theirs.
  quick      true for a quick fit (python/xnf/model/quick_fit.py: lab_paths.quick_paths(), three points, three rounds), which
             `xnf advise` makes on first use; a full fit refines it.
  host       a quick fit's steadiness: whether the host was steady, the yardstick's rounds and spread, the share of
             each core other programs took while the lab was idle, the attempts made. An unsteady one is never
             installed.
  validation how far the profile's predictions were from measured RFC 2544 rates (`xnf bench run model-check`),
             overall and per path: median_error and max_error (sizes, either way), within_10_percent, and shortfall
             (how far below its predictions the path's median rates fell: advisor.shortfall). The advisor counts on
             a prediction less its path's shortfall and weighs its confidence by the median errors.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from xnf import say, user_data, user_files
from xnf.errors import XnfError
from xnf.lab import placement
from xnf.model import rate_statistic

FORMAT = 1
# What can happen to a frame, as far as the data path's own cost goes: sent on, dropped by an XDP program, or
# dropped by an NF in user space (after the frame crossed to the workers).
FATES = ("forward", "drop_kernel", "drop_user")
# The fates of a frame that crosses from the core that received it to the other (an XDP drop stays where it was
# received): what the host's placing the two vCPUs far apart makes dearer (Profile.at_placement).
CROSSING_FATES = ("forward", "drop_user")
SIDES = ("xdp", "native")
SOURCES = ("measured", "published")
# The two kinds of a path's fixed times a calibration scales apart: a forwarded frame's, a dropped frame's.
FORWARD_TIMES, DROP_TIMES = "forward", "drop"
# And the path's scale from xnf cost's time to the run's (per path calibration measures its slope again).
TASK_SCALE = "task_scale"
PUBLISHED_DIR = Path(__file__).parent / "profiles"


def default_path() -> Path:
    """Where `model-fit` installs the profile it fits and `xnf advise` looks first: XNF_PROFILE, else the user's
    data folder (beside the NFs that `xnf build` makes)."""
    if os.environ.get("XNF_PROFILE"):
        return Path(os.environ["XNF_PROFILE"])
    return user_data.data_dir() / "profile.json"


def quick_path() -> Path:
    """Where `model-fit --quick` installs its profile: `xnf advise` falls back on it when no full fit is installed
    (beside XNF_PROFILE when that is set, so a test's profiles stay in its own folder)."""
    return default_path().with_name("profile-quick.json")


def install(profile: "Profile") -> Path:
    """Writes the profile where `xnf advise` looks: a quick fit as the quick profile, a full one as the profile
    (a full fit makes the quick one needless: it is removed)."""
    where = quick_path() if profile.quick else default_path()
    where.parent.mkdir(parents=True, exist_ok=True)
    where.write_text(profile.to_json())
    if not profile.quick:
        quick_path().unlink(missing_ok=True)
    say.info(f"profile installed as {where} (xnf advise reads it)")
    return where


def installed() -> Path | None:
    """The profile `xnf advise` takes when none is named: the full fit's, else the quick one's, else none."""
    return next((p for p in (default_path(), quick_path()) if p.exists()), None)


@dataclass
class Role:
    cores: int
    fixed_ns: dict[str, float]           # fate -> the path's own time per frame on one of these cores
    spins: bool = False                  # busy-polls: the cores are taken whatever the rate (c_busy)
    load_ns: float = 0.0                 # the part of fixed_ns that is the traffic generator's, not the DUT's
    what: str = ""                       # what runs there, for people
    # A forwarded frame takes at least this long here, however little the NF does: work that overlaps with the NF's
    # (the xsk ring's transmit, whose kernel side completes while the worker goes on); 0: none
    floor_ns: float = 0.0


@dataclass
class PathCost:
    mode: str                            # xnf run --mode
    tx_path: str | None                  # --tx-path of the modes whose workers send
    roles: dict[str, Role]
    task_role: str                       # where the NF runs
    task_side: str                       # "xdp" or "native": which of xnf cost's times the NF costs there
    task_scale: float = 1.0              # ns in the run per ns xnf cost measures
    fit: dict = field(default_factory=dict)   # points, rms and max relative error of the fit

    def fixed(self, role: str, fate: str) -> float:
        """The role's own time for a frame of that fate; a fate the path never gives (XDP has no user-space
        drop) costs what forwarding does."""
        ns = self.roles[role].fixed_ns
        return ns.get(fate, ns["forward"])


@dataclass
class Profile:
    name: str
    source: str                          # "measured" (fitted here) or "published" (from a paper's figures)
    description: str
    platform: str                        # where the figures hold: the lab's veth and cores, or a NIC
    baseline: dict                       # {"nf", "rules", "native_ns", "xdp_ns"}: the zero of c_task
    paths: dict[str, PathCost]
    yardsticks: dict[str, float] = field(default_factory=dict)
    environment: dict = field(default_factory=dict)
    validation: dict = field(default_factory=dict)
    placement: dict = field(default_factory=dict)   # the fit's placement kept, and what the far level cost each path
    citation: str | None = None
    scale: float = 1.0                   # times applied since the fit (Profile.scaled)
    statistic: str = rate_statistic.BEFORE   # which of each point's rounds the fit took (rate_statistic)
    quick: bool = False                  # a quick fit (model-fit --quick): few paths and points, three rounds
    host: dict = field(default_factory=dict)   # a quick fit's host steadiness (python/xnf/model/quick_fit.py)

    def path(self, key: str) -> PathCost:
        if key not in self.paths:
            raise XnfError(f"profile '{self.name}' has no path '{key}': it has {', '.join(self.paths)}")
        return self.paths[key]

    @property
    def near_level(self) -> bool:
        """Whether the profile's rates are the near placement's: fitted on the measurements there alone, or on the
        best of every point's rounds, which the far level only slows (rate_statistic)."""
        kept = self.placement.get("kept")
        return kept == placement.NEAR or (kept == placement.ALL and self.statistic == rate_statistic.BEST)

    def far_adds_ns(self, key: str) -> dict[str, float] | None:
        """Per role of the path, what a frame that crosses between the cores took more there at the far placement
        than at the near one the profile describes (docs/methodology.md, "Where the host puts the two vCPUs");
        None when the profile is not the near level's (near_level) or measured the path at the far one nowhere."""
        if not self.near_level:
            return None
        return self.placement.get("far_adds_ns", {}).get(key)

    def at_placement(self, key: str, level: str) -> PathCost:
        """The path as it runs at the level given: at the far one every role's time for a frame that crosses
        between the cores (CROSSING_FATES; its floor too) takes the role's far time more."""
        path = self.path(key)
        if level != placement.FAR:
            return path
        adds = self.far_adds_ns(key)
        if adds is None:
            raise XnfError(f"profile '{self.name}' keeps no far-placement time for {key}: it was not fitted at the "
                           "near placement (or on the best of every round), or measured the path at the far one "
                           "nowhere")
        return far_path(path, adds)

    def scaled(self, factor: float, why: str) -> "Profile":
        """Every time multiplied by factor: the same machine running factor times slower (a yardstick measured
        now against the one stored). c_task is measured on the day, so only the fixed times move."""
        return self.rescaled({key: {FORWARD_TIMES: factor, DROP_TIMES: factor} for key in self.paths}, why,
                             uniform=factor)

    def rescaled(self, factors: dict[str, dict[str, float]], why: str, uniform: float | None = None) -> "Profile":
        """Each path's times multiplied by its factors: FORWARD_TIMES for a forwarded frame's (and the floors, the
        generator's share and the far placement's), DROP_TIMES for a dropped frame's, TASK_SCALE (if given) its
        scale; a path without factors is left as it is. uniform: the one factor of every path, kept in `scale` (python/xnf/model/calibration.py
        gives each path its own)."""
        for key, f in factors.items():
            for kind, factor in f.items():
                if not 0.1 <= factor <= 10:
                    raise XnfError(f"a calibration factor of {factor:.3g} for {key} ({kind}; {why}) is not a "
                                   "machine's drift: measure again")
        paths = {k: _path_rescaled(p, factors[k]) if k in factors else p for k, p in self.paths.items()}
        placed = dict(self.placement)
        if "far_adds_ns" in placed:
            placed["far_adds_ns"] = {k: {r: ns * factors[k][FORWARD_TIMES] for r, ns in v.items()}
                                     if v is not None and k in factors else v
                                     for k, v in placed["far_adds_ns"].items()}
        shown = f"x{uniform:.3f}" if uniform is not None else "per path"
        return replace(self, paths=paths, scale=self.scale * (uniform if uniform is not None else 1.0),
                       placement=placed, description=f"{self.description} (times {shown}: {why})")

    def to_json(self) -> str:
        return json.dumps({"xnf_profile": FORMAT, **asdict(self)}, indent=1)


def _path_rescaled(path: PathCost, factors: dict[str, float]) -> PathCost:
    forward, drop = factors[FORWARD_TIMES], factors[DROP_TIMES]
    roles = {name: replace(role, fixed_ns={f: v * (forward if f == "forward" else drop)
                                           for f, v in role.fixed_ns.items()},
                           load_ns=role.load_ns * forward, floor_ns=role.floor_ns * forward)
             for name, role in path.roles.items()}
    return replace(path, roles=roles, task_scale=path.task_scale * factors.get(TASK_SCALE, 1.0))


def far_path(path: PathCost, adds: dict[str, float]) -> PathCost:
    """The path with adds[role] more on each role's time for a frame that crosses between the cores."""
    roles = {}
    for name, role in path.roles.items():
        more = adds.get(name, 0.0)
        fixed = {f: ns + more if f in CROSSING_FATES else ns for f, ns in role.fixed_ns.items()}
        roles[name] = replace(role, fixed_ns=fixed, floor_ns=role.floor_ns + more if role.floor_ns else 0.0)
    return replace(path, roles=roles)


# ------------------------------------------------------------------ the shape a profile's file must have
# Checked before anything reads it: a file with a section null, a number as text, NaN, is refused with what is
# wrong where, never met later as a traceback.

def _fail(where: str, what: str) -> None:
    raise XnfError(f"a machine profile with {where} {what}: refit it ('xnf bench run model-fit') or fix the file")


def _number(value, where: str) -> None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        _fail(where, f"not a finite number ({value!r})")


def _text(value, where: str, optional: bool = False) -> None:
    if not (isinstance(value, str) or (optional and value is None)):
        _fail(where, f"not text ({value!r})")


def _table(value, where: str) -> dict:
    """A dict of names to finite numbers."""
    if not isinstance(value, dict):
        _fail(where, f"not a table ({value!r})")
    for k, v in value.items():
        _number(v, f"{where}.{k}")
    return value


def _section(doc: dict, key: str, where: str, required: bool = False) -> dict:
    """doc[key], an object ({} when absent and not required); where: the path to doc ("" at the top)."""
    if key not in doc:
        if required:
            _fail(where or "the file", f"no '{key}'")
        return {}
    if not isinstance(doc[key], dict):
        _fail(f"{where}.{key}" if where else key, f"not an object ({doc[key]!r})")
    return doc[key]


def _check_role(role, where: str) -> None:
    if not isinstance(role, dict):
        _fail(where, f"not an object ({role!r})")
    if isinstance(role.get("cores"), bool) or not isinstance(role.get("cores"), int):
        _fail(f"{where}.cores", f"not a whole number ({role.get('cores')!r})")
    _table(_section(role, "fixed_ns", where, required=True), f"{where}.fixed_ns")
    for key in ("load_ns", "floor_ns"):
        if key in role:
            _number(role[key], f"{where}.{key}")
    if not isinstance(role.get("spins", False), bool):
        _fail(f"{where}.spins", "not true or false")
    _text(role.get("what", ""), f"{where}.what")


def _check_path(path, where: str) -> None:
    if not isinstance(path, dict):
        _fail(where, f"not an object ({path!r})")
    for key in ("mode", "task_role", "task_side"):
        _text(path.get(key), f"{where}.{key}")
    _text(path.get("tx_path"), f"{where}.tx_path", optional=True)
    _number(path.get("task_scale", 1.0), f"{where}.task_scale")
    _section(path, "fit", where)
    roles = _section(path, "roles", where, required=True)
    if not roles:
        _fail(f"{where}.roles", "empty")
    for name, role in roles.items():
        _check_role(role, f"{where}.roles.{name}")


def _check_shape(doc: dict) -> None:
    for key in ("name", "source", "description", "platform"):
        _text(doc.get(key), key)
    _text(doc.get("citation"), "citation", optional=True)
    _text(doc.get("statistic", rate_statistic.BEFORE), "statistic")
    if not isinstance(doc.get("quick", False), bool):
        _fail("quick", "must be true or false")
    _number(doc.get("scale", 1.0), "scale")
    host = _section(doc, "host", "")
    if not isinstance(host.get("steady", True), bool):
        _fail("host.steady", "must be true or false")
    baseline = _section(doc, "baseline", "", required=True)
    _text(baseline.get("nf"), "baseline.nf")
    _text(baseline.get("rules"), "baseline.rules", optional=True)
    for key in ("native_ns", "xdp_ns"):
        _number(baseline.get(key), f"baseline.{key}")
    paths = _section(doc, "paths", "", required=True)
    if not paths:
        _fail("paths", "empty")
    for key, path in paths.items():
        _check_path(path, f"paths.{key}")
    _table(_section(doc, "yardsticks", ""), "yardsticks")
    _section(doc, "environment", "")
    validation = _section(doc, "validation", "")
    for key, row in _section(validation, "paths", "validation").items():
        _table(row, f"validation.paths.{key}")
    _text(validation.get("placement", ""), "validation.placement")
    placed = _section(doc, "placement", "")
    _text(placed.get("kept", ""), "placement.kept")
    for key, adds in _section(placed, "far_adds_ns", "placement").items():
        if adds is not None:
            _table(adds, f"placement.far_adds_ns.{key}")


def from_dict(doc: dict) -> Profile:
    if not isinstance(doc, dict) or doc.get("xnf_profile") != FORMAT:
        found = doc.get("xnf_profile") if isinstance(doc, dict) else type(doc).__name__
        raise XnfError(f"not an xnf machine profile of format {FORMAT} (it says {found!r})")
    _check_shape(doc)
    try:
        paths = {key: PathCost(**{**p, "roles": {name: Role(**r) for name, r in p["roles"].items()}})
                 for key, p in doc["paths"].items()}
        profile = Profile(**{k: v for k, v in doc.items() if k not in ("xnf_profile", "paths")}, paths=paths)
    except (KeyError, TypeError) as err:
        raise XnfError(f"a machine profile with a missing or unknown field: {err}") from None
    _check(profile)
    return profile


def _check(profile: Profile) -> None:
    if profile.source not in SOURCES:
        raise XnfError(f"profile '{profile.name}': source must be one of {', '.join(SOURCES)}")
    if profile.statistic not in rate_statistic.CHOICES:
        raise XnfError(f"profile '{profile.name}': statistic must be one of {', '.join(rate_statistic.CHOICES)}")
    for key, path in profile.paths.items():
        if path.task_role not in path.roles or path.task_side not in SIDES:
            raise XnfError(f"profile '{profile.name}', path {key}: the NF's role must be one of its roles and its "
                           f"side one of {', '.join(SIDES)}")
        for name, role in path.roles.items():
            if role.cores < 1 or "forward" not in role.fixed_ns or set(role.fixed_ns) - set(FATES) or \
                    any(v < 0 for v in role.fixed_ns.values()) or role.floor_ns < 0:
                raise XnfError(f"profile '{profile.name}', path {key}, role {name}: at least one core, and times "
                               f"(not negative) for forward and any of {', '.join(FATES)}")


def load(where: str | Path | None = None) -> Profile:
    """A profile from a file, or a published one by name (python/xnf/model/profiles/NAME.json); by default the one
    `model-fit` installed."""
    where = where or default_path()
    path = Path(where)
    if not path.exists() and (PUBLISHED_DIR / f"{where}.json").exists():
        path = PUBLISHED_DIR / f"{where}.json"
    if not path.exists():
        raise XnfError(f"no machine profile at {where}: fit one with 'xnf bench run model-fit', or name a published "
                       f"one ({', '.join(published())})")
    try:
        doc = json.loads(user_files.read_text(path, "machine profile"))
    except (json.JSONDecodeError, RecursionError) as err:
        raise XnfError(f"cannot read the machine profile {where}: {err}") from None
    return from_dict(doc)


def published() -> list[str]:
    return sorted(p.stem for p in PUBLISHED_DIR.glob("*.json"))

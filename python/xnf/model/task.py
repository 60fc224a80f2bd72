"""c_task of a user's NF on a mix: what `xnf cost` measures for it (natively and in XDP, on the mix's own frames,
with its rules, no topology) less what it measures for the profile's baseline NF, in rounds that alternate the two,
so that both see the same machine. For a chain, each member is measured too, on its own rules, which is what a split
of the chain is predicted from.
"""

from __future__ import annotations

import dataclasses
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from xnf import chain, nf_cost, user_files
from xnf.errors import XnfError

# Verdicts whose frames leave the NF for the wire (the rest the NF keeps from it: dropped, or the local stack's).
FORWARDED = ("tx", "redirect")
DROPPED = ("drop", "abort", "redirect_error", "not_ready")
LOCAL = ("pass", "local")


@dataclass
class NfCost:
    nf: str
    native_ns: float                 # over the baseline
    xdp_ns: float
    verdicts: dict[str, int]
    native_spread: float = 0.0       # stdev over the rounds
    xdp_spread: float = 0.0

    @property
    def frames(self) -> int:
        return sum(v for k, v in self.verdicts.items() if k != "malformed")

    def share(self, kinds: tuple[str, ...]) -> float:
        return sum(self.verdicts.get(k, 0) for k in kinds) / self.frames if self.frames else 0.0

    @property
    def drop_share(self) -> float:
        return self.share(DROPPED)

    @property
    def local_share(self) -> float:
        return self.share(LOCAL)


@dataclass
class TaskCost:
    whole: NfCost
    baseline: dict                   # the baseline NF's own times, median of the rounds
    members: list[NfCost] = field(default_factory=list)   # a chain's members, each alone
    sessions: str = "established"    # which of the NF's times these are (nf_cost.SESSIONS)


@dataclass
class Measurement:
    """How `xnf cost` is run: the mix (xnf-gen options), frames, passes, rounds."""
    gen_options: list[str]
    frames: int | None = None        # None: every flow of the mix once (nf_cost.sample_frames)
    repeat: int | None = None        # None: nf_cost.passes
    rounds: int = 3
    map_sizes: list[str] = field(default_factory=list)
    sessions: str = "established"    # a key of nf_cost.SESSIONS: which of the NF's times price a frame


def _measure_rounds(nf: str, rules: str | None, baseline: dict, how: Measurement) -> tuple[list[dict], list[dict]]:
    """The NF's and the baseline's results, alternating, how.rounds times each."""
    mine, base = [], []
    with tempfile.TemporaryDirectory() as folder:
        base_rules = Path(folder) / "baseline.rules"
        base_rules.write_text(baseline["rules"])
        for _ in range(how.rounds):
            mine.append(nf_cost.measure(nf, how.gen_options, rules, how.frames, how.repeat, how.map_sizes))
            base.append(nf_cost.measure(baseline["nf"], how.gen_options, str(base_rules), how.frames, how.repeat))
    return mine, base


def _over_baseline(nf: str, mine: list[dict], base: list[dict], sessions: str) -> NfCost:
    native_key, xdp_key = nf_cost.SESSIONS[sessions]
    native = [m[native_key] - b[native_key] for m, b in zip(mine, base)]
    xdp = [m[xdp_key] - b[xdp_key] for m, b in zip(mine, base)]
    spread = (lambda v: statistics.stdev(v) if len(v) > 1 else 0.0)
    return NfCost(nf=nf, native_ns=statistics.median(native), xdp_ns=statistics.median(xdp),
                  verdicts=mine[0]["verdicts"], native_spread=spread(native), xdp_spread=spread(xdp))


def member_rules(rules_text: str, member: str) -> str:
    """A chain's rules file holds 'MEMBER RULE' lines: a member's own lines, without its name."""
    lines = []
    for line in rules_text.splitlines():
        word, _, rest = line.strip().partition(" ")
        if word == member and rest.strip():
            lines.append(rest.strip())
    return "".join(f"{line}\n" for line in lines)


def measure(nf: str, rules: str | None, baseline: dict, how: Measurement, members: bool = True) -> TaskCost:
    """c_task of nf (a chain too) on the mix, and (unless members is False) of each of a chain's members."""
    if how.sessions == "new":
        how = dataclasses.replace(how, frames=nf_cost.new_session_frames(how.gen_options, how.frames))
    mine, base = _measure_rounds(nf, rules, baseline, how)
    whole = _over_baseline(nf, mine, base, how.sessions)
    costs = []
    if members and chain.is_chain(nf):
        text = user_files.read_text(rules, "rules", user_files.MAX_RULES_BYTES) if rules else ""
        with tempfile.TemporaryDirectory() as folder:
            for member in chain.members_of(nf):
                own = member_rules(text, member)
                path = Path(folder) / f"{member}.rules"
                path.write_text(own)
                m, b = _measure_rounds(member, str(path) if own else None, baseline, how)
                costs.append(_over_baseline(member, m, b, how.sessions))
    native_key, xdp_key = nf_cost.SESSIONS[how.sessions]
    base_native = statistics.median(b[native_key] for b in base)
    base_xdp = statistics.median(b[xdp_key] for b in base)
    if whole.frames == 0:
        raise XnfError(f"{nf} gave no verdict on the mix's frames: is the mix empty?")
    return TaskCost(whole=whole, baseline={**baseline, "native_ns": base_native, "xdp_ns": base_xdp},
                    members=costs, sessions=how.sessions)

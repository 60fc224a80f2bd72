"""A PFCP session as the upf's rule lines (nfs/upf/README.md), and the way those lines are put in force on a running
instance all or nothing. Knows nothing of PFCP's wire format: xnf/pfcp.py reads the messages into these.

A PFCP QER's two rates become two of the upf's QERs: uplink (2 x ID) for its uplink PDRs, downlink (2 x ID + 1) for
its downlink ones. What a session may hold is bounded (MAX_RULES_PER_SESSION of each kind), and what names a frame
(an uplink PDR's TEID and QFI, a downlink PDR's UE) belongs to one session at a time."""

from __future__ import annotations

from dataclasses import dataclass, field

from xnf import control, say
from xnf.errors import XnfError

MAX_RULES_PER_SESSION = 64   # PDRs, FARs and QERs each: far more than a PDU session's few
MAX_PDR_ID = 0xFFFF          # a PDR ID is 16 bits (TS 29.244 8.2.36)
MAX_FAR_ID = 0xFFFFFFFF      # a FAR ID is 32 bits, as the upf's rule IDs
MAX_QER_ID = 0x7FFFFFFF      # a QER becomes the upf's QERs 2 x ID and 2 x ID + 1, which must stay rule IDs


class RuleFailure(Exception):
    """A session the upf cannot carry as asked: TS 29.244's cause 73, Rule creation/modification Failure."""


@dataclass
class Session:
    """One PFCP session: the CP's SEID and address, and its PDRs, FARs and QERs."""
    cp_seid: int
    cp_addr: str
    pdrs: dict[int, dict] = field(default_factory=dict)
    fars: dict[int, dict] = field(default_factory=dict)
    qers: dict[int, dict] = field(default_factory=dict)
    applied: set[str] = field(default_factory=set)

    def copy(self) -> Session:
        """A copy to change: a modification is worked out on it and kept only if all of it holds."""
        return Session(self.cp_seid, self.cp_addr, {k: dict(v) for k, v in self.pdrs.items()},
                       {k: dict(v) for k, v in self.fars.items()}, {k: dict(v) for k, v in self.qers.items()},
                       set(self.applied))

    def match_keys(self) -> dict[tuple, int]:
        """What names a frame, per PDR: ('uplink', TEID, QFI) or ('downlink', UE)."""
        return {_match_key(pdr): pdr_id for pdr_id, pdr in self.pdrs.items()}

    def check(self) -> None:
        """The session as a whole: within its bounds, every PDR's FAR and QER there, no two PDRs on one match."""
        for what, table, top in (("PDR", self.pdrs, MAX_PDR_ID), ("FAR", self.fars, MAX_FAR_ID),
                                 ("QER", self.qers, MAX_QER_ID)):
            if len(table) > MAX_RULES_PER_SESSION:
                raise RuleFailure(f"more than {MAX_RULES_PER_SESSION} {what}s in one session")
            bad = [i for i in table if not 1 <= i <= top]
            if bad:
                raise RuleFailure(f"{what} ID {bad[0]}: the upf takes IDs 1-{top}")
        for pdr_id, pdr in self.pdrs.items():
            if pdr["far"] not in self.fars:
                raise RuleFailure(f"PDR {pdr_id} names FAR {pdr['far']}, which the session lacks")
            if pdr["qer"] is not None and pdr["qer"] not in self.qers:
                raise RuleFailure(f"PDR {pdr_id} names QER {pdr['qer']}, which the session lacks")
        if len(self.match_keys()) != len(self.pdrs):
            raise RuleFailure("two PDRs of the session match the same frames (one TEID and QFI, or one UE)")

    def lines(self, seid: int) -> set[str]:
        """The session as the upf's rule lines."""
        out = set()
        for pdr_id, pdr in self.pdrs.items():
            qer = self.qers.get(pdr["qer"]) if pdr["qer"] is not None else None
            rate_id = None
            if qer and qer["ul_kbps" if pdr["direction"] == "uplink" else "dl_kbps"]:
                rate_id = 2 * pdr["qer"] + (pdr["direction"] == "downlink")
            tail = f" far {pdr['far']}" + (f" qer {rate_id}" if rate_id else "")
            if pdr["direction"] == "uplink":
                out.add(f"pdr {seid} {pdr_id} uplink teid {pdr['teid']}" +
                        (f" qfi {pdr['qfi']}" if pdr["qfi"] else "") + tail)
            else:
                out.add(f"pdr {seid} {pdr_id} downlink ue {pdr['ue']}" + tail)
        for far_id, far in self.fars.items():
            out.add(f"far {seid} {far_id} " + _far_line(far, self._downlink_qfi(far_id)))
        for qer_id, qer in self.qers.items():
            for offset, key in ((0, "ul_kbps"), (1, "dl_kbps")):
                if qer[key]:
                    out.add(f"qer {seid} {2 * qer_id + offset} mbr {qer[key]}k")
        return out

    def _downlink_qfi(self, far_id: int) -> int | None:
        """The QFI a FAR's tunnel carries: its downlink PDR's QER's."""
        for pdr in self.pdrs.values():
            qer = self.qers.get(pdr["qer"]) if pdr["qer"] is not None else None
            if pdr["far"] == far_id and pdr["direction"] == "downlink" and qer and qer["qfi"]:
                return qer["qfi"]
        return None


def _match_key(pdr: dict) -> tuple:
    return ("uplink", pdr["teid"], pdr["qfi"]) if pdr["direction"] == "uplink" else ("downlink", pdr["ue"])


def _far_line(far: dict, qfi: int | None) -> str:
    if far.get("action") != "forward":
        return far.get("action", "drop")
    if far.get("to") == "n3":
        if not far.get("tunnel"):
            raise RuleFailure("a FAR to Access needs an Outer Header Creation (GTP-U/UDP/IPv4)")
        teid, peer = far["tunnel"]
        return f"forward n3 teid {teid} to {peer}" + (f" qfi {qfi}" if qfi else "")
    if far.get("to") != "n6":
        raise RuleFailure("a forwarding FAR needs its Forwarding Parameters' destination interface")
    return "forward n6"


def rule_key(line: str) -> tuple:
    """What names a rule line's entry in the upf (nfs/upf/upf_rules.c): a PDR's match (its TEID and QFI, or its UE),
    a FAR's or QER's session and ID. A line added under the key of another replaces it."""
    words = line.split()
    if words[0] == "pdr":
        return tuple(words[3:words.index("far")])
    return tuple(words[:3])


class InstanceRules:
    """A running upf's rules, through its control socket."""

    def __init__(self, instance: str):
        self.instance = instance

    def add(self, line: str) -> None:
        control.request(self.instance, f"rules add {line}")

    def delete(self, line: str) -> None:
        control.request(self.instance, f"rules del {line}")

    def list(self) -> str:
        return control.request(self.instance, "rules list")


def put_in_force(rules, applied: set[str], wanted: set[str]) -> None:
    """Brings an instance from a session's applied lines to its wanted ones, all or nothing: FARs and QERs before the
    PDRs that name them, the stale lines last. A line the instance refuses undoes every line this call added or
    replaced (a replaced line is put back, not deleted), then raises RuleFailure."""
    by_key = {rule_key(line): line for line in applied}
    done: list[tuple[str, str | None]] = []   # (line added, the applied line it replaced)
    try:
        for line in sorted(wanted - applied, key=lambda ln: (not ln.startswith(("far", "qer")), ln)):
            rules.add(line)
            done.append((line, by_key.get(rule_key(line))))
    except XnfError as err:
        for line, replaced in reversed(done):
            _undo(rules, line, replaced)
        raise RuleFailure(str(err)) from None
    kept = {rule_key(line) for line in wanted}
    for line in sorted((ln for ln in applied if rule_key(ln) not in kept), key=lambda ln: ln.startswith(("far", "qer"))):
        try:
            rules.delete(line)
        except XnfError as err:   # someone changed it by hand: it is theirs now
            say.info(f"pfcp: could not remove '{line}': {err}")


def _undo(rules, line: str, replaced: str | None) -> None:
    try:
        if replaced:
            rules.add(replaced)
        else:
            rules.delete(line)
    except XnfError as err:
        say.info(f"pfcp: could not undo '{line}': {err}")

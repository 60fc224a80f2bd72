"""`xnf pfcp`'s session table against a reference model, over random sequences of PFCP messages from two nodes
(hypothesis): associations, establishments (some on another session's TEID or UE, some the upf refuses part way),
modifications, deletions, and requests sent again. After every message the endpoint's answer has the cause the
model predicts (TS 29.244: 72 without an association, 65 for another node's session, 73 for a takeover or a rule
the upf refuses, 64 for a CP SEID in use), a request sent again gets the first answer byte for byte, and the rules
in force on the (stand-in) upf are exactly the model's sessions': nothing orphaned, nothing half applied.

The stand-in upf keys its rules as nfs/upf/upf_rules.c does, deletes only a whole matching line (as the rules
engine does) and refuses any line with TEID 4242, as a real upf refuses a line it cannot take."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from scapy.contrib import pfcp as p

from xnf import pfcp
from xnf.errors import XnfError

settings.register_profile("suite", max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz", max_examples=5000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("fuzz-chunk", max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "suite"))

NODES = ("10.0.0.1", "10.0.0.2")
REFUSED_TEID = 4242
GNB, N3 = "192.0.2.10", "192.0.2.1"


class StandInUpf:
    """Rule lines keyed as the upf keys them: an add under a key replaces, a delete needs the whole line."""

    def __init__(self):
        self.rules: dict[tuple, str] = {}

    @staticmethod
    def key(line: str) -> tuple:
        words = line.split()
        if words[0] == "pdr":
            return ("uplink", words[5], words[7] if words[6] == "qfi" else None) if words[3] == "uplink" \
                else ("downlink", words[5])
        return tuple(words[:3])

    def add(self, line: str) -> None:
        if f"teid {REFUSED_TEID} " in line + " ":
            raise XnfError(f"the upf refuses '{line}'")
        self.rules[self.key(line)] = line

    def delete(self, line: str) -> None:
        if self.rules.get(self.key(line)) != line:
            raise XnfError(f"no such rule: {line}")
        del self.rules[self.key(line)]

    def list(self) -> str:
        return "\n".join(self.rules.values())


@dataclass
class ModelSession:
    owner: str
    cp_seid: int
    teids: dict[int, int]                       # PDR ID -> uplink TEID
    ue: str
    far2: str = "forward"
    pdrs: set[int] = field(default_factory=lambda: {1, 2})


@dataclass
class Model:
    associated: set[str] = field(default_factory=set)
    sessions: dict[int, ModelSession] = field(default_factory=dict)
    next_seid: int = 1

    def taken(self, teid: int | None = None, ue: str | None = None, but: int | None = None) -> bool:
        return any(seid != but and (teid in s.teids.values() or ue == s.ue) for seid, s in self.sessions.items())

    def owned(self, node: str, seid: int) -> int | None:
        """The cause a session message from node about seid gets before its content counts, or None."""
        if node not in self.associated:
            return 72
        if seid not in self.sessions or self.sessions[seid].owner != node:
            return 65
        return None

    def establish(self, node: str, cp_seid: int, teid: int, ue: str) -> int:
        if node not in self.associated:
            return 72
        if any((s.owner, s.cp_seid) == (node, cp_seid) for s in self.sessions.values()):
            return 64
        if self.taken(teid=teid) or self.taken(ue=ue) or teid == REFUSED_TEID:
            return 73
        self.sessions[self.next_seid] = ModelSession(node, cp_seid, {1: teid}, ue)
        self.next_seid += 1
        return 1

    def add_pdr(self, node: str, seid: int, pdr_id: int, teid: int) -> int:
        cause = self.owned(node, seid)
        if cause:
            return cause
        s = self.sessions[seid]
        if pdr_id == 0 or pdr_id in s.pdrs or self.taken(teid=teid, but=seid) or teid == REFUSED_TEID:
            return 73
        s.pdrs.add(pdr_id)
        s.teids[pdr_id] = teid
        return 1

    def drop(self, node: str, seid: int) -> int:
        cause = self.owned(node, seid)
        if cause is None:
            self.sessions[seid].far2 = "drop"
        return cause or 1

    def delete(self, node: str, seid: int) -> int:
        cause = self.owned(node, seid)
        if cause is None:
            del self.sessions[seid]
        return cause or 1


def establishment(seq: int, cp_seid: int, teid: int, ue: str):
    uplink = [p.IE_PDR_Id(id=1), p.IE_PDI(IE_list=[p.IE_SourceInterface(interface="Access"),
                                                   p.IE_FTEID(V4=1, TEID=teid, ipv4=N3), p.IE_QFI(QFI=9)]),
              p.IE_FAR_Id(id=1)]
    downlink = [p.IE_PDR_Id(id=2), p.IE_PDI(IE_list=[p.IE_SourceInterface(interface="Core"),
                                                     p.IE_UE_IP_Address(V4=1, SD=1, ipv4=ue)]), p.IE_FAR_Id(id=2)]
    fars = [p.IE_CreateFAR(IE_list=[p.IE_FAR_Id(id=1), p.IE_ApplyAction(FORW=1), p.IE_ForwardingParameters(
                IE_list=[p.IE_DestinationInterface(interface="Core")])]),
            p.IE_CreateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(FORW=1), p.IE_ForwardingParameters(
                IE_list=[p.IE_DestinationInterface(interface="Access"),
                         p.IE_OuterHeaderCreation(GTPUUDPIPV4=1, TEID=7, ipv4=GNB)])])]
    return p.PFCP(seid=0, seq=seq) / p.PFCPSessionEstablishmentRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.1"), p.IE_FSEID(v4=1, seid=cp_seid, ipv4="10.0.0.1"),
        p.IE_CreatePDR(IE_list=uplink), p.IE_CreatePDR(IE_list=downlink), *fars])


def modification(seq: int, seid: int, ies: list):
    return p.PFCP(seid=seid, seq=seq) / p.PFCPSessionModificationRequest(IE_list=ies)


def add_pdr_ies(pdr_id: int, teid: int) -> list:
    return [p.IE_CreatePDR(IE_list=[p.IE_PDR_Id(id=pdr_id), p.IE_PDI(IE_list=[
        p.IE_SourceInterface(interface="Access"), p.IE_FTEID(V4=1, TEID=teid, ipv4=N3)]), p.IE_FAR_Id(id=1)])]


NODE, SEID, TEID = st.sampled_from(NODES), st.integers(1, 4), st.sampled_from([100, 101, 102, REFUSED_TEID])
STEPS = st.lists(st.one_of(
    st.tuples(st.just("associate"), NODE),
    st.tuples(st.just("establish"), NODE, st.integers(1, 2), TEID, st.sampled_from(["10.60.0.1", "10.60.0.2"])),
    st.tuples(st.just("add_pdr"), NODE, SEID, st.sampled_from([0, 1, 3]), TEID),
    st.tuples(st.just("drop"), NODE, SEID),
    st.tuples(st.just("delete"), NODE, SEID),
    st.tuples(st.just("again"))), max_size=30)


def cause_of(answer: bytes) -> int:
    return next(ie.cause for ie in p.PFCP(answer).payload.IE_list if isinstance(ie, p.IE_Cause))


def request_and_cause(step: tuple, seq: int, model: Model):
    """The message of a step and the cause the model gives it (changing the model as the endpoint should)."""
    kind, node = step[0], step[1]
    if kind == "associate":
        model.associated.add(node)
        return p.PFCP(S=0, seq=seq) / p.PFCPAssociationSetupRequest(IE_list=[
            p.IE_NodeId(id_type="IPv4", ipv4=node), p.IE_RecoveryTimeStamp(timestamp=3900000000)]), 1
    if kind == "establish":
        return establishment(seq, *step[2:]), model.establish(node, *step[2:])
    if kind == "add_pdr":
        return modification(seq, step[2], add_pdr_ies(step[3], step[4])), model.add_pdr(node, *step[2:])
    if kind == "drop":
        return modification(seq, step[2], [p.IE_UpdateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(DROP=1)])]), \
            model.drop(node, step[2])
    return p.PFCP(seid=step[2], seq=seq) / p.PFCPSessionDeletionRequest(), model.delete(node, step[2])


def in_force_matches(upf: StandInUpf, model: Model) -> None:
    lines = list(upf.rules.values())
    pdrs = {(int(ln.split()[1]), int(ln.split()[2])) for ln in lines if ln.startswith("pdr ")}
    assert pdrs == {(seid, pdr_id) for seid, s in model.sessions.items() for pdr_id in s.pdrs}, lines
    fars = {(int(ln.split()[1]), int(ln.split()[2]), ln.split()[3]) for ln in lines if ln.startswith("far ")}
    assert fars == {(seid, far_id, action) for seid, s in model.sessions.items()
                    for far_id, action in ((1, "forward"), (2, s.far2))}, lines
    for line in (ln for ln in lines if " uplink " in ln):   # each TEID in force is its own session's
        words = line.split()
        assert int(words[5]) == model.sessions[int(words[1])].teids[int(words[2])], lines


A, B = NODES


@given(STEPS)
@example([("associate", A), ("establish", A, 1, 100, "10.60.0.1"), ("associate", B), ("delete", B, 1),
          ("drop", B, 1), ("establish", B, 1, 100, "10.60.0.2"), ("establish", B, 2, 101, "10.60.0.1")])
@example([("associate", A), ("establish", A, 1, 100, "10.60.0.1"), ("again",), ("establish", A, 1, 101, "10.60.0.2"),
          ("add_pdr", A, 1, 3, REFUSED_TEID), ("add_pdr", A, 1, 0, 102), ("drop", A, 1), ("again",),
          ("delete", A, 1), ("again",), ("delete", B, 1)])
@example([("establish", A, 1, 100, "10.60.0.1"), ("associate", A), ("establish", A, 1, REFUSED_TEID, "10.60.0.1"),
          ("establish", A, 2, 100, "10.60.0.1"), ("add_pdr", A, 1, 3, 100), ("add_pdr", A, 1, 3, 101)])
def test_the_session_table_follows_the_model(steps):
    upf, model = StandInUpf(), Model()
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    last = None
    for seq, step in enumerate(steps, 1):
        if step[0] == "again":
            if last is None:
                continue
            datagram, node, first_answer = last
            before = dict(upf.rules)
            assert endpoint.answer(datagram, (node, 8805)) == first_answer
            assert upf.rules == before
            continue
        message, expected = request_and_cause(step, seq, model)
        datagram = bytes(message)
        answer = endpoint.answer(datagram, (step[1], 8805))
        assert cause_of(answer) == expected, (step, cause_of(answer), expected)
        last = (datagram, step[1], answer)
        in_force_matches(upf, model)
    for seid, session in list(model.sessions.items()):
        assert cause_of(endpoint.answer(bytes(p.PFCP(seid=seid, seq=9999) / p.PFCPSessionDeletionRequest()),
                                        (session.owner, 8805))) == 1
    assert upf.rules == {}


def test_answers_kept_for_retransmissions_are_bounded_in_number_and_time(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(pfcp, "MAX_ANSWERS_KEPT", 50)
    endpoint = pfcp.Endpoint(StandInUpf(), N3, "192.0.2.2", clock=lambda: now[0])
    heartbeat = bytes(p.PFCP(S=0, seq=1) / p.PFCPHeartbeatRequest(IE_list=[p.IE_RecoveryTimeStamp(timestamp=1)]))
    for port in range(80):
        endpoint.answer(heartbeat, ("10.0.0.1", port))
    assert len(endpoint.answers) == 50
    now[0] += pfcp.ANSWER_KEPT_S
    endpoint.answer(heartbeat, ("10.0.0.1", 9999))
    assert len(endpoint.answers) == 1   # the others' minute is over


def test_sessions_are_bounded_with_the_cause_the_spec_gives():
    endpoint = pfcp.Endpoint(StandInUpf(), N3, "192.0.2.2", max_sessions=3)
    endpoint.answer(bytes(p.PFCP(S=0, seq=1) / p.PFCPAssociationSetupRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.1")])), ("10.0.0.1", 8805))
    causes = [cause_of(endpoint.answer(bytes(establishment(10 + i, i, 100 + i, f"10.60.0.{i + 1}")), ("10.0.0.1", 8805)))
              for i in range(5)]
    assert causes == [1, 1, 1, 75, 75]


def test_only_listed_smfs_may_associate():
    endpoint = pfcp.Endpoint(StandInUpf(), N3, "192.0.2.2", smfs={"10.0.0.1"})
    setup = p.PFCP(S=0, seq=1) / p.PFCPAssociationSetupRequest(IE_list=[p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.2")])
    assert cause_of(endpoint.answer(bytes(setup), ("10.0.0.2", 8805))) == 64
    assert cause_of(endpoint.answer(bytes(establishment(2, 1, 100, "10.60.0.1")), ("10.0.0.2", 8805))) == 72
    assert cause_of(endpoint.answer(bytes(setup), ("10.0.0.1", 8805))) == 1


def test_a_restarted_smfs_old_sessions_end_when_it_associates_again():
    upf = StandInUpf()
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    node = ("10.0.0.1", 8805)

    def setup(seq, recovery):
        return bytes(p.PFCP(S=0, seq=seq) / p.PFCPAssociationSetupRequest(IE_list=[
            p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.1"), p.IE_RecoveryTimeStamp(timestamp=recovery)]))
    endpoint.answer(setup(1, 100), node)
    assert cause_of(endpoint.answer(bytes(establishment(2, 1, 100, "10.60.0.1")), node)) == 1
    endpoint.answer(setup(3, 100), node)   # the same SMF, not restarted: its session stays
    assert len(upf.rules) == 4
    endpoint.answer(setup(4, 200), node)
    assert upf.rules == {} and endpoint.sessions == {}


def test_heartbeats_queued_behind_session_messages_are_answered_first():
    """A burst of establishments must not hold up the heartbeats that tell the SMF the UP function lives."""
    heartbeat = bytes(p.PFCP(S=0, seq=7) / p.PFCPHeartbeatRequest(IE_list=[p.IE_RecoveryTimeStamp(timestamp=1)]))
    burst = [(bytes(establishment(i, i, 100 + i, "10.60.0.1")), ("10.0.0.1", 8805)) for i in range(5)]
    batch = burst[:3] + [(heartbeat, ("10.0.0.1", 8805))] + burst[3:]
    assert pfcp.answer_order(batch) == [(heartbeat, ("10.0.0.1", 8805))] + burst


def test_a_port_outside_udps_range_is_one_message():
    """`xnf pfcp --port 70000` (or -1) was an OverflowError traceback from bind()."""
    for port in (70000, -1, 0):
        with pytest.raises(XnfError, match="--port"):
            pfcp.serve("upf", "127.0.0.1", port, "192.0.2.1", None)


def test_a_released_association_ends_its_sessions():
    upf = StandInUpf()
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    node = ("10.0.0.1", 8805)
    release = bytes(p.PFCP(S=0, seq=3) / p.PFCPAssociationReleaseRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.1")]))
    endpoint.answer(bytes(p.PFCP(S=0, seq=1) / p.PFCPAssociationSetupRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4="10.0.0.1")])), node)
    assert cause_of(endpoint.answer(bytes(establishment(2, 1, 100, "10.60.0.1")), node)) == 1
    assert cause_of(endpoint.answer(release, node)) == 1 and upf.rules == {} and endpoint.sessions == {}
    assert cause_of(endpoint.answer(bytes(establishment(4, 1, 100, "10.60.0.1")), node)) == 72


STATIC = ["pdr 1 1 uplink teid 100 qfi 9 far 1", "far 1 1 forward n6", "pdr 1 2 downlink ue 10.60.0.1 far 2",
          "far 1 2 forward n3 teid 7 to 192.0.2.10"]


def associated(endpoint, node=("10.0.0.1", 8805), seq=1, recovery=100) -> None:
    endpoint.answer(bytes(p.PFCP(S=0, seq=seq) / p.PFCPAssociationSetupRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4=node[0]), p.IE_RecoveryTimeStamp(timestamp=recovery)])), node)


def test_the_rules_files_sessions_keep_their_seid_teids_and_ues():
    """A static session 1 in the upf's rules file: the endpoint never gives SEID 1, and a PDR on its TEID or UE is a
    rule failure; deleting a PFCP session leaves the static lines (once, both static FARs went with it)."""
    upf = StandInUpf()
    for line in STATIC:
        upf.add(line)
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    node = ("10.0.0.1", 8805)
    associated(endpoint)
    assert cause_of(endpoint.answer(bytes(establishment(2, 1, 100, "10.60.0.9")), node)) == 73   # its TEID
    assert cause_of(endpoint.answer(bytes(establishment(3, 2, 101, "10.60.0.1")), node)) == 73   # its UE
    answer = endpoint.answer(bytes(establishment(4, 3, 102, "10.60.0.2")), node)
    assert cause_of(answer) == 1
    [seid] = [ie.seid for ie in p.PFCP(answer).payload.IE_list if isinstance(ie, p.IE_FSEID)]
    assert seid != 1
    assert cause_of(endpoint.answer(bytes(p.PFCP(seid=seid, seq=5) / p.PFCPSessionDeletionRequest()), node)) == 1
    assert sorted(upf.rules.values()) == sorted(STATIC)


def test_an_association_set_up_again_forgets_the_answers_kept_for_its_node():
    """An establishment, the SMF's association set up again after a restart (its sessions end), the same
    establishment again: done anew, not answered "accepted" from the cache for a session that is gone."""
    upf = StandInUpf()
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    node = ("10.0.0.1", 8805)
    associated(endpoint)
    request = bytes(establishment(50, 1, 100, "10.60.0.1"))
    assert cause_of(endpoint.answer(request, node)) == 1
    associated(endpoint, seq=2, recovery=200)
    assert upf.rules == {}
    assert cause_of(endpoint.answer(request, node)) == 1 and len(upf.rules) == 4   # the session is there again
    assert all(len(kept[1]) == 16 for kept in endpoint.answers.values())   # digests, not whole requests


@pytest.mark.parametrize("ies, cause", [
    ([p.IE_UpdatePDR(IE_list=[p.IE_PDR_Id(id=1), p.IE_FAR_Id(id=2)])], 73),
    ([p.IE_CreatePDR(IE_list=[p.IE_PDR_Id(id=3), p.IE_PDI(IE_list=[
        p.IE_SourceInterface(interface="Access"), p.IE_FTEID(V4=1, TEID=103, ipv4=N3),
        p.IE_SDF_Filter(FD=1, flow_description="permit out ip from any to assigned")]), p.IE_FAR_Id(id=1)])], 73),
    ([p.IE_RemovePDR(IE_list=[p.IE_FAR_Id(id=66)])], 66),
])
def test_what_the_endpoint_does_not_carry_out_is_refused(ies, cause):
    upf = StandInUpf()
    endpoint = pfcp.Endpoint(upf, N3, "192.0.2.2")
    node = ("10.0.0.1", 8805)
    associated(endpoint)
    assert cause_of(endpoint.answer(bytes(establishment(2, 1, 100, "10.60.0.1")), node)) == 1
    before = dict(upf.rules)
    assert cause_of(endpoint.answer(bytes(modification(3, 1, ies)), node)) == cause
    assert upf.rules == before

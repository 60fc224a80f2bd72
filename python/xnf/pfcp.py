"""`xnf pfcp`: a PFCP endpoint (3GPP TS 29.244, the N4 interface) in front of a running upf instance, so that an
SMF sets up its sessions: association set-up and release, heartbeats, and session establishment, modification and
deletion with the Create / Update / Remove PDR, FAR and QER IEs the upf NF has rules for. Each session becomes the
rule lines of nfs/upf/README.md (xnf/pfcp_session.py), applied through the instance's control socket; the messages
are read and written with scapy's PFCP layer (scapy.contrib.pfcp).

What the network sends is hostile until it holds, so, as TS 29.244 asks:
- session messages are taken only from a node with a PFCP association (cause 72 otherwise); with --smf, only the
  listed addresses may set one up (cause 64 otherwise);
- a session belongs to the address that established it: another node's modification or deletion of it is answered
  as for a session that does not exist (cause 65), and changes nothing;
- a TEID or UE address belongs to one session at a time: a PDR that would take another session's is a rule failure
  (cause 73), never a takeover;
- a request sent again with the same sequence number from the same node (a retransmission, 7.6) is answered with
  the first answer, not done twice;
- a modification is worked out whole before anything changes, and a line the upf refuses undoes the lines already
  changed, the replaced ones put back: all or nothing;
- sessions (--max-sessions), rules per session, associations and remembered answers are bounded (cause 75, No
  resources available); an association set up again with a new Recovery Time Stamp (the SMF restarted) ends that
  node's old sessions.

The session's rules are named by the SEID this endpoint gives it (the UP F-SEID of its answer). A PDR whose F-TEID
asks the UP function to choose (CH) gets the next free TEID of this endpoint's, on the N3 address given with
--n3-addr, reported in a Created PDR IE.

Sessions the upf holds already (its rules file's) keep their SEIDs, TEIDs and UE addresses: the endpoint gives
none of them. Update PDR and SDF filters are refused (cause 73), a Remove IE without its own kind of ID too (cause
66). Not done: usage reports (URRs: the PDRs' counters are in `xnf rules list`), BARs and buffering, PFD management,
IPv6 UE addresses. Messages are answered one at a time (heartbeats before the session
messages queued with them).
"""

from __future__ import annotations

import hashlib
import ipaddress
import socket
import time
from collections import OrderedDict

from xnf import say
from xnf.errors import XnfError
from xnf.pfcp_session import InstanceRules, RuleFailure, Session, put_in_force

PFCP_PORT = 8805
# TS 29.244 8.2.1 causes.
ACCEPTED, REJECTED, CONTEXT_NOT_FOUND, MANDATORY_IE_MISSING = 1, 64, 65, 66
NO_ASSOCIATION, RULE_FAILURE, NO_RESOURCES = 72, 73, 75
# TS 29.244 8.2.2 / 8.2.24 interface values.
ACCESS, CORE = 0, 1
FIRST_CHOSEN_TEID, LAST_TEID = 0x10000, 0xFFFFFFFF
NTP_EPOCH_OFFSET = 2208988800   # seconds from 1900 (a Recovery Time Stamp's epoch) to 1970
DEFAULT_MAX_SESSIONS = 100_000
MAX_ASSOCIATIONS = 256
# A retransmission comes within N1 x T1 (a few times a few seconds); answers are kept a minute, at most this many.
ANSWER_KEPT_S, MAX_ANSWERS_KEPT = 60.0, 16384


class Refused(Exception):
    """A request this endpoint answers with a cause other than accepted."""

    def __init__(self, cause: int, why: str):
        super().__init__(why)
        self.cause = cause


def _ies(ie, ie_class) -> list:
    return [x for x in (getattr(ie, "IE_list", None) or []) if isinstance(x, ie_class)]


def _one(ie, ie_class, what: str):
    found = _ies(ie, ie_class)
    if not found:
        raise Refused(MANDATORY_IE_MISSING, f"{what} is missing")
    return found[0]


class Endpoint:
    def __init__(self, rules, n3_addr: str, node_addr: str, smfs: set[str] | None = None,
                 max_sessions: int = DEFAULT_MAX_SESSIONS, clock=time.monotonic):
        from scapy.contrib import pfcp

        self.p = pfcp
        self.rules, self.n3_addr, self.node_addr = rules, n3_addr, node_addr
        self.smfs, self.max_sessions, self.clock = smfs, max_sessions, clock
        self.associations: dict[str, int | None] = {}     # node address -> its Recovery Time Stamp
        self.sessions: dict[int, Session] = {}
        self.by_cp_seid: dict[tuple[str, int], int] = {}   # (CP address, CP SEID) -> SEID
        self.owner: dict[tuple, int] = {}                  # ("teid", T) or ("ue", ADDR) -> SEID
        self.answers: OrderedDict = OrderedDict()          # (peer, sequence number) -> (time, request, answer)
        self.next_seid, self.next_teid = 1, FIRST_CHOSEN_TEID
        self.started = int(time.time()) + NTP_EPOCH_OFFSET
        self.static_seids: set[int] = set()
        self._take_static(rules.list())

    def _take_static(self, listing: str) -> None:
        """The sessions the upf holds already (its rules file's, or an earlier endpoint's): their SEIDs are never
        given, and their TEIDs and UE addresses belong to them (an owner of minus the SEID)."""
        for line in listing.splitlines():
            words = line.split("#")[0].split()
            if len(words) < 3 or words[0] not in ("pdr", "far", "qer") or not words[1].isdigit():
                continue
            seid = int(words[1])
            self.static_seids.add(seid)
            if words[0] == "pdr" and len(words) > 5 and words[4] in ("teid", "ue"):
                value = int(words[5]) if words[4] == "teid" and words[5].isdigit() else words[5]
                self.owner[(words[4], value)] = -seid

    # ------------------------------------------------------------------ messages

    def answer(self, datagram: bytes, peer: tuple) -> bytes | None:
        """The answer to one PFCP request (None for what needs none); a retransmission gets the first answer."""
        message = self.p.PFCP(datagram)
        key, digest = (peer, message.seq), hashlib.blake2b(datagram, digest_size=16).digest()
        kept = self.answers.get(key)
        if kept and kept[1] == digest and self.clock() - kept[0] < ANSWER_KEPT_S:
            return kept[2]
        answer = self._handle(message, peer)
        if answer is not None:
            self._keep(key, digest, answer)
        return answer

    def _keep(self, key, digest: bytes, answer: bytes) -> None:
        """An answer kept for a retransmission, with its request's digest (never the request: a peer's padded
        datagrams would be kept whole)."""
        self.answers.pop(key, None)
        self.answers[key] = (self.clock(), digest, answer)
        while len(self.answers) > MAX_ANSWERS_KEPT or \
                (self.answers and self.clock() - next(iter(self.answers.values()))[0] >= ANSWER_KEPT_S):
            self.answers.popitem(last=False)

    def _handle(self, message, peer: tuple) -> bytes | None:
        p = self.p
        # By the header's type: a request without IEs (a deletion) has no payload for scapy to type.
        handlers = {1: (self._heartbeat, p.PFCPHeartbeatRequest), 5: (self._association, p.PFCPAssociationSetupRequest),
                    9: (self._release, p.PFCPAssociationReleaseRequest),
                    50: (self._establish, p.PFCPSessionEstablishmentRequest),
                    52: (self._modify, p.PFCPSessionModificationRequest),
                    54: (self._delete, p.PFCPSessionDeletionRequest)}
        if message.message_type not in handlers:
            say.info(f"pfcp: message type {message.message_type} from {peer[0]}: not handled")
            return None
        handler, request = handlers[message.message_type]
        kind = message.payload if isinstance(message.payload, request) else request()
        header, body = handler(message, kind, peer[0])
        return bytes(header / body)

    def _recovery(self):
        return self.p.IE_RecoveryTimeStamp(timestamp=self.started)

    def _node_id(self):
        return self.p.IE_NodeId(id_type="IPv4", ipv4=self.node_addr)

    def _created_pdrs(self, created: list[tuple[int, int]]) -> list:
        """A Created PDR IE for each (PDR ID, TEID) this endpoint chose."""
        p = self.p
        return [p.IE_CreatedPDR(IE_list=[p.IE_PDR_Id(id=pdr_id), p.IE_FTEID(V4=1, TEID=teid, ipv4=self.n3_addr)])
                for pdr_id, teid in created]

    def _heartbeat(self, message, kind, peer: str):
        return self.p.PFCP(S=0, seq=message.seq), self.p.PFCPHeartbeatResponse(IE_list=[self._recovery()])

    def _association(self, message, kind, peer: str):
        p = self.p
        try:
            _one(kind, p.IE_NodeId, "the Node ID")
            if self.smfs is not None and peer not in self.smfs:
                raise Refused(REJECTED, f"{peer} is not a listed SMF (--smf)")
            if peer not in self.associations and len(self.associations) >= MAX_ASSOCIATIONS:
                raise Refused(NO_RESOURCES, f"{MAX_ASSOCIATIONS} associations already")
            recovery = next((ie.timestamp for ie in _ies(kind, p.IE_RecoveryTimeStamp)), None)
            if peer in self.associations and self.associations[peer] != recovery:
                self._end_sessions_of(peer, "it set up its association again after a restart")
            self.associations[peer] = recovery
            cause = ACCEPTED
        except Refused as refused:
            say.info(f"pfcp: association set-up from {peer} refused: {refused}")
            cause = refused.cause
        return (p.PFCP(S=0, seq=message.seq),
                p.PFCPAssociationSetupResponse(IE_list=[self._node_id(), p.IE_Cause(cause=cause), self._recovery()]))

    def _release(self, message, kind, peer: str):
        p = self.p
        cause = NO_ASSOCIATION
        if peer in self.associations:
            self._end_sessions_of(peer, "it released its association")
            del self.associations[peer]
            cause = ACCEPTED
        return p.PFCP(S=0, seq=message.seq), p.PFCPAssociationReleaseResponse(
            IE_list=[self._node_id(), p.IE_Cause(cause=cause)])

    def _end_sessions_of(self, peer: str, why: str) -> None:
        """The node's sessions ended, and the answers kept for its requests forgotten: a request it sends again is
        about its new association, not one an old answer may speak for."""
        for key in [key for key in self.answers if key[0][0] == peer]:
            del self.answers[key]
        ended = [seid for seid, s in self.sessions.items() if s.cp_addr == peer]
        for seid in ended:
            self._remove(seid)
        if ended:
            say.info(f"pfcp: {len(ended)} sessions of {peer} ended: {why}")

    def _session_answer(self, response, message, cp_seid: int, cause: int, extra: list = ()):
        p = self.p
        body = ([self._node_id()] if response is p.PFCPSessionEstablishmentResponse else []) + \
            [p.IE_Cause(cause=cause), *extra]
        return p.PFCP(seid=cp_seid, seq=message.seq), response(IE_list=body)

    def _associated(self, peer: str) -> None:
        if peer not in self.associations:
            raise Refused(NO_ASSOCIATION, f"{peer} has no PFCP association: set one up first")

    def _establish(self, message, kind, peer: str):
        p = self.p
        cp_seid = next((ie.seid for ie in _ies(kind, p.IE_FSEID)), 0)
        try:
            self._associated(peer)
            cp_seid = _one(kind, p.IE_FSEID, "the CP F-SEID").seid
            if len(self.sessions) >= self.max_sessions:
                raise Refused(NO_RESOURCES, f"{self.max_sessions} sessions already (--max-sessions)")
            if (peer, cp_seid) in self.by_cp_seid:
                raise Refused(REJECTED, f"CP SEID {cp_seid} of {peer} already has a session")
            while self.next_seid in self.static_seids:
                self.next_seid += 1
            seid = self.next_seid
            session = Session(cp_seid=cp_seid, cp_addr=peer)
            created = self._take_rules(session, kind)
            self._put(seid, None, session)
        except (Refused, RuleFailure) as refused:
            cause = refused.cause if isinstance(refused, Refused) else RULE_FAILURE
            say.info(f"pfcp: session establishment from {peer} refused: {refused}")
            return self._session_answer(p.PFCPSessionEstablishmentResponse, message, cp_seid, cause)
        self.next_seid += 1
        extra = [p.IE_FSEID(v4=1, seid=seid, ipv4=self.node_addr), *self._created_pdrs(created)]
        return self._session_answer(p.PFCPSessionEstablishmentResponse, message, cp_seid, ACCEPTED, extra)

    def _owned(self, seid: int, peer: str) -> Session:
        """The session, if this node has an association and established it; else refused without a word of whose."""
        self._associated(peer)
        session = self.sessions.get(seid)
        if session is None or session.cp_addr != peer:
            raise Refused(CONTEXT_NOT_FOUND, f"no session {seid} of {peer}")
        return session

    def _modify(self, message, kind, peer: str):
        p = self.p
        cp_seid = 0
        try:
            old = self._owned(message.seid, peer)
            cp_seid, session = old.cp_seid, old.copy()
            self._remove_rules(session, kind)
            self._update_rules(session, kind)
            created = self._take_rules(session, kind)
            self._put(message.seid, old, session)
        except (Refused, RuleFailure) as refused:
            cause = refused.cause if isinstance(refused, Refused) else RULE_FAILURE
            say.info(f"pfcp: modification of session {message.seid} from {peer} refused: {refused}")
            return self._session_answer(p.PFCPSessionModificationResponse, message, cp_seid, cause)
        return self._session_answer(p.PFCPSessionModificationResponse, message, cp_seid, ACCEPTED,
                                    self._created_pdrs(created))

    def _delete(self, message, kind, peer: str):
        p = self.p
        try:
            session = self._owned(message.seid, peer)
        except Refused as refused:
            say.info(f"pfcp: deletion of session {message.seid} from {peer} refused: {refused}")
            return self._session_answer(p.PFCPSessionDeletionResponse, message, 0, refused.cause)
        self._remove(message.seid)
        return self._session_answer(p.PFCPSessionDeletionResponse, message, session.cp_seid, ACCEPTED)

    # ------------------------------------------------------------------ the session table

    def _claims(self, session: Session) -> dict[tuple, int]:
        """What of the upf's a session takes, by PDR: its uplink TEIDs and its UE addresses."""
        return {("teid", pdr["teid"]) if pdr["direction"] == "uplink" else ("ue", pdr["ue"]): pdr_id
                for pdr_id, pdr in session.pdrs.items()}

    def _put(self, seid: int, old: Session | None, new: Session) -> None:
        """The session's new state checked whole, put in force on the upf all or nothing, then kept."""
        new.check()
        for claim, pdr_id in self._claims(new).items():
            owner = self.owner.get(claim, seid)
            if owner < 0:
                raise RuleFailure(f"PDR {pdr_id}: {claim[0].upper()} {claim[1]} belongs to session {-owner} of the "
                                  "upf's rules file")
            if owner != seid:
                raise RuleFailure(f"PDR {pdr_id}: {claim[0].upper()} {claim[1]} belongs to another session")
        wanted = new.lines(seid)
        put_in_force(self.rules, old.applied if old else set(), wanted)
        new.applied = wanted
        if old:
            self._forget(old)
        self.sessions[seid] = new
        self.by_cp_seid[(new.cp_addr, new.cp_seid)] = seid
        self.owner.update({claim: seid for claim in self._claims(new)})

    def _forget(self, session: Session) -> None:
        for claim in self._claims(session):
            self.owner.pop(claim, None)

    def _remove(self, seid: int) -> None:
        session = self.sessions.pop(seid)
        put_in_force(self.rules, session.applied, set())
        self._forget(session)
        del self.by_cp_seid[(session.cp_addr, session.cp_seid)]

    def _choose_teid(self) -> int:
        """The next TEID no session holds, from FIRST_CHOSEN_TEID on (after the last, round again)."""
        for _ in range(len(self.owner) + 1):
            teid = self.next_teid
            self.next_teid = teid + 1 if teid < LAST_TEID else FIRST_CHOSEN_TEID
            if ("teid", teid) not in self.owner:
                return teid
        raise Refused(NO_RESOURCES, "no TEID is free")

    # ------------------------------------------------------------------ IEs to rules

    def _remove_rules(self, session: Session, kind) -> None:
        p = self.p
        for remove, id_class, table, what in ((p.IE_RemovePDR, p.IE_PDR_Id, session.pdrs, "PDR"),
                                              (p.IE_RemoveFAR, p.IE_FAR_Id, session.fars, "FAR"),
                                              (p.IE_RemoveQER, p.IE_QER_Id, session.qers, "QER")):
            for ie in _ies(kind, remove):
                rule_id = _one(ie, id_class, f"Remove {what}'s {what} ID").id
                if table.pop(rule_id, None) is None:
                    raise RuleFailure(f"Remove {what} {rule_id}: no such {what} in the session")

    def _update_rules(self, session: Session, kind) -> None:
        p = self.p
        for ie in _ies(kind, p.IE_UpdateFAR):
            far_id = _one(ie, p.IE_FAR_Id, "the FAR ID").id
            if far_id not in session.fars:
                raise RuleFailure(f"Update FAR {far_id}: no such FAR in the session")
            session.fars[far_id].update(self._far(ie, update=True))
        for ie in _ies(kind, p.IE_UpdateQER):
            qer_id = _one(ie, p.IE_QER_Id, "the QER ID").id
            if qer_id not in session.qers:
                raise RuleFailure(f"Update QER {qer_id}: no such QER in the session")
            session.qers[qer_id].update(self._qer(ie, update=True))

    def _refuse_what_is_not_done(self, kind) -> None:
        """Rule IEs this endpoint does not carry out are refused, never accepted and ignored: the SMF would believe
        in rules the upf does not hold."""
        p = self.p
        if _ies(kind, p.IE_UpdatePDR):
            raise RuleFailure("Update PDR is not carried out here: remove the PDR and create it anew")
        for create in _ies(kind, p.IE_CreatePDR):
            for pdi in _ies(create, p.IE_PDI):
                if _ies(pdi, p.IE_SDF_Filter):
                    raise RuleFailure("a PDI's SDF Filter is not carried out here (the upf matches a PDR by TEID "
                                      "and QFI, or by UE address)")

    def _take_rules(self, session: Session, kind) -> list[tuple[int, int]]:
        """The Create FAR, QER and PDR IEs into the session; the (PDR ID, TEID) of each F-TEID chosen here."""
        p = self.p
        self._refuse_what_is_not_done(kind)
        for create, table, id_class, parse, what in ((p.IE_CreateFAR, session.fars, p.IE_FAR_Id, self._far, "FAR"),
                                                     (p.IE_CreateQER, session.qers, p.IE_QER_Id, self._qer, "QER")):
            for ie in _ies(kind, create):
                rule_id = _one(ie, id_class, f"the {what} ID").id
                if rule_id in table:
                    raise RuleFailure(f"Create {what} {rule_id}: the session has one already")
                table[rule_id] = parse(ie)
        created = []
        for ie in _ies(kind, p.IE_CreatePDR):
            pdr_id, pdr = self._pdr(ie)
            if pdr_id in session.pdrs:
                raise RuleFailure(f"Create PDR {pdr_id}: the session has one already")
            if pdr.pop("choose", False):
                pdr["teid"] = self._choose_teid()
                created.append((pdr_id, pdr["teid"]))
            session.pdrs[pdr_id] = pdr
        return created

    def _pdr(self, ie) -> tuple[int, dict]:
        p = self.p
        pdr_id = _one(ie, p.IE_PDR_Id, "the PDR ID").id
        pdi = _one(ie, p.IE_PDI, "the PDI")
        source = _one(pdi, p.IE_SourceInterface, "the PDI's source interface").interface
        far_ids, qer_ids = _ies(ie, p.IE_FAR_Id), _ies(ie, p.IE_QER_Id)
        if not far_ids:
            raise Refused(MANDATORY_IE_MISSING, f"PDR {pdr_id}: the FAR ID is missing")
        pdr = {"far": far_ids[0].id, "qer": qer_ids[0].id if qer_ids else None}
        if source == ACCESS:
            fteid = _one(pdi, p.IE_FTEID, f"PDR {pdr_id}: the F-TEID")
            if not fteid.CH and not 1 <= fteid.TEID <= LAST_TEID:
                raise RuleFailure(f"PDR {pdr_id}: TEID {fteid.TEID} (0 is path management's)")
            pdr.update(direction="uplink", choose=bool(fteid.CH), teid=None if fteid.CH else fteid.TEID,
                       qfi=_ies(pdi, p.IE_QFI)[0].QFI if _ies(pdi, p.IE_QFI) else None)
        elif source == CORE:
            ue = _one(pdi, p.IE_UE_IP_Address, f"PDR {pdr_id}: the UE IP address")
            if not ue.V4:
                raise RuleFailure(f"PDR {pdr_id}: only IPv4 UE addresses are taken here")
            pdr.update(direction="downlink", ue=ue.ipv4)
        else:
            raise RuleFailure(f"PDR {pdr_id}: source interface {source} is neither Access nor Core")
        return pdr_id, pdr

    def _far(self, ie, update: bool = False) -> dict:
        """A FAR's fields from its IEs; in an update, only the fields the IE carries."""
        p = self.p
        far: dict = {}
        actions = _ies(ie, p.IE_ApplyAction)
        if actions:
            a = actions[0]
            far["action"] = "drop" if a.DROP else "buffer" if a.BUFF else "forward" if a.FORW else "drop"
        elif not update:
            raise Refused(MANDATORY_IE_MISSING, "a FAR's Apply Action is missing")
        params = _ies(ie, p.IE_UpdateForwardingParameters if update else p.IE_ForwardingParameters)
        if params:
            destinations = _ies(params[0], p.IE_DestinationInterface)
            if destinations:
                far["to"] = "n3" if destinations[0].interface == ACCESS else "n6"
            elif not update:
                raise Refused(MANDATORY_IE_MISSING, "the destination interface is missing")
            creation = _ies(params[0], p.IE_OuterHeaderCreation)
            if creation:
                far["tunnel"] = (creation[0].TEID, creation[0].ipv4) if creation[0].GTPUUDPIPV4 else None
            elif not update:
                far["tunnel"] = None
        return far

    def _qer(self, ie, update: bool = False) -> dict:
        """A QER's rates and QFI; in an update, only those the IE carries (an MBR alone keeps the QFI)."""
        p = self.p
        mbr, qfi = _ies(ie, p.IE_MBR), _ies(ie, p.IE_QFI)
        qer = {}
        if mbr or not update:
            qer.update(ul_kbps=mbr[0].ul if mbr else 0, dl_kbps=mbr[0].dl if mbr else 0)
        if qfi or not update:
            qer["qfi"] = qfi[0].QFI if qfi else None
        return qer


def _ipv4(what: str, addr: str) -> str:
    try:
        ipaddress.IPv4Address(addr)
    except ValueError:
        raise XnfError(f"{what} {addr}: give an IPv4 address") from None
    return addr


def serve(instance: str, listen: str, port: int, n3_addr: str, node_addr: str | None, smfs: list[str] | None = None,
          max_sessions: int = DEFAULT_MAX_SESSIONS) -> int:
    """Answers PFCP requests on listen:port until interrupted."""
    for what, addr in (("--listen", listen), ("--n3-addr", n3_addr), ("--node-id", node_addr or listen),
                       *(("--smf", smf) for smf in smfs or [])):
        _ipv4(what, addr)
    if not 1 <= port <= 65535:
        raise XnfError(f"--port {port}: give a UDP port from 1 to 65535 (PFCP's is {PFCP_PORT})")
    if max_sessions < 1:
        raise XnfError(f"--max-sessions {max_sessions}: give 1 or more")
    rules = InstanceRules(instance)
    rules.list()   # the instance is there and answers, before anything is promised
    endpoint = Endpoint(rules, n3_addr, node_addr or listen, set(smfs) if smfs else None, max_sessions)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((listen, port))
    except OSError as err:
        raise XnfError(f"cannot listen for PFCP on {listen}:{port}: {err.strerror}") from None
    say.info(f"pfcp: answering on {listen}:{port} for upf instance '{instance}'")
    try:
        while True:
            for datagram, peer in answer_order(waiting(sock)):
                try:
                    answer = endpoint.answer(datagram, peer)
                except Exception as err:   # a malformed message must not end the endpoint
                    say.info(f"pfcp: a message from {peer[0]} could not be read: {err}")
                    continue
                if answer:
                    sock.sendto(answer, peer)
    except KeyboardInterrupt:
        return 0
    finally:
        sock.close()


MAX_BATCH = 256


def waiting(sock: socket.socket) -> list[tuple[bytes, tuple]]:
    """The next datagram (waiting for it), and those queued behind it, up to MAX_BATCH."""
    batch = [sock.recvfrom(65535)]
    sock.setblocking(False)
    try:
        while len(batch) < MAX_BATCH:
            batch.append(sock.recvfrom(65535))
    except BlockingIOError:
        pass
    finally:
        sock.setblocking(True)
    return batch


def answer_order(batch: list[tuple[bytes, tuple]]) -> list[tuple[bytes, tuple]]:
    """Heartbeats first, the rest as they came: an SMF that hears no heartbeat answer for a while takes the UP
    function for dead (TS 29.244 6.2.2), so a burst of session messages must not hold them up."""
    heartbeat = 1   # the PFCP header's message type, its second byte
    return sorted(batch, key=lambda item: not (len(item[0]) > 1 and item[0][1] == heartbeat))

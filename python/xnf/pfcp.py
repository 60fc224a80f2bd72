"""`xnf pfcp`: a PFCP endpoint (3GPP TS 29.244, the N4 interface) in front of a running upf instance, so that an
SMF sets up its sessions: association set-up, heartbeats, and session establishment, modification and deletion
with the Create / Update / Remove PDR, FAR and QER IEs the upf NF has rules for. Each session becomes the rule
lines of nfs/upf/README.md, applied through the instance's control socket (`xnf rules add|del`); the messages are
read and written with scapy's PFCP layer (scapy.contrib.pfcp).

The session's rules are named by the SEID this endpoint gives it (the UP F-SEID of its answer). A PFCP QER's two
rates become two of the upf's QERs: uplink (2 x ID) for its uplink PDRs, downlink (2 x ID + 1) for its downlink
ones. A PDR whose F-TEID asks the UP function to choose (CH) gets the next TEID of this endpoint's, on the N3
address given with --n3-addr, reported in a Created PDR IE.

Not done: usage reports (URRs: the PDRs' counters are in `xnf rules list`), BARs and buffering, SDF filters,
Update PDR, PFD management, several UP functions' associations at once (the last association set-up wins).
"""

from __future__ import annotations

import ipaddress
import socket
import time
from dataclasses import dataclass, field

from xnf import control, say
from xnf.errors import XnfError

PFCP_PORT = 8805
# TS 29.244 8.2.1 causes.
ACCEPTED, REJECTED, CONTEXT_NOT_FOUND, MANDATORY_IE_MISSING, RULE_FAILURE = 1, 64, 65, 66, 70
# TS 29.244 8.2.2 / 8.2.24 interface values.
ACCESS, CORE = 0, 1
FIRST_CHOSEN_TEID = 0x10000
NTP_EPOCH_OFFSET = 2208988800   # seconds from 1900 (a Recovery Time Stamp's epoch) to 1970


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


@dataclass
class Session:
    """One PFCP session: the CP's SEID and address, and its PDRs, FARs and QERs as the upf's rule lines."""
    cp_seid: int
    cp_addr: tuple
    pdrs: dict[int, dict] = field(default_factory=dict)
    fars: dict[int, dict] = field(default_factory=dict)
    qers: dict[int, dict] = field(default_factory=dict)
    applied: set[str] = field(default_factory=set)


class Endpoint:
    def __init__(self, instance: str, n3_addr: str, node_addr: str):
        from scapy.contrib import pfcp

        self.p = pfcp
        self.instance, self.n3_addr, self.node_addr = instance, n3_addr, node_addr
        self.sessions: dict[int, Session] = {}
        self.next_seid, self.next_teid = 1, FIRST_CHOSEN_TEID
        self.started = int(time.time()) + NTP_EPOCH_OFFSET

    # ------------------------------------------------------------------ messages

    def answer(self, datagram: bytes, peer: tuple) -> bytes | None:
        """The answer to one PFCP request (None for what needs none)."""
        p = self.p
        message = p.PFCP(datagram)
        # By the header's type: a request without IEs (a deletion) has no payload for scapy to type.
        handlers = {1: (self._heartbeat, p.PFCPHeartbeatRequest), 5: (self._association, p.PFCPAssociationSetupRequest),
                    50: (self._establish, p.PFCPSessionEstablishmentRequest),
                    52: (self._modify, p.PFCPSessionModificationRequest),
                    54: (self._delete, p.PFCPSessionDeletionRequest)}
        if message.message_type not in handlers:
            say.info(f"pfcp: message type {message.message_type} from {peer[0]}: not handled")
            return None
        handler, request = handlers[message.message_type]
        kind = message.payload if isinstance(message.payload, request) else request()
        header, body = handler(message, kind, peer)
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

    def _heartbeat(self, message, kind, peer):
        return self.p.PFCP(S=0, seq=message.seq), self.p.PFCPHeartbeatResponse(IE_list=[self._recovery()])

    def _association(self, message, kind, peer):
        return (self.p.PFCP(S=0, seq=message.seq),
                self.p.PFCPAssociationSetupResponse(IE_list=[self._node_id(), self.p.IE_Cause(cause=ACCEPTED),
                                                             self._recovery()]))

    def _establish(self, message, kind, peer):
        p = self.p
        try:
            cp = _one(kind, p.IE_FSEID, "the CP F-SEID")
            session = Session(cp_seid=cp.seid, cp_addr=peer)
            created = self._take_rules(session, kind)
            seid = self.next_seid
            self._apply(seid, session)
        except Refused as refused:
            say.info(f"pfcp: session establishment refused: {refused}")
            cp_seid = next((ie.seid for ie in _ies(kind, p.IE_FSEID)), 0)
            return (p.PFCP(seid=cp_seid, seq=message.seq),
                    p.PFCPSessionEstablishmentResponse(IE_list=[self._node_id(), p.IE_Cause(cause=refused.cause)]))
        self.next_seid += 1
        self.sessions[seid] = session
        body = [self._node_id(), p.IE_Cause(cause=ACCEPTED), p.IE_FSEID(v4=1, seid=seid, ipv4=self.node_addr)]
        body += self._created_pdrs(created)
        return p.PFCP(seid=session.cp_seid, seq=message.seq), p.PFCPSessionEstablishmentResponse(IE_list=body)

    def _modify(self, message, kind, peer):
        p = self.p
        session = self.sessions.get(message.seid)
        if session is None:
            return (p.PFCP(seid=0, seq=message.seq),
                    p.PFCPSessionModificationResponse(IE_list=[p.IE_Cause(cause=CONTEXT_NOT_FOUND)]))
        before = (dict(session.pdrs), dict(session.fars), dict(session.qers))
        try:
            for remove, table in ((p.IE_RemovePDR, session.pdrs), (p.IE_RemoveFAR, session.fars),
                                  (p.IE_RemoveQER, session.qers)):
                for ie in _ies(kind, remove):
                    id_ie = _one(ie, (p.IE_PDR_Id, p.IE_FAR_Id, p.IE_QER_Id), "the rule's ID")
                    table.pop(id_ie.id, None)
            for ie in _ies(kind, p.IE_UpdateFAR):
                far_id = _one(ie, p.IE_FAR_Id, "the FAR ID").id
                if far_id not in session.fars:
                    raise Refused(RULE_FAILURE, f"Update FAR {far_id}: no such FAR in the session")
                session.fars[far_id] = {**session.fars[far_id], **self._far(ie, update=True)}
            for ie in _ies(kind, p.IE_UpdateQER):
                qer_id = _one(ie, p.IE_QER_Id, "the QER ID").id
                session.qers[qer_id] = {**session.qers.get(qer_id, {}), **self._qer(ie)}
            created = self._take_rules(session, kind)
            self._apply(message.seid, session)
        except Refused as refused:
            session.pdrs, session.fars, session.qers = before
            say.info(f"pfcp: session {message.seid} modification refused: {refused}")
            return (p.PFCP(seid=session.cp_seid, seq=message.seq),
                    p.PFCPSessionModificationResponse(IE_list=[p.IE_Cause(cause=refused.cause)]))
        body = [p.IE_Cause(cause=ACCEPTED)] + self._created_pdrs(created)
        return p.PFCP(seid=session.cp_seid, seq=message.seq), p.PFCPSessionModificationResponse(IE_list=body)

    def _delete(self, message, kind, peer):
        p = self.p
        session = self.sessions.pop(message.seid, None)
        if session is None:
            return (p.PFCP(seid=0, seq=message.seq),
                    p.PFCPSessionDeletionResponse(IE_list=[p.IE_Cause(cause=CONTEXT_NOT_FOUND)]))
        session.pdrs, session.fars, session.qers = {}, {}, {}
        self._apply(message.seid, session)
        return p.PFCP(seid=session.cp_seid, seq=message.seq), p.PFCPSessionDeletionResponse(
            IE_list=[p.IE_Cause(cause=ACCEPTED)])

    # ------------------------------------------------------------------ IEs to rules

    def _take_rules(self, session: Session, kind) -> list[tuple[int, int]]:
        """The Create FAR, QER and PDR IEs into the session; the (PDR ID, TEID) of each F-TEID chosen here."""
        p = self.p
        for ie in _ies(kind, p.IE_CreateFAR):
            session.fars[_one(ie, p.IE_FAR_Id, "the FAR ID").id] = self._far(ie)
        for ie in _ies(kind, p.IE_CreateQER):
            session.qers[_one(ie, p.IE_QER_Id, "the QER ID").id] = self._qer(ie)
        created = []
        for ie in _ies(kind, p.IE_CreatePDR):
            pdr_id, pdr = self._pdr(ie)
            if pdr.get("choose"):
                pdr["teid"], self.next_teid = self.next_teid, self.next_teid + 1
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
            pdr.update(direction="uplink", choose=bool(fteid.CH), teid=None if fteid.CH else fteid.TEID,
                       qfi=_ies(pdi, p.IE_QFI)[0].QFI if _ies(pdi, p.IE_QFI) else None)
        elif source == CORE:
            ue = _one(pdi, p.IE_UE_IP_Address, f"PDR {pdr_id}: the UE IP address")
            if not ue.V4:
                raise Refused(RULE_FAILURE, f"PDR {pdr_id}: only IPv4 UE addresses are taken here")
            pdr.update(direction="downlink", ue=ue.ipv4)
        else:
            raise Refused(RULE_FAILURE, f"PDR {pdr_id}: source interface {source} is neither Access nor Core")
        return pdr_id, pdr

    def _far(self, ie, update: bool = False) -> dict:
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
            destination = _one(params[0], p.IE_DestinationInterface, "the destination interface").interface
            creation = _ies(params[0], p.IE_OuterHeaderCreation)
            far["to"] = "n3" if destination == ACCESS else "n6"
            far["tunnel"] = (creation[0].TEID, creation[0].ipv4) if creation and creation[0].GTPUUDPIPV4 else None
        return far

    def _qer(self, ie) -> dict:
        p = self.p
        mbr, qfi = _ies(ie, p.IE_MBR), _ies(ie, p.IE_QFI)
        return {"ul_kbps": mbr[0].ul if mbr else 0, "dl_kbps": mbr[0].dl if mbr else 0,
                "qfi": qfi[0].QFI if qfi else None}

    def lines(self, seid: int, s: Session) -> set[str]:
        """The session as the upf's rule lines."""
        out = set()
        for pdr_id, pdr in s.pdrs.items():
            qer = s.qers.get(pdr["qer"]) if pdr["qer"] else None
            rate_id = None
            if qer and qer["ul_kbps" if pdr["direction"] == "uplink" else "dl_kbps"]:
                rate_id = 2 * pdr["qer"] + (pdr["direction"] == "downlink")
            tail = f" far {pdr['far']}" + (f" qer {rate_id}" if rate_id else "")
            if pdr["direction"] == "uplink":
                out.add(f"pdr {seid} {pdr_id} uplink teid {pdr['teid']}" +
                        (f" qfi {pdr['qfi']}" if pdr["qfi"] else "") + tail)
            else:
                out.add(f"pdr {seid} {pdr_id} downlink ue {pdr['ue']}" + tail)
        for far_id, far in s.fars.items():
            out.add(f"far {seid} {far_id} " + self._far_line(far, self._downlink_qfi(s, far_id)))
        for qer_id, qer in s.qers.items():
            for offset, key in ((0, "ul_kbps"), (1, "dl_kbps")):
                if qer[key]:
                    out.add(f"qer {seid} {2 * qer_id + offset} mbr {qer[key]}k")
        return out

    @staticmethod
    def _far_line(far: dict, qfi: int | None) -> str:
        if far.get("action") != "forward":
            return far.get("action", "drop")
        if far.get("to") == "n3":
            if not far.get("tunnel"):
                raise Refused(RULE_FAILURE, "a FAR to Access needs an Outer Header Creation (GTP-U/UDP/IPv4)")
            teid, peer = far["tunnel"]
            return f"forward n3 teid {teid} to {peer}" + (f" qfi {qfi}" if qfi else "")
        return "forward n6"

    @staticmethod
    def _downlink_qfi(s: Session, far_id: int) -> int | None:
        """The QFI a FAR's tunnel carries: its downlink PDR's QER's."""
        for pdr in s.pdrs.values():
            qer = s.qers.get(pdr["qer"]) if pdr["qer"] else None
            if pdr["far"] == far_id and pdr["direction"] == "downlink" and qer and qer["qfi"]:
                return qer["qfi"]
        return None

    def _apply(self, seid: int, s: Session) -> None:
        """Brings the instance's rules to the session's lines: the old lines no longer wanted deleted, the new ones
        added. A line the instance refuses undoes what this call added, and is answered as a rule failure."""
        try:
            wanted = self.lines(seid, s)
        except KeyError as missing:
            raise Refused(RULE_FAILURE, f"a PDR names a rule the session lacks ({missing})") from None
        added = []
        try:
            for line in sorted(wanted - s.applied, key=lambda ln: not ln.startswith(("far", "qer"))):
                control.request(self.instance, f"rules add {line}")
                added.append(line)
        except XnfError as err:
            for line in added:
                control.request(self.instance, f"rules del {line}")
            raise Refused(RULE_FAILURE, str(err)) from None
        kept = {_rule_key(line) for line in wanted}
        stale = [line for line in s.applied if _rule_key(line) not in kept]
        for line in sorted(stale, key=lambda ln: ln.startswith(("far", "qer"))):
            try:
                control.request(self.instance, f"rules del {line}")
            except XnfError as err:
                say.info(f"pfcp: could not remove '{line}': {err}")
        s.applied = wanted


def _rule_key(line: str) -> tuple:
    """What names a rule line's entry in the upf: a PDR's match (its TEID and QFI, or its UE), a FAR's or QER's
    session and ID. A line replaced by one with the same key is not to be deleted after it."""
    words = line.split()
    if words[0] == "pdr":
        return tuple(words[3:words.index("far")])
    return tuple(words[:3])


def serve(instance: str, listen: str, port: int, n3_addr: str, node_addr: str | None) -> int:
    """Answers PFCP requests on listen:port until interrupted."""
    for what, addr in (("--listen", listen), ("--n3-addr", n3_addr), ("--node-id", node_addr or listen)):
        try:
            ipaddress.IPv4Address(addr)
        except ValueError:
            raise XnfError(f"{what} {addr}: give an IPv4 address") from None
    control.request(instance, "rules list")   # the instance is there and answers, before anything is promised
    endpoint = Endpoint(instance, n3_addr, node_addr or listen)
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        sock.bind((listen, port))
    except OSError as err:
        raise XnfError(f"cannot listen for PFCP on {listen}:{port}: {err.strerror}") from None
    say.info(f"pfcp: answering on {listen}:{port} for upf instance '{instance}'")
    try:
        while True:
            datagram, peer = sock.recvfrom(65535)
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

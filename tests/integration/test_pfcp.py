"""`xnf pfcp` in front of a running upf: an SMF's messages, built with scapy's PFCP layer, set up a session the UE's
real traffic then goes through (ping through the lab's gNB), change it (its downlink FAR to drop) and delete it;
the rules the endpoint wrote are checked in `xnf rules list`, and requests it cannot honour get their cause."""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager

import pytest
from scapy.contrib import pfcp as p

from test_upf import QFI, UE, UP_TEID, DOWN_TEID, ue_behind_a_gnb, upf_rules
from xnf import control
from xnf.lab import apps, netns
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

SMF = "127.0.0.1"
CP_SEID = 0x1234

_EXCHANGE = """
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 0))
s.settimeout(5)
for request in sys.argv[2:]:
    s.sendto(bytes.fromhex(request), ("127.0.0.1", 8805))
    print(s.recv(65535).hex())
"""
OTHER_NODE = "127.0.0.2"   # another SMF, or whoever pretends to be one: loopback, so it reaches the endpoint


def exchange(ns: str, *messages, source: str = SMF) -> list:
    """Each message sent from source in the DUT's namespace to the endpoint, and its answer, read by scapy."""
    out = netns.run(ns, [sys.executable, "-c", _EXCHANGE, source, *(bytes(m).hex() for m in messages)],
                    timeout=30).stdout
    return [p.PFCP(bytes.fromhex(line)) for line in out.split()]


def association(node: str = SMF, seq: int = 1, recovery: int = 3900000000):
    return p.PFCP(S=0, seq=seq) / p.PFCPAssociationSetupRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4=node), p.IE_RecoveryTimeStamp(timestamp=recovery)])


def listed(nf: NfInstance) -> set[str]:
    return {line.split("  #")[0] for line in nf.request("rules list").splitlines()}


def cause(answer) -> int:
    return next(ie.cause for ie in answer.payload.IE_list if isinstance(ie, p.IE_Cause))


def establishment(gnb_ip: str, n3: str, seq: int = 2, choose: bool = False, with_far_id: bool = True):
    fteid = p.IE_FTEID(V4=1, CH=1) if choose else p.IE_FTEID(V4=1, TEID=UP_TEID, ipv4=n3)
    uplink = [p.IE_PDR_Id(id=1), p.IE_Precedence(precedence=100),
              p.IE_PDI(IE_list=[p.IE_SourceInterface(interface="Access"), fteid, p.IE_QFI(QFI=QFI)]),
              p.IE_OuterHeaderRemoval()] + ([p.IE_FAR_Id(id=1)] if with_far_id else [])
    downlink = [p.IE_PDR_Id(id=2), p.IE_Precedence(precedence=100),
                p.IE_PDI(IE_list=[p.IE_SourceInterface(interface="Core"), p.IE_UE_IP_Address(V4=1, SD=1, ipv4=UE)]),
                p.IE_FAR_Id(id=2), p.IE_QER_Id(id=1)]
    fars = [p.IE_CreateFAR(IE_list=[p.IE_FAR_Id(id=1), p.IE_ApplyAction(FORW=1), p.IE_ForwardingParameters(
                IE_list=[p.IE_DestinationInterface(interface="Core")])]),
            p.IE_CreateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(FORW=1), p.IE_ForwardingParameters(
                IE_list=[p.IE_DestinationInterface(interface="Access"),
                         p.IE_OuterHeaderCreation(GTPUUDPIPV4=1, TEID=DOWN_TEID, ipv4=gnb_ip)])])]
    qer = p.IE_CreateQER(IE_list=[p.IE_QER_Id(id=1), p.IE_MBR(ul=0, dl=100000), p.IE_QFI(QFI=QFI)])
    return p.PFCP(seid=0, seq=seq) / p.PFCPSessionEstablishmentRequest(IE_list=[
        p.IE_NodeId(id_type="IPv4", ipv4=SMF), p.IE_FSEID(v4=1, seid=CP_SEID, ipv4=SMF),
        p.IE_CreatePDR(IE_list=uplink), p.IE_CreatePDR(IE_list=downlink), *fars, qer])


def start_endpoint(t: HostsTopology, nf: NfInstance) -> None:
    proc = t.spawn(t.dut_ns, [sys.executable, "-m", "xnf", "pfcp", "--name", nf.name, "--listen", SMF,
                              "--n3-addr", t.host(0).dut_ip])
    deadline = time.monotonic() + 10
    while ":8805 " not in netns.run(t.dut_ns, ["ss", "-Huln"], check=False).stdout:
        if proc.poll() is not None or time.monotonic() > deadline:
            pytest.fail(f"xnf pfcp did not start: {proc.stderr.read()}")
        time.sleep(0.05)


@contextmanager
def upf_behind_an_endpoint(rules_file, ue: bool = True):
    """A upf with its interfaces and no session, the UE behind the lab's gNB (when ue), and `xnf pfcp` before it."""
    with HostsTopology(hosts=2) as t:
        if ue:
            ue_behind_a_gnb(t)
        interfaces = "".join(line + "\n" for line in upf_rules(t).splitlines()[:2])
        with NfInstance.start(t, "upf", "xdp", t.dut_ifaces, rules=rules_file(interfaces)) as nf:
            start_endpoint(t, nf)
            yield t, nf, interfaces


def test_an_smf_sets_up_changes_and_deletes_a_session(rules_file):
    with upf_behind_an_endpoint(rules_file) as (t, nf, interfaces):
        gnb, server = t.host(0), t.host(1)
        associated, heartbeat, established = exchange(
            t.dut_ns, association(),
            p.PFCP(S=0, seq=9) / p.PFCPHeartbeatRequest(IE_list=[p.IE_RecoveryTimeStamp(timestamp=3900000000)]),
            establishment(gnb.ip, gnb.dut_ip))
        assert cause(associated) == 1 and isinstance(heartbeat.payload, p.PFCPHeartbeatResponse)
        assert cause(established) == 1 and established.seid == CP_SEID
        up_seid = next(ie.seid for ie in established.payload.IE_list if isinstance(ie, p.IE_FSEID))
        listed = {line.split("  #")[0] for line in nf.request("rules list").splitlines()}
        assert {f"pdr {up_seid} 1 uplink teid {UP_TEID} qfi {QFI} far 1",
                f"pdr {up_seid} 2 downlink ue {UE} far 2 qer 3", f"far {up_seid} 1 forward n6",
                f"far {up_seid} 2 forward n3 teid {DOWN_TEID} to {gnb.ip} qfi {QFI}",
                f"qer {up_seid} 3 mbr 100000000 burst 1250000"} <= listed, listed
        assert apps.ping(gnb.ns, server.ip, 5) == 5

        drop_downlink = p.PFCP(seid=up_seid, seq=3) / p.PFCPSessionModificationRequest(IE_list=[
            p.IE_UpdateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(DROP=1)])])
        modified, = exchange(t.dut_ns, drop_downlink)
        assert cause(modified) == 1
        assert f"far {up_seid} 2 drop" in nf.request("rules list").splitlines()
        assert apps.ping(gnb.ns, server.ip, 3) == 0
        assert control.request_json(nf.name, "stats")["counters"]["far_drop"] >= 3

        deleted, unknown = exchange(
            t.dut_ns, p.PFCP(seid=up_seid, seq=4) / p.PFCPSessionDeletionRequest(),
            p.PFCP(seid=up_seid, seq=5) / p.PFCPSessionDeletionRequest())
        assert (cause(deleted), cause(unknown)) == (1, 65)
        assert nf.request("rules list").splitlines() == interfaces.splitlines()


def test_what_the_endpoint_cannot_do_is_answered_with_its_cause(rules_file):
    """A PDR without a FAR ID is a missing mandatory IE; a TEID the UP function is to choose comes back in a
    Created PDR, and that session's rules use it."""
    with upf_behind_an_endpoint(rules_file, ue=False) as (t, nf, _):
        gnb = t.host(0)
        _, missing, chosen = exchange(t.dut_ns, association(),
                                      establishment(gnb.ip, gnb.dut_ip, with_far_id=False),
                                      establishment(gnb.ip, gnb.dut_ip, seq=3, choose=True))
        assert cause(missing) == 66 and cause(chosen) == 1
        created = next(ie for ie in chosen.payload.IE_list if isinstance(ie, p.IE_CreatedPDR))
        fteid = next(ie for ie in created.IE_list if isinstance(ie, p.IE_FTEID))
        assert fteid.ipv4 == gnb.dut_ip and fteid.TEID >= 0x10000
        assert any(f"uplink teid {fteid.TEID} qfi {QFI} far 1" in line
                   for line in nf.request("rules list").splitlines())


def test_a_session_is_its_smfs_alone_and_a_request_sent_again_is_done_once(rules_file):
    """TS 29.244 as an operator deploys it, against a running upf: an establishment sent three times (one sequence
    number) makes one session and three identical answers; another node, with or without an association, can
    neither delete, change nor take over that session's TEID and UE (and the rules in force do not move); a
    modification that fails part way changes nothing; an Update QER with an MBR alone keeps the QER's QFI."""
    with upf_behind_an_endpoint(rules_file) as (t, nf, interfaces):
        gnb, server = t.host(0), t.host(1)
        _, *thrice = exchange(t.dut_ns, association(), *[establishment(gnb.ip, gnb.dut_ip)] * 3)
        assert cause(thrice[0]) == 1 and bytes(thrice[0]) == bytes(thrice[1]) == bytes(thrice[2])
        up_seid = next(ie.seid for ie in thrice[0].payload.IE_list if isinstance(ie, p.IE_FSEID))
        session = listed(nf)
        assert sum(line.startswith("pdr ") for line in session) == 2, session

        delete = p.PFCP(seid=up_seid, seq=7) / p.PFCPSessionDeletionRequest()
        drop = p.PFCP(seid=up_seid, seq=8) / p.PFCPSessionModificationRequest(IE_list=[
            p.IE_UpdateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(DROP=1)])])
        unassociated, = exchange(t.dut_ns, delete, source=OTHER_NODE)
        _, spoofed_delete, spoofed_drop, takeover = exchange(
            t.dut_ns, association(OTHER_NODE), delete, drop, establishment(gnb.ip, gnb.dut_ip, seq=9),
            source=OTHER_NODE)
        assert (cause(unassociated), cause(spoofed_delete), cause(spoofed_drop), cause(takeover)) == \
            (72, 65, 65, 73)
        assert listed(nf) == session
        assert apps.ping(gnb.ns, server.ip, 3) == 3

        half_done = p.PFCP(seid=up_seid, seq=10) / p.PFCPSessionModificationRequest(IE_list=[
            p.IE_UpdateFAR(IE_list=[p.IE_FAR_Id(id=2), p.IE_ApplyAction(DROP=1)]),
            p.IE_CreatePDR(IE_list=[p.IE_PDR_Id(id=0), p.IE_Precedence(precedence=1), p.IE_PDI(IE_list=[
                p.IE_SourceInterface(interface="Core"), p.IE_UE_IP_Address(V4=1, SD=1, ipv4="10.60.0.2")]),
                p.IE_FAR_Id(id=2)])])
        rate_only = p.PFCP(seid=up_seid, seq=11) / p.PFCPSessionModificationRequest(IE_list=[
            p.IE_UpdateQER(IE_list=[p.IE_QER_Id(id=1), p.IE_MBR(ul=0, dl=50000)])])
        refused, changed = exchange(t.dut_ns, half_done, rate_only)
        assert cause(refused) == 73 and cause(changed) == 1
        after = listed(nf)
        assert f"far {up_seid} 2 forward n3 teid {DOWN_TEID} to {gnb.ip} qfi {QFI}" in after, after
        assert f"qer {up_seid} 3 mbr 50000000 burst 625000" in after, after
        assert apps.ping(gnb.ns, server.ip, 3) == 3

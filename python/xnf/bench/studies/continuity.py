"""The NAT as a service under traffic: what a reload, a restart, an upgrade, a SIGKILL and moves between XDP and
AF_XDP workers cost the flows through it (issue: an NF that runs like a service).

Two containers (h0 inside, h1 outside) and the NAT between them on the DUT with --state, IPv4 forwarding off there
so that only the NAT carries, and xnf-gen on both hosts' segments (a bridge in each host joins it; lab/hosts.py).
For the whole run, one TCP connection from h0 to h1 (iperf3, --tcp-mbit) must never be reset. Each event gets a
window of its own, with two streams sent inward, so that only a mapping the NAT kept lets them in (nothing goes out
to make it again), the event one second into it:
  - xnf-gen's 64-byte frames at half the lab's capacity (--gen-pps; by default half of what the slower of xdp and
    afxdp carried, xnf-gen sending flat out, measured as the run starts), to an inside endpoint of its own whose
    mapping one outward burst made before the first event; its receiver counts every frame;
  - a UDP flow between the hosts (iperf3, 18-byte datagrams: 64-byte frames) at --pps; iperf3 numbers every
    datagram, and the receiving host's UdpRcvbufErrors say how much of the loss its own socket dropped (a 4 MiB
    buffer: AF_XDP workers deliver in batches from the other core, which a default buffer did not always hold).
The events, in order, every round:
  none            no event: the streams' own loss, the yardstick of the same run
  reload          xnf reload (the rules file read again, put in force in place)
  restart         SIGTERM, and the same command again (the kept program forwards in between)
  upgrade         SIGTERM, and a separately built binary of the same NF (build/variants/upgrade) takes over
  kill            SIGKILL of the process, and the same command again
  to-afxdp        xnf move into AF_XDP workers (afxdp; the workers on the DUT core)
  afxdp-none      no event, in afxdp: the streams' own loss on that path
  afxdp-reload, afxdp-restart   the same in afxdp (the workers hand their tables to the kernel build and back)
  afxdp-kill      SIGKILL in afxdp: nothing is handed over; the frames that reach the sockets until the kernel
                  closes them as the process exits are lost (counted here), then the redirect program runs the NAT
                  itself on the kernel's copy of the tables until the next start (a window whose own iperf3
                  control connection was lost does not finish: all of its datagrams are counted lost)
  to-xdp          xnf move back into XDP
After the last round, the NAT's mappings made before the first event are compared with the kept ones.

    xnf bench run continuity [--rounds 3] [--seconds 3] [--pps 20000] [--gen-pps N] [--tcp-mbit 100]
"""

from __future__ import annotations

import argparse
import contextlib
import json
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from xnf import control, instance, programs, say
from xnf.bench import variants
from xnf.bench.study import Place, Study
from xnf.errors import XnfError
from xnf.lab import apps, background, container_nf, kept_state, netns, paths, veth_stats
from xnf.lab.cores import GEN_CORE
from xnf.lab.generator import Generator, flat_out
from xnf.lab.hosts import HostsTopology
from xnf.service import apply as applying
from xnf.service import move

NAME = "continuity"
DESCRIPTION = ("the NAT under a steady stream, a TCP connection and inward UDP while it is reloaded, restarted, "
               "upgraded, killed and moved between XDP and AF_XDP: every datagram counted")
INSTANCE = "xnf-continuity-nat"
DATAGRAM_BYTES = 18                  # UDP payload of a 64-byte frame on the wire (with FCS)
EVENT_AFTER_S = 1.0
WINDOW_SLACK_S = 4.0                 # a window's own time beyond --seconds, at most: iperf3's start, a restart
WHOLE_RUN = "(whole run)"
CAPACITY = "(capacity)"
UPGRADE_VARIANT, UPGRADE_DEFINES = "upgrade", "-DXNF_CONTINUITY_UPGRADE=1"
# xnf-gen's stream: an inside endpoint on h0's segment and a remote beyond h1 (no host has either address), and how
# long the lab's capacity is measured in each path. Its mapping is made once, so the NAT keeps idle UDP mappings for
# an hour here (its default five minutes is about as long as a run).
GEN_INSIDE, GEN_INSIDE_PORT, GEN_REMOTE, GEN_REMOTE_PORT = "198.18.0.100", 40000, "198.51.100.1", 40001
CAPACITY_SECONDS = 2.0
CAPACITY_SLACK_S = 30.0              # what measuring the capacity adds to the TCP connection's time: two moves and back
CAPACITY_PATHS = paths.Modes(paths.kernel_and_user)
UDP_TIMEOUT_S = 3600
# Losses an event is expected to have, and why (said beside its count).
EXPECTED = {"afxdp-kill": "a killed AF_XDP process hands nothing over: what reaches its sockets until the kernel "
                          "closes them as it exits is lost; then the kernel build carries on the copied tables"}


@dataclass
class Service:
    """The NAT instance across the run: its namespace, state folder, and the binary a restart starts."""
    t: HostsTopology
    state: Path
    rules: Path
    upgrade_binary: Path
    gen_port: int = 0       # the public port of xnf-gen's mapping
    gen_pps: int = 0        # xnf-gen's rate in every window

    def argv(self, mode: str, binary: Path | None = None) -> list[str]:
        options = instance.run_options(INSTANCE, mode, self.t.dut_ifaces, str(self.rules), state=str(self.state))
        return netns.exec_argv(self.t.dut_ns, [str(binary or programs.nf_binary("nat")), "run", *options,
                                               *paths.worker_options(mode)])

    def mode(self) -> str:
        return control.request_json(INSTANCE, "info")["mode"]

    def stop(self, sig: int) -> None:
        if not applying.end(INSTANCE, control.owner(INSTANCE).pid, sig):
            raise XnfError(f"{INSTANCE} did not stop within {instance.STOP_TIMEOUT_S:.0f} s")

    def restart(self, sig: int = signal.SIGTERM, binary: Path | None = None) -> None:
        mode = self.mode()
        self.stop(sig)
        applying.spawn(INSTANCE, self.argv(mode, binary))


def _events(service: Service) -> dict:
    """Each event by name: what it does to the running service."""
    return {
        "none": lambda: None,
        "reload": lambda: control.request(INSTANCE, "reload"),
        "restart": service.restart,
        "upgrade": lambda: service.restart(binary=service.upgrade_binary),
        "kill": lambda: service.restart(signal.SIGKILL),
        "to-afxdp": lambda: move.move(INSTANCE, "afxdp", paths.worker_options("afxdp")),
        "afxdp-none": lambda: None,
        "afxdp-reload": lambda: control.request(INSTANCE, "reload"),
        "afxdp-restart": service.restart,
        "afxdp-kill": lambda: service.restart(signal.SIGKILL),
        "to-xdp": lambda: move.move(INSTANCE, "xdp"),
    }


@contextlib.contextmanager
def _lab(args: argparse.Namespace, folder: Path):
    upgrade = variants.binaries(UPGRADE_VARIANT, UPGRADE_DEFINES, ["xnf-nat"])["xnf-nat"]
    bpffs = folder / "bpffs"
    bpffs.mkdir()
    subprocess.run(["mount", "-t", "bpf", "bpf", str(bpffs)], check=True)
    try:
        with HostsTopology(hosts=2, generator=True) as t:
            netns.run(t.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=0"])
            rules = folder / "nat.rules"
            rules.write_text(container_nf.nat_rules(t) + f"timeout udp {UDP_TIMEOUT_S}\n")
            service = Service(t, bpffs / "nat", rules, upgrade)
            applying.spawn(INSTANCE, service.argv("xdp"))
            try:
                yield service
            finally:
                with contextlib.suppress(XnfError):
                    service.stop(signal.SIGTERM)
            applying.remove_logs(INSTANCE)   # after a run that went well: a failed one's log stays for the user to read
    finally:
        subprocess.run(["umount", "-l", str(bpffs)], check=False)


def _open_gen_mapping(t: HostsTopology) -> None:
    """A short burst out from xnf-gen's inside endpoint to its remote: the mapping and session its stream comes
    back through."""
    Generator(t, link=0).run("--count", "3", "--rate", "1000", "--class",
                             f"open:share=1,saddr={GEN_INSIDE}/32,sport={GEN_INSIDE_PORT},daddr={GEN_REMOTE}/32,"
                             f"dport={GEN_REMOTE_PORT},flows=1")


def _gen_inward(t: HostsTopology, public_port: int, *options: str) -> dict:
    """xnf-gen from the remote to the public side of its mapping, counted as it reaches the inside endpoint: the
    summary of its one class."""
    stream = f"in:share=1,saddr={GEN_REMOTE}/32,sport={GEN_REMOTE_PORT},daddr={t.host(1).dut_ip}/32," \
             f"dport={public_port},flows=1"
    return Generator(t, link=1, receive_on=0).run(*options, "--class", stream).summary


def _gen_public_port(service: Service) -> int:
    """The public port the NAT gave xnf-gen's inside endpoint (bpftool shows a network-order field as the number
    its bytes make in this machine's order)."""
    addr = int.from_bytes(socket.inet_aton(GEN_INSIDE), sys.byteorder)
    for key, (port, _) in kept_state.nat_mappings(service.state).items():
        endpoint = json.loads(key)
        if endpoint["addr"] == addr and endpoint["port"] == socket.htons(GEN_INSIDE_PORT):
            return socket.ntohs(port)
    raise XnfError(f"the NAT made no mapping for xnf-gen's inside endpoint {GEN_INSIDE}:{GEN_INSIDE_PORT}")


def _capacity(service: Service) -> dict[str, float]:
    """Frames a second each path carried inward, xnf-gen sending flat out (the path moved there and back)."""
    carried = {}
    for mode in CAPACITY_PATHS:
        if service.mode() != mode:
            move.move(INSTANCE, mode, paths.worker_options(mode))
        got = _gen_inward(service.t, service.gen_port, *flat_out(CAPACITY_SECONDS, GEN_CORE))
        carried[mode] = round(got["received"] / got["seconds"]) if got.get("seconds") else 0
    move.move(INSTANCE, CAPACITY_PATHS[0])
    return carried


def _dropped_at_ports(t: HostsTopology) -> int:
    """Frames the DUT's ports dropped before their XDP program saw them, their receive ring full (veth's 256
    slots), over both ports since they were made: what neither the NAT nor a receiver can count."""
    return sum(veth_stats.read(t.dut_ns, port)["rx_drops"] for port in t.dut_ifaces)


def _window(service: Service, event, args: argparse.Namespace) -> dict:
    """Both streams inward for --seconds, the event EVENT_AFTER_S into them: xnf-gen's frames sent and lost; the
    UDP flow's datagrams sent, lost, those of them the receiving host's socket dropped (lost at the receiver, not
    on the way), why the flow did not finish or ""."""
    t, h0, h1 = service.t, service.t.host(0), service.t.host(1)
    datagrams = int(args.pps * args.seconds)
    bitrate = str(args.pps * DATAGRAM_BYTES * 8)

    def flow() -> apps.Transfer:
        return apps.iperf3(t, h0.ns, h1.ns, h1.ip, udp_datagrams=datagrams, bitrate=bitrate, reverse=True,
                           datagram_bytes=DATAGRAM_BYTES, port=apps.IPERF_PORT + 1, core=GEN_CORE,
                           socket_buffer=apps.BURST_RECEIVE_BUFFER)

    def frames() -> dict:
        return _gen_inward(t, service.gen_port, "--rate", str(service.gen_pps), "--duration", str(args.seconds),
                           "--cores", str(GEN_CORE))

    overflowed, rings_full = apps.udp_receive_errors(h0.ns), _dropped_at_ports(t)
    with background.running(flow) as outcome, background.running(frames) as gen:
        time.sleep(EVENT_AFTER_S)
        event()
    at_receiver = apps.udp_receive_errors(h0.ns) - overflowed
    if "value" not in gen:
        raise XnfError(f"xnf-gen's stream failed: {gen.get('error', '?')}")
    counted = {"gen_sent": gen["value"]["sent"], "gen_lost": gen["value"]["lost"],
               "dropped_at_ports": _dropped_at_ports(t) - rings_full}
    if "value" not in outcome:
        return {**counted, "sent": datagrams, "lost": datagrams, "lost_at_receiver": at_receiver,
                "unfinished": str(outcome.get("error", "?"))[-300:]}
    got = outcome["value"]
    return {**counted, "sent": got.packets, "lost": got.lost_packets, "lost_at_receiver": at_receiver,
            "unfinished": ""}


def measure(args: argparse.Namespace, place: Place) -> list[dict]:
    """The windows in order, and last the whole run's TCP connection and mappings. The connection lasts long enough
    for every window (a window takes its seconds, iperf3's start and the event's own time): the rest is waited out."""
    service: Service = place.lab
    t = service.t
    events = _events(service)

    def connection() -> apps.Transfer:
        return apps.iperf3(t, t.host(0).ns, t.host(1).ns, t.host(1).ip, tcp_bitrate=f"{args.tcp_mbit}M",
                           core=GEN_CORE, seconds=int(CAPACITY_SLACK_S + args.rounds * len(events) *
                                                      (args.seconds + WINDOW_SLACK_S)))

    _open_gen_mapping(t)
    service.gen_port = _gen_public_port(service)
    with background.running(connection) as tcp:
        time.sleep(EVENT_AFTER_S)
        capacity = _capacity(service)       # beside the TCP connection, as the windows will be
        service.gen_pps = args.gen_pps or min(capacity.values()) // 2
        if not service.gen_pps:
            raise XnfError(f"xnf-gen's stream came through no path ({capacity}): the NAT lost its mapping")
        say.info(f"the lab carried {capacity} frames/s inward, xnf-gen flat out beside the TCP connection: its "
                 f"stream goes at {service.gen_pps}")
        samples = [{"event": CAPACITY, "capacity_pps": capacity, "gen_pps": service.gen_pps}]
        before = kept_state.nat_mappings(service.state)
        for round_no in range(args.rounds):
            for name, event in events.items():
                moved_from = service.mode()
                got = _window(service, event, args)
                samples.append({"round": round_no, "event": name, "mode_before": moved_from,
                                "mode_after": service.mode(), **got})
                say.info(f"round {round_no} {name:14s} {got['gen_lost']} of {got['gen_sent']} frames lost, "
                         f"{got['lost']} of {got['sent']} datagrams lost, "
                         f"{got['lost_at_receiver']} of them in the receiver's socket; "
                         f"{got['dropped_at_ports']} dropped at the DUT's ports before XDP"
                         + (f" (the stream did not finish: {got['unfinished']})" if got["unfinished"] else ""))
        after = kept_state.nat_mappings(service.state)
        say.info("the windows are over: the TCP connection runs to its end")
    samples.append({"event": WHOLE_RUN, "tcp_reset": "value" not in tcp, "tcp_error": str(tcp.get("error", "")),
                    "tcp_mbytes": round(tcp["value"].received_bytes / 1e6, 1) if "value" in tcp else 0,
                    "mappings_before": len(before), "mappings_kept": {k: after.get(k) for k in before} == before})
    return samples


def summarise(samples: list[dict], args: argparse.Namespace) -> dict:
    windows = [s for s in samples if "lost" in s]
    rows = []
    for name in dict.fromkeys(s["event"] for s in windows):
        mine = [s for s in windows if s["event"] == name]
        rows.append({"event": name, "rounds": len(mine), "gen_sent": sum(s["gen_sent"] for s in mine),
                     "gen_lost": sum(s["gen_lost"] for s in mine), "gen_lost_per_round": [s["gen_lost"] for s in mine],
                     "sent": sum(s["sent"] for s in mine),
                     "lost": sum(s["lost"] for s in mine), "lost_per_round": [s["lost"] for s in mine],
                     "lost_at_receiver": sum(s["lost_at_receiver"] for s in mine),
                     "dropped_at_ports": sum(s["dropped_at_ports"] for s in mine),
                     "unfinished": sum(1 for s in mine if s["unfinished"]),
                     "expected": EXPECTED.get(name, "")})
    whole = next(s for s in samples if s["event"] == WHOLE_RUN)
    capacity = next(s for s in samples if s["event"] == CAPACITY)
    return {"events": rows, **{k: v for k, v in whole.items() if k != "event"},
            **{k: v for k, v in capacity.items() if k != "event"}}


def _said_last(summary: dict) -> list[str]:
    tcp = (f"the TCP connection was reset or failed: {summary['tcp_error']}" if summary["tcp_reset"] else
           f"the TCP connection ran through every event ({summary['tcp_mbytes']} MB)")
    kept = "kept" if summary["mappings_kept"] else "NOT kept"
    capacity = ", ".join(f"{mode} {pps}" for mode, pps in summary["capacity_pps"].items())
    return [f"xnf-gen's stream at {summary['gen_pps']} frames/s; flat out the paths carried {capacity}", tcp,
            f"the {summary['mappings_before']} mappings made before the first event: {kept}"]


def _options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rounds", type=int, default=3, help="times through every event")
    parser.add_argument("--pps", type=int, default=20000, help="the UDP flow's 64-byte frames per second")
    parser.add_argument("--gen-pps", type=int, default=0,
                        help="xnf-gen's 64-byte frames per second (default: half of what the slower path carried)")
    parser.add_argument("--tcp-mbit", type=int, default=100, help="the TCP connection's rate (Mbit/s)")


STUDY = Study(
    NAME, "continuity", measure=measure, summarise=summarise, lab=_lab, options=_options, seconds=3.0,
    seconds_help="seconds per event's window (the event 1 s into it)",
    check=lambda args: ("--rounds, --pps and --tcp-mbit above 0, --gen-pps not below 0"
                        if min(args.rounds, args.pps, args.tcp_mbit) < 1 or args.gen_pps < 0
                        else "--seconds of at least 2: the event comes 1 s into the window"
                        if args.seconds < 2 else None),
    fields=lambda args: {"pps": args.pps, "gen_pps_given": args.gen_pps, "frame_bytes": 64, "rounds": args.rounds,
                         "tcp_mbit": args.tcp_mbit,
                         "yardstick": "none: the same streams with no event, in every round; the capacity each "
                                      "path carried, measured in the same run"},
    table=lambda summary: summary["events"], document=lambda summary: summary, said_last=_said_last,
    report=lambda row: f"{row['event']:14s} {row['gen_lost']} of {row['gen_sent']} frames lost "
                       f"({', '.join(map(str, row['gen_lost_per_round']))}); "
                       f"{row['lost']} of {row['sent']} datagrams lost "
                       f"({', '.join(map(str, row['lost_per_round']))}; {row['lost_at_receiver']} in the receiver's "
                       f"socket); {row['dropped_at_ports']} dropped at the DUT's ports before XDP"
                       + (f": expected, {row['expected']}" if row["expected"] and row["lost"] else ""))
add_arguments, run = STUDY.add_arguments, STUDY.run

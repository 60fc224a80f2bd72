"""Real applications on the lab's hosts (Debian's iperf3, nginx, curl, wrk, ping), started in a topology's
namespaces and stopped with it, and what they saw: bytes sent and received, retransmissions, lost datagrams, the
SHA-256 of a download, requests per second, answered pings, and the receiving stacks' checksum errors (a frame
whose checksum xnf left wrong reaches a host and is dropped there, counted as InCsumErrors). core pins a program
to one CPU (a benchmark keeps the applications off the DUT's core)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from xnf.errors import XnfError
from xnf.lab import netns, pace
from xnf.lab.topology import Topology

IPERF_PORT = 5201
HTTP_PORT = 8080
# How long a server may take to listen: a condition waited for, so generous (a busy host, an emulated one).
START_TIMEOUT_S = 30.0
# iperf3 -w for a UDP flow that must lose nothing: a worker's batch, or a stall of the receiving process on a busy
# host, fits (the default 208 KiB holds ~15 jumbo datagrams). At most net.core.rmem_max (4 MiB in kernel 6.18).
BURST_RECEIVE_BUFFER = "4M"


def udp_receive_errors(ns: str) -> int:
    """Datagrams the namespace's stack dropped because a socket's receive buffer was full (UdpRcvbufErrors): lost
    at the receiver, not on the way."""
    out = netns.run(ns, ["nstat", "-az", "UdpRcvbufErrors"]).stdout
    for line in out.splitlines():
        if line.startswith("UdpRcvbufErrors"):
            return int(line.split()[1])
    return 0


def _pinned(argv: list[str], core: int | None) -> list[str]:
    return argv if core is None else ["taskset", "-c", str(core)] + argv


def _url_host(ip: str) -> str:
    return f"[{ip}]" if ":" in ip else ip


def _wait_listening(ns: str, port: int, proc: subprocess.Popen, what: str) -> None:
    limit = pace.timeout(START_TIMEOUT_S)
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise XnfError(f"{what} exited with {proc.returncode}: {proc.stderr.read().strip()[-400:]}")
        if f":{port} " in netns.run(ns, ["ss", "-Hltn"], check=False).stdout:
            return
        time.sleep(0.05)
    raise XnfError(f"{what} did not listen on port {port} within {limit:.0f} s")


# ---------------------------------------------------------------------------------------------------- iperf3

@dataclass
class Transfer:
    """What one iperf3 run saw (client and server agree on the bytes: the client's JSON carries both)."""
    sent_bytes: int
    received_bytes: int        # as iperf3's receiver counted them in its interval: the last moments are not in it
    seconds: float
    retransmits: int = 0       # TCP
    packets: int = 0           # UDP: datagrams sent
    lost_packets: int = 0      # UDP: datagrams the server never got

    @property
    def gbit_s(self) -> float:
        return self.received_bytes * 8 / self.seconds / 1e9 if self.seconds else 0.0


def iperf3(t: Topology, client_ns: str, server_ns: str, server_ip: str, *, seconds: int = 1, streams: int = 1,
           udp_datagrams: int = 0, bitrate: str = "20M", port: int = IPERF_PORT,
           connect_to: str | None = None, core: int | None = None, tcp_bitrate: str | None = None,
           reverse: bool = False, datagram_bytes: int = 1200, socket_buffer: str | None = None) -> Transfer:
    """One iperf3 test from client_ns to server_ip (in server_ns), or to connect_to (a load balancer's address
    that leads there): TCP for whole seconds (iperf3 takes no fractions) over streams, or udp_datagrams UDP
    datagrams of datagram_bytes (UDP payload: 18 makes 64-byte frames) at bitrate; TCP at tcp_bitrate where given
    (a steady flow beside others), else as fast as it goes. reverse: the server sends (-R), so a UDP flow's
    datagrams all travel inward, answering nothing; lost_packets is then what the client never got.
    socket_buffer: iperf3's -w (SO_SNDBUF/SO_RCVBUF, up to net.core.rmem_max), so that a burst does not overflow
    the receiving socket."""
    udp = udp_datagrams > 0
    server = t.spawn(server_ns, _pinned(["iperf3", "-s", "-1", "-B", server_ip, "-p", str(port)], core))
    try:
        _wait_listening(server_ns, port, server, "iperf3's server")
        argv = ["iperf3", "-c", connect_to or server_ip, "-p", str(port), "-P", str(streams), "-J",
                "--connect-timeout", "3000"]
        argv += (["-u", "-b", pace.bitrate(bitrate), "-l", str(datagram_bytes), "-k", str(udp_datagrams)] if udp
                 else ["-t", str(int(seconds))])
        argv += ["-b", tcp_bitrate] if tcp_bitrate and not udp else []
        argv += ["-R"] if reverse else []
        argv += ["-w", socket_buffer] if socket_buffer else []
        result = netns.run(client_ns, _pinned(argv, core), check=False, timeout=pace.timeout(seconds + 30))
    finally:
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:
            server.kill()
    try:
        report = json.loads(result.stdout)
    except json.JSONDecodeError:
        raise XnfError(f"iperf3 said nothing readable: {(result.stderr or result.stdout).strip()[-400:]}") from None
    if "error" in report:
        raise XnfError(f"iperf3: {report['error']}")
    end = report["end"]
    if udp:  # the server counts loss by sequence numbers; its byte total stops at the end of its interval
        sent, received = end["sum_sent"], end["sum_received"]
        return Transfer(sent_bytes=sent["bytes"], received_bytes=received["bytes"], seconds=sent["seconds"],
                        packets=sent["packets"], lost_packets=received["lost_packets"])
    return Transfer(sent_bytes=end["sum_sent"]["bytes"], received_bytes=end["sum_received"]["bytes"],
                    seconds=end["sum_received"]["seconds"], retransmits=end["sum_sent"].get("retransmits", 0))


# ---------------------------------------------------------------------------------------------------- HTTP

class WebServer:
    """nginx serving one file of random bytes from a temporary folder, on one address of a namespace."""

    def __init__(self, t: Topology, ns: str, ip: str, size: int = 4 << 20, port: int = HTTP_PORT,
                 core: int | None = None):
        self.ip, self.port, self._dir = ip, port, Path(tempfile.mkdtemp(prefix="xnf-web-"))
        body = os.urandom(size)
        self.sha256 = hashlib.sha256(body).hexdigest()
        (self._dir / "file").write_bytes(body)
        (self._dir / "nginx.conf").write_text(
            "daemon off; master_process off; worker_processes 1; user root; pid nginx.pid;\n"
            f"error_log {self._dir}/error.log;\n"
            "events { worker_connections 256; }\n"
            "http { access_log off; sendfile on; keepalive_requests 100000;\n"
            f"  server {{ listen {_url_host(ip)}:{port}; root {self._dir}; }} }}\n")
        self.process = t.spawn(ns, _pinned(["nginx", "-p", str(self._dir), "-c", str(self._dir / "nginx.conf")], core))
        t.on_teardown(self._remove)
        _wait_listening(ns, port, self.process, "nginx")

    @property
    def url(self) -> str:
        return f"http://{_url_host(self.ip)}:{self.port}/file"

    def _remove(self) -> None:
        for path in self._dir.iterdir():
            path.unlink()
        self._dir.rmdir()


def download_sha256(ns: str, url: str, timeout_s: float = 30) -> str:
    """curl fetches url from ns; the SHA-256 of what arrived."""
    result = subprocess.run(netns.exec_argv(ns, ["curl", "-sS", "--fail", "--max-time", str(timeout_s), url]),
                            capture_output=True, timeout=timeout_s + 5)
    if result.returncode != 0:
        raise XnfError(f"curl {url} failed: {result.stderr.decode(errors='replace').strip()}")
    return hashlib.sha256(result.stdout).hexdigest()


def request_rate(ns: str, url: str, seconds: int = 2, connections: int = 16, core: int | None = None) -> float:
    """wrk's requests per second on url from ns: one thread, keep-alive connections; errors end it."""
    result = netns.run(ns, _pinned(["wrk", "-t1", f"-c{connections}", f"-d{int(seconds)}s", url], core), check=False,
                       timeout=seconds + 30)
    rate = [line.split()[1] for line in result.stdout.splitlines() if line.startswith("Requests/sec:")]
    errors = [line for line in result.stdout.splitlines() if "Non-2xx" in line or "Socket errors" in line]
    if result.returncode != 0 or not rate or errors:
        raise XnfError(f"wrk {url}: {(errors or [result.stderr.strip() or result.stdout.strip()[-300:]])[0]}")
    return float(rate[0])


# ---------------------------------------------------------------------------------------------------- ping, counters

# How long after ping's last request an answer still counts: ping -W's second.
LATE_ANSWER_S = 1.0


def echo_answers(ns: str, family: int) -> int:
    """Echo replies the namespace's stack has taken in, every ping's in it: counted as they arrive, whether or not the
    ping that asked is still waiting."""
    name = "IcmpInEchoReps" if family == 4 else "Icmp6InEchoReplies"
    for line in netns.run(ns, ["nstat", "-azs", name]).stdout.splitlines():
        if line.startswith(name):
            return int(line.split()[1])
    raise XnfError(f"nstat in {ns} does not give {name}")


def _pings_sent(result: subprocess.CompletedProcess) -> int:
    for line in result.stdout.splitlines():
        if "transmitted" in line:
            return int(line.split()[0])
    raise XnfError(f"ping said nothing readable: {result.stdout.strip()} {result.stderr.strip()}")


def ping(ns: str, dst: str, count: int, interval: float = 0.01, size: int | None = None) -> int:
    """Echo requests from ns to dst; how many were answered by LATE_ANSWER_S after the last one. size: the ICMP
    payload's bytes, sent with don't-fragment (a frame that cannot pass whole is lost, not cut into fragments).
    The answers are counted by ns's stack, not by ping: ping stops listening twice the longest round trip so far
    after its last request, and a host that stalls a moment longer turns a late answer into a loss. Nothing else
    in ns may ping meanwhile."""
    family = 6 if ":" in dst else 4
    sized = ["-s", str(size), "-M", "do"] if size is not None else []
    before = echo_answers(ns, family)
    result = netns.run(ns, ["ping", "-c", str(count), "-i", str(interval), "-W", "1", "-q", *sized, dst],
                       check=False, timeout=3 * count * interval + 10)
    sent = _pings_sent(result)
    deadline = time.monotonic() + LATE_ANSWER_S
    while (answered := echo_answers(ns, family) - before) < sent and time.monotonic() < deadline:
        time.sleep(0.05)
    return answered


def traceroute_hops(ns: str, dst: str, max_hops: int = 6) -> list[str]:
    """traceroute's UDP probes from ns to dst, one per hop: the address each hop answered from ("*": none did)."""
    result = netns.run(ns, ["traceroute", "-n", "-q", "1", "-w", "1", "-m", str(max_hops), dst], check=False,
                       timeout=max_hops * 2 + 10)
    hops = [line.split()[1] for line in result.stdout.splitlines()[1:] if line.split()[:1] and
            line.split()[0].isdigit()]
    if result.returncode != 0 or not hops:
        raise XnfError(f"traceroute said nothing readable: {result.stdout.strip()} {result.stderr.strip()}")
    return hops


_SCAN = """
import errno, socket, sys
ip, timeout = sys.argv[1], float(sys.argv[2])
for port in sys.argv[3:]:
    s = socket.socket(socket.AF_INET6 if ":" in ip else socket.AF_INET)
    s.settimeout(timeout)
    code = s.connect_ex((ip, int(port)))
    print(port, "open" if code == 0 else "closed" if code == errno.ECONNREFUSED else "filtered")
    s.close()
"""


def tcp_scan(ns: str, ip: str, ports: list[int], timeout_s: float = 0.5) -> dict[int, str]:
    """A connect scan from ns: per port "open" (it answered), "closed" (a RST came back) or "filtered" (nothing came
    back within timeout_s)."""
    result = netns.run(ns, ["python3", "-c", _SCAN, ip, str(timeout_s), *map(str, ports)],
                       timeout=len(ports) * (timeout_s + 1) + 10)
    return {int(port): state for port, state in (line.split() for line in result.stdout.splitlines())}


def checksum_errors(ns: str) -> int:
    """Segments and datagrams the namespace's stack dropped for a bad checksum (TCP, UDP, UDP over IPv6)."""
    snmp = netns.run(ns, ["cat", "/proc/net/snmp", "/proc/net/snmp6"]).stdout.splitlines()
    errors = 0
    for names, values in zip(snmp, snmp[1:]):
        head, _, fields = names.partition(":")
        if head in ("Tcp", "Udp") and values.startswith(f"{head}:") and "InCsumErrors" in fields.split():
            errors += int(values.split()[fields.split().index("InCsumErrors") + 1])
    errors += sum(int(line.split()[1]) for line in snmp if line.startswith("Udp6InCsumErrors"))
    return errors


# A UDP server that answers every datagram with the address and port it came from, as the server saw them.
_REFLECTOR = """
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
print("ready", flush=True)
while True:
    data, peer = s.recvfrom(2048)
    s.sendto(f"{peer[0]}:{peer[1]}".encode(), peer)
"""

# A UDP client from a given address and port: prints what the server answered, or why there was no answer.
_ASK = """
import socket, sys
s = socket.socket(socket.AF_INET6 if ":" in sys.argv[1] else socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], int(sys.argv[2])))
s.connect((sys.argv[3], int(sys.argv[4])))
s.settimeout(2)
for attempt in range(3):
    s.send(b"who am I")
    try:
        print(s.recv(2048).decode())
        break
    except ConnectionRefusedError:
        print("refused")
        break
    except socket.timeout:
        continue
else:
    print("no answer")
"""


class UdpReflector:
    """A UDP server in ns on ip:port that answers with the sender's address as it saw it (what a NAT made of it)."""

    def __init__(self, t: Topology, ns: str, ip: str, port: int):
        self.proc = t.spawn(ns, [sys.executable, "-c", _REFLECTOR, ip, str(port)])
        if self.proc.stdout.readline().strip() != "ready":
            raise XnfError(f"the UDP reflector did not start: {self.proc.stderr.read().strip()}")


def udp_seen_as(ns: str, src_ip: str, sport: int, dst_ip: str, dport: int) -> str:
    """From ns, src_ip:sport to dst_ip:dport: "ADDR:PORT" as the server saw the sender, "refused" when an ICMP port
    unreachable came back, "no answer" when nothing did."""
    return netns.run(ns, [sys.executable, "-c", _ASK, src_ip, str(sport), dst_ip, str(dport)],
                     timeout=pace.timeout(15)).stdout.strip()

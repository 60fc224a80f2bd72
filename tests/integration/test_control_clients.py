"""The control socket against clients that misbehave: one that connects and says nothing, one that trickles
bytes, one that sends a line longer than a request may be, and many at once. None of them may keep the
instance from answering the next client, nor stop the packets."""

from __future__ import annotations

import shutil
import socket
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from lab_helpers import run_xnf, stopped
from test_xdp_nfs import exchange
from packets import swap_macs, udp4
from xnf import control
from xnf.build import REPO_ROOT
from xnf.errors import XnfError
from xnf.lab.nf_process import NfInstance

ANSWER_WITHIN_S = 3.0  # the instance gives a stalled client one second


def connect(name: str) -> socket.socket:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(str(control.socket_path(name)))
    return sock


def still_connected(client: socket.socket) -> bool:
    """Whether the server has not closed the connection (a read finds no end of file)."""
    try:
        return client.recv(1, socket.MSG_PEEK | socket.MSG_DONTWAIT) != b""
    except BlockingIOError:
        return True


def timed_stats(name: str) -> float:
    start = time.monotonic()
    control.request_json(name, "stats")
    return time.monotonic() - start


def test_a_silent_client_does_not_wedge_the_instance(pair):
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    silent = connect(nf.name)
    try:
        assert timed_stats(nf.name) < ANSWER_WITHIN_S
        listed = run_xnf(["ps"], timeout=ANSWER_WITHIN_S * 3)
        assert listed.returncode == 0 and nf.name in listed.stdout
        assert silent.recv(100) == b"", "the instance should have closed the silent client's connection"
    finally:
        silent.close()
    sent = [udp4(pair.links[0], 1, 2, seq=i) for i in range(10)]
    assert sorted(exchange(pair, sent, expect=10)) == sorted(swap_macs(f) for f in sent)
    assert nf.stop() == 0


def test_a_trickling_client_gets_one_second_in_all(pair):
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    trickler = connect(nf.name)
    stop = threading.Event()

    def trickle():
        try:
            while not stop.is_set():
                trickler.send(b"i")
                time.sleep(0.2)
        except OSError:
            pass  # the instance closed it: what it should do

    thread = threading.Thread(target=trickle)
    thread.start()
    try:
        time.sleep(0.1)
        assert timed_stats(nf.name) < ANSWER_WITHIN_S
    finally:
        stop.set()
        thread.join()
        trickler.close()
    assert nf.stop() == 0


def test_an_oversized_request_is_answered_with_an_error(pair):
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    with connect(nf.name) as client:
        client.settimeout(ANSWER_WITHIN_S)
        client.sendall(b"x" * 5000)
        answer = client.recv(200).decode()
    assert answer.startswith("error: a request is one line of at most 1023 bytes")
    assert timed_stats(nf.name) < ANSWER_WITHIN_S
    assert nf.stop() == 0


def test_many_clients_at_once_are_all_answered(pair):
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    answers: list[str] = []

    def ask():
        answers.append(control.request_json(nf.name, "info")["nf"])

    threads = [threading.Thread(target=ask) for _ in range(12)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == ["macswap"] * 12
    assert nf.stop() == 0


def test_garbage_and_partial_requests_leave_the_instance_serving(pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    for garbage in (b"\x00\xff\x1b[2J\n", b"rules add \x00drop\n", b"stats", b"rules " + b"A" * 1000 + b"\n"):
        with connect(nf.name) as client:
            client.settimeout(ANSWER_WITHIN_S)
            client.sendall(garbage)
            client.shutdown(socket.SHUT_WR)
            answer = client.recv(4096)
        assert answer == b"" or answer.startswith((b"error: ", b"ok\n")), answer
    assert control.request_json(nf.name, "info")["nf"] == "firewall"
    assert nf.request("rules list").splitlines() == ["default allow"]
    assert nf.stop() == 0


def readable_copy_of_the_package() -> str:
    """The Python package where 'nobody' can read it: the checkout may sit where only root can (under /root, in a
    0700 folder)."""
    folder = tempfile.mkdtemp(prefix="xnf-probe-")
    shutil.copytree(REPO_ROOT / "python" / "xnf", Path(folder) / "xnf", ignore=shutil.ignore_patterns("__pycache__"))
    for path in [Path(folder), *Path(folder).rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return folder


def test_an_unprivileged_user_can_neither_read_nor_change(pair):
    """The control socket is root's alone: 'nobody' can neither read the stats nor add a rule."""
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    package = readable_copy_of_the_package()
    pair.on_teardown(lambda: shutil.rmtree(package))
    probe = ("import sys; sys.path.insert(0, sys.argv[1]); from xnf import control; from xnf.errors import XnfError\n"
             "try:\n    control.request(sys.argv[2], sys.argv[3])\nexcept XnfError as e:\n    print(e)\n")
    for request in ("stats", "rules add drop udp 198.18.0.1 1 198.18.0.2 2"):
        ran = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c",
                              probe, package, nf.name, request],
                             capture_output=True, text=True, timeout=10,
                             env={"XNF_RUN_DIR": str(control.run_dir()), "PATH": "/usr/bin:/bin"})
        assert "run xnf with sudo" in ran.stdout, (ran.stdout, ran.stderr)
    assert nf.request("rules list").splitlines() == ["default allow"]
    assert nf.stop() == 0


def test_idle_clients_delay_no_other(pair):
    """Clients are served side by side: a handful that connect and say nothing (up to their second) do not hold a
    request up, nor do 60 answered at once."""
    nf = NfInstance.start(pair, "macswap", "xdp", pair.dut_ifaces)
    idle = [connect(nf.name) for _ in range(5)]
    try:
        # Answered while the idle ones are still connected: served one after another, the request would wait until
        # the server dropped them at their second (CLIENT_TIMEOUT_MS).
        control.request_json(nf.name, "stats")
        assert all(still_connected(client) for client in idle)
        answers: list[str] = []
        threads = [threading.Thread(target=lambda: answers.append(control.request_json(nf.name, "info")["nf"]))
                   for _ in range(60)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert answers == ["macswap"] * 60
    finally:
        for client in idle:
            client.close()
    assert nf.stop() == 0


def test_a_stopped_instance_is_told_at_once_and_sent_nothing(pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces)
    pid = control.owner(nf.name).pid
    with stopped(nf.process):
        # Told it is stopped at once (not "did not answer within 5 s" after a wait), and sent nothing.
        with pytest.raises(XnfError, match=f"stopped .*kill -CONT {pid}"):
            control.request(nf.name, "rules add drop udp 1.1.1.1 1 2.2.2.2 2")
        stats = run_xnf(["stats", "--name", nf.name])
        listed = run_xnf(["ps"])
    assert stats.returncode == 1 and "is stopped" in stats.stderr and "Traceback" not in stats.stderr
    assert "STOPPED" in listed.stdout
    assert "1.1.1.1" not in control.request(nf.name, "rules list")  # the refused change never arrived
    assert nf.stop() == 0
    assert not (control.run_dir() / f"{nf.name}.owner").exists()

"""The dispatcher (--local, user-space modes): traffic for the local stack goes there in XDP, before the NF
and its workers, chosen in software (a local service's protocol and port) or by rx queue (a queue without a
socket); counted as "local", the rest reaches the workers untouched."""

from __future__ import annotations

import pytest

from lab_helpers import run_xnf
from xnf import control
from xnf.lab import local_app
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology
from xnf.lab.cores import DUT_CORE


def test_a_local_service_bypasses_the_workers(bare_pair):
    nf = NfInstance.start(bare_pair, "macswap", "afxdp", bare_pair.dut_ifaces, extra=["--local", "tcp:11211", "--cores", str(DUT_CORE)])
    out = Generator(bare_pair, receive_on=0).run("--count", "10240", "--rate", "100000", "--class", "forwarded:share=0.7",
                                         "--class", "service:dport=11211,proto=tcp,share=0.3").summary
    classes = {c["name"]: c for c in out["classes"]}
    stats = control.request_json(nf.name, "stats")
    assert classes["forwarded"]["received"] == classes["forwarded"]["sent"]
    assert stats["verdicts"]["local"]["packets"] == classes["service"]["sent"]
    assert stats["verdicts"]["tx"]["packets"] == sum(w["rx_packets"] for w in stats["workers"]) \
        == classes["forwarded"]["sent"]
    assert nf.stop() == 0


def test_memcached_is_served_without_the_nf_or_its_tap(rules_file):
    """The router in user space with memcached's port local: requests never reach the router (its own
    'local' counter stays 0) nor the TAP device, and every one is answered."""
    with Topology("edge", apps=1) as t:
        app = t.app_list[0]
        local_app.reach_apps_from_generator(t)
        nf = NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(local_app.edge_router_rules(t)),
                              extra=["--local", f"tcp:{local_app.MEMCACHED_PORT}", "--cores", str(DUT_CORE)])
        local_app.start_memcached(t, app)
        load = local_app.load_memcached(t, app, seconds=1, concurrency=4)
        stats = control.request_json(nf.name, "stats")
        assert load.ops > 1000 and load.get_misses == 0
        assert stats["verdicts"]["local"]["packets"] >= load.ops
        assert stats["counters"]["local"] == 0 and sum(w["pass_injected"] for w in stats["workers"]) == 0
        assert nf.stop() == 0


def test_a_queue_without_a_socket_goes_to_the_stack():
    """On veth a frame lands on the rx queue of the core that sent it: the generator on core 1 fills queue 1,
    which --queues 1 leaves without a socket and --local queue:1 gives the stack."""
    with Topology("pair", queues=2, gen_xdp=None) as t:
        nf = NfInstance.start(t, "macswap", "afxdp", t.dut_ifaces,
                              extra=["--queues", "1", "--local", "queue:1", "--cores", str(DUT_CORE)])
        to_queue0 = Generator(t, receive_on=0).run("--count", "5000", "--rate", "100000", "--cores", "0").summary
        to_queue1 = Generator(t, receive_on=0).run("--count", "3000", "--rate", "100000", "--cores", "1").summary
        verdicts = control.request_json(nf.name, "stats")["verdicts"]
        assert to_queue0["received"] == 5000 and verdicts["tx"]["packets"] == 5000
        assert to_queue1["received"] == 0 and verdicts["local"]["packets"] == 3000
        assert verdicts["redirect_error"]["packets"] == 0
        assert nf.stop() == 0


@pytest.mark.parametrize("args, message", [
    (["--mode", "xdp", "--local", "tcp:80"], "--local only applies to the AF_XDP modes"),
    (["--mode", "hybrid", "--local", "tcp:80"], "--local is for the modes whose NF runs in user space"),
    (["--mode", "afxdp", "--local", "queue:0"], "--local queue:0: queues 0-0 have AF_XDP sockets (--queues 1)"),
    (["--mode", "afxdp", "--local", "sctp:9"], "--local takes tcp:PORT, udp:PORT or queue:N, not 'sctp:9'"),
    (["--mode", "afxdp", "--local", "tcp:0"], "--local port takes a whole number from 1 to 65535"),
])
def test_a_wrong_local_is_refused(pair, args, message):
    result = run_xnf(["run", "macswap", "--iface", "dut0", *args], ns=pair.dut_ns)
    assert result.returncode == 2 and message in result.stderr

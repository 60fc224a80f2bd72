"""A real local application behind the NF: memcached in an application namespace of the edge topology,
loaded by memcaslap from the generator's side. The router passes the application's prefix to the local stack
(XDP_PASS in xdp and hybrid, the TAP device in afxdp), which forwards it to memcached; every request is
answered, and the router counts what it passed."""

from __future__ import annotations

import pytest

from xnf import control
from xnf.lab import local_app, paths
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology


@pytest.mark.parametrize("mode", paths.Modes(paths.kinds_at_xdp))
def test_memcached_answers_through_the_nf(mode, rules_file):
    with Topology("edge", apps=1) as t:
        app = t.app_list[0]
        local_app.reach_apps_from_generator(t)
        nf = NfInstance.start(t, "router", mode, t.dut_ifaces, rules=rules_file(local_app.edge_router_rules(t)),
                              extra=paths.worker_options(mode))
        local_app.start_memcached(t, app)
        load = local_app.load_memcached(t, app, seconds=1, concurrency=4)
        assert load.ops > 1000 and load.tps > 0 and load.get_misses == 0
        assert 0 < load.latency_us["p50"] <= load.latency_us["p99"]
        stats = control.request_json(nf.name, "stats")
        assert stats["counters"]["local"] >= load.ops  # every request crossed the NF, and was passed
        assert stats["verdicts"]["pass"]["packets"] >= load.ops
        if mode == "afxdp":
            assert sum(w["pass_injected"] for w in stats["workers"]) >= load.ops
        assert nf.stop() == 0


def test_memcached_answers_while_pass_through_traffic_loads_the_port(rules_file):
    with Topology("edge", apps=1) as t:
        app = t.app_list[0]
        local_app.reach_apps_from_generator(t)
        nf = NfInstance.start(t, "router", "xdp", t.dut_ifaces, rules=rules_file(local_app.edge_router_rules(t)))
        local_app.start_memcached(t, app)
        flood = Generator(t).spawn("--duration", "3", "--rate", "200000", *local_app.pass_through_traffic(),
                                   "--cores", "0")
        load = local_app.load_memcached(t, app, seconds=1, concurrency=4)
        flood.communicate(timeout=60)
        assert flood.returncode == 0
        assert load.ops > 1000 and load.get_misses == 0
        counters = control.request_json(nf.name, "stats")["counters"]
        assert counters["forwarded"] > 100000 and counters["local"] >= load.ops
        assert nf.stop() == 0

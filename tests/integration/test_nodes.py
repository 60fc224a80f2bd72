"""Several nodes behind ECMP (python/xnf/lab/nodes.py): the lb on three nodes, in XDP on two and in user space on
one, sends each of 1,000 flows to the backend an independent implementation of its hash predicts (lb_reference.py),
whichever node the router's hash picks; a node that leaves the group moves its flows to the others, still to the
same backends, and no frame is lost (counted at the backends); a backend added on every node at once
(`xnf rules add --all lb`) leaves them agreeing."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from scapy.layers.inet import IP, UDP
from scapy.layers.l2 import Ether

import lb_reference
from lab_helpers import run_xnf, stopped, wait_until
from xnf import control
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.nodes import VIP, NodesTopology
from xnf.lab.pktio import PacketPort
from xnf.lab import paths

MODES = paths.Modes(lambda: [*paths.modes(paths.kernel_and_user), paths.find("xdp").mode])   # three nodes, mixed
FLOWS = 1000
CLIENT, PORT = "198.18.0.1", 9
BACKENDS = 4


def start_nodes(t: NodesTopology, folder: Path, backends: int = BACKENDS) -> list[NfInstance]:
    nodes = []
    for i, mode in enumerate(MODES):
        rules = folder / f"node{i}.rules"
        rules.write_text(t.lb_rules(backends=backends))
        nodes.append(NfInstance.start(t, "lb", mode, [t.node_list[i].iface], rules=str(rules), ns=t.node_ns(i),
                                      name=f"{t.gen_ns}-node{i}", extra=paths.worker_options(mode)))
    return nodes


def send(t: NodesTopology, sport: int = PORT, rate: int = 20000) -> None:
    Generator(t).run("--dst-ip", VIP, "--sport", str(sport), "--flows", str(FLOWS), "--vary", "sport",
                     "--count", str(FLOWS), "--rate", str(rate))


def landed(t: NodesTopology, sport: int = PORT) -> dict[int, str]:
    """Sends one frame of each flow and returns, per client port, the backend address it reached."""
    with PacketPort(t.backends_ns, "be0") as port:
        send(t, sport)
        frames = port.receive(expect=FLOWS, limit_s=10)
    seen = {}
    for raw in frames:
        frame = Ether(raw)
        if UDP in frame and frame[IP].src == CLIENT:
            seen[frame[UDP].sport] = frame[IP].dst
    return seen


def expected(sport: int, backends: int = BACKENDS) -> str:
    pool = [(NodesTopology.backend_ip(k), PORT) for k in range(backends)]
    return lb_reference.expected_backend(CLIENT, sport, VIP, PORT, 17, pool)[0]


def sessions(node: NfInstance) -> int:
    return control.request_json(node.name, "stats")["counters"]["new_session"]


def test_every_flow_reaches_the_backend_the_hash_predicts_whichever_node_takes_it(tmp_path):
    with NodesTopology(nodes=3, backends=BACKENDS) as t:
        nodes = start_nodes(t, tmp_path)
        seen = landed(t)
        assert len(seen) == FLOWS
        wrong = {p: b for p, b in seen.items() if b != expected(p)}
        assert not wrong, f"{len(wrong)} flows at the wrong backend, e.g. {list(wrong.items())[:3]}"
        shares = [sessions(n) for n in nodes]
        assert sum(shares) == FLOWS and all(s > FLOWS // 10 for s in shares), shares   # ECMP spread them


def test_a_node_leaving_moves_its_flows_to_the_same_backends_without_losing_a_frame(tmp_path):
    with NodesTopology(nodes=3, backends=BACKENDS) as t:
        nodes = start_nodes(t, tmp_path)
        before = landed(t)
        received = lambda: int(t.run(t.backends_ns, ["cat", "/sys/class/net/be0/statistics/rx_packets"]).stdout)
        start = received()
        stream = Generator(t).spawn("--dst-ip", VIP, "--flows", str(FLOWS), "--vary", "sport", "--rate", "50000",
                                    "--duration", "2", "--cores", "0")
        time.sleep(1.0)
        t.set_ecmp([0, 2])           # the router sends node 1 nothing new...
        time.sleep(0.2)
        assert nodes[1].stop() == 0  # ...then it goes
        out, err = stream.communicate(timeout=60)
        assert stream.returncode == 0, err
        sent = json.loads(out.strip().splitlines()[-1])["sent"]
        wait_until(lambda: received() - start >= sent, timeout_s=10, what="every frame at the backends")
        assert received() - start == sent         # not one frame lost across the removal
        after = landed(t)
        assert after == before                    # every flow, node 1's too, at the same backend


def test_a_backend_added_on_every_node_at_once_keeps_them_agreeing(tmp_path):
    with NodesTopology(nodes=3, backends=BACKENDS + 1) as t:
        start_nodes(t, tmp_path, backends=BACKENDS)
        rule = t.lb_rules(backends=BACKENDS + 1).splitlines()[-1].split()     # the fifth backend's line
        added = run_xnf(["rules", "add", *rule, "--all", "lb"])
        assert added.returncode == 0, added.stderr
        assert "done on all 3 instances" in added.stdout
        fresh = landed(t, sport=20000)             # new flows: the pool of five decides
        assert len(fresh) == FLOWS
        assert all(b == expected(p, BACKENDS + 1) for p, b in fresh.items())
        assert any(b == NodesTopology.backend_ip(BACKENDS) for b in fresh.values())


def test_a_rule_no_node_can_take_changes_nothing_anywhere(tmp_path):
    with NodesTopology(nodes=3, backends=BACKENDS) as t:
        nodes = start_nodes(t, tmp_path)
        before = [n.request("rules list") for n in nodes]
        bad = run_xnf(["rules", "add", "backend", "udp", VIP, "9", "slot", "99", "198.19.2.99", "9", "mac",
                       "02:00:00:00:00:01", "port", "0", "--all", "lb"])
        assert bad.returncode == 1 and "not changed anywhere" in bad.stderr and "slot" in bad.stderr
        assert [n.request("rules list") for n in nodes] == before


def test_rules_on_every_node_refused_while_one_is_stopped(tmp_path):
    """A stopped node would take a change only when resumed: nothing is sent anywhere, and the command fails."""
    with NodesTopology(nodes=3, backends=BACKENDS + 1) as t:
        nodes = start_nodes(t, tmp_path, backends=BACKENDS)
        before = [n.request("rules list") for n in nodes]
        rule = t.lb_rules(backends=BACKENDS + 1).splitlines()[-1].split()
        with stopped(nodes[1].process):
            refused = run_xnf(["rules", "add", *rule, "--all", "lb"])
            listed = run_xnf(["ps"])
        assert refused.returncode == 1 and "not changed anywhere" in refused.stderr and "stopped" in refused.stderr
        assert f"{nodes[1].name}" in listed.stdout and "STOPPED" in listed.stdout
        assert [n.request("rules list") for n in nodes] == before
        assert run_xnf(["rules", "add", *rule, "--all", "lb"]).returncode == 0


@pytest.mark.parametrize("wrong", [0, 9])
def test_a_nodes_topology_says_what_it_takes(wrong):
    with pytest.raises(Exception, match="1 to 8"):
        NodesTopology(nodes=wrong)

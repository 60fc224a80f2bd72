"""Several nodes behind ECMP: the lab's picture of an NF that outgrew one server.

  generator ns  gen0 <-veth-> rtr0   router ns (Linux forwarding, ECMP with an L4 hash)
                                r<i> <-veth-> eth0  node<i> ns   (an xnf instance per node)
                                rb   <-veth-> be0   backends ns  (the backends' addresses, a capture)

The generator sends to the service's address (VIP) through the router, which spreads flows over the nodes by a
multipath route hashed on the 5-tuple (fib_multipath_hash_policy 1). A node's NF (typically the lb) rewrites a
frame for a backend and sends it back out of eth0 to its router port's MAC; the router forwards it to the backends'
namespace, where the lab captures which backend each flow reached. The router has one MAC on all the nodes' links,
so every node is configured alike. Addresses come from the benchmarking ranges:
client link 198.18.0.0/24, node i's link 198.18.(10+i).0/24, the backends' link 198.19.1.0/24, backends
198.19.2.(10+k), the VIP 198.19.100.1.

    with NodesTopology(nodes=3) as t:
        NfInstance.start(t, "lb", "xdp", ["eth0"], rules=..., ns=t.node_ns(0))   # t.lb_rules(): the same on all
        t.set_ecmp([0, 2])      # node 1 leaves the group
"""

from __future__ import annotations

from dataclasses import dataclass, field

from xnf import build
from xnf.errors import XnfError
from xnf.lab import netns
from xnf.lab.topology import GEN_PROGRAMS, Link, Topology

VIP = "198.19.100.1"
# The router's MAC on every node's link (each link its own segment): a node's configuration, the lb's backend lines
# included, is then the same on every node, as a deployment's config map gives it.
ROUTER_MAC = "02:00:00:0a:00:01"
BACKEND_NET = "198.19.2"
MAX_NODES = 8


@dataclass
class Node:
    index: int
    ns: str
    iface: str          # the node's port (eth0)
    mac: str
    ip: str
    router_if: str      # the router's port towards the node
    router_mac: str     # where the node sends what it forwards
    router_ip: str


@dataclass
class NodesTopology(Topology):
    KINDS = ("nodes",)
    kind: str = "nodes"
    nodes: int = 2
    backends: int = 4
    gen_xdp: str | None = None
    node_list: list[Node] = field(default_factory=list)
    backends_ns: str = ""

    def __post_init__(self) -> None:
        if not 1 <= self.nodes <= MAX_NODES:
            raise XnfError(f"a nodes topology has 1 to {MAX_NODES} nodes, not {self.nodes}")
        if not 1 <= self.backends <= 32:
            raise XnfError(f"a nodes topology has 1 to 32 backends, not {self.backends}")
        super().__post_init__()
        self.backends_ns = f"{self._tag}-be"

    # ---------------------------------------------------------------- building
    def _build(self) -> None:
        netns.create(self.gen_ns)
        netns.create(self.dut_ns)          # the router
        netns.create(self.backends_ns)
        netns.run(self.dut_ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1", "net.ipv4.fib_multipath_hash_policy=1"])
        self.links.append(self._client_link())
        for i in range(self.nodes):
            self.node_list.append(self._add_node(i))
        self._backends_link()
        self.set_ecmp(range(self.nodes))

    def _client_link(self) -> Link:
        link = Link(index=0, gen_if="gen0", dut_if="rtr0", gen_mac="02:00:00:00:00:01", dut_mac="02:00:00:00:00:02",
                    gen_ip="198.18.0.1", dut_ip="198.18.0.2", gen_ip6="2001:2::1", dut_ip6="2001:2::2")
        self._veth((self.gen_ns, link.gen_if, link.gen_mac, link.gen_ip),
                   (self.dut_ns, link.dut_if, link.dut_mac, link.dut_ip))
        # frames from the generator's live frames reach rtr0 only if it has XDP or GRO
        netns.run(self.dut_ns, ["ethtool", "-K", link.dut_if, "gro", "on"])
        netns.run(self.gen_ns, ["ethtool", "-K", link.gen_if, "gro", "on"])
        netns.ip("route", "add", "default", "via", link.dut_ip, ns=self.gen_ns)
        return link

    def _add_node(self, i: int) -> Node:
        node = Node(index=i, ns=f"{self._tag}-node{i}", iface="eth0", mac=f"02:00:00:0a:{i:02x}:02",
                    ip=f"198.18.{10 + i}.2", router_if=f"r{i}", router_mac=ROUTER_MAC, router_ip=f"198.18.{10 + i}.1")
        netns.create(node.ns)
        self._veth((self.dut_ns, node.router_if, node.router_mac, node.router_ip),
                   (node.ns, node.iface, node.mac, node.ip))
        # a frame a node sends with XDP_TX (or its workers' live transmit) reaches the router only through XDP there
        netns.attach_own_xdp(self.dut_ns, node.router_if, build.bpf_object(GEN_PROGRAMS["pass"]))
        netns.ip("neigh", "replace", node.ip, "lladdr", node.mac, "dev", node.router_if, "nud", "permanent",
                 ns=self.dut_ns)
        return node

    def _backends_link(self) -> None:
        mac_rtr, mac_be = "02:00:00:0b:00:01", "02:00:00:0b:00:02"
        self._veth((self.dut_ns, "rb", mac_rtr, "198.19.1.1"), (self.backends_ns, "be0", mac_be, "198.19.1.2"))
        for k in range(self.backends):
            netns.ip("addr", "add", f"{self.backend_ip(k)}/32", "dev", "be0", ns=self.backends_ns)
        netns.ip("route", "add", f"{BACKEND_NET}.0/24", "via", "198.19.1.2", ns=self.dut_ns)
        netns.ip("neigh", "replace", "198.19.1.2", "lladdr", mac_be, "dev", "rb", "nud", "permanent", ns=self.dut_ns)
        netns.ip("route", "add", "default", "via", "198.19.1.1", ns=self.backends_ns)

    def namespaces_to_remove(self) -> list[str]:
        return [self.gen_ns, self.dut_ns, f"{self._tag}-be"] + [f"{self._tag}-node{i}" for i in range(self.nodes)]

    # ---------------------------------------------------------------- using it
    @property
    def router_ns(self) -> str:
        return self.dut_ns

    def node_ns(self, i: int) -> str:
        return self.node_list[i].ns

    @staticmethod
    def backend_ip(k: int) -> str:
        return f"{BACKEND_NET}.{10 + k}"

    def sink_at_backends(self) -> None:
        """Drops what reaches the backends in XDP on be0 (counted as rx_xdp_drops) instead of giving it to their
        stack: with no service listening, the stack answers every frame with an ICMP error (or tries to, rate-
        limited after its route lookup), work of the backends and not of the path a benchmark measures."""
        netns.attach_own_xdp(self.backends_ns, "be0", build.bpf_object(GEN_PROGRAMS["drop"]))

    def set_ecmp(self, members) -> None:
        """The VIP's multipath route through these nodes (by index): a node that leaves gets no new frames."""
        members = list(members)
        if not members:
            netns.ip("route", "del", f"{VIP}/32", ns=self.dut_ns, check=False)
            return
        hops = [w for i in members for w in ("nexthop", "via", self.node_list[i].ip, "dev",
                                               self.node_list[i].router_if)]
        netns.ip("route", "replace", f"{VIP}/32", *hops, ns=self.dut_ns)

    def lb_rules(self, port: int = 9, timeout: int = 60, backends: int | None = None) -> str:
        """The lb's rules, the same on every node: the VIP's UDP service and a backend per backend address (the
        first `backends` of them), reached through the router."""
        lines = [f"service udp {VIP} {port}", f"timeout {timeout}"]
        lines += [f"backend udp {VIP} {port} slot {k} {self.backend_ip(k)} {port} mac {ROUTER_MAC} port 0"
                  for k in range(self.backends if backends is None else backends)]
        return "\n".join(lines) + "\n"

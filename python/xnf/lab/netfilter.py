"""Linux's own netfilter in the lab, configured to do what an xnf NF does: the yardstick operators compare xnf with,
and the other side of the differential tests.

The acl: its rules as an nftables chain on a bridge of the DUT's two ports (`bridge` family, `forward` hook), so
that, like the acl between two ports, Linux forwards every frame of a port out of the other unless a rule drops it:
one nftables rule per acl rule in sequence order (prefixes, `meta l4proto`, port ranges with `th`, TCP flags with
a mask), or, as an operator writes a long list, each run of rules of one shape as one rule over a set of their
values; the default as the chain's policy, and non-IP frames accepted first as the acl forwards them. A rules file
that names connection states (`state new,established`) becomes an `inet` chain instead, which bridged IP frames
reach through br_netfilter (this kernel has no bridge conntrack): conntrack tracks them as it tracks routed ones,
`ct state` matches, and the acl's idle times are the namespace's conntrack sysctls; TCP windows are checked as by
default (nf_conntrack_tcp_be_liberal=0), as the acl checks them.

The nat: Linux forwarding between the DUT's ports, with nftables masquerading what leaves by the outside port and
conntrack letting back in only the answers (`masquerade`)."""

from __future__ import annotations

import ipaddress
import json
import subprocess
import time
from dataclasses import dataclass

from xnf.errors import XnfError
from xnf.lab import netns, pace
from xnf.lab.topology import Link, Topology

BRIDGE = "xnfbr0"
TABLE = "xnf_acl"
TCP_FLAGS = ("fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr")
PROTOCOLS = {"tcp": "tcp", "udp": "udp", "icmp": "icmp", "icmpv6": "ipv6-icmp"}


def _prefix(text: str) -> tuple[int, str] | None:
    if text == "any":
        return None
    net = ipaddress.ip_network(text, strict=False)
    return net.version, str(net)


def _flags(text: str) -> str:
    names = text.split(",")
    mask = [n.lstrip("!") for n in names]
    wanted = [n for n in names if not n.startswith("!")]
    return f"tcp flags & ({' | '.join(mask)}) == {' | '.join(wanted) if wanted else '0x0'}"


@dataclass(frozen=True)
class AclRule:
    seq: int
    action: str
    family: int | None
    proto: str | None
    fields: tuple[tuple[str, str], ...]   # (nftables selector, value), in a fixed order
    flags: str | None
    states: str | None = None
    vlan: str | None = None

    @property
    def shape(self) -> tuple:
        """What rules must share to be one nftables rule over a set of their values."""
        return (self.action, self.family, self.proto, tuple(k for k, _ in self.fields), self.flags, self.states,
                self.vlan)

    def head(self, inet: bool = False) -> list[str]:
        """The matches before the fields: the tag first (nft reads the frame's type after it), the family."""
        kind = "vlan type" if self.vlan else "ether type"
        parts = [f"vlan id {self.vlan}"] if self.vlan else []
        parts += [] if self.family or inet else [f"{kind} {{ ip, ip6 }}"]
        if self.proto:
            parts.append(f"meta l4proto {PROTOCOLS.get(self.proto, self.proto)}")
        if self.flags:
            parts.append(_flags(self.flags))
        if self.states:
            parts.append(f"ct state {{ {self.states} }}")
        return parts

    def verdict(self) -> str:
        return "accept" if self.action == "allow" else "drop"


def parse_acl_rule(line: str) -> AclRule:
    """One acl rule line (nfs/acl/README.md)."""
    words = line.split()
    seq, action, rest = int(words[0]), words[1], words[2:]
    proto = rest.pop(0) if rest and rest[0] not in ("from", "to", "sport", "dport", "flags", "state", "vlan") else None
    given = dict(zip(rest[::2], rest[1::2]))
    fields, family = [], None
    for key, direction in (("from", "saddr"), ("to", "daddr")):
        prefix = _prefix(given[key]) if key in given else None
        if prefix:
            family = prefix[0]
            fields.append((f"{'ip' if family == 4 else 'ip6'} {direction}", prefix[1]))
    fields += [(f"th {key}", given[key]) for key in ("sport", "dport") if key in given]
    if "." in given.get("vlan", ""):
        raise XnfError(f"rule {seq}: the lab writes no nftables form of a QinQ match (vlan {given['vlan']})")
    return AclRule(seq, action, family, proto, tuple(fields), given.get("flags"), given.get("state"),
                   given.get("vlan"))


def _one(rule: AclRule, inet: bool) -> str:
    return " ".join(rule.head(inet) + [f"{k} {v}" for k, v in rule.fields] + [rule.verdict()])


def _merged(rules: list[AclRule], inet: bool) -> str:
    """Rules of one shape in a row as one nftables rule over a set: any of them matching is the first to match."""
    keys = " . ".join(k for k, _ in rules[0].fields)
    values = ", ".join(" . ".join(v for _, v in r.fields) for r in rules)
    return " ".join(rules[0].head(inet) + [f"{keys} {{ {values} }}", rules[0].verdict()])


def acl_nft_rules(rules: list[AclRule], sets: bool, inet: bool = False) -> list[str]:
    """The nftables rules, in sequence order; with sets, each run of rules of one shape as one rule over a set
    (as an operator writes a long list), else one nftables rule per acl rule."""
    ordered = sorted(rules, key=lambda r: r.seq)
    if not sets:
        return [_one(r, inet) for r in ordered]
    out, run = [], []
    for rule in ordered + [None]:
        if run and (rule is None or rule.shape != run[0].shape or not rule.fields):
            out.append(_merged(run, inet) if len(run) > 1 else _one(run[0], inet))
            run = []
        if rule is not None:
            run.append(rule)
    return out


@dataclass(frozen=True)
class AclFile:
    default: str                      # the chain's policy
    rules: list[AclRule]
    timeouts: dict[str, int]          # idle time name -> seconds
    liberal: bool = False             # `conntrack liberal`: TCP windows unchecked

    @property
    def stateful(self) -> bool:
        return any(r.states for r in self.rules)


def parse_acl_file(text: str) -> AclFile:
    default, rules, timeouts, liberal = "accept", [], {}, False
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        words = line.split()
        if words[0] == "default":
            default = "accept" if words[1] == "allow" else "drop"
        elif words[0] == "timeout":
            timeouts[words[1]] = int(words[2])
        elif words == ["conntrack", "liberal"]:
            liberal = True
        else:
            rules.append(parse_acl_rule(line))
    return AclFile(default, rules, timeouts, liberal)


def acl_ruleset(rules: str, sets: bool = False) -> str:
    """The nftables script of an acl rules file: one table, one chain, rules in sequence order (an inet chain when
    the rules name connection states, else a bridge one)."""
    acl = parse_acl_file(rules)
    body = "\n".join(f"    {rule}" for rule in acl_nft_rules(acl.rules, sets, inet=acl.stateful))
    if acl.stateful:
        return (f"table inet {TABLE} {{\n  chain forward {{\n    type filter hook forward priority 0; "
                f"policy {acl.default};\n{body}\n  }}\n}}\n")
    return (f"table bridge {TABLE} {{\n  chain forward {{\n    type filter hook forward priority 0; policy {acl.default};\n"
            f"    ether type != {{ ip, ip6 }} accept\n{body}\n  }}\n}}\n")


def conntrack_timeout_sysctls(name: str) -> list[str]:
    """netfilter's sysctls for one of the acl's idle times (tcp_established, udp_stream, icmp, ...)."""
    if name == "tcp_syn_sent2":
        raise XnfError("netfilter has no sysctl for tcp_syn_sent2 (it keeps SYN_SENT2 for 120 s): leave it out of "
                       "a rules file the lab gives nftables")
    if name.startswith("tcp_"):
        return [f"nf_conntrack_tcp_timeout_{name[4:]}"]
    if name == "udp_stream":
        return ["nf_conntrack_udp_timeout_stream"]
    if name == "icmp":
        return ["nf_conntrack_icmp_timeout", "nf_conntrack_icmpv6_timeout"]
    return [f"nf_conntrack_{name}_timeout"]


def conntrack_like_the_acl(ns: str, timeouts: dict[str, int], liberal: bool = False) -> None:
    """The namespace's conntrack as the acl tracks: bridged IP frames through the inet hooks, TCP windows checked
    (netfilter's default, set all the same) unless the acl is liberal, the acl's idle times."""
    settings = {"net.bridge.bridge-nf-call-iptables": 1, "net.bridge.bridge-nf-call-ip6tables": 1,
                "net.netfilter.nf_conntrack_tcp_be_liberal": int(liberal)}
    for name, seconds in timeouts.items():
        settings.update({f"net.netfilter.{sysctl}": seconds for sysctl in conntrack_timeout_sysctls(name)})
    netns.run(ns, ["sysctl", "-qw"] + [f"{k}={v}" for k, v in settings.items()])


def gro_on(ns: str, ifaces: list[str]) -> None:
    """GRO on the DUT's ports: the generator's XDP frames enter a veth without XDP only by GRO, and threaded NAPI
    on a veth needs it (or XDP)."""
    for iface in ifaces:
        netns.run(ns, ["ethtool", "-K", iface, "gro", "on"])


def linux_forwards_to(t: Topology, out: Link) -> None:
    """Linux forwarding between the DUT's ports, to out's generator side (a static neighbour: its XDP sink answers
    no ARP)."""
    netns.run(t.dut_ns, ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"])
    netns.ip("neigh", "replace", out.gen_ip, "lladdr", out.gen_mac, "dev", out.dut_if, "nud", "permanent",
             ns=t.dut_ns)
    gro_on(t.dut_ns, t.dut_ifaces)


def nft(ns: str, script: str) -> None:
    done = subprocess.run(netns.exec_argv(ns, ["nft", "-f", "-"]), input=script, capture_output=True, text=True)
    if done.returncode != 0:
        raise XnfError(f"nft refused the ruleset: {done.stderr.strip()}")


# How long a bridge may take to forward on every port: a port forwards once the kernel has seen its carrier, which
# it learns in deferred work (up to a second later; an emulated guest slower still).
BRIDGE_FORWARDING_S = 5.0


def bridge_ports(ns: str, ports: list[str]) -> None:
    """The ports in one bridge (no STP, no learning delay), up, and returns once every port forwards: Linux forwards
    between them."""
    netns.ip("link", "add", BRIDGE, "type", "bridge", "stp_state", "0", "forward_delay", "0", ns=ns)
    for port in ports:
        netns.ip("link", "set", port, "master", BRIDGE, ns=ns)
    netns.ip("link", "set", BRIDGE, "up", ns=ns)
    deadline = time.monotonic() + pace.timeout(BRIDGE_FORWARDING_S)
    while (waiting := _not_forwarding(ns, ports)) and time.monotonic() < deadline:
        time.sleep(0.05)
    if waiting:
        raise XnfError(f"the bridge in {ns} does not forward on {', '.join(waiting)} after "
                       f"{pace.timeout(BRIDGE_FORWARDING_S):.0f} s")


def _not_forwarding(ns: str, ports: list[str]) -> list[str]:
    states = {p["ifname"]: p.get("state") for p in json.loads(netns.run(ns, ["bridge", "-j", "link", "show"]).stdout)}
    return [port for port in ports if states.get(port) != "forwarding"]


def acl_on_bridge(ns: str, ports: list[str], rules: str, sets: bool = False) -> None:
    """Linux doing what `xnf run acl` on these ports does: a bridge between them, the acl as nftables rules (with
    sets: runs of rules of one shape as one rule over a set, as an operator would write them)."""
    bridge_ports(ns, ports)
    acl = parse_acl_file(rules)
    if acl.stateful:
        conntrack_like_the_acl(ns, acl.timeouts, acl.liberal)
    nft(ns, acl_ruleset(rules, sets))


NAT_TABLE = "xnf_nat"


def masquerade(ns: str, inside: str, outside: str, forwards: list[tuple[str, int, str, int]] = (),
               sources: tuple[str, ...] = (), pool: str | None = None) -> None:
    """Linux doing what `xnf run nat` does between these ports: forwarding on, sources masqueraded out of outside
    (only those within the prefixes `sources`, when given: the others forwarded as they are; to the addresses of
    `pool`, FIRST-LAST, when given, each inside host keeping one: snat persistent), and from outside only what
    conntrack knows as an answer (or related: ICMP errors) forwarded in, and what a port forward (protocol, public
    port, inside address, inside port) sends to an inside server."""
    netns.run(ns, ["sysctl", "-qw", "net.ipv4.ip_forward=1"])
    dnat = "".join(f'    iifname "{outside}" {proto} dport {public} dnat to {addr}:{port}\n'
                   for proto, public, addr, port in forwards)
    only = f"ip saddr {{ {', '.join(sources)} }} " if sources else ""
    nft(ns, f"""table ip {NAT_TABLE} {{
  chain prerouting {{
    type nat hook prerouting priority dstnat; policy accept;
{dnat}  }}
  chain postrouting {{
    type nat hook postrouting priority srcnat; policy accept;
    oifname "{outside}" {only}{f"snat ip to {pool} persistent" if pool else "masquerade"}
  }}
  chain forward {{
    type filter hook forward priority filter; policy drop;
    iifname "{inside}" oifname "{outside}" accept
    iifname "{outside}" oifname "{inside}" ct state established,related accept
    iifname "{outside}" oifname "{inside}" ct status dnat accept
  }}
}}
""")


def prefix_translation6(ns: str, outside: str, inside_prefix: str, outside_prefix: str) -> None:
    """Linux doing what `xnf run nat` does with a prefix6 rule: NPTv6 (RFC 6296) with ip6tables' SNPT on the way out
    of outside and DNPT on the way in (nftables has no stateless prefix translation); forwarding on."""
    netns.run(ns, ["sysctl", "-qw", "net.ipv6.conf.all.forwarding=1"])
    netns.run(ns, ["ip6tables", "-t", "mangle", "-A", "POSTROUTING", "-o", outside, "-s", inside_prefix, "-j", "SNPT",
                   "--src-pfx", inside_prefix, "--dst-pfx", outside_prefix])
    netns.run(ns, ["ip6tables", "-t", "mangle", "-A", "PREROUTING", "-i", outside, "-d", outside_prefix, "-j", "DNPT",
                   "--src-pfx", outside_prefix, "--dst-pfx", inside_prefix])

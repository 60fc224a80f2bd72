"""`xnf acl import`: a firewall's rules brought from Linux. An acl rules file written as nftables rules by the lab
(with sets, as an operator writes long lists), loaded into nftables and listed back by `nft -j list ruleset`,
comes back as the same rules; iptables-save output loaded by iptables-restore and saved again gives the rules
that fit, and names each that does not."""

from __future__ import annotations

import ipaddress
import random
import subprocess
import sys

from test_acl import FIXED_RULES, random_rules
from xnf import build
from xnf.lab import netfilter, netns
from xnf.lab.topology import Topology


def canonical(line: str) -> tuple:
    """A rule line's meaning, numbering and spelling aside: action, protocol, prefixes, port ranges, flags,
    connection states, VLAN."""
    words = line.split("#")[0].split()
    action, rest = words[1], words[2:]
    proto = rest.pop(0) if rest and rest[0] not in ("from", "to", "sport", "dport", "flags", "state", "vlan") \
        else None
    given = dict(zip(rest[::2], rest[1::2]))
    nets = tuple(ipaddress.ip_network(given[k], strict=False) if k in given else None for k in ("from", "to"))
    ports = tuple(tuple(int(p) for p in (given[k].split("-") * 2)[:2]) if k in given else None
                  for k in ("sport", "dport"))
    flags = frozenset(given["flags"].split(",")) if "flags" in given else None
    states = frozenset(given["state"].split(",")) if "state" in given else None
    return action, proto, nets, ports, flags, states, given.get("vlan")


def rules_of(text: str) -> tuple[list[list], str]:
    """The rules in order, as runs of one action, each run's rules in any order (within a run, which one matches
    first makes no difference; nftables lists a set's elements in its own order), and the default."""
    lines = [ln.split("#")[0].strip() for ln in text.splitlines()]
    rules = sorted((ln for ln in lines if ln and not ln.startswith("default")), key=lambda ln: int(ln.split()[0]))
    default = next((ln.split()[1] for ln in lines if ln.startswith("default")), "allow")
    runs: list[list] = []
    for rule in map(canonical, rules):
        if runs and runs[-1][0][0] == rule[0]:
            runs[-1].append(rule)
        else:
            runs.append([rule])
    return [sorted(set(run), key=repr) for run in runs], default   # a set holds a repeated rule once


def imported(path, *options: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xnf", "acl", "import", str(path), *options], capture_output=True,
                          text=True, timeout=60)


def assert_round_trip(tmp_path, rules: str) -> None:
    """rules as the lab's nftables form, loaded, listed by nft -j and imported: the same rules come back."""
    with Topology("pair") as t:
        netfilter.nft(t.dut_ns, netfilter.acl_ruleset(rules, sets=True))
        listing = netns.run(t.dut_ns, ["nft", "-j", "list", "ruleset"]).stdout
    (tmp_path / "ruleset.json").write_text(listing)
    done = imported(tmp_path / "ruleset.json")
    assert done.returncode == 0, done.stderr
    assert rules_of(done.stdout) == rules_of(rules)
    assert "left out" not in done.stdout and "Traceback" not in done.stderr


def test_an_nftables_ruleset_comes_back_as_the_rules_it_was_made_from(tmp_path):
    assert_round_trip(tmp_path, FIXED_RULES + random_rules(random.Random(7), 300))


def test_a_stateful_nftables_ruleset_comes_back_as_the_rules_it_was_made_from(tmp_path):
    rules = ("10 allow state established,related\n20 drop state invalid\n30 allow tcp from 10.1.0.0/16 dport 22 "
             "state new\n40 allow udp to 192.0.2.53 dport 53 state new,untracked\n50 drop state related\n"
             "default drop\n")
    assert_round_trip(tmp_path, rules)


def test_vlan_rules_come_back_from_nftables(tmp_path):
    assert_round_trip(tmp_path, "10 drop vlan 10\n20 allow udp dport 53 vlan 20\n30 drop from 10.0.0.0/8 vlan 30\n"
                                "40 drop vlan 4094\ndefault allow\n")


IPTABLES = """*filter
:INPUT ACCEPT [0:0]
:FORWARD DROP [0:0]
:OUTPUT ACCEPT [0:0]
-A FORWARD -s 10.1.2.0/24 -d 192.0.2.0/24 -p tcp -m tcp --dport 22 -j ACCEPT
-A FORWARD -s 10.1.0.0/16 -p tcp -m multiport --dports 20:23,80 -j DROP
-A FORWARD -p tcp -m tcp --dport 8000:8999 --tcp-flags SYN,ACK SYN -j DROP
-A FORWARD -p udp -m udp --dport 53 -j REJECT --reject-with icmp-port-unreachable
-A FORWARD -m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT
-A FORWARD -p tcp -m state --state NEW -m tcp --dport 443 -j ACCEPT
-A FORWARD -m conntrack --ctstate DNAT -j ACCEPT
-A FORWARD -i eth0 -j DROP
-A FORWARD ! -s 10.0.0.0/8 -j DROP
-A FORWARD -p udp -m conntrack ! --ctstate NEW,ESTABLISHED -j DROP
COMMIT
"""


def test_iptables_rules_that_fit_are_taken_and_the_others_named(tmp_path):
    with Topology("pair") as t:
        subprocess.run(netns.exec_argv(t.dut_ns, ["iptables-restore"]), input=IPTABLES, text=True, check=True)
        saved = netns.run(t.dut_ns, ["iptables-save"]).stdout
        netns.run(t.dut_ns, ["iptables", "-F"])
    (tmp_path / "saved").write_text(saved)
    done = imported(tmp_path / "saved")
    assert done.returncode == 0, done.stderr
    # iptables-save is IPv4's: its rules and its drop policy hold for IPv4 frames, IPv6 is not its to drop.
    assert rules_of(done.stdout) == rules_of("""
        10 allow tcp from 10.1.2.0/24 to 192.0.2.0/24 dport 22
        20 drop tcp from 10.1.0.0/16 dport 20-23
        30 drop tcp from 10.1.0.0/16 dport 80
        40 drop tcp from 0.0.0.0/0 dport 8000-8999 flags syn,!ack
        50 drop udp from 0.0.0.0/0 dport 53
        60 allow from 0.0.0.0/0 state established,related
        70 allow tcp from 0.0.0.0/0 dport 443 state new
        80 drop udp from 0.0.0.0/0 state related,invalid,untracked
        90 drop from 0.0.0.0/0
        default allow""")
    left_out = [ln for ln in done.stdout.splitlines() if ln.startswith("# left out")]
    assert len(left_out) == 3 and "'dnat'" in left_out[0] and "interface" in left_out[1] \
        and "negation" in left_out[2], left_out
    assert "9 acl rules; 3 left out" in done.stderr
    checked = subprocess.run([str(build.nf_binary("acl")), "check-rules", str(tmp_path / "out")], capture_output=True,
                             text=True) if (tmp_path / "out").write_text(done.stdout) else None
    assert checked.returncode == 0, checked.stderr


# (nft itself refuses contradictions such as `tcp dport 22 udp dport 53`: tests/unit/test_acl_import_inputs.py
# gives them as JSON.)
HOSTILE_NFT = [
    "ether type ip6 drop", "ip protocol tcp drop", "ip saddr . tcp dport { 10.0.0.1 . 22, 10.0.0.2 . 80-81 } drop",
    "meta l4proto { tcp, udp } th dport 53 accept", "tcp flags & (syn | ack) == syn drop",
    "ct state != established drop", "ct state { new, untracked } ct state new,invalid accept",
    "ct status dnat accept", "ct state != established,related drop", "ct state & established == established accept",
]
# In a bridge table: VLAN matches.
HOSTILE_BRIDGE = ["vlan id { 5, 6 } ip saddr 10.0.0.0/8 drop", "vlan type ip drop", "vlan id 7 vlan pcp 3 drop",
                  "ether type 8021ad vlan id 8 drop", "ether type 8021q vlan id 9 drop",
                  "vlan id 10 vlan type 8021q drop"]


def test_what_it_writes_is_what_nftables_matched_and_loads(tmp_path):
    """Rules written as an operator (or an attacker) might, loaded into nftables and listed back: what acl import
    makes of them passes check-rules, and each rule keeps the family and protocols nftables gave it."""
    script = "table inet t {\n  chain c {\n    type filter hook forward priority 0; policy accept;\n" + \
        "".join(f"    {rule}\n" for rule in HOSTILE_NFT) + "  }\n}\ntable ip6 six {\n  chain c {\n" \
        "    type filter hook forward priority 0; policy drop;\n    tcp dport 22 accept\n  }\n}\n" \
        "table bridge br {\n  chain c {\n    type filter hook forward priority 0; policy accept;\n" + \
        "".join(f"    {rule}\n" for rule in HOSTILE_BRIDGE) + "  }\n}\n"
    with Topology("pair") as t:
        netfilter.nft(t.dut_ns, script)
        listing = netns.run(t.dut_ns, ["nft", "-j", "list", "ruleset"]).stdout
    (tmp_path / "ruleset.json").write_text(listing)
    inet, six = imported(tmp_path / "ruleset.json", "--chain", "t/c"), imported(tmp_path / "ruleset.json",
                                                                              "--chain", "six/c")
    assert inet.returncode == 0 and six.returncode == 0, inet.stderr + six.stderr
    rules = [ln.split(" ", 1)[1] for ln in inet.stdout.splitlines() if ln[:1].isdigit()]
    assert rules == ["drop from ::/0", "drop tcp from 0.0.0.0/0", "drop tcp from 10.0.0.1 dport 22",
                     "drop tcp from 10.0.0.2 dport 80-81", "allow tcp dport 53", "allow udp dport 53",
                     "drop tcp flags syn,!ack", "drop state new,related,invalid,untracked",
                     "allow state new", "drop state new,established,related,invalid,untracked",
                     "allow state established"], inet.stdout
    left_out = [ln for ln in inet.stdout.splitlines() if ln.startswith("# left out")]
    assert len(left_out) == 1 and "status" in left_out[0], inet.stdout
    assert [ln.split(" ", 1)[1] for ln in six.stdout.splitlines() if ln[:1].isdigit()] == \
        ["allow tcp from ::/0 dport 22", "drop from ::/0"] and "default" not in six.stdout
    bridge = imported(tmp_path / "ruleset.json", "--chain", "br/c")
    assert [ln.split(" ", 1)[1] for ln in bridge.stdout.splitlines() if ln[:1].isdigit()] == \
        ["drop from 10.0.0.0/8 vlan 5", "drop from 10.0.0.0/8 vlan 6", "drop vlan 9"], bridge.stdout
    left_out = [ln for ln in bridge.stdout.splitlines() if ln.startswith("# left out")]
    assert len(left_out) == 4 and "without a VLAN id" in left_out[0] and "pcp" in left_out[1] \
        and "802.1ad" in left_out[2] and "second VLAN tag" in left_out[3], bridge.stdout
    assert "two VLAN tags" in bridge.stderr and "# note: in a bridge chain" in bridge.stdout, bridge.stderr
    # nft compares `ct state != established,related` with the value 6, which no frame's state is (a remark)
    assert [ln for ln in inet.stdout.splitlines() if ln.startswith("# note")] == \
        [ln for ln in inet.stdout.splitlines() if "matches every frame in nftables" in ln] and \
        inet.stdout.count("# note") == 1 and "matches every frame" in inet.stderr, inet.stdout
    assert "note" not in six.stdout + six.stderr
    for name, done in (("inet", inet), ("six", six), ("bridge", bridge)):
        (tmp_path / name).write_text(done.stdout)
        checked = subprocess.run([str(build.nf_binary("acl")), "check-rules", str(tmp_path / name)],
                                 capture_output=True, text=True)
        assert checked.returncode == 0, checked.stderr


def test_what_is_not_a_ruleset_is_said(tmp_path):
    (tmp_path / "text.nft").write_text("table inet filter {\n}\n")
    (tmp_path / "other.json").write_text('{"nftables": [{"chain": {"family": "inet", "table": "t", "name": "c"}}]}')
    for path, says in ((tmp_path / "text.nft", "nft -j list ruleset"), (tmp_path / "other.json", "give --chain"),
                       (tmp_path / "missing", "cannot read the ruleset")):
        done = imported(path)
        assert done.returncode == 1 and says in done.stderr and "Traceback" not in done.stderr, done.stderr


# A stateful firewall's flag hardening as operators write it: a connection opens by a SYN alone, and two flag
# combinations no stack sends are dropped whatever their state.
HARDENING = ["tcp flags != syn / fin,syn,rst,ack ct state new drop", "tcp flags & (fin | syn) == fin | syn drop",
             "tcp flags & (fin | psh | urg) == fin | psh | urg drop"]
# Every combination of the six flags iptables knows, each on a connection of its own (a new source port).
FLAG_COMBINATIONS = [
    "".join(letter for bit, letter in enumerate("FSRPAU") if value >> bit & 1) for value in range(64)]


def test_negated_flag_tests_are_taken_exactly_as_nftables_decides(tmp_path):
    """`tcp flags != syn / fin,syn,rst,ack ct state new drop`, imported, drops what nftables drops and passes what it
    passes, on every combination of six flags opening a connection: the negation becomes one acl flag test per flag
    of its mask, a frame meeting at most one of them."""
    from conntrack_script import INSIDE, Step, tcp
    from test_conntrack import through
    from xnf.lab.nf_process import NfInstance

    steps = [Step(INSIDE, tcp(INSIDE, 20000 + i, 80, flags), True, flags or "no flags")
             for i, flags in enumerate(FLAG_COMBINATIONS)]
    script = ("table inet t {\n  chain c {\n    type filter hook forward priority 0; policy accept;\n" +
              "".join(f"    {rule}\n" for rule in HARDENING) + "  }\n}\n")
    with Topology("two-port") as t:
        netfilter.bridge_ports(t.dut_ns, t.dut_ifaces)
        netfilter.conntrack_like_the_acl(t.dut_ns, {})
        netfilter.nft(t.dut_ns, script)
        listing = netns.run(t.dut_ns, ["nft", "-j", "list", "ruleset"]).stdout
        by_nftables = through(t, steps)
    (tmp_path / "ruleset.json").write_text(listing)
    done = imported(tmp_path / "ruleset.json")
    assert done.returncode == 0 and "left out" not in done.stdout, done.stdout + done.stderr
    (tmp_path / "acl.rules").write_text(done.stdout)
    with Topology("two-port") as t:
        nf = NfInstance.start(t, "acl", "xdp", t.dut_ifaces, rules=str(tmp_path / "acl.rules"))
        by_acl = through(t, steps)
        assert nf.stop() == 0
    assert True in by_nftables and False in by_nftables   # the hardening decided both ways
    differ = [f"{s.why}: nftables {'passed' if n else 'dropped'}, the acl {'passed' if a else 'dropped'}"
              for s, n, a in zip(steps, by_nftables, by_acl) if n != a]
    assert not differ, differ

"""The NF cases the cost model is checked on: NFs as a user runs them (rules, traffic, map sizes), none of them the
NF the profile is fitted on (taskemu). `model-check` predicts and measures check_cases() on every path; `advisor-check`
asks the advisor about held_out_cases() (or others named) and measures every candidate it weighed; operator_cases()
are an edge operator's acl and NAT, whose NAT writes state on the data path, kept apart so that the check on record
stays comparable. Addresses are the lab's (docs/lab.md):
xnf-gen sends from 198.18.0.1 to 198.18.0.2, the generator side's MAC is 02:00:00:00:00:01.
"""

from __future__ import annotations

from xnf.lab import nf_setup
from xnf.model.lab_rate import NfCase

GEN_MAC = "02:00:00:00:00:01"
DUT_IP = nf_setup.GEN_DST
ATTACKERS = "203.0.113"
THOUSAND_FLOWS = ["--flows", "1000", "--vary", "sport"]


def firewall_rules(sources: int = 16, prefix: str = "") -> str:
    """A drop rule for each attack source, everything else allowed."""
    return "".join(f"{prefix}drop udp {ATTACKERS}.{i} 9 {DUT_IP} 9\n" for i in range(sources))


def attack_mix(share: float, legit_flows: int = 64) -> list[str]:
    """A legitimate class and an attack from the 16 dropped sources, taking `share` of the frames."""
    return ["--class", f"legit:share={1 - share:g},flows={legit_flows},vary=sport",
            "--class", f"attack:saddr={ATTACKERS}.0/28,share={share:g}"]


def _lb(sessions: int, flows: list[str], label: str) -> NfCase:
    setup = nf_setup.lb_sessions(sessions, GEN_MAC)
    sizes = [s for s in setup.extra if s != "--map-size"]
    return NfCase(label, "lb", setup.rules, flows, sizes)


def _router(routes: int, destinations: int, label: str) -> NfCase:
    """One route per /24 of 198.18.0.0/16 (the first `routes`), all out of port 0 to the generator."""
    lines = [f"route 198.18.{i}.0/24 via {GEN_MAC} port 0\n" for i in range(routes)]
    traffic = ["--dst-ip", "198.18.0.1", "--flows", str(destinations), "--vary", "daddr"]
    return NfCase(label, "router", "".join(lines), traffic)


def check_cases() -> list[NfCase]:
    return [
        NfCase("firewall-10k", "firewall", nf_setup.firewall_acl(10000).rules, THOUSAND_FLOWS),
        NfCase("firewall-attack", "firewall", firewall_rules(), attack_mix(0.25)),
        _lb(1000, THOUSAND_FLOWS, "lb"),
        _router(64, 1000, "router"),
        NfCase("memload-16M", "memload", None, THOUSAND_FLOWS, [f"ml_area={(16 << 20) // 64}"]),
        NfCase("checksum-16", "checksum", "repeat 16\n"),
        NfCase("chain", "chain:firewall,macswap", firewall_rules(prefix="firewall "), attack_mix(0.25)),
    ]


def held_out_cases() -> list[NfCase]:
    return [
        NfCase("firewall-16/attack-50", "firewall", firewall_rules(), attack_mix(0.5)),
        NfCase("firewall-100k", "firewall", nf_setup.firewall_acl(100000).rules, THOUSAND_FLOWS),
        NfCase("firewall-16/attack-90", "firewall", firewall_rules(), attack_mix(0.9, 16)),
        NfCase("checksum-4", "checksum", "repeat 4\n", ["--flows", "64", "--vary", "sport"]),
        NfCase("checksum-32", "checksum", "repeat 32\n", ["--flows", "64", "--vary", "sport"]),
        _lb(10000, ["--flows", "10000", "--vary", "sport"], "lb-10k"),
        _router(256, 4096, "router-256"),
        NfCase("memload-256M", "memload", None, THOUSAND_FLOWS, [f"ml_area={(256 << 20) // 64}"]),
        NfCase("chain-fw-checksum/attack-50", "chain:firewall,checksum",
               firewall_rules(prefix="firewall ") + "checksum repeat 24\n", attack_mix(0.5)),
        NfCase("chain-fw-lb/attack-25", "chain:firewall,lb",
               firewall_rules(prefix="firewall ") + "".join(f"lb {line}\n" for line in
                                                             _lb(1000, [], "").rules.splitlines()),
               attack_mix(0.25)),
    ]


# To a remote beyond the DUT (frames to the DUT's own address go to its stack untranslated), every source port in the
# pool (each keeps its own)
def nat_flows(flows: int) -> list[str]:
    return ["--dst-ip", "198.19.0.1", "--flows", str(flows), "--vary", "sport", "--sport", "2000"]


NAT_FLOWS = nat_flows(1000)


def nat_on_a_stick(prefix: str = "") -> str:
    """The NAT with its inside and outside on the lab's one port: translated frames go back to the generator."""
    return "".join(f"{prefix}{line}\n" for line in
                   ("inside port 0", f"outside port 0 gateway {GEN_MAC}", "public 203.0.113.1 ports 1024-65535"))


# A stateful firewall (docs/conntrack.md): every frame looked up in the connection table, its connections made in the
# warm-up (each flow's frames all come from one side, so each stays new, and is found).
STATEFUL_ACL = "10 allow state established,related\n20 drop state invalid\n30 allow state new\ndefault drop\n"


def operator_cases() -> list[NfCase]:
    """The acl with 10,000 prefix rules, the NAT on 1,000 established flows (their mappings made in the warm-up;
    each frame a lookup and a write of its session's last use), the two chained, and the acl with connection state
    on 1,000 and 10,000 flows."""
    acl_1k = "".join(f"acl {line}\n" for line in nf_setup.acl_rules(1000, "prefixes").splitlines())
    return [
        NfCase("acl-10k-prefixes", "acl", nf_setup.acl_rules(10000, "prefixes"), THOUSAND_FLOWS),
        NfCase("nat-1k", "nat", nat_on_a_stick(), NAT_FLOWS),
        NfCase("chain-acl-nat", "chain:acl,nat", acl_1k + nat_on_a_stick("nat "), NAT_FLOWS),
        NfCase("acl-stateful-1k", "acl", STATEFUL_ACL, THOUSAND_FLOWS),
        NfCase("acl-stateful-10k", "acl", STATEFUL_ACL, ["--flows", "10000", "--vary", "sport"]),
    ]


def known() -> list[NfCase]:
    return check_cases() + held_out_cases() + operator_cases()


def find(label: str) -> NfCase:
    for case in known():
        if case.label == label:
            return case
    raise KeyError(label)

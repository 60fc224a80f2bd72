"""`xnf acl import`: an operator's firewall rules as the acl's (nfs/acl/README.md), from `nft -j list ruleset`
(nftables' JSON) or `iptables-save` / `ip6tables-save`. The rules of one chain, in order, become numbered acl rules
(sets and lists expanded into one rule each), its policy the default.

An imported rule matches exactly what its source matched, never more: every match of a source rule narrows it
(its table's family, `ip protocol`, `tcp dport`, an address of one family each say which frames it can be), and a
rule whose matches the acl cannot AND exactly (two concatenations, two lists of one field, connection status,
interfaces, negation, jumps, address ranges, marks...) is left out and named. Connection states (nftables'
`ct state`, iptables' `-m conntrack [!] --ctstate` and `-m state [!] --state`) become the acl's `state` lists, each
state tested as nftables tests the bit it has in the value (_nft_states); a frame has one state, so a negated list is
the exact complement and two lists are their intersection. nftables' `vlan id` (an outermost 802.1Q tag) becomes the
acl's `vlan`; other VLAN fields (priority, a second tag behind the first) are named.
A rule whose matches contradict each other (`tcp dport 22 udp dport 53`) matches no frame in its source either,
and is left out, named. A chain of one family (an `ip6` table, ip6tables-save) keeps the other family's frames out
of its rules and its policy.
Non-IP frames are always forwarded by the acl: an accepting rule about them changes nothing and is left out
silently, a dropping one is named. A bridge or netdev chain's rules are taken with a note: frames with two VLAN tags
meet them in the acl but not in nftables (TWO_TAGS_NOTE); an inet, ip or ip6 chain's rules about tags with another:
nftables sees tags there only on bridged frames (ROUTED_TAGS_NOTE)."""

from __future__ import annotations

import ipaddress
import json
import math
import re
import shlex
import socket
import sys
from dataclasses import dataclass, field, replace

from xnf import user_files
from xnf.errors import XnfError

FLAGS = ("fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr")
STATES = ("new", "established", "related", "invalid", "untracked")   # the acl's order (nfs/acl/README.md)
PROTOCOLS = {"tcp": "tcp", "udp": "udp", "icmp": "icmp", "icmpv6": "icmpv6", "ipv6-icmp": "icmpv6",
             "ip6-icmp": "icmpv6", "6": "tcp", "17": "udp", "1": "icmp", "58": "icmpv6"}
PORTED = ("tcp", "udp")
DEFAULT_STEP = 10
MAX_RULES = 262144   # the acl's own limit (nfs/acl/README.md)
# nft -j writes about 30 arrays and objects a rule: room for MAX_RULES, read in a few hundred MB at most.
MAX_JSON_CONTAINERS = 30 * MAX_RULES
ANY = {4: "0.0.0.0/0", 6: "::/0"}   # every frame of one family, as an acl prefix
DIGITS = re.compile(r"[0-9]+")     # ASCII only: int() would take other scripts' digits too


class CannotConvert(Exception):
    """A rule the acl cannot express as it stands."""


class MatchesNothing(CannotConvert):
    """A rule whose matches contradict each other: no frame matches it, in its source either."""


class NonIp(CannotConvert):
    """A rule about non-IP frames only, which the acl always forwards."""


@dataclass
class Conversion:
    lines: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (the rule, why it was left out)
    default: str | None = None
    # Where the rules taken match otherwise than their source, or as their source did but seldom as meant.
    notes: list[str] = field(default_factory=list)

    def add(self, bodies: list[str]) -> None:
        self.lines += bodies


@dataclass
class Match:
    """What one source rule matches: the AND of its matches. Each field is None (any) or a list of alternatives."""
    family: int | None = None
    saddr: list[str] | None = None
    daddr: list[str] | None = None
    sport: list[str] | None = None
    dport: list[str] | None = None
    proto: list[str] | None = None
    flags: list[str] | None = None   # acl flag tests, one per alternative
    states: list[str] | None = None
    vlan: list[str] | None = None
    tagged: bool = False   # a match on the type after a VLAN tag: only tagged frames
    non_ip_too: bool = False   # a negated ether type: it matches non-IP frames as well
    remarks: list[str] = field(default_factory=list)   # what its user should know though it is taken exactly

    def narrow_states(self, states: list[str], what: str) -> None:
        """A frame has one connection state: two state matches are the states in both."""
        unknown = [st for st in states if st not in STATES]
        if unknown:
            raise CannotConvert(f"the connection state '{unknown[0]}' ({what})")
        both = [st for st in STATES if st in states and (self.states is None or st in self.states)]
        if not both and (not states or self.states is None):
            raise MatchesNothing(f"matches no frame: {what} leaves no connection state")
        if not both:
            raise MatchesNothing(f"matches no frame: {what} and state {','.join(self.states)} at once")
        self.states = both

    def narrow_family(self, family: int, what: str) -> None:
        if self.family not in (None, family):
            raise MatchesNothing(f"matches no frame: {what} is IPv{family}, the rest IPv{self.family}")
        self.family = family

    def narrow_proto(self, protocols: list[str], what: str) -> None:
        """The protocols a frame may have: those of every protocol match at once."""
        if self.proto is None:
            self.proto = list(dict.fromkeys(protocols))
            return
        both = [p for p in self.proto if p in protocols]
        if not both:
            raise MatchesNothing(f"matches no frame: {what} and protocol {'|'.join(self.proto)} at once")
        self.proto = both

    def take(self, name: str, values: list[str]) -> None:
        """A list of alternatives for a field; a second list for the same field is an AND the acl cannot carry
        (unless it is the same list)."""
        if not values:
            raise CannotConvert(f"an empty list of {name} values")
        if getattr(self, name) not in (None, values):
            raise CannotConvert(f"two matches on {name} (the acl takes one list of alternatives per field)")
        setattr(self, name, values)

    def count(self) -> int:
        return math.prod(len(v) if v else 1 for v in (self.saddr, self.daddr, self.sport, self.dport, self.proto,
                                                       self.vlan, self.flags))

    def expand(self, action: str) -> list[str]:
        """One acl rule body per combination of alternatives."""
        self._check()
        bodies = []
        for saddr in self.saddr or [None]:
            for daddr in self.daddr or [None]:
                family = self._family_of(saddr, daddr)
                if family is False:
                    continue   # one family per frame: a mixed pair matches nothing
                for proto in self.proto or [None]:
                    _check_protocol_family(proto, family)
                    for sport in self.sport or [None]:
                        for dport in self.dport or [None]:
                            for flags in self.flags or [None]:
                                body = self._body(action, proto, family, (saddr, daddr), (sport, dport), flags)
                                bodies += [f"{body} vlan {v}" for v in self.vlan] if self.vlan else [body]
        if not bodies:
            raise MatchesNothing("matches no frame: its addresses and protocols are of different families")
        return bodies

    def _check(self) -> None:
        if self.flags:
            self.narrow_proto(["tcp"], "tcp flags")
        if self.sport or self.dport:
            if self.proto is None:
                raise CannotConvert("ports without tcp or udp")
            if any(p not in PORTED for p in self.proto):
                raise CannotConvert(f"ports with protocol {'|'.join(p for p in self.proto if p not in PORTED)}")

    def _family_of(self, saddr: str | None, daddr: str | None) -> int | None | bool:
        """The family a combination's frames are of (None: either), or False where its parts disagree."""
        families = {_family(a) for a in (saddr, daddr) if a} | ({self.family} if self.family else set())
        return False if len(families) > 1 else next(iter(families), None)

    def _body(self, action, proto, family, addresses, ports, flags) -> str:
        (saddr, daddr), (sport, dport) = addresses, ports
        words = [action] + ([proto] if proto else [])
        if family and not saddr and not daddr:
            saddr = ANY[family]   # the family alone: every address of it
        words += [f"from {saddr}"] if saddr else []
        words += [f"to {daddr}"] if daddr else []
        words += [f"sport {sport}"] if sport else []
        words += [f"dport {dport}"] if dport else []
        words += [f"flags {flags}"] if flags else []
        words += [f"state {','.join(self.states)}"] if self.states else []
        return " ".join(words)


class Budget:
    """The acl's rule limit, checked before a rule's combinations are built, not after."""

    def __init__(self, limit: int = MAX_RULES):
        self.left = limit

    def take(self, matches: list[Match], action: str) -> list[str]:
        needed = sum(m.count() for m in matches)
        if needed > self.left:
            raise XnfError(f"the ruleset expands to more than {MAX_RULES} acl rules (sets and lists give one rule "
                           "per combination): the acl holds no more; split the chain or shorten its lists")
        bodies = [body for m in matches for body in m.expand(action)]
        self.left -= len(bodies)
        return bodies


def _check_protocol_family(proto: str | None, family: int | None) -> None:
    if (proto, family) in (("icmp", 6), ("icmpv6", 4)):
        raise CannotConvert(f"protocol {proto} in IPv{family} frames (the acl takes icmp with IPv4 and icmpv6 with "
                            "IPv6)")


def _family(address: str) -> int:
    return 6 if ":" in address else 4


def _prefix(text) -> str:
    if not isinstance(text, str):
        raise CannotConvert(f"'{text}' is not an address or prefix")
    if text.startswith("@"):
        raise CannotConvert(f"a named set ({text}): list it inline")
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise CannotConvert(f"'{text}' is not an address or prefix") from None
    full = net.prefixlen == net.max_prefixlen
    return str(net.network_address) if full else str(net)


def _port_number(text: str) -> int:
    if not DIGITS.fullmatch(text) or int(text) > 65535:
        raise CannotConvert(f"port '{text}' is not a number from 0 to 65535")
    return int(text)


def _port_range(low: int, high: int, given) -> str:
    if low > high:
        raise CannotConvert(f"port range '{given}' runs backwards")
    return str(low) if low == high else f"{low}-{high}"


def _ipt_port(text: str) -> str:
    """iptables' PORT, LOW:HIGH, LOW: (to 65535) or :HIGH (from 0)."""
    low, colon, high = text.partition(":")
    if not colon:
        return str(_port_number(text))
    return _port_range(_port_number(low) if low else 0, _port_number(high) if high else 65535, text)


def _protocol(value, zero_is_any: bool = False) -> str | None:
    """The acl's name for a protocol: tcp, udp, icmp, icmpv6, or its number 1-255; None for any (iptables' 0)."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        raise CannotConvert(f"protocol '{value}'")
    text = str(value).lower()
    if text in PROTOCOLS:
        return PROTOCOLS[text]
    if DIGITS.fullmatch(text):
        number = int(text)
    else:
        try:
            number = socket.getprotobyname(text)
        except OSError:
            raise CannotConvert(f"protocol '{value}'") from None
    if number == 0 and zero_is_any:
        return None
    if not 1 <= number <= 255:
        raise CannotConvert(f"protocol '{value}' (the acl takes 1-255)")
    return PROTOCOLS.get(str(number), str(number))


def _flags(mask: list, wanted: list) -> str:
    if not all(isinstance(f, str) for f in mask + wanted):
        raise CannotConvert("TCP flags that are not names")
    unknown = [f for f in mask + wanted if f not in FLAGS]
    if unknown:
        raise CannotConvert(f"TCP flag '{unknown[0]}'")
    if set(wanted) - set(mask):
        raise MatchesNothing(f"matches no frame: flags {','.join(wanted)} wanted set outside the mask")
    if len(set(mask)) != len(mask):
        raise CannotConvert("a TCP flag named twice in the mask")
    return ",".join(f if f in wanted else f"!{f}" for f in mask)


def _flags_not(mask: list, wanted: list) -> list[str]:
    """flags & MASK != WANTED, exactly, as flag tests the acl takes: one per flag of the mask, that flag otherwise
    than WANTED has it and the flags before it as WANTED has them. A frame meets at most one, and meets one
    exactly when its flags under the mask are not WANTED."""
    _flags(mask, wanted)   # the same names, checked the same way
    alternatives = []
    for i, flag in enumerate(mask):
        as_wanted = [f if f in wanted else f"!{f}" for f in mask[:i]]
        alternatives.append(",".join(as_wanted + [f"!{flag}" if flag in wanted else flag]))
    if not alternatives:
        raise MatchesNothing("matches no frame: flags under an empty mask are never other than wanted")
    return alternatives


# ---------------------------------------------------------------------------------------------------- nftables

TABLE_FAMILY = {"ip": 4, "ip6": 6}
ETHER_FAMILY = {"ip": 4, "ip6": 6, "ipv4": 4, "ipv6": 6, 0x0800: 4, 0x86dd: 6, 2: 4, 10: 6}


def _nft_values(right) -> list:
    """A match's right-hand side as a list of alternatives (a set expanded)."""
    if isinstance(right, dict) and "set" in right:
        return right["set"] if isinstance(right["set"], list) else [right["set"]]
    return [right]


def _nft_address(value) -> str:
    if isinstance(value, str):
        return _prefix(value)
    if isinstance(value, dict) and isinstance(value.get("prefix"), dict):
        addr, length = value["prefix"].get("addr"), value["prefix"].get("len")
        if not isinstance(addr, str) or isinstance(length, bool) or not isinstance(length, int):
            raise CannotConvert(f"a prefix of {json.dumps(value)[:80]}")
        return _prefix(f"{addr}/{length}")
    raise CannotConvert("an address range or set reference")


def _vlan_id(value) -> str:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 4094:
        raise CannotConvert(f"VLAN id {json.dumps(value)[:40]} (the acl takes 1-4094)")
    return str(value)


def _nft_port(value) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        return str(_port_number(str(value)))
    if isinstance(value, dict) and isinstance(value.get("range"), list) and len(value["range"]) == 2:
        low, high = value["range"]
        if any(isinstance(v, bool) or not isinstance(v, int) for v in (low, high)):
            raise CannotConvert(f"a port range of {json.dumps(value)[:80]}")
        return _port_range(_port_number(str(low)), _port_number(str(high)), f"{low}-{high}")
    raise CannotConvert(f"a port match of {json.dumps(value)[:80]}")


def _nft_field(left) -> tuple[str, int | None]:
    """Which acl field a match's left-hand side is (saddr, daddr, tcp:dport, th:sport, proto, family), and the
    family its protocol keyword says frames are of (`ip saddr`: IPv4)."""
    if not isinstance(left, dict):
        raise CannotConvert(f"a match on {json.dumps(left)[:80]}")
    if isinstance(left.get("payload"), dict):
        proto, name = left["payload"].get("protocol"), left["payload"].get("field")
        family = TABLE_FAMILY.get(proto)
        if family and name in ("saddr", "daddr"):
            return name, family
        if proto in ("tcp", "udp", "th") and name in ("sport", "dport"):
            return f"{proto}:{name}", None
        if (proto, name) == ("ip", "protocol"):
            return "proto", family
        if (proto, name) == ("ip6", "nexthdr"):
            raise CannotConvert("ip6 nexthdr: the header right after IPv6's, where the acl's protocol is the "
                                "transport header behind any extension headers (broader); nftables' meta l4proto "
                                "is what the acl matches")
        if (proto, name) == ("ether", "type"):
            return "family", None
        if (proto, name) == ("vlan", "id"):
            return "vlan", None
        if (proto, name) == ("vlan", "type"):
            return "vlan type", None   # the type after the tag: which frames are IP, as ether type says
    meta = left.get("meta", {}).get("key") if isinstance(left.get("meta"), dict) else None
    if meta == "l4proto":
        return "proto", None
    if meta in ("nfproto", "protocol"):
        return "family", None
    raise CannotConvert(f"a match on {json.dumps(left)[:80]}")


TAG_TYPES = {"8021q": "802.1Q", 0x8100: "802.1Q", "8021ad": "802.1ad", 0x88A8: "802.1ad"}


def _tag_type(value) -> str | None:
    """The VLAN tag an ether type names (802.1Q, 802.1ad), or None."""
    if isinstance(value, (bool, dict, list)):
        return None
    return TAG_TYPES.get(value.lower() if isinstance(value, str) else value)


def _take_family(values: list, match: Match) -> None:
    tags = {_tag_type(v) for v in values}
    if tags == {"802.1Q"}:
        match.tagged = True   # an outermost 802.1Q tag: what the acl's vlan ID says, with its id
        return
    if tags - {None}:
        raise CannotConvert("a match on an 802.1ad tag or on tags of several types (the acl's vlan ID is an "
                            "outermost 802.1Q tag)")
    families = set()
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise CannotConvert(f"a frame type of {json.dumps(v)[:40]}")
        families.add(ETHER_FAMILY.get(v.lower() if isinstance(v, str) else v))
    if families == {None}:
        raise NonIp("a match on non-IP frames (the acl always forwards them)")
    if None in families:
        raise CannotConvert("a match on IP and non-IP frames at once (the acl always forwards non-IP frames)")
    if len(families) == 1:
        match.narrow_family(families.pop(), "its frame type")


def _take_other_families(left: dict, values: list, match: Match) -> None:
    """`ether type != ip` (or `meta protocol`, `meta nfproto`): every frame of another type. The IP family left is
    taken; the non-IP frames an ether type match takes too (nfproto has only IP's) the acl forwards whatever its rules
    say, as the rule would if it accepts: a rule that drops them is refused (_nft_rule)."""
    for v in values:
        if isinstance(v, bool) or not isinstance(v, (str, int)):
            raise CannotConvert(f"a frame type of {json.dumps(v)[:40]}")
    named = {ETHER_FAMILY.get(v.lower() if isinstance(v, str) else v) for v in values}
    left_families = {4, 6} - named
    meta = left.get("meta") if isinstance(left.get("meta"), dict) else {}
    match.non_ip_too = meta.get("key") != "nfproto"
    if not left_families:
        raise NonIp("a match on non-IP frames only (the acl always forwards them)")
    if len(left_families) == 1:
        match.narrow_family(left_families.pop(), "its frame type, negated")


def _take(name: str, family: int | None, values: list, match: Match) -> None:
    if name == "vlan type" and any(_tag_type(v) for v in values):
        raise CannotConvert("a second VLAN tag behind the first (vlan type 8021q or 8021ad): the acl's vlan ID "
                            "matches the outermost 802.1Q tag whatever follows it")
    if name in ("family", "vlan type"):
        _take_family(values, match)
        match.tagged |= name == "vlan type"
        return
    if family:
        match.narrow_family(family, f"{'ip' if family == 4 else 'ip6'} {name}")
    if name in ("saddr", "daddr"):
        addresses = [_nft_address(v) for v in values]
        if family and any(_family(a) != family for a in addresses):
            raise CannotConvert(f"an address of the other family in an IPv{family} {name} match")
        match.take(name, addresses)
    elif name == "vlan":
        match.take("vlan", [_vlan_id(v) for v in values])
    elif name == "proto":
        protocols = [_protocol(v) for v in values]
        match.narrow_proto(protocols, "protocol " + "|".join(protocols))
    else:
        proto, port = name.split(":")
        if proto != "th":
            match.narrow_proto([proto], f"{proto} {port}")
        match.take(port, [_nft_port(v) for v in values])


def _nft_flags(left: dict, right, match: Match, negated: bool) -> None:
    """tcp flags & (MASK) == WANTED, or != (negated)"""
    operands = left["&"]
    if not isinstance(operands, list) or len(operands) != 2 or not isinstance(operands[0], dict):
        raise CannotConvert("a bit mask nft does not write")
    flags, mask = operands
    payload = flags.get("payload") if isinstance(flags.get("payload"), dict) else {}
    if (payload.get("protocol"), payload.get("field")) != ("tcp", "flags"):
        raise CannotConvert("a bit mask on anything but TCP flags")
    mask = mask if isinstance(mask, list) else [mask]
    wanted = [] if right in (0, "0x0") else right if isinstance(right, list) else [right]
    if match.flags is not None:
        raise CannotConvert("two matches on TCP flags")
    match.flags = _flags_not(mask, wanted) if negated else [_flags(mask, wanted)]
    match.narrow_proto(["tcp"], "tcp flags")


def _nft_any_flag(right, match: Match) -> None:
    """tcp flags { A, B } (nft's `tcp flags A,B`, and `!= 0 / A,B`): any of them set."""
    flags = right if isinstance(right, list) else [right]
    if match.flags is not None:
        raise CannotConvert("two matches on TCP flags")
    match.flags = _flags_not(flags, [])
    match.narrow_proto(["tcp"], "tcp flags")


def _is_tcp_flags(left: dict) -> bool:
    payload = left.get("payload") if isinstance(left.get("payload"), dict) else {}
    return (payload.get("protocol"), payload.get("field")) == ("tcp", "flags")


def _nft_concat(left: dict, right) -> tuple[list, list]:
    fields = [_nft_field(part) for part in left["concat"]]
    rows = []
    for value in _nft_values(right):
        row = value.get("concat") if isinstance(value, dict) else None
        if not isinstance(row, list) or len(row) != len(fields):
            raise CannotConvert(f"a concatenation row of {json.dumps(value)[:80]} for {len(fields)} fields")
        rows.append(row)
    return fields, rows


# The bit each connection state is in the value nftables' `ct state` loads (the kernel's NF_CT_STATE_*_BIT).
STATE_BITS = {"invalid": 1, "established": 2, "related": 4, "new": 8, "untracked": 64}


def _state_value(value) -> int:
    """A `ct state` operand as the bits nftables compares: a state, a number, or an OR of them (`a | b`)."""
    if isinstance(value, str) and value in STATE_BITS:
        return STATE_BITS[value]
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 32:
        return value
    if isinstance(value, dict) and set(value) == {"|"} and isinstance(value["|"], list) and value["|"]:
        bits = 0
        for part in value["|"]:
            bits |= _state_value(part)
        return bits
    if isinstance(value, str):
        raise CannotConvert(f"the connection state '{value[:40]}'")
    raise CannotConvert(f"a connection state operand of {json.dumps(value)[:80]}")


def _state_text(value) -> str:
    """An operand as nft writes it, for messages (taken apart by _state_value, which refuses what is not one)."""
    if isinstance(value, dict) and isinstance(value.get("|"), list):
        return " | ".join(_state_text(v) for v in value["|"])
    if isinstance(value, dict) and "set" in value:
        return "{ " + ", ".join(_state_text(v) for v in _nft_values(value)) + " }"
    if isinstance(value, list):
        return ",".join(_state_text(v) for v in value)
    return str(value)[:40] if isinstance(value, (str, int)) else json.dumps(value)[:60]


def _state_test(op, right):
    """What nftables' match does with a frame's state value v: `in` any of the bits (a list: `ct state a,b`), `!`
    none of them, `==`/`!=` the whole value (a set: one of its members)."""
    if op in ("in", "!"):
        bits = 0
        for part in (right if isinstance(right, list) else [right]):
            bits |= _state_value(part)
        return (lambda v: v & bits != 0) if op == "in" else (lambda v: v & bits == 0)
    if op in ("==", "!="):
        if isinstance(right, dict) and "set" in right:
            members = {_state_value(v) for v in _nft_values(right)}
            return (lambda v: v in members) if op == "==" else (lambda v: v not in members)
        value = _state_value(right)
        return (lambda v: v == value) if op == "==" else (lambda v: v != value)
    raise CannotConvert(f"a connection state match with '{op}'")


def _nft_states(op, left: dict, right, match: Match) -> None:
    """ct state [& MASK] OP VALUE: the states whose bit passes the test as nftables makes it. A frame has one state, so
    the test is taken exactly as a list of states, whatever its form: `ct state != established | related` (nft's
    form of `ct state != established,related`) compares the value with both bits at once, which no state is, and so
    matches every frame there, as its rule does here (said in a remark, since it is seldom what was meant)."""
    mask = _state_value(left["&"][1]) if "&" in left else None
    test = _state_test(op, right)
    states = [st for st in STATES if test(STATE_BITS[st] & mask if mask is not None else STATE_BITS[st])]
    written = f"ct state {'& ' + _state_text(left['&'][1]) + ' ' if mask is not None else ''}{op} {_state_text(right)}"
    several = isinstance(right, dict) and "|" in right and bin(_state_value(right)).count("1") > 1
    if not states:
        raise MatchesNothing(f"matches no frame: {written}" + (", a value with several states' bits, and a "
                             "frame has one state" if several else ""))
    if several and mask is None and op == "!=":
        match.remarks = match.remarks + [f"{written} compares the state with several states' bits at once, which no "
                                         "frame's state is: it matches every frame in nftables, and so it does here "
                                         "(for 'none of these states' nftables takes `ct state != { a, b }`)"]
    match.narrow_states(states, written)


def _ct_state_operand(left: dict) -> bool:
    """Whether left is `ct state`, or `ct state & MASK`; another ct key is refused, named."""
    if isinstance(left.get("&"), list) and len(left["&"]) == 2 and isinstance(left["&"][0], dict):
        left = left["&"][0]
    ct = left.get("ct") if isinstance(left.get("ct"), dict) else None
    if ct is None:
        return False
    if ct.get("key") != "state" or set(ct) != {"key"}:
        raise CannotConvert(f"a match on conntrack's {json.dumps(ct)[:60]} (the acl matches ct state only)")
    return True


def _nft_match(m: dict, match: Match, concats: list) -> None:
    left, right = m["left"], m["right"]
    if not isinstance(left, dict):
        raise CannotConvert(f"a match on {json.dumps(left)[:80]}")
    if _ct_state_operand(left):
        _nft_states(m.get("op"), left, right, match)
        return
    if "&" in left and m.get("op") in ("==", "!="):
        _nft_flags(left, right, match, negated=m.get("op") == "!=")
        return
    if m.get("op") == "in" and _is_tcp_flags(left):
        _nft_any_flag(right, match)
        return
    if m.get("op") == "!=" and _nft_field(left)[0] == "family":
        _take_other_families(left, _nft_values(right), match)
        return
    if m.get("op") not in ("==", "in"):
        raise CannotConvert(f"a match with '{m.get('op')}' (negation)")
    if "concat" in left:
        concats.append(_nft_concat(left, right))
    else:
        name, family = _nft_field(left)
        _take(name, family, _nft_values(right), match)


def _nft_rule(exprs: list, family: int | None) -> tuple[str, list[Match]]:
    """(action, the matches whose OR is the rule) of one nftables rule."""
    match, concats, action = Match(family=family), [], None
    for expr in exprs:
        kind = next(iter(expr))
        if kind == "match":
            _nft_match(expr["match"], match, concats)
        elif kind in ("accept", "drop", "reject"):
            action = "allow" if kind == "accept" else "drop"
        elif kind not in ("counter", "log", "comment"):
            raise CannotConvert(f"'{kind}' (the acl has allow and drop only)")
    if action is None:
        raise CannotConvert("no accept, drop or reject")
    if match.non_ip_too and action == "drop":
        raise CannotConvert("a negated frame type that drops: it drops non-IP frames (ARP) too in nftables, which "
                            "the acl always forwards")
    if len(concats) > 1:
        raise CannotConvert("two concatenations in one rule (an AND of their rows the acl cannot carry)")
    if match.tagged and not match.vlan:
        raise CannotConvert("a VLAN frame type without a VLAN id (the acl's vlan names one)")
    if not concats:
        return action, [match]
    fields, rows = concats[0]
    matches = []
    for row in rows:
        one = replace(match)   # Match's methods assign new lists, never change one in place
        for (name, field_family), value in zip(fields, row):
            _take(name, field_family, [value], one)
        matches.append(one)
    return action, matches


def _nft_chain(objects: list[dict], chain: str | None) -> dict:
    chains = [o["chain"] for o in objects if isinstance(o.get("chain"), dict)]
    if chain:
        found = [c for c in chains if c["name"] == chain or f"{c['table']}/{c['name']}" == chain]
    else:
        found = [c for c in chains if c.get("hook") == "forward"]
    if len(found) != 1:
        names = ", ".join(f"{c['table']}/{c['name']}" for c in chains) or "none"
        raise XnfError(f"{'chain ' + chain + ' is' if chain else 'no single forward chain is'} in the ruleset "
                       f"(chains: {names}): give --chain TABLE/NAME")
    return found[0]


def _policy(conversion: Conversion, policy: str | None, family: int | None, budget: Budget) -> None:
    """The chain's policy: the default for a chain of both families; for a chain of one family, a last rule over
    that family's frames (the other family never reaches the chain in its source)."""
    action = {"accept": "allow", "drop": "drop", "ACCEPT": "allow", "DROP": "drop"}.get(policy or "")
    if family is None or action is None:
        conversion.default = action
    elif action == "drop":
        conversion.add(budget.take([Match(family=family)], "drop"))


def _nft_objects(text: str) -> list[dict]:
    containers = text.count("[") + text.count("{")   # each a Python object once read: bounded before it is
    if containers > MAX_JSON_CONTAINERS:
        raise XnfError(f"this JSON holds more JSON arrays and objects ({containers:,}) than nft writes for a ruleset "
                       f"the acl can hold ({MAX_JSON_CONTAINERS:,}): give the output of 'nft -j list ruleset'")
    try:
        objects = json.loads(text)["nftables"]
    except RecursionError:
        raise XnfError("this JSON is nested deeper than nftables writes: give the output of "
                       "'nft -j list ruleset'") from None
    except (ValueError, KeyError, TypeError):
        objects = None
    if not isinstance(objects, list):
        raise XnfError("this is not nftables' JSON: give the output of 'nft -j list ruleset'")
    return [o for o in objects if isinstance(o, dict)]


def from_nft_json(text: str, chain: str | None = None) -> Conversion:
    objects = _nft_objects(text)
    try:
        picked = _nft_chain(objects, chain)
        where = (picked["table"], picked["name"], picked.get("family"))
    except (KeyError, TypeError, AttributeError) as missing:
        raise XnfError(f"this nftables JSON has a chain without {missing}: is it 'nft -j list ruleset' output?") \
            from None
    table_family = picked.get("family")
    family = TABLE_FAMILY.get(table_family) if isinstance(table_family, str) else None
    out, budget, tags_matched = Conversion(), Budget(), False
    for o in objects:
        rule = o.get("rule")
        if not isinstance(rule, dict) or (rule.get("table"), rule.get("chain"), rule.get("family")) != where:
            continue
        described = f"rule {rule.get('handle')} of {picked['table']}/{picked['name']}"
        try:
            action, matches = _nft_rule(rule["expr"], family)
            out.add(budget.take(matches, action))
            out.notes += [f"{described}: {remark}" for remark in dict.fromkeys(matches[0].remarks)]
            tags_matched |= any(m.vlan for m in matches)
        except NonIp as why:
            if _accepts(rule):
                continue   # what the acl does with non-IP frames anyway
            out.skipped.append((described, str(why)))
        except CannotConvert as why:
            out.skipped.append((described, str(why)))
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration):
            out.skipped.append((described, "not a rule as nft writes it"))
        except RecursionError:
            out.skipped.append((described, "nested deeper than nft writes a rule"))
    policy = picked.get("policy", "accept")
    _policy(out, policy if isinstance(policy, str) else None, family, budget)
    if table_family in LINK_FAMILIES:
        out.notes.append(TWO_TAGS_NOTE.format(family=table_family))
        if out.default == "drop":
            out.notes.append(NON_IP_POLICY_NOTE.format(family=table_family))
    elif tags_matched:
        out.notes.append(ROUTED_TAGS_NOTE.format(family=table_family))
    return out


# Linux moves a frame's outermost VLAN tag out of it before a bridge or netdev chain sees it, so that nftables' IP
# matches there (ip saddr, tcp dport, ...) take frames of no tag or one and skip frames of two; the acl's match the IP
# header behind up to two tags (nfs/acl/README.md). Measured on kernel 6.18 (research/lab-notebook.md).
TWO_TAGS_NOTE = ("in a {family} chain nftables' IP matches skip frames with two VLAN tags, where the acl's rules "
                 "match the IP header behind them: such frames meet these rules in the acl and only the policy in "
                 "nftables")
LINK_FAMILIES = ("bridge", "netdev")
# A bridge or netdev chain sees every frame: its drop policy drops ARP and other non-IP frames no rule accepts, where
# the acl forwards them whatever its default (nfs/acl/README.md).
NON_IP_POLICY_NOTE = ("the {family} chain's policy drop also drops ARP and other non-IP frames that no rule accepts; "
                      "the acl's default drop applies to IP frames only and forwards the others")
# Linux takes a routed frame's VLAN tag off (its VLAN device, or its drop with no such device) before an inet, ip or
# ip6 chain sees it: there `vlan id` matches only bridged frames that br_netfilter hands over with their tag
# (bridge-nf-filter-vlan-tagged). The acl's `vlan` matches the tag of every frame that has one.
ROUTED_TAGS_NOTE = ("in an {family} chain nftables' vlan id sees a tag only on bridged frames that br_netfilter "
                    "hands over with it (bridge-nf-filter-vlan-tagged=1); routed frames have lost theirs there, "
                    "where the acl's vlan rules match the tag of every frame that has one")


def _accepts(rule: dict) -> bool:
    return any(isinstance(e, dict) and "accept" in e for e in rule.get("expr", []))


# ---------------------------------------------------------------------------------------------------- iptables

def _ipt_list(text: str, convert) -> list[str]:
    return [convert(v) for v in text.split(",")]


def _ipt_option(word: str, args: list[str], match: Match, negated: bool = False) -> str | None:
    """Takes one option with its arguments into match (negated: it followed a '!'); the action for -j."""
    if negated and word not in ("--ctstate", "--state", "--tcp-flags", "--syn"):
        raise CannotConvert(f"a negation ('! {word}')")
    if word in ("-s", "--source", "--src", "-d", "--destination", "--dst"):
        name = "saddr" if word in ("-s", "--source", "--src") else "daddr"
        addresses = _ipt_list(args[0], _prefix)
        for a in addresses:
            match.narrow_family(_family(a), f"address {a}")
        match.take(name, addresses)
    elif word in ("-p", "--protocol"):
        proto = None if args[0] == "all" else _protocol(args[0], zero_is_any=True)
        if proto:
            match.narrow_proto([proto], f"-p {args[0]}")
    elif word in ("--sport", "--source-port", "--sports", "--source-ports"):
        match.take("sport", _ipt_list(args[0], _ipt_port))
    elif word in ("--dport", "--destination-port", "--dports", "--destination-ports"):
        match.take("dport", _ipt_list(args[0], _ipt_port))
    elif word == "--tcp-flags":
        if match.flags is not None:
            raise CannotConvert("two TCP flag matches")
        mask, wanted = _ipt_flag_list(args[0]), _ipt_flag_list(args[1])
        match.flags = _flags_not(mask, wanted) if negated else [_flags(mask, wanted)]
    elif word == "--syn":
        if match.flags is not None:
            raise CannotConvert("two TCP flag matches")
        mask, wanted = ["syn", "rst", "ack", "fin"], ["syn"]
        match.flags = _flags_not(mask, wanted) if negated else [_flags(mask, wanted)]
    elif word in ("--ctstate", "--state"):
        states = args[0].lower().split(",")
        unknown = [st for st in states if st not in STATES]
        if unknown:
            raise CannotConvert(f"the connection state '{unknown[0]}' ({word} {args[0]})")
        if negated:   # a frame has one state: the others, exactly
            states = [st for st in STATES if st not in states]
        match.narrow_states(states, f"{'! ' if negated else ''}{word} {args[0]}")
    elif word in ("-m", "--match"):
        if args[0] not in ("tcp", "udp", "multiport", "comment", "icmp", "icmp6", "conntrack", "state"):
            raise CannotConvert(f"the match module '{args[0]}'")
    elif word in ("-j", "--jump"):
        if args[0] not in ("ACCEPT", "DROP", "REJECT"):
            raise CannotConvert(f"the target '{args[0]}' (the acl has allow and drop only)")
        return "allow" if args[0] == "ACCEPT" else "drop"
    elif word in ("-i", "-o", "--in-interface", "--out-interface"):
        raise CannotConvert("an interface match (run the acl on the ports it is for)")
    elif word not in ("--comment", "--reject-with"):
        raise CannotConvert(f"'{word}'")
    return None


# iptables' names for flag lists (libxt_tcp): ALL is its six flags, not ECE and CWR.
IPT_ALL_FLAGS = ["fin", "syn", "rst", "psh", "ack", "urg"]


def _ipt_flag_list(text: str) -> list[str]:
    """One of --tcp-flags' lists: names, ALL or NONE."""
    return {"ALL": IPT_ALL_FLAGS, "NONE": []}.get(text.upper(), text.lower().split(","))


# How many words each option takes after it.
IPT_ARGS = {"--tcp-flags": 2, "--syn": 0}


def _ipt_rule(words: list[str], family: int) -> tuple[str, Match]:
    match, action, i = Match(family=family), None, 0
    while i < len(words):
        negated = words[i] == "!"
        i += negated
        if i == len(words) or words[i] == "!":
            raise CannotConvert("a '!' before no option")
        take = IPT_ARGS.get(words[i], 1)
        args = words[i + 1:i + 1 + take]
        if len(args) < take:
            raise CannotConvert(f"'{words[i]}' without its value")
        action = _ipt_option(words[i], args, match, negated) or action
        i += 1 + take
    if action is None:
        raise CannotConvert("no -j ACCEPT, DROP or REJECT")
    return action, match


SAVED_BY = re.compile(r"#\s*Generated by (ip6?)tables(?:-nft|-legacy)?-save\b")


def _ipt_family(text: str, family: str | None) -> int:
    """IPv4 for iptables-save, IPv6 for ip6tables-save: from --family, else from the comment each writes first."""
    if family:
        return {"ip": 4, "ip6": 6}[family]
    said = SAVED_BY.search(text[:4096])
    if said:
        return 6 if said.group(1) == "ip6" else 4
    raise XnfError("cannot tell iptables-save (IPv4) from ip6tables-save (IPv6) output: keep the '# Generated by' "
                   "line it starts with, or give --family ip or ip6")


def from_iptables_save(text: str, chain: str = "FORWARD", family: str | None = None) -> Conversion:
    ip_family = _ipt_family(text, family)
    out, budget, seen_chain, policy = Conversion(), Budget(), False, None
    in_filter = True
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if line.startswith("*"):
            in_filter = line == "*filter"
        if not in_filter or not line:
            continue
        if line.startswith(f":{chain} "):
            seen_chain = True
            policy = line.split()[1]
        elif line.startswith(f"-A {chain} "):
            seen_chain = True
            try:
                action, match = _ipt_rule(shlex.split(line)[2:], ip_family)
                out.add(budget.take([match], action))
            except (CannotConvert, ValueError) as why:
                out.skipped.append((f"line {number}", str(why)))
    if not seen_chain:
        raise XnfError(f"no chain {chain} in this iptables-save output (its filter table): give --chain NAME")
    _policy(out, policy, ip_family, budget)
    return out


# ---------------------------------------------------------------------------------------------------- the command

def convert(text: str, kind: str = "auto", chain: str | None = None, family: str | None = None) -> Conversion:
    stripped = text.lstrip()
    if kind == "auto":
        kind = "nft-json" if stripped.startswith("{") else "iptables" if stripped[:1] in ("*", ":", "-", "#") else ""
    if kind == "nft-json":
        if family:
            raise XnfError("--family is for iptables-save output: nftables' JSON says each table's family itself")
        return from_nft_json(text, chain)
    if kind == "iptables":
        return from_iptables_save(text, chain or "FORWARD", family)
    raise XnfError("cannot tell what this is: give the output of 'nft -j list ruleset' (JSON; for nftables' text "
                   "form, list it with -j) or of 'iptables-save' / 'ip6tables-save'")


def rules_text(conversion: Conversion, step: int = DEFAULT_STEP) -> str:
    """The acl rules file: the rules numbered by step, the default, and what was left out as comments."""
    if len(conversion.lines) > MAX_RULES:
        raise XnfError(f"{len(conversion.lines)} rules after expanding sets: the acl holds {MAX_RULES}")
    lines = [f"{step * (i + 1)} {body}" for i, body in enumerate(conversion.lines)]
    if conversion.default:
        lines.append(f"default {conversion.default}")
    lines += [f"# left out: {what}: {why}" for what, why in conversion.skipped]
    lines += [f"# note: {note}" for note in conversion.notes]
    return "\n".join(lines) + "\n"


def _read_stdin() -> str:
    """Standard input, bounded like a file (cat /dev/zero | xnf acl import - ends in a message, not a MemoryError)."""
    data = sys.stdin.buffer.read(user_files.MAX_RULES_BYTES + 1)
    if len(data) > user_files.MAX_RULES_BYTES:
        raise XnfError(f"standard input is longer than {user_files.MAX_RULES_BYTES >> 20} MiB: is it a ruleset?")
    try:
        return data.decode()
    except UnicodeDecodeError as err:
        raise XnfError(f"standard input is not UTF-8 text (byte {err.start}): is it a ruleset?") from None


def run(source: str, kind: str, chain: str | None, step: int, out: str | None, family: str | None = None) -> int:
    """xnf acl import: the rules file written (out, or stdout), what was left out said on stderr."""
    if step < 1:
        raise XnfError(f"--step {step}: give 1 or more (the gap between rule numbers)")
    text = _read_stdin() if source == "-" else user_files.read_text(source, "ruleset", user_files.MAX_RULES_BYTES)
    if "\0" in text:
        raise XnfError("the ruleset holds a NUL byte: is it a ruleset?")
    conversion = convert(text, kind, chain, family)
    if not conversion.lines and conversion.skipped:
        raise XnfError("no rule of the chain could be taken: " + "; ".join(f"{w}: {y}" for w, y in
                       conversion.skipped[:3]))
    if step * len(conversion.lines) > 4000000000:
        raise XnfError(f"--step {step} numbers {len(conversion.lines)} rules past the acl's highest sequence "
                       "number (4,000,000,000): give a smaller step")
    written = rules_text(conversion, step)
    if out:
        try:
            with open(out, "w") as f:
                f.write(written)
        except OSError as err:
            raise XnfError(f"cannot write {out}: {err.strerror}") from None
    else:
        sys.stdout.write(written)
    left = f"; {len(conversion.skipped)} left out, each named in a comment" if conversion.skipped else ""
    print(f"xnf acl import: {len(conversion.lines)} acl rules{left}", file=sys.stderr)
    for note in conversion.notes:
        print(f"xnf acl import: note: {note}", file=sys.stderr)
    return 0

"""`xnf acl import`: an operator's firewall rules as the acl's (nfs/acl/README.md), from `nft -j list ruleset`
(nftables' JSON) or `iptables-save` / `ip6tables-save`. The rules of one chain, in order, become numbered acl rules
(sets and lists expanded into one rule each), its policy the default; a rule that needs what a stateless ACL
cannot do (connection state, interfaces, negation, jumps, address ranges, marks...) is left out and said, never
approximated. Non-IP frames are always forwarded by the acl, so rules about them are left out silently."""

from __future__ import annotations

import ipaddress
import itertools
import json
import shlex
import socket
from dataclasses import dataclass, field

from xnf import user_files
from xnf.errors import XnfError

FLAGS = ("fin", "syn", "rst", "psh", "ack", "urg", "ece", "cwr")
PROTOCOLS = {"tcp": "tcp", "udp": "udp", "icmp": "icmp", "icmpv6": "icmpv6", "ipv6-icmp": "icmpv6",
             "ip6-icmp": "icmpv6", "6": "tcp", "17": "udp", "1": "icmp", "58": "icmpv6"}
DEFAULT_STEP = 10
MAX_RULES = 262144   # the acl's own limit (nfs/acl/README.md)


class CannotConvert(Exception):
    """A rule the acl cannot express as it stands."""


@dataclass
class Conversion:
    lines: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)   # (the rule, why it was left out)
    default: str | None = None


@dataclass
class Match:
    """What one source rule matches, each field a list of alternatives (empty: any)."""
    saddr: list[str] = field(default_factory=list)
    daddr: list[str] = field(default_factory=list)
    sport: list[str] = field(default_factory=list)
    dport: list[str] = field(default_factory=list)
    proto: list[str] = field(default_factory=list)
    flags: str | None = None

    def expand(self, action: str) -> list[str]:
        """One acl rule body per combination of alternatives."""
        bodies = []
        for saddr, daddr, sport, dport, proto in itertools.product(
                self.saddr or [None], self.daddr or [None], self.sport or [None], self.dport or [None],
                self.proto or [None]):
            if saddr and daddr and (":" in saddr) != (":" in daddr):
                continue   # one family per rule: a mixed pair matches nothing
            if (sport or dport or self.flags) and proto not in ("tcp", "udp"):
                if proto is None:
                    raise CannotConvert("ports without tcp or udp")
                raise CannotConvert(f"ports with protocol {proto}")
            words = [action] + ([proto] if proto else [])
            words += [f"from {saddr}"] if saddr else []
            words += [f"to {daddr}"] if daddr else []
            words += [f"sport {sport}"] if sport else []
            words += [f"dport {dport}"] if dport else []
            words += [f"flags {self.flags}"] if self.flags else []
            bodies.append(" ".join(words))
        return bodies


def _prefix(text: str) -> str:
    try:
        net = ipaddress.ip_network(text, strict=False)
    except ValueError:
        raise CannotConvert(f"'{text}' is not an address or prefix") from None
    full = net.prefixlen == net.max_prefixlen
    return str(net.network_address) if full else str(net)


def _port(text) -> str:
    text = str(text).replace(":", "-")
    low, _, high = text.partition("-")
    if not low.isdigit() or (high and not high.isdigit()):
        raise CannotConvert(f"port '{text}' is not a number or range")
    return text if high and high != low else low


def _protocol(value) -> str:
    """The acl's name for a protocol: tcp, udp, icmp, icmpv6, or its number."""
    text = str(value).lower()
    if text in PROTOCOLS:
        return PROTOCOLS[text]
    if text.isdigit() and int(text) < 256:
        return text
    try:
        return str(socket.getprotobyname(text))
    except OSError:
        raise CannotConvert(f"protocol '{value}'") from None


def _flags(mask: list[str], wanted: list[str]) -> str:
    unknown = [f for f in mask + wanted if f not in FLAGS]
    if unknown:
        raise CannotConvert(f"TCP flag '{unknown[0]}'")
    return ",".join(f if f in wanted else f"!{f}" for f in mask)


# ---------------------------------------------------------------------------------------------------- nftables

def _nft_values(right) -> list:
    """A match's right-hand side as a list of alternatives (a set expanded)."""
    if isinstance(right, dict) and "set" in right:
        return right["set"] if isinstance(right["set"], list) else [right["set"]]
    return [right]


def _nft_address(value) -> str:
    if isinstance(value, str):
        return _prefix(value)
    if isinstance(value, dict) and "prefix" in value:
        return _prefix(f"{value['prefix']['addr']}/{value['prefix']['len']}")
    raise CannotConvert("an address range or set reference")


def _nft_port(value) -> str:
    if isinstance(value, int):
        return str(value)
    if isinstance(value, dict) and "range" in value:
        return _port(f"{value['range'][0]}-{value['range'][1]}")
    raise CannotConvert(f"a port match of {json.dumps(value)}")


def _nft_field(left) -> str:
    """Which acl field a match's left-hand side is: saddr, daddr, sport, dport, proto, flags, ethertype."""
    if "payload" in left:
        proto, name = left["payload"].get("protocol"), left["payload"].get("field")
        if proto in ("ip", "ip6") and name in ("saddr", "daddr"):
            return name
        if proto in ("tcp", "udp", "th") and name in ("sport", "dport"):
            return f"{proto}:{name}"
        if (proto, name) in (("ip", "protocol"), ("ip6", "nexthdr")):
            return "proto"
        if (proto, name) == ("ether", "type"):
            return "ethertype"
    if left.get("meta", {}).get("key") == "l4proto":
        return "proto"
    raise CannotConvert(f"a match on {json.dumps(left)}")


def _nft_match(m: dict, match: Match, components: dict) -> None:
    left, right = m["left"], m["right"]
    if m.get("op") not in ("==", "in"):
        if "payload" in left and _nft_field(left) == "ethertype":
            raise CannotConvert("a match on non-IP frames (the acl always forwards them)")
        raise CannotConvert(f"a match with '{m.get('op')}' (negation)")
    if "&" in left:   # tcp flags & (mask) == wanted
        flags, mask = left["&"]
        if flags.get("payload", {}).get("field") != "flags":
            raise CannotConvert("a bit mask on anything but TCP flags")
        wanted = [] if right in (0, "0x0") else right if isinstance(right, list) else [right]
        match.flags = _flags(list(mask) if isinstance(mask, list) else [mask], wanted)
        match.proto = match.proto or ["tcp"]
        return
    if "concat" in left:
        fields = [_nft_field(part) for part in left["concat"]]
        rows = [v["concat"] for v in _nft_values(right)]
        components.setdefault("concat", []).append((fields, rows))
        return
    _take(_nft_field(left), _nft_values(right), match)


def _take(name: str, values: list, match: Match) -> None:
    if name == "ethertype":
        if set(values) - {"ip", "ip6"}:
            raise CannotConvert("a match on non-IP frames (the acl always forwards them)")
        return
    if name in ("saddr", "daddr"):
        getattr(match, name).extend(_nft_address(v) for v in values)
    elif name == "proto":
        match.proto.extend(_protocol(v) for v in values)
    else:
        proto, port = name.split(":")
        getattr(match, port).extend(_nft_port(v) for v in values)
        if proto != "th" and proto not in match.proto:
            match.proto.append(proto)


def _nft_rule(exprs: list) -> tuple[str, list[str]]:
    """(action, rule bodies) of one nftables rule."""
    match, components, action = Match(), {}, None
    for expr in exprs:
        kind = next(iter(expr))
        if kind == "match":
            _nft_match(expr["match"], match, components)
        elif kind in ("accept", "drop", "reject"):
            action = "allow" if kind == "accept" else "drop"
        elif kind not in ("counter", "log", "comment"):
            raise CannotConvert(f"'{kind}' (the acl has allow and drop only)")
    if action is None:
        raise CannotConvert("no accept, drop or reject")
    bodies = []
    if not components:
        return action, match.expand(action)
    for fields, rows in components["concat"]:
        for row in rows:
            one = Match(list(match.saddr), list(match.daddr), list(match.sport), list(match.dport),
                        list(match.proto), match.flags)
            for name, value in zip(fields, row):
                _take(name, [value], one)
            bodies += one.expand(action)
    return action, bodies


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


def from_nft_json(text: str, chain: str | None = None) -> Conversion:
    try:
        objects = json.loads(text)["nftables"]
    except (ValueError, KeyError, TypeError):
        objects = None
    if not isinstance(objects, list):
        raise XnfError("this is not nftables' JSON: give the output of 'nft -j list ruleset'")
    try:
        picked = _nft_chain([o for o in objects if isinstance(o, dict)], chain)
        where = (picked["table"], picked["name"], picked.get("family"))
    except (KeyError, TypeError, AttributeError) as missing:
        raise XnfError(f"this nftables JSON has a chain without {missing}: is it 'nft -j list ruleset' output?") \
            from None
    policy = picked.get("policy", "accept")
    out = Conversion(default={"accept": "allow", "drop": "drop"}.get(policy) if isinstance(policy, str) else None)
    for o in objects:
        rule = o.get("rule") if isinstance(o, dict) else None
        if not isinstance(rule, dict) or (rule.get("table"), rule.get("chain"), rule.get("family")) != where:
            continue
        described = f"rule {rule.get('handle')} of {picked['table']}/{picked['name']}"
        try:
            _, bodies = _nft_rule(rule["expr"])
        except CannotConvert as why:
            if "non-IP" not in str(why):
                out.skipped.append((described, str(why)))
            continue
        except (KeyError, TypeError, ValueError, IndexError, AttributeError, StopIteration):
            out.skipped.append((described, "not a rule as nft writes it"))
            continue
        out.lines += bodies
    return out


# ---------------------------------------------------------------------------------------------------- iptables

def _ipt_option(word: str, args: list[str], match: Match) -> str | None:
    """Takes one option with its arguments into match; the action for -j."""
    if word in ("-s", "--source", "--src"):
        match.saddr += [_prefix(v) for v in args[0].split(",")]
    elif word in ("-d", "--destination", "--dst"):
        match.daddr += [_prefix(v) for v in args[0].split(",")]
    elif word in ("-p", "--protocol"):
        match.proto = [] if args[0] == "all" else [_protocol(args[0])]
    elif word in ("--sport", "--source-port", "--sports", "--source-ports"):
        match.sport += [_port(v) for v in args[0].split(",")]
    elif word in ("--dport", "--destination-port", "--dports", "--destination-ports"):
        match.dport += [_port(v) for v in args[0].split(",")]
    elif word == "--tcp-flags":
        match.flags = _flags(args[0].lower().split(","), args[1].lower().split(","))
    elif word == "--syn":
        match.flags = _flags(["syn", "rst", "ack", "fin"], ["syn"])
    elif word in ("-m", "--match"):
        if args[0] not in ("tcp", "udp", "multiport", "comment", "icmp", "icmp6"):
            raise CannotConvert(f"the match module '{args[0]}'")
    elif word in ("-j", "--jump"):
        if args[0] not in ("ACCEPT", "DROP", "REJECT"):
            raise CannotConvert(f"the target '{args[0]}' (the acl has allow and drop only)")
        return "allow" if args[0] == "ACCEPT" else "drop"
    elif word in ("-i", "-o", "--in-interface", "--out-interface"):
        raise CannotConvert("an interface match (run the acl on the ports it is for)")
    elif word == "!":
        raise CannotConvert("a negation ('!')")
    elif word not in ("--comment", "--reject-with"):
        raise CannotConvert(f"'{word}'")
    return None


# How many words each option takes after it.
IPT_ARGS = {"--tcp-flags": 2, "--syn": 0, "!": 0}


def _ipt_rule(words: list[str]) -> tuple[str, list[str]]:
    match, action, i = Match(), None, 0
    while i < len(words):
        take = IPT_ARGS.get(words[i], 1)
        args = words[i + 1:i + 1 + take]
        if len(args) < take:
            raise CannotConvert(f"'{words[i]}' without its value")
        action = _ipt_option(words[i], args, match) or action
        i += 1 + take
    if action is None:
        raise CannotConvert("no -j ACCEPT, DROP or REJECT")
    return action, match.expand(action)


def from_iptables_save(text: str, chain: str = "FORWARD") -> Conversion:
    out, seen_chain = Conversion(), False
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
            out.default = {"ACCEPT": "allow", "DROP": "drop"}.get(policy)
        elif line.startswith(f"-A {chain} "):
            seen_chain = True
            try:
                words = shlex.split(line)[2:]
                _, bodies = _ipt_rule(words)
            except (CannotConvert, ValueError) as why:
                out.skipped.append((f"line {number}", str(why)))
                continue
            out.lines += bodies
    if not seen_chain:
        raise XnfError(f"no chain {chain} in this iptables-save output (its filter table): give --chain NAME")
    return out


# ---------------------------------------------------------------------------------------------------- the command

def convert(text: str, kind: str = "auto", chain: str | None = None) -> Conversion:
    stripped = text.lstrip()
    if kind == "auto":
        kind = "nft-json" if stripped.startswith("{") else "iptables" if stripped[:1] in ("*", ":", "-", "#") else ""
    if kind == "nft-json":
        return from_nft_json(text, chain)
    if kind == "iptables":
        return from_iptables_save(text, chain or "FORWARD")
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
    return "\n".join(lines) + "\n"


def run(source: str, kind: str, chain: str | None, step: int, out: str | None) -> int:
    """xnf acl import: the rules file written (out, or stdout), what was left out said on stderr."""
    import sys

    if step < 1:
        raise XnfError(f"--step {step}: give 1 or more (the gap between rule numbers)")
    text = sys.stdin.read() if source == "-" else user_files.read_text(source, "ruleset", user_files.MAX_RULES_BYTES)
    conversion = convert(text, kind, chain)
    if not conversion.lines:
        raise XnfError("no rule of the chain could be taken: " + ("; ".join(f"{w}: {y}" for w, y in
                       conversion.skipped[:3]) or "it has none"))
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
    return 0

"""`xnf rules`: add, delete or list the rules of a running NF."""

from __future__ import annotations

import argparse
import json
import sys

from xnf import control, programs, say
from xnf.errors import XnfError


def _take_options(words: list[str], options: dict[str, str]) -> tuple[list[str], dict[str, str]]:
    """Takes options (spelling -> name: --name/-n, --all) out of the rule words, where argparse.REMAINDER left them;
    returns the rule and the values found."""
    rule, found = [], {}
    it = iter(words)
    for word in it:
        flag, eq, value = word.partition("=")
        if flag in options and flag.startswith("--") and eq:
            found[options[flag]] = value
        elif word in options:
            found[options[word]] = next(it, None)
            if found[options[word]] is None:
                raise XnfError(f"{word} needs a value")
        else:
            rule.append(word)
    return rule, found


def cmd_rules(args: argparse.Namespace) -> int:
    args.rule, found = _take_options(args.rule, {"--name": "name", "-n": "name", "--all": "all_of"})
    args.name, args.all_of = found.get("name", args.name), found.get("all_of", args.all_of)
    if args.all_of:
        return _rules_everywhere(args)
    name = control.pick_instance(args.name)
    if args.action == "list":
        if args.rule:
            raise XnfError("'xnf rules list' takes no rule")
        text = control.request(name, "rules list")
        sys.stdout.write(json.dumps(text.splitlines(), indent=2) + "\n" if args.json else text)
        return 0
    if not args.rule:
        raise XnfError(f"'xnf rules {args.action}' needs a rule, e.g. xnf rules {args.action} drop udp 10.0.0.1 1234 10.0.0.2 53")
    control.request(name, f"rules {args.action} {' '.join(args.rule)}")
    return 0


def _check_rule_line(nf: str, line: str) -> None:
    """The NF's own codec reads the rule before any instance is asked: a rule none of them could take changes
    nothing anywhere."""
    import subprocess
    import tempfile

    control.check_request(f"rules add {line}")
    with tempfile.NamedTemporaryFile("w", suffix=".rules") as f:
        f.write(line + "\n")
        f.flush()
        checked = subprocess.run([str(programs.nf_binary(nf)), "check-rules", f.name], capture_output=True, text=True)
    if checked.returncode != 0:
        reason = checked.stderr.strip().removeprefix("xnf: error: ").replace(f"{f.name}:1: ", "")
        raise XnfError(f"not changed anywhere: {reason}")


def _rules_everywhere(args: argparse.Namespace) -> int:
    """`xnf rules add|del RULE --all NF`: the same change on every running instance of NF (the nodes of a deployment
    on this machine), each answering before the next is asked."""
    if args.action == "list" or args.name:
        raise XnfError("--all NF changes the rules of every instance of NF: with 'add' or 'del', and without --name")
    if not args.rule:
        raise XnfError(f"'xnf rules {args.action} --all {args.all_of}' needs a rule")
    found = control.instances_of(args.all_of)
    if not found:
        raise XnfError(f"no instance of {args.all_of} is running")
    _check_rule_line(args.all_of, " ".join(args.rule))
    outcomes = control.fan_out(found, f"rules {args.action} {' '.join(args.rule)}")
    failed = [(name, why) for name, why in outcomes if why]
    for name, why in outcomes:
        say.info(f"{args.action} on {name}: {'failed: ' + why if why else 'done'}")
    if failed:
        done = [name for name, why in outcomes if not why]
        raise XnfError(f"{args.action} failed on {len(failed)} of {len(outcomes)} instances of {args.all_of} "
                       f"({', '.join(name for name, _ in failed)}); done on: {', '.join(done) or 'none'}")
    say.info(f"{args.action}: done on all {len(outcomes)} instances of {args.all_of}")
    return 0


def add_parser(sub) -> None:
    rules = sub.add_parser("rules", help="add, delete or list the rules of a running NF")
    rules.add_argument("action", choices=("add", "del", "list"))
    rules.add_argument("rule", nargs=argparse.REMAINDER, help="the rule, in the NF's syntax")
    rules.add_argument("--name", "-n", help="instance (default: the only running one)")
    rules.add_argument("--json", action="store_true", help="'rules list' as a JSON list of rule lines")
    rules.add_argument("--all", dest="all_of", metavar="NF", help="add or del on every running instance of NF (the "
                       "nodes of a deployment), one after the other")
    rules.set_defaults(func=cmd_rules)

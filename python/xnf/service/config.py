"""The service's configuration: one TOML file naming the instances that should run, as `xnf apply FILE` and
`xnf daemon FILE` read it (docs/operations.md, "One file for every instance"):

    [instance.edge-fw]
    nf = "firewall"
    mode = "xdp"
    ifaces = ["eth1"]
    rules = "edge-fw.rules"          # a file, relative to this one's folder; or rules_text = \"\"\"...\"\"\"
    options = ["--queues", "2"]      # any other option of `xnf run`, as its words
    pin = "/sys/fs/bpf/xnf/edge-fw"  # optional: --pin
    state = "/sys/fs/bpf/xnf/state/edge-fw"  # optional: --state, the kernel path kept across restarts

Parsed strictly: an unknown key, a value of the wrong type, a name the control socket would refuse, an interface
given twice, an option given both as a key and in options is refused with the file, the line and what to write
instead; nothing is started or stopped until the whole file is valid. The NF, the mode and the rules file are
checked against what this machine has when the file is read.
"""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from xnf import build, chain, contract, instance, user_files
from xnf.errors import XnfError

TABLE = "instance"
KEYS = {"nf": str, "mode": str, "ifaces": list, "rules": str, "rules_text": str, "options": list, "pin": str,
        "state": str}
REQUIRED = ("nf", "mode", "ifaces")
# The runtime's options the keys give, and what gives each: in `options` they would be given twice.
KEYED = {"mode": "mode", "iface": "ifaces", "rules": "rules", "name": "the instance's table name", "pin": "pin",
         "state": "state"}
# What the control socket takes as a name (lib/control/control_server.c, valid_name): describe's limits give its
# length.
NAME_CHARS = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9._-]*\Z")
# Linux's IFNAMSIZ less its NUL.
MAX_IFACE = 15


@dataclass(frozen=True)
class InstanceSpec:
    """One instance as the file asks for it; rules is the rules' text as read when the file was."""
    name: str
    nf: str
    mode: str
    ifaces: tuple[str, ...]
    rules: str | None = None
    options: tuple[str, ...] = ()
    pin: str | None = None
    state: str | None = None

    def run_options(self, rules_file: str | None) -> list[str]:
        """`xnf run`'s options for it, with its rules in rules_file."""
        words = instance.run_options(self.name, self.mode, self.ifaces, rules_file, self.pin, self.state)
        return chain.run_arguments(self.nf, words + list(self.options))

    def same_but_rules(self, other: "InstanceSpec") -> bool:
        return (self.nf, self.mode, self.ifaces, self.options, self.pin, self.state) == \
            (other.nf, other.mode, other.ifaces, other.options, other.pin, other.state)

    def as_dict(self) -> dict:
        return {"name": self.name, "nf": self.nf, "mode": self.mode, "ifaces": list(self.ifaces),
                "rules": self.rules, "options": list(self.options), "pin": self.pin, "state": self.state}

    @classmethod
    def from_dict(cls, d: dict) -> "InstanceSpec":
        return cls(d["name"], d["nf"], d["mode"], tuple(d["ifaces"]), d.get("rules"), tuple(d.get("options", ())),
                   d.get("pin"), d.get("state"))


@dataclass
class Config:
    path: Path
    instances: dict[str, InstanceSpec] = field(default_factory=dict)


class _Lines:
    """Where a table or a key is written in the file: tomllib gives values, not places."""

    HEADER = re.compile(r"\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
    KEY = re.compile(r"\s*([A-Za-z0-9_\-\"']+)\s*=")
    PART = re.compile(r"\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+")

    def __init__(self, text: str):
        self.tables: dict[tuple[str, ...], int] = {}
        self.keys: dict[tuple[tuple[str, ...], str], int] = {}
        table: tuple[str, ...] = ()
        for number, line in enumerate(text.splitlines(), 1):
            header = self.HEADER.match(line)
            if header:
                table = tuple(part.strip("\"'") for part in self.PART.findall(header.group(1)))
                self.tables.setdefault(table, number)
                continue
            key = self.KEY.match(line)
            if key:
                self.keys.setdefault((table, key.group(1).strip("\"'")), number)

    def of(self, table: tuple[str, ...], key: str | None = None) -> int:
        return self.keys.get((table, key), self.tables.get(table, 1)) if key else self.tables.get(table, 1)


def load(path: str | Path) -> Config:
    """The file read, parsed and checked whole; an XnfError naming the file and line otherwise."""
    path = Path(path)
    text = user_files.read_text(str(path), "configuration", regular=True)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise XnfError(f"{path}: not TOML: {err}") from None
    lines = _Lines(text)
    where = (lambda table, key=None: f"{path}:{lines.of(table, key)}")
    for key in doc:
        if key != TABLE:
            raise XnfError(f"{where((key,)) if isinstance(doc[key], dict) else where((), key)}: unknown key "
                           f"'{key}': the file names instances, as [{TABLE}.NAME] tables")
    tables = doc.get(TABLE, {})
    if not isinstance(tables, dict):
        raise XnfError(f"{where((), TABLE)}: '{TABLE}' holds tables, one per instance: [{TABLE}.NAME]")
    config = Config(path)
    for name, table in tables.items():
        config.instances[name] = _instance(name, table, path.parent, lambda key=None: where((TABLE, name), key))
    _no_shared_ifaces(config, lambda name: where((TABLE, name), "ifaces"))
    return config


def _instance(name: str, table, folder: Path, where) -> InstanceSpec:
    if not isinstance(table, dict):
        raise XnfError(f"{where()}: [{TABLE}.{name}] must be a table of the instance's keys")
    _check_name(name, where)
    for key, value in table.items():
        if key not in KEYS:
            raise XnfError(f"{where(key)}: unknown key '{key}' in [{TABLE}.{name}]: the keys are "
                           f"{', '.join(KEYS)}")
        if not isinstance(value, KEYS[key]):
            raise XnfError(f"{where(key)}: '{key}' must be a {_type_name(KEYS[key])}, not {type(value).__name__}")
    missing = [key for key in REQUIRED if key not in table]
    if missing:
        raise XnfError(f"{where()}: [{TABLE}.{name}] needs {', '.join(missing)}")
    if "rules" in table and "rules_text" in table:
        raise XnfError(f"{where('rules_text')}: give the rules as a file (rules) or inline (rules_text), not both")
    nf = _check_nf(table["nf"], lambda: where("nf"))
    mode = _check_mode(table["mode"], lambda: where("mode"))
    ifaces = _check_ifaces(table["ifaces"], lambda: where("ifaces"))
    options = _check_options(table.get("options", []), lambda: where("options"))
    rules = table.get("rules_text")
    if "rules" in table:
        rules = _read_rules(folder / table["rules"], lambda: where("rules"))
    for key in ("pin", "state"):
        if key in table and not table[key].startswith("/"):
            raise XnfError(f"{where(key)}: {key} must be an absolute folder in bpffs, not {table[key]!r}")
    return InstanceSpec(name, nf, mode, ifaces, rules, options, table.get("pin"), table.get("state"))


def _type_name(kind: type) -> str:
    return {str: "string", list: "list of strings"}[kind]


def _check_name(name: str, where) -> None:
    longest = contract.runtime()["limits"]["name"]
    if not NAME_CHARS.match(name) or len(name) > longest:
        raise XnfError(f"{where()}: instance name '{name}': use up to {longest} letters, digits, '.', '_' or '-', "
                       "not starting with '.'")


def _check_nf(nf: str, where) -> str:
    if chain.is_chain(nf):
        try:
            chain.members_of(nf)
        except XnfError as err:
            raise XnfError(f"{where()}: {err}") from None
        return nf
    if nf not in build.available_nfs():
        raise XnfError(f"{where()}: no NF '{nf}' here: choose from {', '.join(build.available_nfs())}, or "
                       "chain:a,b")
    return nf


def _check_mode(mode: str, where) -> str:
    if mode not in contract.mode_names():
        raise XnfError(f"{where()}: unknown mode '{mode}': choose from {', '.join(contract.mode_names())}")
    return mode


def _check_ifaces(ifaces: list, where) -> tuple[str, ...]:
    if not ifaces:
        raise XnfError(f"{where()}: ifaces names at least one interface")
    for iface in ifaces:
        if not isinstance(iface, str) or not iface or len(iface) > MAX_IFACE or any(
                c.isspace() or c in "/:" for c in iface):
            raise XnfError(f"{where()}: {iface!r} is not an interface name (1 to {MAX_IFACE} characters, no space, "
                           "'/' or ':')")
    if len(set(ifaces)) != len(ifaces):
        raise XnfError(f"{where()}: an interface is named twice in {ifaces}")
    return tuple(ifaces)


def _check_options(options: list, where) -> tuple[str, ...]:
    keyed = keyed_options()
    for word in options:
        if not isinstance(word, str):
            raise XnfError(f"{where()}: options are `xnf run`'s words, each a string, not {word!r}")
        flag = word.split("=", 1)[0]
        if flag in keyed:
            raise XnfError(f"{where()}: {flag} is given by {keyed[flag]}, not in options")
    return tuple(options)


def keyed_options() -> dict[str, str]:
    """Each spelling (--iface, -i) of an option a key gives, from the runtime's option table, and the key."""
    found = {}
    for option in contract.runtime()["options"]:
        if option["name"] in KEYED:
            found[f"--{option['name']}"] = KEYED[option["name"]]
            if option["short"]:
                found[f"-{option['short']}"] = KEYED[option["name"]]
    return found


def _read_rules(path: Path, where) -> str:
    try:
        return user_files.read_text(str(path), "rules", user_files.MAX_RULES_BYTES, regular=True)
    except XnfError as err:
        raise XnfError(f"{where()}: {err}") from None


def _no_shared_ifaces(config: Config, where) -> None:
    owner: dict[str, str] = {}
    for name, spec in config.instances.items():
        for iface in spec.ifaces:
            if iface in owner:
                raise XnfError(f"{where(name)}: {iface} is given to both {owner[iface]} and {name}: an interface's "
                               "hook takes one instance")
            owner[iface] = name

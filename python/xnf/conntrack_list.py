"""`xnf conntrack`: the connections a running NF tracks in its connection table (XNF_CT_TABLE), as `conntrack -L`
lists netfilter's: the protocol's name and number, the seconds left, TCP's state by netfilter's name, the original
tuple (the opener's frames) with [UNREPLIED] while the other end has not sent, the reply tuple, [ASSURED] as
netfilter sets it, and how long it has been idle. ICMP's connections give the query's identifier (id=), not its
type, which the table does not keep. Connections idle past their state's time that the sweeper has not freed yet
are left out (the data path treats them as absent) and counted."""

from __future__ import annotations

import json
import socket

from xnf import control
from xnf.errors import XnfError

ECHO_PROTOCOLS = (socket.IPPROTO_ICMP, socket.IPPROTO_ICMPV6)   # the "port" is the echo's identifier
PORTED = (socket.IPPROTO_TCP, socket.IPPROTO_UDP)
# The answer is built in the instance's memory before it is sent: a table of millions is listed a part at a time.
DEFAULT_LIMIT = 100_000
PROTOCOL_NAMES = {socket.IPPROTO_TCP: "tcp", socket.IPPROTO_UDP: "udp", socket.IPPROTO_ICMP: "icmp",
                  socket.IPPROTO_ICMPV6: "icmpv6"}


def table_of(name: str, table: str | None) -> str:
    """The table asked for, or the instance's only one."""
    info = control.request_json(name, "info")
    tables = info.get("conntrack_tables", [])
    if table and table not in tables:
        raise XnfError(f"instance '{name}' ({info['nf']}) has no connection table '{table}'"
                       + (f": its tables are {', '.join(tables)}" if tables else ": it tracks no connections"))
    if table:
        return table
    if len(tables) == 1:
        return tables[0]
    if not tables:
        raise XnfError(f"instance '{name}' ({info['nf']}) tracks no connections: its source has no connection "
                       "table (XNF_CT_TABLE, docs/conntrack.md)")
    raise XnfError(f"instance '{name}' has several connection tables ({', '.join(tables)}): choose one with --table")


def connections(name: str, table: str, limit: int, directory: str | None = None,
                timeout_s: float = control.TIMEOUT_S) -> tuple[list[dict], dict]:
    """Up to limit of the table's connections in force, and its count line."""
    answer = control.request(name, f"connections {table} {limit}", directory, timeout_s)
    rows = [json.loads(line) for line in answer.splitlines() if line]
    return rows[:-1], rows[-1]


def _tuple(connection: dict, sender: str, receiver: str) -> str:
    """One direction's tuple as conntrack -L writes it."""
    src, dst = connection[sender], connection[receiver]
    words = [f"src={src['addr']}", f"dst={dst['addr']}"]
    if connection["proto"] in PORTED:
        words += [f"sport={src['port']}", f"dport={dst['port']}"]
    elif connection["proto"] in ECHO_PROTOCOLS:
        words.append(f"id={src['port']}")
    return " ".join(words)


def line(connection: dict) -> str:
    """One connection as conntrack -L lists one, then its idle time."""
    proto = connection["proto"]
    words = [f"{PROTOCOL_NAMES.get(proto, 'unknown'):<8} {proto:<2} {connection['left_s']:.0f}"]
    if connection["tcp_state"]:
        words.append(connection["tcp_state"].upper())
    words.append(_tuple(connection, "opener", "answerer"))
    if not connection["answered"]:
        words.append("[UNREPLIED]")
    words.append(_tuple(connection, "answerer", "opener"))
    if connection.get("assured"):
        words.append("[ASSURED]")
    return " ".join(words) + f"  idle {connection['idle_s']:.0f} s"


def run(name: str | None, table: str | None, as_json: bool, limit: int | None = None) -> int:
    limit = DEFAULT_LIMIT if limit is None else limit
    if limit < 1:
        raise XnfError(f"--limit {limit}: give 1 or more (how many connections to list at most)")
    name = control.pick_instance(name)
    table = table_of(name, table)
    rows, count = connections(name, table, limit)
    if as_json:
        print(json.dumps(count | {"connections": rows}, indent=2))
        return 0
    for row in rows:
        print(line(row))
    over = f"; {count['over_not_swept']} over, not freed yet" if count["over_not_swept"] else ""
    shown = f", the first {count['listed']} listed (--limit)" if count["listed"] < count["in_force"] else ""
    print(f"{count['in_force']} connections in {count['table']} (of {count['capacity']} entries){shown}{over}")
    return 0

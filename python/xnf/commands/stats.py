"""`xnf stats`: verdict counters of a running NF."""

from __future__ import annotations

import argparse
import json

from xnf import chain, control, output, watch
from xnf.commands.arguments import MAX_SECONDS, positive_int, seconds_between


def _print_stats_table(stats: dict) -> None:
    from rich.table import Table

    where = f"{stats['mode']} mode"
    if stats.get("split"):
        members = chain.members_of(stats["nf"])
        split = stats["split"]
        where = f"{', '.join(members[:split])} in XDP, {', '.join(members[split:])} in {stats['mode']} mode"
    table = Table(title=f"{stats['name']}: {stats['nf']}, {where}, up {stats['uptime_s']:.1f} s")
    table.add_column("verdict")
    table.add_column("packets", justify="right")
    table.add_column("bytes", justify="right")
    for verdict, counter in stats["verdicts"].items():  # in the runtime's own order
        table.add_row(verdict, f"{counter['packets']:,}", f"{counter['bytes']:,}")
    for name, value in stats.get("counters", {}).items():
        table.add_row(f"[dim]{name}[/dim]", f"{value:,}", "")
    console = output.console()
    console.print(table)
    if stats.get("workers"):
        console.print(_workers_table(stats["workers"]))
    if "offload" in stats:
        console.print(_offload_table(stats["offload"]))
    if "egress" in stats:
        console.print(_egress_table(stats["egress"]))
    if any(port["dropped_before_xdp"] for port in stats.get("ports", [])):
        lost = ", ".join(f"{p['iface']} {p['dropped_before_xdp']:,} (its peer {p['peer']}'s receive ring full)"
                         for p in stats["ports"] if p["dropped_before_xdp"])
        console.print(f"dropped before XDP: {lost}")


def _egress_table(egress: dict):
    """What the kernel did with the frames the NF sent from XDP, after its verdict, per port."""
    from rich.table import Table

    table = Table(title="sent from XDP, after the verdict (dropped: by the device; refused: never queued)")
    for column in ("port", "sent", "dropped", "refused", "last error"):
        table.add_column(column, justify="left" if column in ("port", "last error") else "right")
    for port in egress["ports"]:
        table.add_row(port["iface"], f"{port['sent']:,}", f"{port['dropped']:,}", f"{port['refused']:,}",
                      port["last_error"])
    return table


def _offload_table(offload: dict):
    """Where each pure-drop rule lives now (--offload-drops), the most hit first, with its hits on each side."""
    from rich.table import Table

    table = Table(title=f"drop rules offloaded above {offload['above_pps']:,} pps, back below "
                        f"{offload['below_pps']:,} pps ({offload['installs']:,} in, {offload['removals']:,} out; "
                        f"{offload['rules_hit']:,} rules hit)")
    for column in ("rule", "where", "hits", "in the kernel", "in user space"):
        table.add_column(column, justify="left" if column in ("rule", "where") else "right")
    for rule in offload["rules"]:
        table.add_row(rule["rule"], rule["where"], f"{rule['hits']:,}", f"{rule['kernel_hits']:,}",
                      f"{rule['user_hits']:,}")
    return table


def _workers_table(workers: list[dict]):
    """Every counter the workers report, in the order the runtime writes them (it names them, not this file),
    under the transmit path each worker uses per port."""
    from rich.table import Table

    table = Table(title="AF_XDP workers")
    table.add_column("counter")
    for w in workers:
        table.add_column(f"worker {w['worker']}", justify="right")
    table.add_row("transmit path", *(", ".join(f"{port}: {path}" for port, path in w["tx_path"].items())
                                     for w in workers))
    for column, value in workers[0].items():
        if isinstance(value, int) and column != "worker":
            table.add_row(column, *(f"{w[column]:,}" for w in workers))
    return table


def cmd_stats(args: argparse.Namespace) -> int:
    name = control.pick_instance(args.name)
    if args.interval is not None:
        from xnf import watch

        return watch.stats_every(name, args.interval, args.count, args.json)
    stats = control.request_json(name, "stats")
    if args.json:
        print(json.dumps(stats, indent=2))
    else:
        _print_stats_table(stats)
    return 0


def add_parser(sub) -> None:
    stats = sub.add_parser("stats", help="verdict counters of a running NF")
    stats.add_argument("--name", "-n", help="instance (default: the only running one)")
    stats.add_argument("--json", action="store_true", help="machine-readable output (with --interval: a line "
                       "per interval)")
    stats.add_argument("--interval", "-i", type=seconds_between(watch.MIN_INTERVAL_S, MAX_SECONDS), metavar="S",
                       help="rates every S seconds until Ctrl-C")
    stats.add_argument("--count", "-c", type=positive_int, metavar="N", help="with --interval: stop after N")
    stats.set_defaults(func=cmd_stats)

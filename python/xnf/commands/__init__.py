"""The `xnf` command's subcommands, one module each: its parser (`add_parser`) and what it does. COMMANDS is the
order `xnf --help` lists them in."""

from xnf.commands import (acl, advise, apply, bench, build, conntrack, cost, daemon, demo, doctor, dump, entries,
                          exporter, move, nf_list, pfcp, ps, reload, report, rules, run, stats, stop, top)

COMMANDS = (run, doctor, stats, cost, advise, dump, top, acl, pfcp, exporter, conntrack, entries, rules, reload, move,
            stop, apply, daemon, ps, nf_list, build, bench, report, demo)

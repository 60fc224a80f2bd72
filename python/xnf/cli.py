"""The `xnf` command: a thin front over the NF binaries and their control sockets."""

from __future__ import annotations

import argparse
import json
import math
import os
import shlex
import signal
import sys

from xnf import build, capture, chain, control, nf_cost, output, programs, say, user_data, watch
from xnf.errors import XnfError


def _require_root(what: str) -> None:
    if os.geteuid() != 0:
        raise XnfError(f"{what} needs root (CAP_BPF and CAP_NET_ADMIN): run it with sudo")


RUN_USAGE = ("usage: xnf run NF --mode MODE --iface IF [--iface IF ...] [options]\n\n"
             "Runs NF until Ctrl-C. Every option goes to the NF binary, which checks it; 'xnf run NF --help' "
             "shows the NF's own options too.\n\n")


def cmd_run(args: argparse.Namespace) -> int:
    if not args.nf or args.nf in ("-h", "--help"):
        from xnf import contract

        print(RUN_USAGE + contract.help_text())
        return 0
    binary = programs.nf_binary(args.nf)
    if not {"-h", "--help"} & set(args.options):
        _require_root("xnf run")
    argv = [str(binary), "run", *chain.run_arguments(args.nf, args.options)]
    sys.stdout.flush()
    os.execv(binary, argv)  # the NF binary owns signals and clean-up from here on


DOCTOR_NF = "macswap"  # any NF binary judges ports the same way: the checks are the runtime's


def cmd_doctor(args: argparse.Namespace) -> int:
    """What this kernel gives xnf (the facility table), then the port checks a start makes, alone
    (lib/runtime/port_checks.c): each problem with why and its fix."""
    _require_root("xnf doctor")
    if not args.ifaces and [o for o in args.options if o != "--verbose"]:
        raise XnfError(f"xnf doctor judges {' '.join(args.options)} on ports: give them first "
                       "(xnf doctor IFACE [IFACE ...] --mode MODE)")
    if not args.ifaces:
        binary = build.tool_binary("xnf-kernel")
        sys.stdout.flush()
        os.execv(binary, [str(binary), *(["--json"] if args.json else [])])
    binary = programs.nf_binary(args.nf or DOCTOR_NF)
    argv = [str(binary), "doctor", *[a for iface in args.ifaces for a in ("--iface", iface)], *args.options]
    if args.json:
        argv.append("--json")
    sys.stdout.flush()
    os.execv(binary, argv)


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


def cmd_cost(args: argparse.Namespace) -> int:
    from xnf import mix, nf_cost

    _require_root("xnf cost")
    gen = [item for spec in args.mix_class or [] for item in ("--class", spec)]
    gen += ["--flows", str(args.flows)] if args.flows else []
    gen += ["--size", str(args.size)] if args.size else []
    gen += mix.parse(args.mix)
    mix.refuse_twice(gen)
    frames = nf_cost.new_session_frames(gen, args.frames) if args.sessions == "new" else args.frames
    result = nf_cost.measure(args.nf, gen, args.rules, frames, args.repeat, args.map_size)
    if args.json:
        print(json.dumps({**result, "sessions": args.sessions}, indent=2))
        return 0
    verdicts = ", ".join(f"{k} {v}" for k, v in result["verdicts"].items())
    print(f"{result['nf']} on {result['frames']} frames of the mix ({verdicts}), {result['repeat']} passes:\n"
          f"  native (the AF_XDP workers' code, in batches): {result['native_ns_per_frame']:.1f} ns per frame "
          f"(a batch run again at once: {result['native_warm_ns_per_frame']:.1f})\n"
          f"  XDP program (BPF_PROG_RUN, with its per-run work): {result['xdp_ns_per_frame']:.1f} ns per frame: "
          f"{result['xdp_warm_ns_per_frame']:.1f} run again at once, plus the misses of a native batch "
          f"(one cold run per syscall: {result['xdp_cold_ns_per_frame']:.1f})\n"
          f"  first pass ({'every frame a new session' if args.sessions == 'new' else 'each flow first seen'}): "
          f"{result['native_first_ns_per_frame']:.1f} ns per frame natively, {result['xdp_first_ns_per_frame']:.1f} "
          "in XDP")
    return 0


def cmd_advise(args: argparse.Namespace) -> int:
    from xnf.model import advise_command

    if args.cores and args.cores > _cores_limit():
        raise XnfError(f"--cores {args.cores}: an instance uses at most {_cores_limit()} cores (its workers and the core "
                       "that receives); the model's rates grow with cores only that far")
    _require_root("xnf advise")
    return advise_command.run(args)


def cmd_dump(args: argparse.Namespace) -> int:
    verdicts = [v for item in args.verdict or [] for v in item.split(",") if v]
    if args.verdict is not None and not verdicts:
        raise XnfError("--verdict names no verdict: give one or more of drop, tx, pass, redirect, redirect_error, "
                       "abort, local, or leave it out for all")
    return capture.dump(control.pick_instance(args.name), verdicts, args.count or 0, args.write, snap=args.snaplen,
                        at=args.at, expression=" ".join(args.expression))


def cmd_top(args: argparse.Namespace) -> int:
    from xnf import watch

    return watch.top(args.interval, args.count, args.json)


def cmd_acl_import(args: argparse.Namespace) -> int:
    from xnf import acl_import

    return acl_import.run(args.ruleset, args.format, args.chain, args.step, args.out, args.family)


def cmd_pfcp(args: argparse.Namespace) -> int:
    from xnf import pfcp

    return pfcp.serve(control.pick_instance(args.name), args.listen, args.port, args.n3_addr, args.node_id, args.smf,
                      args.max_sessions)


def cmd_exporter(args: argparse.Namespace) -> int:
    from xnf import exporter

    return exporter.serve(args.listen, args.run_dir)


def cmd_conntrack(args: argparse.Namespace) -> int:
    from xnf import conntrack_list

    return conntrack_list.run(args.name, args.table, args.json, args.limit)


def cmd_entries(args: argparse.Namespace) -> int:
    name = control.pick_instance(args.name)
    rows = [control.request_json(name, f"entries {m}") for m in args.maps]
    if args.json:
        print(json.dumps(rows, indent=2))
    for row in [] if args.json else rows:
        print(f"{row['map']}: {row['entries']} of {row['capacity']} entries")
    return 0


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


def cmd_move(args: argparse.Namespace) -> int:
    """A running NF moved between paths with its rules and sessions (python/xnf/service/move.py)."""
    from xnf.service import move

    _require_root("xnf move")
    print(move.move(control.pick_instance(args.name), args.mode, args.options))
    return 0


def cmd_stop(args: argparse.Namespace) -> int:
    """A running NF stopped as Ctrl-C stops it (python/xnf/service/stop.py)."""
    from xnf.service import stop

    _require_root("xnf stop")
    print(stop.stop(control.pick_instance(args.name), args.drop_state))
    return 0


def cmd_reload(args: argparse.Namespace) -> int:
    """The instance reads its --rules file again and puts it in force in place of what it held (as SIGHUP does)."""
    sys.stdout.write(control.request(control.pick_instance(args.name), "reload"))
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


def cmd_apply(args: argparse.Namespace) -> int:
    """Makes the running instances match the file (python/xnf/service/apply.py)."""
    from xnf.service import apply as applying
    from xnf.service import config

    wanted = config.load(args.file)
    if args.check:
        for step in applying.plan(wanted):
            print(f"would: {step.said()}" if step.action != "keep" else step.said())
        return 0
    _require_root("xnf apply")
    for line in applying.apply(wanted):
        print(line)
    return 0


def cmd_daemon(args: argparse.Namespace) -> int:
    """The file's instances kept running, as a systemd service (python/xnf/service/daemon.py)."""
    from xnf.service import daemon

    _require_root("xnf daemon")
    return daemon.run(args.file, args.restart_window or daemon.RESTART_WINDOW_S)


def cmd_ps(args: argparse.Namespace) -> int:
    from xnf import attached

    infos = []
    for item in control.listing(remove_stale=True):
        try:
            info = control.request_json(item.name, "info") | {"state": item.state}
            info["others_attached"] = attached.others_on(info)
        except XnfError as err:  # stopped, hung, or gone since the listing: said, not left out
            if not item.owner:
                continue
            info = {"name": item.name, "nf": item.owner.nf, "mode": item.owner.mode, "pid": item.owner.pid,
                    "ports": [], "state": item.state if item.state != control.RUNNING else "not answering",
                    "why": str(err), "others_attached": {}}
        infos.append(info)
    if args.json:
        print(json.dumps(infos, indent=2))
    for info in [] if args.json else infos:
        ports = ",".join(p["iface"] for p in info["ports"])
        others = "; ".join(f"also on {iface}: " + ", ".join(f"{p['name']} (id {p['id']}, {p['mode']})" for p in progs)
                           for iface, progs in info["others_attached"].items())
        state = "" if info["state"] == control.RUNNING else f"\t{info['state'].upper()}: {info.get('why', '')}"
        print(f"{info['name']}\t{info['nf']}\t{info['mode']}\tpid {info['pid']}\t{ports}" +
              (f"\t{others}" if others else "") + state)
    return 0


def cmd_list(args: argparse.Namespace) -> int:
    built = build.user_nfs()
    nfs = [{"nf": nf, "built": str(built[nf]) if nf in built else None} for nf in build.available_nfs()]
    if args.json:
        print(json.dumps(nfs, indent=2))
    for row in [] if args.json else nfs:
        print(f"{row['nf']}\t(built: {row['built']})" if row["built"] else row["nf"])
    return 0


def cmd_build(args: argparse.Namespace) -> int:
    from pathlib import Path

    from xnf.build_nf import build_nf

    binary = build_nf(Path(args.folder), Path(args.out) if args.out else None)
    name = binary.name.removeprefix("xnf-")
    say.info(f"built {binary}")
    if binary.parent.resolve() not in (d.resolve() for d in build.user_nf_dirs()):
        say.info(f"xnf commands find it with XNF_NF_DIR={shlex.quote(str(binary.parent))}")
    say.info(f"run it with: sudo xnf run {name} --mode xdp --iface IF")
    return 0


def cmd_bench(args: argparse.Namespace) -> int:
    from xnf.bench import catalog

    asks_help = bool({"-h", "--help"} & set(args.options))
    if not args.action or (asks_help and (not args.name or isinstance(catalog.find(args.name), catalog.Benchmark))):
        args.parser.print_help()
        return 0
    if args.action == "list":
        rows = [{"name": b.name, "kind": "grid", "description": b.description} for b in catalog.BENCHMARKS]
        rows += [{"name": s.NAME, "kind": "study", "description": s.DESCRIPTION} for s in catalog.STUDIES]
        if args.json:
            print(json.dumps(rows, indent=2))
        for row in [] if args.json else rows:
            study = f" (study: 'xnf bench run {row['name']} --help')" if row["kind"] == "study" else ""
            print(f"{row['name']:20s} {row['description']}{study}")
        return 0
    if not args.name:
        raise XnfError("'xnf bench run' needs a benchmark name: see 'xnf bench list'")
    bench = catalog.find(args.name)
    with _dut_core_kept(args):
        if isinstance(bench, catalog.Benchmark):
            from xnf.bench import overrides

            return _run_grid(args, overrides.apply(bench, overrides.parse(args.options)))
        return _run_study(args, bench)


def _dut_core_kept(args: argparse.Namespace):
    """The DUT's core kept to the DUT for the run (python/xnf/lab/quiet_core.py), unless asked not to."""
    import contextlib

    from xnf.lab import quiet_core
    from xnf.lab.cores import DUT_CORE

    if args.busy_dut_core or os.geteuid() != 0:
        return contextlib.nullcontext()
    return quiet_core.quiet({DUT_CORE})


def _run_grid(args: argparse.Namespace, bench) -> int:
    if args.dut_receive_core is not None:
        import dataclasses

        bench = dataclasses.replace(bench, dut_receive_core=args.dut_receive_core)
    _require_root("xnf bench run")

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from xnf.bench.grid import run_benchmark

    build.ensure_built()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  disable=say.level < say.NORMAL) as progress:
        task = progress.add_task(f"{bench.name}", total=None)
        path = run_benchmark(bench, _results_out(args),
                             lambda text: progress.update(task, description=f"{bench.name}: {text}"))
    say.info(f"results: {path} (and {path.with_suffix('.csv').name}); draw them with: xnf report {path}")
    return 0


def _run_study(args: argparse.Namespace, study) -> int:
    """A study's own options come after its name; its docstring is its --help."""

    parser = argparse.ArgumentParser(prog=f"xnf bench run {study.NAME}", description=study.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"--out DIR: where the results files go (default: {user_data.results_dir()})")
    study.add_arguments(parser)
    options = parser.parse_args(args.options)
    if args.dut_receive_core is not None:
        raise XnfError(f"{study.NAME} places its work on cores itself: --dut-receive-core is for the grids")
    _require_root("xnf bench run")
    build.ensure_built()
    path = study.run(options, _results_out(args))
    say.info(f"results: {path} (and {path.with_suffix('.csv').name})")
    return 0


def _results_out(args: argparse.Namespace):
    from pathlib import Path

    return Path(args.out) if args.out else user_data.results_dir()


def _published_results() -> list:
    """Where reproduce looks by default: this user's results, and the research record a checkout carries."""
    where = build.layout()
    return [user_data.results_dir()] + ([where.root / "research" / "results"] if where.checkout else [])


def cmd_report(args: argparse.Namespace) -> int:
    from pathlib import Path

    if args.results == "reproduce":
        from xnf.analysis.reproduce import reproduce

        if args.run_missing:
            _require_root("xnf report reproduce --run-missing")
        folders = [Path(d) for d in args.results_dir or _published_results()]
        only = [k for item in args.only or [] for k in item.split(",") if k]
        page = reproduce(folders, Path(args.out) if args.out else user_data.results_dir() / "reproduce",
                         args.run_missing, only)
        say.info(f"reproduced: {page}")
        return 0
    if args.results_dir or args.run_missing or args.only:
        raise XnfError("--results-dir, --run-missing and --only go with 'xnf report reproduce'")
    from xnf.analysis.report import write_report

    page = write_report(Path(args.results), Path(args.out) if args.out else None)
    say.info(f"report: {page}")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from xnf import demo

    _require_root("xnf demo")
    return demo.run(seconds=args.seconds)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("xnf")
    except PackageNotFoundError:
        return "(not installed)"


# Every number the command line takes is bounded here, before anything reads it: a count, a size or a core count
# out of these ranges is a typo, and some would have the host allocate without end.
MAX_COUNT = 1_000_000_000
MAX_SECONDS = 24 * 3600.0


def _whole(low: int, high: int):
    def parse(text: str) -> int:
        if not text.isascii() or not text.isdigit() or not low <= int(text) <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number from {low:,} to {high:,}")
        return int(text)
    return parse


_positive_int = _whole(1, MAX_COUNT)


def _seconds(low: float, high: float):
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            value = math.nan
        if not math.isfinite(value) or not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number of seconds from {low:g} to {high:g}")
        return value
    return parse


def _cores_limit() -> int:
    """The most cores an NF's instance can use: its workers, and the core that receives."""
    from xnf import contract

    return contract.limit("workers") + 1


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="xnf", description=__doc__)
    parser.add_argument("--version", action="version", version=f"xnf {_version()}")
    parser.add_argument("-q", "--quiet", action="store_true", help="only what a command produces (no progress, no "
                        "lines about where results went)")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="also the commands xnf runs underneath "
                        "(on stderr); 'xnf -v run' passes it to the NF binary")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", add_help=False, help="run an NF on one or more interfaces until Ctrl-C "
                         "('xnf run --help' lists the options and modes)")
    run.add_argument("nf", nargs="?", help="NF name (see 'xnf list')")
    run.set_defaults(func=cmd_run)

    doctor = sub.add_parser("doctor", help="what this kernel gives xnf (each facility, what xnf does without it), "
                            "and with ports: what xnf needs from each port and its veth peer, every problem with the "
                            "command that fixes it")
    doctor.add_argument("ifaces", nargs="*", metavar="IFACE", help="the ports, as 'xnf run --iface' would get them")
    doctor.add_argument("--nf", help="judge for this NF's binary (default: any; the checks are the runtime's)")
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(func=cmd_doctor)

    stats = sub.add_parser("stats", help="verdict counters of a running NF")
    stats.add_argument("--name", "-n", help="instance (default: the only running one)")
    stats.add_argument("--json", action="store_true", help="machine-readable output (with --interval: a line "
                       "per interval)")
    stats.add_argument("--interval", "-i", type=_seconds(watch.MIN_INTERVAL_S, MAX_SECONDS), metavar="S",
                       help="rates every S seconds until Ctrl-C")
    stats.add_argument("--count", "-c", type=_positive_int, metavar="N", help="with --interval: stop after N")
    stats.set_defaults(func=cmd_stats)

    cost = sub.add_parser("cost", help="what an NF costs per frame on a traffic mix, natively and in XDP, without "
                          "a topology")
    cost.add_argument("nf", help="NF name (see 'xnf list'), or a chain")
    cost.add_argument("--rules", help="rules loaded first")
    cost.add_argument("--class", dest="mix_class", action="append", metavar="SPEC",
                      help="a traffic class as xnf-gen takes it (NAME:share=F,saddr=ADDR/LEN,...); repeat for a mix")
    cost.add_argument("--flows", type=_positive_int, help="flows of the base traffic (default 1)")
    cost.add_argument("--size", type=_positive_int, help="frame size (default the smallest)")
    cost.add_argument("--frames", type=_whole(1, nf_cost.MAX_FRAMES), help="frames of the mix to run on (default: "
                      "enough for every "
                      f"flow of the mix once, {nf_cost.MIN_FRAMES}-{nf_cost.MAX_FRAMES})")
    cost.add_argument("--repeat", type=_whole(1, nf_cost.MAX_REPEAT), help="timed passes over them (default: "
                      f"{nf_cost.FRAME_RUNS} frame runs' worth, at least {nf_cost.MIN_PASSES})")
    cost.add_argument("--map-size", action="append", metavar="MAP=N", help="a map's size, as xnf run takes it")
    cost.add_argument("--sessions", choices=nf_cost.SESSIONS, default="established", help=nf_cost.SESSIONS_HELP)
    cost.add_argument("--mix", metavar="FILE|SPEC", help="the traffic: xnf-gen's traffic options or classes, inline "
                      "or in a file (docs/cost-model.md)")
    cost.add_argument("--json", action="store_true", help="machine-readable output")
    cost.set_defaults(func=cmd_cost)

    advise = sub.add_parser("advise", help="where should this NF run for this mix? Every data path predicted by the "
                            "cost model from the NF's own cost, the fastest recommended")
    advise.add_argument("nf", help="NF name (see 'xnf list'), or a chain (chain:a,b: its split points are candidates)")
    advise.add_argument("--rules", help="the NF's rules")
    advise.add_argument("--mix", metavar="FILE|SPEC", help="the traffic: xnf-gen's traffic options or classes, inline "
                        "or in a file (default one flow of 64-byte UDP frames)")
    advise.add_argument("--profile", metavar="P", help="a machine profile (file, or a published one's name; default: "
                        "the one 'xnf bench run model-fit' installed, else the quick one, made first if there is none: "
                        "a few minutes, installed only when the host was steady)")
    advise.add_argument("--cores", type=_positive_int, metavar="N", help="cores the NF may use (default the "
                        "profile's)")
    advise.add_argument("--map-size", action="append", metavar="MAP=N", help="a map's size, as xnf run takes it")
    advise.add_argument("--sessions", choices=nf_cost.SESSIONS, default="established", help="which frames the NF "
                        f"is priced on: {nf_cost.SESSIONS_HELP}")
    advise.add_argument("--calibrate", action="store_true", help="bring the profile to this machine now: each path's "
                        "baseline and drop rates measured again, each path's times scaled by its own (a minute or "
                        "two)")
    advise.add_argument("--verify", type=int, nargs="?", const=3, metavar="N", help="measure the best N candidates "
                        "(default 3) in the lab, in interleaved rounds with the yardstick, and say whether the pick "
                        "holds")
    advise.add_argument("--move", metavar="NAME", help="then move the running instance NAME (of this NF, started "
                        "with --state) to the recommended path, with its rules and sessions (xnf move)")
    advise.add_argument("--rounds", type=_positive_int, default=3, help="rounds of xnf cost (default 3)")
    advise.add_argument("--frames", type=_whole(1, nf_cost.MAX_FRAMES), help="frames of the mix xnf cost runs on "
                        "(default: every "
                        f"flow once, {nf_cost.MIN_FRAMES}-{nf_cost.MAX_FRAMES})")
    advise.add_argument("--json", action="store_true", help="machine-readable output")
    advise.set_defaults(func=cmd_advise)

    dump = sub.add_parser("dump", help="capture what a running NF received and the verdict it gave (pcapng "
                          "with -w, for tcpdump and Wireshark)")
    dump.add_argument("--name", "-n", help="instance (default: the only running one)")
    dump.add_argument("--verdict", action="append", metavar="V",
                      help="only frames given this verdict: drop, tx, pass, redirect, redirect_error, abort, local "
                           "(repeat or join with commas; default all)")
    dump.add_argument("--count", "-c", type=_positive_int, metavar="N", help="stop after N frames")
    dump.add_argument("-w", dest="write", metavar="FILE", help="write pcapng to FILE ('-': standard output); each "
                      "frame's comment gives where it was taken, its verdict, port, queue and side")
    dump.add_argument("-s", "--snaplen", type=_whole(0, MAX_COUNT), default=0, metavar="BYTES",
                      help="keep at most BYTES of each frame (default 0: the whole frame, up to a jumbo frame)")
    dump.add_argument("--at", choices=capture.AT, default="exit", help="exit: as the NF left each frame, with its "
                      "verdict (the default); entry: as it came in, before anything ran; both")
    dump.add_argument("expression", nargs="*", help="a filter expression in tcpdump's language (libpcap compiles "
                      "it in the instance): only the frames it matches")
    dump.set_defaults(func=cmd_dump)

    top = sub.add_parser("top", help="the rates of every running instance, refreshed until Ctrl-C")
    top.add_argument("--interval", "-i", type=_seconds(watch.MIN_INTERVAL_S, MAX_SECONDS), default=1.0, metavar="S",
                     help="seconds between refreshes")
    top.add_argument("--count", "-c", type=_positive_int, metavar="N", help="stop after N refreshes")
    top.add_argument("--json", action="store_true", help="one JSON list per refresh")
    top.set_defaults(func=cmd_top)

    acl = sub.add_parser("acl", help="the acl NF's tools").add_subparsers(dest="acl_command", required=True)
    imp = acl.add_parser("import", help="an nftables or iptables firewall's rules as the acl's rules file")
    imp.add_argument("ruleset", help="the output of 'nft -j list ruleset' or of 'iptables-save' ('-': stdin)")
    imp.add_argument("--format", choices=["auto", "nft-json", "iptables"], default="auto",
                     help="what the ruleset is (default: told from its first characters)")
    imp.add_argument("--chain", help="the chain to take (nftables: TABLE/NAME; default its one forward hook; "
                                     "iptables: default FORWARD)")
    imp.add_argument("--family", choices=["ip", "ip6"],
                     help="iptables-save (ip) or ip6tables-save (ip6) output, where its '# Generated by' line is gone")
    imp.add_argument("--step", type=int, default=10, help="the gap between rule numbers (default 10)")
    imp.add_argument("--out", "-o", help="write the rules file here (default: standard output)")
    imp.set_defaults(func=cmd_acl_import)
    pfcp = sub.add_parser("pfcp", help="a PFCP (N4) endpoint that sets up a running upf's sessions for an SMF")
    pfcp.add_argument("--name", "-n", help="the upf instance (default: the only running one)")
    pfcp.add_argument("--listen", required=True, metavar="ADDR", help="the IPv4 address to answer PFCP on")
    pfcp.add_argument("--port", type=int, default=8805, help="the UDP port (default 8805, PFCP's)")
    pfcp.add_argument("--n3-addr", required=True, metavar="ADDR",
                      help="the upf's N3 address, in the F-TEIDs this endpoint chooses")
    pfcp.add_argument("--node-id", metavar="ADDR", help="the Node ID and F-SEID address (default the --listen one)")
    pfcp.add_argument("--smf", action="append", metavar="ADDR",
                      help="accept associations from this SMF address only (again for more; default: any)")
    pfcp.add_argument("--max-sessions", type=int, default=100_000, metavar="N",
                      help="sessions at most; more are refused with cause 75 (default 100000)")
    pfcp.set_defaults(func=cmd_pfcp)
    exporter = sub.add_parser("exporter", help="serve every instance's counters as Prometheus metrics")
    exporter.add_argument("--listen", default="127.0.0.1:9417", metavar="ADDR:PORT",
                          help="where /metrics is served (default 127.0.0.1:9417)")
    exporter.add_argument("--run-dir", help="the instances' run directory (default $XNF_RUN_DIR, else /run/xnf)")
    exporter.set_defaults(func=cmd_exporter)

    conntrack = sub.add_parser("conntrack", help="the connections a running NF tracks (as conntrack -L lists "
                               "netfilter's): state, who opened and who answered, idle and left seconds")
    conntrack.add_argument("--name", "-n", help="instance (default: the only running one)")
    conntrack.add_argument("--table", help="its connection table (default: its only one, acl_ct for the acl)")
    conntrack.add_argument("--json", action="store_true", help="machine-readable output")
    conntrack.add_argument("--limit", type=int, help="list at most this many, all counted (default 100,000)")
    conntrack.set_defaults(func=cmd_conntrack)
    entries = sub.add_parser("entries", help="how full the NF's maps are (entries held, capacity)")
    entries.add_argument("maps", nargs="+", metavar="MAP", help="a map of the NF (lb_sessions, fw_acl ...)")
    entries.add_argument("--name", "-n", help="instance (default: the only running one)")
    entries.add_argument("--json", action="store_true", help="machine-readable output")
    entries.set_defaults(func=cmd_entries)

    rules = sub.add_parser("rules", help="add, delete or list the rules of a running NF")
    rules.add_argument("action", choices=("add", "del", "list"))
    rules.add_argument("rule", nargs=argparse.REMAINDER, help="the rule, in the NF's syntax")
    rules.add_argument("--name", "-n", help="instance (default: the only running one)")
    rules.add_argument("--json", action="store_true", help="'rules list' as a JSON list of rule lines")
    rules.add_argument("--all", dest="all_of", metavar="NF", help="add or del on every running instance of NF (the "
                       "nodes of a deployment), one after the other")
    rules.set_defaults(func=cmd_rules)
    reload_cmd = sub.add_parser("reload", help="a running NF reads its --rules file again and puts it in force in "
                                "place of what it held, rule by rule, without a restart (as kill -HUP does)")
    reload_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    reload_cmd.set_defaults(func=cmd_reload)
    move_cmd = sub.add_parser("move", help="move a running NF between xdp, tc and the AF_XDP modes with its rules "
                              "and sessions, without a gap (it must run with --state DIR)")
    move_cmd.add_argument("--mode", required=True, help="the mode to move it to (those describe lists with "
                          "keeps_state: xdp, tc, afxdp...)")
    move_cmd.add_argument("options", nargs="*", help="after --: the new mode's own options, e.g. -- --cores 1")
    move_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    move_cmd.set_defaults(func=cmd_move)

    stop_cmd = sub.add_parser("stop", help="stop a running NF as Ctrl-C does; with --state its program forwards "
                              "on with the kept tables, unless --drop-state removes them")
    stop_cmd.add_argument("--name", "-n", help="instance (default: the only running one)")
    stop_cmd.add_argument("--drop-state", action="store_true", help="remove its --state folder too, which takes "
                          "its program off")
    stop_cmd.set_defaults(func=cmd_stop)

    apply_cmd = sub.add_parser("apply", help="make the running instances match a configuration file: start, stop, "
                               "change rules in place, restart what cannot change in place (docs/operations.md)")
    apply_cmd.add_argument("file", help="the configuration (TOML: [instance.NAME] tables)")
    apply_cmd.add_argument("--check", action="store_true", help="check the file and say what would change, "
                           "changing nothing")
    apply_cmd.set_defaults(func=cmd_apply)
    daemon_cmd = sub.add_parser("daemon", help="keep a configuration file's instances running, as a systemd service "
                                "(Type=notify; SIGHUP applies the file again; deploy/systemd/xnf.service)")
    daemon_cmd.add_argument("file", help="the configuration (TOML: [instance.NAME] tables)")
    daemon_cmd.add_argument("--restart-window", type=_seconds(1, MAX_SECONDS), default=None, metavar="SECONDS",
                            help="an instance that dies again after 3 restarts within this many seconds is left "
                                 "down until the file is applied again (default: 10)")
    daemon_cmd.set_defaults(func=cmd_daemon)

    ps = sub.add_parser("ps", help="running NF instances")
    ps.add_argument("--json", action="store_true", help="machine-readable output")
    ps.set_defaults(func=cmd_ps)
    nf_list = sub.add_parser("list", help="the NFs xnf has: shipped, and built with 'xnf build'")
    nf_list.add_argument("--json", action="store_true", help="machine-readable output")
    nf_list.set_defaults(func=cmd_list)

    build_cmd = sub.add_parser("build", help="build an NF of your own (a folder NAME/ with NAME.c) into xnf-NAME")
    build_cmd.add_argument("folder", help="the NF's folder (docs/writing-an-nf.md)")
    build_cmd.add_argument("--out", help="where the binary goes (default: $XNF_NF_DIR, else ~/.local/share/xnf/nfs, "
                           "where every xnf command looks)")
    build_cmd.set_defaults(func=cmd_build)

    # Its --help is handled in cmd_bench: after a study's name it is the study's own.
    bench = sub.add_parser("bench", add_help=False, help="list or run the benchmarks (results in results/)")
    bench.add_argument("action", nargs="?", choices=("list", "run"))
    bench.add_argument("name", nargs="?", help="benchmark to run (see 'xnf bench list')")
    bench.add_argument("--out", help=f"where results files go (default: {user_data.results_dir()})")
    bench.add_argument("--json", action="store_true", help="'bench list' as JSON")
    bench.add_argument("--dut-receive-core", type=int, metavar="CORE",
                       help="XDP modes: run the DUT's receive (and the NF) in threaded NAPI on CORE, not in softirq "
                            "on the generator's core (docs/lab.md)")
    bench.add_argument("--busy-dut-core", action="store_true",
                       help="leave the machine's other threads free to run on the DUT's core during the run (by "
                            "default they are moved off it: docs/methodology.md)")
    bench.set_defaults(func=cmd_bench, parser=bench)

    report = sub.add_parser("report", help="plots and a Markdown page from a results file; 'xnf report reproduce': "
                            "the research's findings judged on this machine's results")
    report.add_argument("results", help="a results JSON written by 'xnf bench run', or 'reproduce'")
    report.add_argument("--out", help="folder for the page and plots (default: beside the results; reproduce: "
                        f"{user_data.results_dir() / 'reproduce'})")
    report.add_argument("--results-dir", action="append", metavar="DIR", help="reproduce: where to look for results "
                        f"(repeat; default {user_data.results_dir()}, and a checkout's research/results)")
    report.add_argument("--run-missing", action="store_true", help="reproduce: run the benchmarks whose results are "
                        "missing first (with their defaults: hours for all)")
    report.add_argument("--only", action="append", metavar="KEY", help="reproduce: only these findings (comma-"
                        "separated or repeated)")
    report.set_defaults(func=cmd_report)

    demo = sub.add_parser("demo", help="run the NFs on an emulated edge server and show the results")
    demo.add_argument("--seconds", type=_seconds(0.1, 600), default=2.0, help="traffic time per measurement")
    demo.set_defaults(func=cmd_demo)
    return parser


def _exit_on_sigterm() -> None:
    """SIGTERM ends the command the way Ctrl-C does, through its clean-ups (temporary folders, the lab's
    namespaces), where nothing else took the signal."""
    def stop(signum, _frame):
        raise SystemExit(128 + signum)

    if signal.getsignal(signal.SIGTERM) is signal.SIG_DFL:
        signal.signal(signal.SIGTERM, stop)


def main(argv: list[str] | None = None) -> int:
    _exit_on_sigterm()
    parser = make_parser()
    args, extra = parser.parse_known_args(argv)
    json_out = getattr(args, "json", False)
    say.set_level(args.quiet, args.verbose, json_out)
    if args.command in ("run", "doctor"):
        # --mode and AF_XDP settings (--queues, --workers, --batch ...): the NF binary checks them
        args.options = extra + (["--verbose"] if args.verbose else [])
    elif args.command == "bench":
        args.options = extra  # a study's own options: its parser checks them
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    try:
        return args.func(args)
    except XnfError as err:
        if json_out:
            # A program reading the JSON gets the error as JSON too; a person still sees it on stderr.
            print(json.dumps({"error": str(err)}))
        print(f"xnf: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        # the reader (head, grep -q) has what it wanted: end quietly, and keep Python from complaining at exit
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""`xnf bench`: list or run the benchmarks (results in results/)."""

from __future__ import annotations

import argparse
import json
import os

from xnf import build, say
from xnf.commands.arguments import require_root, results_dir, results_out
from xnf.errors import XnfError


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
    require_root("xnf bench run")

    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    from xnf.bench.grid import run_benchmark

    build.ensure_built()
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(),
                  disable=say.level < say.NORMAL) as progress:
        task = progress.add_task(f"{bench.name}", total=None)
        path = run_benchmark(bench, results_out(args),
                             lambda text: progress.update(task, description=f"{bench.name}: {text}"))
    say.info(f"results: {path} (and {path.with_suffix('.csv').name}); draw them with: xnf report {path}")
    return 0


def _run_study(args: argparse.Namespace, study) -> int:
    """A study's own options come after its name; its docstring is its --help."""

    parser = argparse.ArgumentParser(prog=f"xnf bench run {study.NAME}", description=study.__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=f"--out DIR: where the results files go (default: {results_dir()})")
    study.add_arguments(parser)
    options = parser.parse_args(args.options)
    if args.dut_receive_core is not None:
        raise XnfError(f"{study.NAME} places its work on cores itself: --dut-receive-core is for the grids")
    require_root("xnf bench run")
    build.ensure_built()
    path = study.run(options, results_out(args))
    say.info(f"results: {path} (and {path.with_suffix('.csv').name})")
    return 0


def add_parser(sub) -> None:
    # Its --help is handled in cmd_bench: after a study's name it is the study's own.
    bench = sub.add_parser("bench", add_help=False, help="list or run the benchmarks (results in results/)")
    bench.add_argument("action", nargs="?", choices=("list", "run"))
    bench.add_argument("name", nargs="?", help="benchmark to run (see 'xnf bench list')")
    bench.add_argument("--out", help=f"where results files go (default: {results_dir()})")
    bench.add_argument("--json", action="store_true", help="'bench list' as JSON")
    bench.add_argument("--dut-receive-core", type=int, metavar="CORE",
                       help="XDP modes: run the DUT's receive (and the NF) in threaded NAPI on CORE, not in softirq "
                            "on the generator's core (docs/lab.md)")
    bench.add_argument("--busy-dut-core", action="store_true",
                       help="leave the machine's other threads free to run on the DUT's core during the run (by "
                            "default they are moved off it: docs/methodology.md)")
    bench.set_defaults(func=cmd_bench, parser=bench)

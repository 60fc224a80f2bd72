"""What a user changes in a grid benchmark before running it, on the command line or in a TOML file:

    xnf bench run modes-throughput --set nfs=firewall,lb --set modes=xdp,afxdp --set params.size=64,512 \\
                                   --loss 0.001 --seconds 1 --repetitions 5
    xnf bench run modes-throughput --config mine.toml      # the same keys: nfs = ["firewall"], [params] size = [64]

Keys: nfs, modes, tx_paths (lists); seconds, repetitions, search_repetitions, loss_threshold, measure (one value);
params.FIELD and nf_params.NAME (lists of values: a traffic field of the generator, or an NF-side parameter of
bench/nf_setup.py). The changed benchmark is what the results file records."""

from __future__ import annotations

import argparse
import dataclasses
import tomllib
from pathlib import Path

from xnf.bench.grid import Benchmark
from xnf.errors import XnfError
from xnf.lab.measure import TrafficSpec

LISTS = ("nfs", "modes", "tx_paths")
SCALARS = {"seconds": float, "repetitions": int, "search_repetitions": int, "loss_threshold": float, "measure": str}
MEASURES = ("throughput", "max-rate")


def _number(text: str) -> int | float | str:
    for kind in (int, float):
        try:
            return kind(text)
        except ValueError:
            continue
    return text


def _as_list(value) -> list:
    if isinstance(value, list):
        return value
    return [_number(v) for v in str(value).split(",") if v != ""]


def apply(bench: Benchmark, changes: dict) -> Benchmark:
    """bench with changes (key -> value as text or as TOML gave it); every wrong key or value says what is right."""
    fields: dict = {}
    params, nf_params = dict(bench.params), dict(bench.nf_params)
    for key, value in changes.items():
        group, _, name = key.partition(".")
        if key in LISTS:
            fields[key] = [str(v) for v in _as_list(value)]
        elif key in SCALARS:
            try:
                fields[key] = SCALARS[key](value)
            except (TypeError, ValueError):
                raise XnfError(f"--set {key}={value}: give a {SCALARS[key].__name__}") from None
        elif group == "params" and name in TrafficSpec.__dataclass_fields__:
            params[name] = _as_list(value)
        elif group == "nf_params" and name:
            nf_params[name] = _as_list(value)
        else:
            raise XnfError(f"no setting '{key}' in a benchmark: use {', '.join(LISTS + tuple(SCALARS))}, "
                           f"params.FIELD ({', '.join(TrafficSpec.__dataclass_fields__)}) or nf_params.NAME")
    if fields.get("measure", bench.measure) not in MEASURES:
        raise XnfError(f"--set measure: one of {', '.join(MEASURES)}")
    if not 0 <= fields.get("loss_threshold", bench.loss_threshold) < 1:
        raise XnfError("--loss: a share of the frames sent, from 0 (no loss) up to but not including 1")
    return dataclasses.replace(bench, params=params, nf_params=nf_params, **fields)


def parse(options: list[str]) -> dict:
    """The grid's own options after its name: --set KEY=VALUE (repeatable), --loss, --seconds, --repetitions,
    --config FILE.toml (the command line wins over the file)."""
    parser = argparse.ArgumentParser(prog="xnf bench run GRID", add_help=False)
    parser.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--loss", type=float)
    parser.add_argument("--seconds", type=float)
    parser.add_argument("--repetitions", type=int)
    parser.add_argument("--config", metavar="FILE")
    args, unknown = parser.parse_known_args(options)
    if unknown:
        raise XnfError(f"a grid benchmark takes --set KEY=VALUE, --loss, --seconds, --repetitions and --config, "
                       f"not {' '.join(unknown)}")
    changes = _read_config(args.config) if args.config else {}
    for item in args.set:
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise XnfError(f"--set {item}: give KEY=VALUE, e.g. --set modes=xdp,afxdp")
        changes[key] = value
    for key, value in (("loss_threshold", args.loss), ("seconds", args.seconds), ("repetitions", args.repetitions)):
        if value is not None:
            changes[key] = value
    return changes


def _read_config(path: str) -> dict:
    try:
        doc = tomllib.loads(Path(path).read_text())
    except OSError as e:
        raise XnfError(f"cannot read {path}: {e.strerror}") from None
    except tomllib.TOMLDecodeError as e:
        raise XnfError(f"{path} is not TOML: {e}") from None
    changes = {}
    for key, value in doc.items():
        if isinstance(value, dict):
            changes.update({f"{key}.{name}": v for name, v in value.items()})
        else:
            changes[key] = value
    return changes

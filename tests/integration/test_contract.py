"""One contract: an NF binary's option table gives its --help, its checks and its describe output, and the Python
CLI shows and enforces exactly that, restating none of it."""

from __future__ import annotations

import json
from pathlib import Path

import subprocess
import sys

import pytest

from xnf import build, contract

NFS = build.available_nfs() + build.test_nfs()


def cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "xnf", *args], capture_output=True, text=True)


def binary(nf: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(build.nf_binary(nf)), *args], capture_output=True, text=True)


@pytest.mark.parametrize("nf", NFS)
def test_help_is_the_described_table(nf):
    described = contract.describe(nf)
    own = binary(nf, "run", "--help")
    assert own.returncode == 0
    listed = [line.split("--", 1)[1].split()[0] for line in own.stdout.splitlines()
              if line.startswith("  ") and "--" in line[:10] and not line.strip().startswith(("-h", "--version"))]
    assert listed == [o["name"] for o in described["options"]]
    for option in described["options"]:
        if option["default"] is not None:
            assert f"(default {option['default']})" in own.stdout.replace("\n" + " " * 27, " ")
    for mode in described["modes"]:
        assert f"  {mode['name']:<12} {mode['summary']}" in own.stdout
    through_cli = cli("run", nf, "--help")
    assert through_cli.returncode == 0 and through_cli.stdout == own.stdout


def test_xnf_run_help_lists_the_runtime_contract():
    shown = cli("run", "--help")
    assert shown.returncode == 0
    for option in contract.runtime()["options"]:
        assert f"--{option['name']}" in shown.stdout
    for mode in contract.mode_names():
        assert f"  {mode} " in shown.stdout


def bad_values(option: dict) -> list[tuple[str, str]]:
    """(value, what the refusal says) for each way the table says a value can be wrong."""
    name = option["name"]
    if option["kind"] == "uint":
        rule = f"--{name} takes a whole number from {option['min']:.0f} to {option['max']:.0f}"
        return [(f"{option['max'] + 1:.0f}", rule), ("x", rule)] + ([(f"{option['min'] - 1:.0f}", rule)]
                                                                     if option["min"] > 0 else [])
    if option["kind"] == "choice":
        return [("bogus", f"--{name} takes {', '.join(option['choices'][:-1])} or {option['choices'][-1]}, "
                          "not 'bogus'")]
    if option["kind"] == "cores":
        return [("99", f"--{name}: '99' is not one of this machine's cores"),
                ("0,0", f"--{name}: core 0 is given twice")]
    return []


@pytest.mark.parametrize("option", [o for o in contract.runtime()["options"] if bad_values(o)],
                         ids=lambda o: o["name"])
def test_every_checked_value_is_refused_as_described(option):
    for value, message in bad_values(option):
        refused = cli("run", contract.RUNTIME_REFERENCE_NF, "--mode", "afxdp", "--iface", "lo", f"--{option['name']}",
                      value)
        assert refused.returncode == 2, (option["name"], value, refused.stderr)
        assert message in refused.stderr and refused.stderr.count("\n") == 1, refused.stderr


def test_an_nf_option_is_in_its_contract():
    router = contract.describe("router")
    fib = [o for o in router["options"] if o["name"] == "fib"]
    assert fib and fib[0]["section"].startswith("this NF's own options")
    refused = cli("run", "router", "--mode", "xdp", "--iface", "lo", "--fib", "sideways")
    assert refused.returncode == 2 and "--fib sideways: the table to route by reads" in refused.stderr


def test_limits_and_stat_names_are_described_once():
    runtime = contract.runtime()
    assert runtime["limits"]["chain_members"] >= 2 and runtime["limits"]["ports"] >= 2
    assert "drop" in runtime["stats"]["verdicts"] and "live_frames" in runtime["stats"]["worker"]
    assert runtime["tx_paths"] == next(o["choices"] for o in runtime["options"] if o["name"] == "tx-path")


def test_the_mode_table_python_reads_without_a_binary_is_the_binarys():
    """python/xnf/mode_table.json is what `make` wrote from the mode table: the same as an NF binary says now."""
    written = json.loads((Path(contract.__file__).parent / "mode_table.json").read_text())
    described = contract.runtime()
    assert written and written == {key: described[key] for key in written}


def test_every_carrying_mode_of_the_table_is_a_lab_path():
    """A mode added to lib/runtime/modes.c is a path of the lab's (python/xnf/lab/paths.py) unless it is generic
    XDP or XDP beside idle sockets; the first user-space mode with each transmit path."""
    from xnf.lab import paths

    modes = {p.mode for p in paths.carrying().values()}
    for mode in contract.runtime()["modes"]:
        assert (mode["name"] in modes) == (not mode["generic"] and not (mode["datapath"] == "kernel" and
                                                                          mode["sockets"])), mode["name"]
    assert {p.tx_path for p in paths.carrying().values() if p.mode == "afxdp"} == {"live", "xsk"}


def test_the_cost_models_paths_read_their_roles_from_describe():
    """Who runs the NF, who spins and where drops happen come from the runtime's mode table, nowhere else."""
    from xnf.lab import paths
    from xnf.model import lab_paths

    seen = {}
    for key, path in lab_paths.PATHS.items():
        described = contract.mode(path.mode)
        seen[key] = (path.task_role, path.task_side, path.worker_spins, path.drops_in)
        assert path.nf_in_kernel == (described["datapath"] != "user")
        assert (path.worker_spins is None) == (not described["sockets"])
    key = {mode: paths.find(mode).key for mode in paths.modes(paths.with_workers)}  # this kernel's tx path
    assert seen["xdp"] == ("sender", "xdp", None, "drop_kernel")
    assert seen["afxdp/live"] == ("worker", "native", True, "drop_user")
    assert seen[key["afxdp-sysc"]] == ("worker", "native", True, "drop_user")
    assert seen[key["afxdp-poll"]] == ("worker", "native", False, "drop_user")
    assert seen[key["hybrid"]] == ("sender", "xdp", True, "drop_kernel")
    with pytest.raises(Exception, match="unknown mode"):
        contract.mode("afxdp-turbo")

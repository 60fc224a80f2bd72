"""An NF binary reads its options as written and no other way (lib/util/options.c): a long option by its whole name
only (getopt would take `--ifa` for --iface), each option once unless it repeats (--iface, --map-size), and
`check-run` says what a start would read, changing nothing (lib/runtime/start_check.c)."""

from __future__ import annotations

import json
import subprocess

import pytest

from xnf import programs


def check_run(*words: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(programs.nf_binary("macswap")), "check-run", *words], capture_output=True, text=True)


@pytest.mark.parametrize("words, said", [
    (["--mode", "xdp", "--ifa", "lo"], "--ifa is not an option: write it whole (--iface)"),
    (["--mode", "xdp", "--iface", "lo", "--sta", "/sys/fs/bpf/x"], "--sta is not an option: write it whole (--state)"),
    (["--mode", "xdp", "--mode", "tc", "--iface", "lo"], "--mode is given twice: give it once"),
    (["-m", "xdp", "--iface", "lo", "--mode=tc"], "--mode is given twice: give it once"),
    (["--mode", "xdp", "--iface", "lo", "--state", "/a", "--state=/b"], "--state is given twice: give it once"),
    (["--mode", "xdp", "--iface", "lo", "--no-such"], "unknown option --no-such"),
])
def test_an_option_not_whole_or_given_twice_is_refused(words, said):
    result = check_run(*words)
    assert result.returncode != 0 and said in result.stderr, result.stderr
    assert result.stdout == ""


def test_check_run_says_what_a_start_would_read():
    result = check_run("--mode", "xdp", "-ilo", "--name", "probe")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"mode": "xdp", "name": "probe", "ifaces": ["lo"], "rules": None,
                                         "state": None, "pin": None}


def test_a_value_that_looks_like_an_option_is_the_options_value():
    """--name takes the next word whatever it is: `--name --ifa` names the instance, and is no option to refuse."""
    result = check_run("--mode", "xdp", "--iface", "lo", "--name", "--ifa")
    assert "not an option" not in result.stderr

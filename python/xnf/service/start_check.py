"""A start checked before anything that runs is stopped (make before break). The NF binary's `check-run` reads the
options as `run` does (names whole, each once, values in range, the mode's kernel facilities), then the ports, the
rules file and the --state and --pin folders, and changes nothing (lib/runtime/start_check.c). xnf apply checks each
start and restart of its plan with it, so `--check` says what a start would refuse; xnf move checks its new command
line inside the instance's own namespaces before it stops the instance."""

from __future__ import annotations

import json
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from xnf import programs
from xnf.errors import XnfError

ERROR_PREFIX = "xnf: error: "


def check_run(argv: list[str], pass_fds: tuple[int, ...] = ()) -> dict:
    """argv: an NF binary's `run` command line (anything before the binary, such as nsenter, kept). What it read,
    or an XnfError with what a start would have said."""
    at = next(i for i, word in enumerate(argv) if word == "run")
    result = subprocess.run([*argv[:at], "check-run", *argv[at + 1:]], capture_output=True, text=True,
                            pass_fds=pass_fds)
    if result.returncode != 0:
        said = [line.removeprefix(ERROR_PREFIX) for line in result.stderr.splitlines() if line.startswith(ERROR_PREFIX)]
        raise XnfError("; ".join(said) or result.stderr.strip() or f"check-run exited {result.returncode}")
    return json.loads(result.stdout)


@contextmanager
def _rules_file(name: str, text: str | None):
    """The rules in a file of the name the service gives them (applied/NAME.rules), so that what is wrong is said
    of NAME.rules and its line."""
    if text is None:
        yield None
        return
    with tempfile.TemporaryDirectory(prefix="xnf-check-") as folder:
        path = Path(folder) / f"{name}.rules"
        path.write_text(text)
        yield str(path)


def check_spec(spec, failing: str = "a start would fail") -> None:
    """The instance's start as the service's file gives it (config.InstanceSpec): what check_run says, and its
    `options` giving nothing again that a key of the file gives (`-idut1` is a second interface). failing: what a
    refusal is said to mean."""
    with _rules_file(spec.name, spec.rules) as rules:
        try:
            read = check_run([str(programs.nf_binary(spec.nf)), "run", *spec.run_options(rules)])
        except XnfError as err:
            raise XnfError(f"{spec.name}: {failing}: {err}") from None
    if read["rules"] != rules:
        raise XnfError(f"{spec.name}: its options give --rules: give rules by the key rules or rules_text")
    for key, meant in (("mode", spec.mode), ("ifaces", list(spec.ifaces)), ("name", spec.name),
                       ("state", spec.state), ("pin", spec.pin)):
        if read[key] != meant:
            raise XnfError(f"{spec.name}: its options give {key} ({read[key]}) where the file's key gives {meant}: "
                           f"give it by the key {key} alone")

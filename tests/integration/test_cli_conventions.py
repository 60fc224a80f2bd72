"""What every command does alike: --version, --json, a quiet end when the reader of its output stops, and the
line an instance prints when it is stopped."""

from __future__ import annotations

import json
import subprocess
import sys

from lab_helpers import run_xnf
from xnf import build
from xnf.build import REPO_ROOT
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance


def test_every_program_says_its_version():
    version = run_xnf(["--version"]).stdout.split()
    assert version[0] == "xnf" and version[1][0].isdigit()
    for binary in [build.nf_binary("firewall"), build.tool_binary("xnf-gen"), build.tool_binary("xnf-xdp-load")]:
        out = subprocess.run([str(binary), "--version"], capture_output=True, text=True)
        assert out.returncode == 0 and out.stdout.split() == [binary.name, version[1]], out
    run_version = subprocess.run([str(build.nf_binary("firewall")), "run", "--version"], capture_output=True, text=True)
    assert run_version.stdout.split() == ["xnf-firewall", version[1]]


def test_lists_come_as_json_too():
    nfs = json.loads(run_xnf(["list", "--json"]).stdout)
    assert {"firewall", "lb", "router"} <= {row["nf"] for row in nfs}
    benches = json.loads(run_xnf(["bench", "list", "--json"]).stdout)
    assert {"soak", "capture-cost", "smoke"} <= {row["name"] for row in benches}
    assert json.loads(run_xnf(["ps", "--json"]).stdout) is not None


def test_a_closed_pipe_ends_quietly():
    piped = subprocess.run(["bash", "-c", f"set -o pipefail; {sys.executable} -m xnf bench list | head -1"],
                           capture_output=True, text=True, env={"PYTHONPATH": str(REPO_ROOT / "python"),
                                                                "PATH": "/usr/bin:/bin"})
    assert piped.returncode == 0 and len(piped.stdout.splitlines()) == 1 and piped.stderr == ""


def test_a_stopped_instance_says_what_it_did(pair):
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, name="summary-fw")
    nf.request("rules add drop udp 198.18.0.1 9 198.18.0.2 13")
    Generator(pair).run("--count", "500", "--rate", "10000", "--flows", "5")
    assert nf.stop() == 0
    last = nf.process.stderr.read().strip().splitlines()[-1]
    assert last.startswith("xnf: summary-fw stopped after ") and last.endswith("500 frames (drop 100, tx 400)")


def test_setup_installed_tab_completion_from_the_parser():
    script = "/usr/share/bash-completion/completions/xnf"
    completed = subprocess.run(["bash", "-c", f"source {script} && complete -p xnf && "
                                              "COMP_WORDS=(xnf d) COMP_CWORD=1 COMP_LINE='xnf d' COMP_POINT=5 && "
                                              "$(complete -p xnf | sed 's/.*-F \\([^ ]*\\) .*/\\1/') && "
                                              "printf '%s\\n' \"${COMPREPLY[@]}\""],
                               capture_output=True, text=True)
    assert completed.returncode == 0, completed.stderr
    assert "dump" in completed.stdout.split() and "demo" in completed.stdout.split()


def test_man_pages_come_from_each_programs_help():
    made = subprocess.run(["make", "-s", "man"], cwd=REPO_ROOT, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0, made.stderr
    firewall = (REPO_ROOT / "build" / "man" / "xnf-firewall.1").read_text()
    assert firewall.startswith(".\\\" DO NOT MODIFY") or ".TH XNF-FIREWALL" in firewall
    assert "attach" in firewall and "priority" in firewall
    xnf = (REPO_ROOT / "build" / "man" / "xnf.1").read_text()
    assert ".TH XNF" in xnf and "exporter" in xnf and "dump" in xnf


def test_quiet_keeps_only_the_product_and_verbose_shows_the_commands_underneath(tmp_path):
    quiet = run_xnf(["-q", "report", "reproduce", "--results-dir", str(tmp_path), "--out", str(tmp_path / "page"),
                     "--only", "drop-in-xdp"])
    assert quiet.returncode == 0 and quiet.stdout == "" and (tmp_path / "page" / "reproduce.md").exists()
    normal = run_xnf(["report", "reproduce", "--results-dir", str(tmp_path), "--out", str(tmp_path / "page"),
                      "--only", "drop-in-xdp"])
    assert "reproduced:" in normal.stdout
    verbose = run_xnf(["-v", "cost", "drop", "--frames", "64", "--repeat", "2", "--json"], timeout=120)
    assert verbose.returncode == 0, verbose.stderr
    assert "xnf: running" in verbose.stderr and "xnf-drop cost --frames" in verbose.stderr
    assert json.loads(verbose.stdout)["verdicts"] == {"drop": 64}       # the product is untouched

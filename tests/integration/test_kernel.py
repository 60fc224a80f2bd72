"""The kernel facility table (lib/util/kernel_facilities.c): every facility probed for real, listed by xnf doctor,
refused on demand by XNF_KERNEL_WITHOUT, each refusal naming the facility; every helper the built programs call has
its row; and the fallbacks, run here whatever this kernel gives by refusing what they stand in for: hybrid without
XDP metadata, AF_XDP workers without live frames (neighbours resolve through the port), xnf-gen's tc sender."""

from __future__ import annotations

import json
import re
import subprocess

import pytest

from lab_helpers import run_xnf
from xnf import build, contract, kernel
from xnf.lab import apps
from xnf.lab.generator import Generator
from xnf.lab.hosts import HostsTopology
from xnf.lab.nf_process import NfInstance

# The program types of the sections the built objects' programs sit in: what the helper rows say of each helper.
SECTION_TYPES = {"xdp": "xdp", "xdp.frags": "xdp", "tc": "tc", "tcx/ingress": "tc", "classifier": "tc"}


def xnf_kernel(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([str(build.tool_binary("xnf-kernel")), *args], capture_output=True, text=True, env=env,
                          timeout=30)


def helper_calls(obj) -> list[tuple[set[str], int]]:
    """(the program types it may be called from, helper id) for every helper call in a BPF object: a call in a
    program's section is that program type's; one in .text (BPF-to-BPF functions, callbacks) any of the types the
    object's programs have."""
    text = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", str(obj)], capture_output=True, text=True,
                          check=True).stdout
    calls, section = {}, None
    for line in text.splitlines():
        found = re.match(r"Disassembly of section (\S+):", line)
        if found:
            section = found.group(1)
            continue
        found = re.search(r"\bcall (-?\d+)$", line.strip())
        if found and int(found.group(1)) >= 0:
            calls.setdefault(section, set()).add(int(found.group(1)))
    type_of = {s: SECTION_TYPES.get(s, "tracing") for s in calls if s != ".text"}
    return [({type_of[s]}, h) for s in type_of for h in calls[s]] + \
        [(set(type_of.values()), h) for h in calls.get(".text", ())]


def test_every_helper_the_built_programs_call_has_its_row():
    rows = {h["id"]: set(h["program_types"]) for h in kernel.table()["helpers"]}
    objects = [p for p in build.BUILD_DIR.rglob("*.bpf.o") if "variants" not in p.parts]
    assert len(objects) > 20
    missing = sorted({f"{o.relative_to(build.BUILD_DIR)}: helper {h} in {'/'.join(sorted(types))}" for o in objects
                      for types, h in helper_calls(o) if not types & rows.get(h, set())})
    assert missing == [], "helpers the facility table has no row for (lib/util/kernel_facilities.c):\n" + \
        "\n".join(missing)


def test_the_table_probes_every_facility_and_says_what_xnf_does_without_it():
    table = json.loads(xnf_kernel("--json", "--probe").stdout)
    names = [f["name"] for f in table["facilities"]]
    assert {"live_frames", "xdp_meta", "tcx", "clsact", "xdp_frags", "afxdp_sg", "busy_poll", "freplace",
            "btf"} <= set(names)
    for f in table["facilities"]:
        assert f["state"] in ("works", "refused"), f
        assert f["since"] and f["without"], f
        assert f["state"] == "works" or f["why"], f
    assert table["facilities"][names.index("bpf")]["state"] == "works"
    meta = table["facilities"][names.index("xdp_meta")]
    if meta["state"] == "refused" and "XNF_KERNEL_WITHOUT" not in meta["why"]:   # the verifier's refusal, not its trace
        assert "bpf_xdp_adjust_meta" in meta["why"], meta


def test_the_override_treats_facilities_as_refused_and_refuses_names_it_does_not_know():
    env = {"XNF_KERNEL_WITHOUT": "live_frames,bpf_xdp_adjust_meta", "PATH": "/usr/bin:/bin"}
    said = xnf_kernel("--has", "live_frames", env=env)
    assert said.returncode == 1 and "live_frames" in said.stdout and "XNF_KERNEL_WITHOUT" in said.stdout
    assert xnf_kernel("--has", "xdp_meta", env=env).returncode == 1      # the helper and its facility are one
    assert xnf_kernel("--has", "tcx", env=env).returncode == (0 if kernel.has("tcx") else 1)
    wrong = xnf_kernel(env={"XNF_KERNEL_WITHOUT": "live_frame"})
    assert wrong.returncode == 2 and wrong.stderr.count("xnf: error:") == 1
    assert "'live_frame'" in wrong.stderr and "live_frames" in wrong.stderr


def test_doctor_prints_the_table_and_refuses_a_mode_the_kernel_cannot_run(pair, monkeypatch):
    plain = run_xnf(["doctor"])
    assert plain.returncode == 0 and all(f["name"] in plain.stdout for f in kernel.table()["facilities"])
    assert json.loads(run_xnf(["doctor", "--json"]).stdout)["facilities"]
    monkeypatch.setenv(kernel.WITHOUT_ENV, "busy_poll")
    judged = run_xnf(["doctor", "dut0", "--mode", "afxdp-sysc", "--json"], ns=pair.dut_ns)
    assert judged.returncode == 1
    assert json.loads(judged.stdout)["mode_runs_here"] is False
    started = run_xnf(["run", "macswap", "--mode", "afxdp-sysc", "--iface", "dut0"], ns=pair.dut_ns)
    assert started.returncode == 1 and started.stderr.count("xnf: error:") == 1
    assert "--mode afxdp-sysc" in started.stderr and "busy_poll" in started.stderr
    assert "prog/xdp" not in pair.run(pair.dut_ns, ["ip", "link", "show", "dut0"]).stdout


def test_hybrid_without_xdp_metadata_sends_every_frame_whole(bare_pair, monkeypatch):
    """The verdict rides behind each frame and the workers take it off: every frame comes back, every byte as sent,
    in the sizes a mix has."""
    monkeypatch.setenv(kernel.WITHOUT_ENV, "xdp_meta")
    nf = NfInstance.start(bare_pair, "macswap", "hybrid", bare_pair.dut_ifaces, extra=["--cores", "1"])
    out = Generator(bare_pair, receive_on=0).run("--count", "3000", "--rate", "20000", "--size", "imix",
                                                 "--check-payload", "--sender", "socket").summary
    assert out["received"] == out["sent"] == 3000
    assert out["payload_checked"] == 3000 and out["payload_wrong"] == 0
    assert nf.stats()["tx"]["packets"] == 3000
    assert nf.stop() == 0
    assert "xdp_meta" in nf.process.stderr.read()     # the fallback, said once


def test_afxdp_without_live_frames_carries_hosts_that_resolve_their_neighbours(monkeypatch, rules_file):
    """The workers pass ARP and neighbour discovery to the stack through the TAP device, whose program hands them on
    into the port: the hosts resolve the router's addresses and the first ping already gets through."""
    monkeypatch.setenv(kernel.WITHOUT_ENV, "live_frames")
    with HostsTopology(hosts=2) as t:
        NfInstance.start(t, "router", "afxdp", t.dut_ifaces, rules=rules_file(t.router_rules()),
                         extra=["--cores", "1"])
        h0, h1 = t.host(0), t.host(1)
        for ip in (h1.ip, h1.ip6):
            assert apps.ping(h0.ns, ip, count=1) == 1, f"the first ping to {ip}"
        assert apps.iperf3(t, h0.ns, h1.ns, h1.ip).received_bytes > 0


def one_mode_per_program() -> list[str]:
    """A mode for each program the glue builds, a hook with a data path (xdp, tc, the AF_XDP modes' redirect,
    hybrid's): the verifier checks nothing else that differs between modes. Those this kernel can run."""
    chosen: dict[tuple, str] = {}
    for mode in contract.runtime()["modes"]:
        if mode["available"] and not mode["generic"] and not kernel.missing(mode["needs"]):
            chosen.setdefault((mode["hook"], mode["datapath"]), mode["name"])
    return list(chosen.values())


@pytest.mark.parametrize("nf", build.available_nfs())
def test_every_nf_loads_in_every_program_the_glue_builds(bare_pair, nf):
    """The verifier of this kernel takes each NF's program in each form (checksum's loop once took hybrid's past
    its million instructions on 6.18); run in a VM, the same on Debian's kernels."""
    for mode in one_mode_per_program():
        started = NfInstance.start(bare_pair, nf, mode, bare_pair.dut_ifaces[:1], extra=["--verifier-stats"])
        assert started.stop() == 0, f"{nf} in {mode}"
        assert "processed" in started.process.stderr.read(), f"{nf} in {mode}: the verifier's statistics"


@pytest.mark.parametrize("flows", [1, 64])
def test_the_tc_sender_builds_every_frame_as_live_frames_do(bare_pair, flows):
    """Seeds made into frames at the interface's egress: every frame arrives with its probe, in order per flow, each
    byte as sent, and the summary names the sender."""
    NfInstance.start(bare_pair, "macswap", "xdp", bare_pair.dut_ifaces)
    out = Generator(bare_pair, receive_on=0).run("--count", "10000", "--rate", "100000", "--flows", str(flows),
                                                 "--sender", "tc", "--check-payload").summary
    assert out["sender"] == "tc"
    assert out["received"] == out["sent"] == 10000 and out["lost"] == 0 and out["reordered"] == 0
    assert out["payload_wrong"] == 0 and out["payload_checked"] == 10000


def test_without_live_frames_the_generator_takes_the_tc_sender_and_says_so(bare_pair, monkeypatch):
    monkeypatch.setenv(kernel.WITHOUT_ENV, "live_frames")
    NfInstance.start(bare_pair, "drop", "xdp", bare_pair.dut_ifaces)
    run = Generator(bare_pair, receive_on=0).run("--duration", "0.5")
    assert run.summary["sender"] == "tc" and run.summary["sent"] > 0
    assert "live_frames" in run.stderr
    refused = Generator(bare_pair).run("--duration", "0.5", "--sender", "live", check=False)
    assert refused.returncode == 2 and "--sender live" in refused.stderr and "live_frames" in refused.stderr


def test_no_message_names_a_kernel_version_outside_the_table():
    """Versions live in the facility table only: a string in C or Python that says "Linux X.Y" anywhere else is a
    second place that can go wrong."""
    found = []
    for path in [*build.layout().root.glob("lib/**/*.[ch]"), *build.layout().root.glob("tools/**/*.[ch]"),
                 *build.layout().root.glob("include/**/*.h"), *build.layout().root.glob("nfs/**/*.c"),
                 *build.layout().root.glob("python/**/*.py"), *build.layout().root.glob("tests/**/*.py")]:
        if path.name == "kernel_facilities.c":
            continue
        for literal in string_literals(path):
            if re.search(r"Linux \d+\.\d+|kernel >= ?\d|\d\.\d+ (and later|or newer|or later)", literal):
                found.append(f"{path.relative_to(build.layout().root)}: {literal[:80]!r}")
    assert found == [], "\n".join(found)


def string_literals(path) -> list[str]:
    """The string literals of a C or Python source, comments left out."""
    text = path.read_text()
    if path.suffix == ".py":
        import io
        import tokenize

        return [t.string for t in tokenize.generate_tokens(io.StringIO(text).readline)
                if t.type == tokenize.STRING and not t.string.startswith(('"""', "'''"))]
    text = re.sub(r"/\*.*?\*/|//[^\n]*", "", text, flags=re.S)
    return re.findall(r'"(?:[^"\\\n]|\\.)*"', text)


def test_the_kernels_page_lists_the_table_as_the_binary_declares_it(tmp_path):
    """docs/kernels.md's table is written from the binary (scripts/write-kernel-table): rewritten now, it is the
    same."""
    page = build.layout().root / "docs" / "kernels.md"
    copy = tmp_path / "kernels.md"
    copy.write_text(page.read_text())
    subprocess.run([str(build.layout().root / "scripts" / "write-kernel-table"), str(build.tool_binary("xnf-kernel")),
                    str(copy)], check=True)
    assert copy.read_text() == page.read_text(), "docs/kernels.md is behind the table: run scripts/write-kernel-table"

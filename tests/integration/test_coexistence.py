"""`--attach libxdp`: an NF shares a veth with another XDP program through libxdp's dispatcher, behind it or in
front of it by run priority; both run; stopping the NF leaves the other in place; a killed NF's program is
removed by the next start; and what cannot work is refused with a message."""

from __future__ import annotations

import json
import signal
import subprocess

import pytest

from lab_helpers import run_xnf
from xnf import attached, build, contract, control, kernel
from xnf.lab import bpf_maps, paths
from xnf.lab.generator import Generator
from xnf.lab.nf_process import NfInstance
from xnf.lab.topology import Topology

FRAMES = 500            # 5 flows, dport 9 to 13; the firewall drops dport 13
DROPPED_DPORT = 13
OTHER_OBJECT = build.BUILD_DIR / "bpf" / "xnf_count_pass.bpf.o"


@pytest.fixture
def bpffs(tmp_path, monkeypatch):
    """A bpffs every process of the test shares (ip netns exec hides /sys/fs/bpf): libxdp finds it by
    LIBXDP_BPFFS."""
    folder = tmp_path / "bpffs"
    folder.mkdir()
    subprocess.run(["mount", "-t", "bpf", "bpf", str(folder)], check=True)
    monkeypatch.setenv("LIBXDP_BPFFS", str(folder))
    yield folder
    subprocess.run(["umount", "-l", str(folder)], check=False)


def start_other(pair: Topology, priority: int) -> subprocess.Popen:
    proc = pair.spawn(pair.dut_ns, [str(build.tool_binary("xnf-xdp-load")), "--object", str(OTHER_OBJECT),
                                    "--iface", pair.links[0].dut_if, "--libxdp", "--priority", str(priority)])
    line = proc.stdout.readline()
    assert "attached through libxdp" in line, line + proc.stderr.read()
    return proc


def hook_holder(pair: Topology) -> str:
    """The name of the program on the DUT's hook: libxdp's dispatcher, or a program attached alone."""
    out = pair.run(pair.dut_ns, ["ip", "-d", "link", "show", pair.links[0].dut_if]).stdout
    return out.split("prog/xdp id ")[1].split(" name ")[1].split()[0] if "prog/xdp id " in out else ""


def other_count() -> int:
    out = subprocess.run(["bpftool", "-j", "map", "dump", "name", "count_passed"], capture_output=True,
                         text=True, check=True).stdout
    [entry] = json.loads(out)
    per_cpu = entry["formatted"]["values"] if "formatted" in entry else entry["values"]   # with BTF, or without
    return sum(cpu["value"] for cpu in per_cpu)


def xnf_programs_in_dispatchers() -> int:
    progs = json.loads(subprocess.run(["bpftool", "-j", "prog", "show"], capture_output=True, text=True,
                                      check=True).stdout)
    return sum(1 for p in progs if p.get("name") == "xnf_xdp_main" and p.get("type") == "ext")


def send(pair: Topology) -> None:
    Generator(pair).run("--count", str(FRAMES), "--rate", "10000", "--flows", "5")


def verdicts(nf: NfInstance) -> dict:
    return {v: c["packets"] for v, c in nf.stats().items() if v in ("tx", "drop")}


# libxdp builds its dispatcher from extension programs (freplace): on a kernel that refuses them there is nothing to
# test but the refusal (test_a_kernel_without_extensions_gets_a_clear_refusal).
@pytest.mark.kernel("freplace")
@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_and_user))
def test_an_nf_behind_another_program_both_run(mode, bpffs, pair):
    other = start_other(pair, priority=10)
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces,
                          extra=["--attach", "libxdp", "--priority", "20"])
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    send(pair)
    assert other_count() == FRAMES           # the other program saw every frame first, and passed it on
    assert verdicts(nf) == {"tx": FRAMES * 4 // 5, "drop": FRAMES // 5}   # then the NF gave its verdicts
    assert nf.stop() == 0
    assert xnf_programs_in_dispatchers() == 0
    send(pair)                               # the other program stays, alone
    assert other_count() == 2 * FRAMES
    other.terminate()
    other.wait(timeout=10)


@pytest.mark.kernel("freplace")
def test_an_nf_in_front_decides_first(bpffs, pair):
    start_other(pair, priority=50)
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces,
                          extra=["--attach", "libxdp", "--priority", "5"])
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    send(pair)
    # tx and drop end the dispatcher's run (only XDP_PASS goes on): nothing reaches the program behind it
    assert verdicts(nf) == {"tx": FRAMES * 4 // 5, "drop": FRAMES // 5}
    assert other_count() == 0
    assert nf.stop() == 0
    send(pair)
    assert other_count() == FRAMES


@pytest.mark.kernel("freplace")
def test_a_killed_nf_is_removed_from_the_dispatcher_by_the_next_start(bpffs, pair):
    start_other(pair, priority=10)
    options = ["--attach", "libxdp", "--priority", "20"]
    killed = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, extra=options)
    killed.process.kill()
    killed.process.wait()
    assert xnf_programs_in_dispatchers() == 1   # libxdp's pinned link keeps it attached
    nf = NfInstance.start(pair, "firewall", "xdp", pair.dut_ifaces, name=killed.name + "-2", extra=options)
    assert xnf_programs_in_dispatchers() == 1   # the new one only
    send(pair)
    assert verdicts(nf)["tx"] == FRAMES and other_count() == FRAMES
    assert nf.stop() == 0
    assert xnf_programs_in_dispatchers() == 0


def test_a_kernel_without_extensions_gets_a_clear_refusal(bpffs, pair, monkeypatch):
    """Where the kernel refuses freplace (here, or as XNF_KERNEL_WITHOUT says), --attach libxdp is refused by name
    before anything is attached."""
    monkeypatch.setenv(kernel.WITHOUT_ENV, "freplace")
    out = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", pair.links[0].dut_if, "--attach", "libxdp"],
                  ns=pair.dut_ns)
    assert out.returncode == 1
    assert "--attach libxdp" in out.stderr and "freplace" in out.stderr and "--attach link" in out.stderr
    assert out.stderr.count("xnf: error:") == 1
    assert "Traceback" not in out.stderr and "libxdp:" not in out.stderr
    assert hook_holder(pair) == ""           # nothing on the interface


@pytest.mark.kernel("freplace")   # without it, the kernel's refusal comes first (above)
def test_a_dispatcher_without_bpffs_is_refused_clearly(pair):
    without_bpffs = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", pair.links[0].dut_if,
                             "--attach", "libxdp"], ns=pair.dut_ns)
    assert without_bpffs.returncode == 1
    assert "--attach libxdp needs bpffs" in without_bpffs.stderr and "LIBXDP_BPFFS" in without_bpffs.stderr


def test_a_priority_without_the_dispatcher_is_refused(pair):
    priority_alone = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", pair.links[0].dut_if,
                              "--priority", "5"], ns=pair.dut_ns)
    assert priority_alone.returncode != 0 and "it needs --attach libxdp" in priority_alone.stderr


@pytest.mark.parametrize("mode", paths.Modes(paths.kernel_hooks))
def test_pinned_maps_are_readable_by_bpftool_while_it_runs(mode, bpffs, pair):
    pins = bpffs / "edge-fw"
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces, extra=["--pin", str(pins)])
    nf.request(f"rules add drop udp 198.18.0.1 9 198.18.0.2 {DROPPED_DPORT}")
    send(pair)
    acl = bpf_maps.pinned_entries(pins / "fw_acl")
    assert len(acl) == 1 and acl[0]["key"]["dport"] != 0
    stats = bpf_maps.pinned_entries(pins / "xnf_stats")
    drop_slot = contract.runtime()["stats"]["verdicts"].index("drop")
    drops = sum(cpu["value"]["packets"] for entry in stats if entry["key"] == drop_slot
                for cpu in entry["values"])   # bpftool's view through the map's BTF
    assert drops == FRAMES // 5
    assert nf.stop() == 0
    assert not any(pins.iterdir())   # unpinned at the stop
    refused = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", pair.links[0].dut_if, "--pin",
                       "/tmp/not-bpffs-here"], ns=pair.dut_ns)
    assert refused.returncode == 1 and "is not in bpffs" in refused.stderr


@pytest.mark.parametrize("mode, hook_mode", [("xdp", "native"), ("xdp-generic", "generic")])
def test_ps_reads_each_instances_hook_from_its_namespace(mode, hook_mode, pair):
    nf = NfInstance.start(pair, "firewall", mode, pair.dut_ifaces)
    info = control.request_json(nf.name, "info")
    [mine] = attached.programs_on(info["pid"], pair.links[0].dut_if)
    assert (mine["name"], mine["mode"]) == (attached.XNF_PROGRAM, hook_mode)
    [listed] = [i for i in json.loads(run_xnf(["ps", "--json"]).stdout) if i["name"] == nf.name]
    assert listed["others_attached"] == {}      # a bpf_link holds the hook alone
    assert nf.stop() == 0
    assert hook_holder(pair) == ""


def test_ps_lists_the_other_programs_at_a_tc_instances_ingress(pair):
    """TCX runs several programs at one ingress, one after the other; iproute2 6.1 does not show them, so each tc
    instance lists its ports' (`tc_ingress`), and `xnf ps` names the ones that are not its own."""
    port = pair.links[0].dut_if
    first = NfInstance.start(pair, "firewall", "tc", [port], name="first")
    second = NfInstance.start(pair, "macswap", "tc", [port], name="second")
    ids = {nf.name: next(p["id"] for p in control.request_json(nf.name, "info")["ports"][0]["tc_ingress"]
                         if p["own"]) for nf in (first, second)}
    listed = {i["name"]: i for i in json.loads(run_xnf(["ps", "--json"]).stdout)}
    assert listed["first"]["others_attached"] == {port: [{"name": "xnf_tc_main", "id": ids["second"],
                                                          "mode": "tcx"}]}
    assert listed["second"]["others_attached"][port][0]["id"] == ids["first"]
    assert second.stop() == 0
    assert [i["others_attached"] for i in json.loads(run_xnf(["ps", "--json"]).stdout)
            if i["name"] == "first"] == [{}]
    assert first.stop() == 0


def tc_show(pair, what: str, port: str, *where: str) -> str:
    return subprocess.run(["ip", "netns", "exec", pair.dut_ns, "tc", what, "show", "dev", port, *where],
                          capture_output=True, text=True, check=True).stdout


def test_another_partys_clsact_filter_runs_behind_a_tc_instance_and_is_said(pair):
    """A cls_bpf filter at pref 10 and a tc instance at TCX: the kernel runs TCX first, so the instance runs ahead
    of the filter whatever its pref; doctor says so with the way to put xnf behind it, and ps names the filter. With
    --attach clsact (pref 30830) xnf runs behind it: the filter counts every frame and hands it on."""
    port = pair.links[0].dut_if
    subprocess.run(["ip", "netns", "exec", pair.dut_ns, "tc", "qdisc", "add", "dev", port, "clsact"], check=True)
    subprocess.run(["ip", "netns", "exec", pair.dut_ns, "tc", "filter", "add", "dev", port, "ingress", "pref", "10",
                    "bpf", "da", "obj", str(OTHER_OBJECT), "sec", "tc"], check=True)
    doctor = run_xnf(["doctor", port, "--mode", "tc"], ns=pair.dut_ns)
    assert f"{port} has a clsact ingress filter at pref 10 (bpf" in doctor.stdout, doctor.stdout + doctor.stderr
    assert "at TCX xnf runs ahead of it" in doctor.stdout and "--attach clsact" in doctor.stdout

    nf = NfInstance.start(pair, "macswap", "tc", [port])
    [listed] = [i for i in json.loads(run_xnf(["ps", "--json"]).stdout) if i["name"] == nf.name]
    [other] = listed["others_attached"][port]
    assert other["mode"] == "clsact pref 10, after TCX" and "xnf_count_pass" in other["name"]   # as tc names it
    send(pair)
    assert nf.stats()["tx"]["packets"] == FRAMES and other_count() == 0   # sent back before the filter ran
    assert nf.stop() == 0
    behind = NfInstance.start(pair, "macswap", "tc", [port], extra=["--attach", "clsact"])
    send(pair)
    assert behind.stats()["tx"]["packets"] == FRAMES and other_count() == FRAMES   # the filter, then xnf
    assert behind.stop() == 0
    assert "xnf_count_pass" in tc_show(pair, "filter", port, "ingress")   # the qdisc xnf found stays, and its filter


def test_a_tc_instance_as_a_clsact_filter_carries_frames_and_goes_with_its_stop(pair):
    """--attach clsact: where tc filter show must list the program (iproute2 6.1 shows no TCX), a clsact filter
    instead of a TCX link; taken off at the stop, with the clsact qdisc xnf added for it; a killed instance's is named,
    with its fix, by the next start."""
    port = pair.links[0].dut_if

    def filters() -> str:
        return tc_show(pair, "filter", port, "ingress")

    nf = NfInstance.start(pair, "macswap", "tc", [port], extra=["--attach", "clsact"])
    assert "xnf_tc_main" in filters()
    [own] = control.request_json(nf.name, "info")["ports"][0]["tc_ingress"] or [None]    # no TCX link
    assert own is None
    send(pair)
    assert nf.stats()["tx"]["packets"] == FRAMES                        # every frame swapped and sent back
    assert nf.stop() == 0 and "xnf_tc_main" not in filters()
    assert "clsact" not in tc_show(pair, "qdisc", port)                 # the port as xnf found it
    killed = NfInstance.start(pair, "macswap", "tc", [port], extra=["--attach", "clsact"])
    killed.stop(signal.SIGKILL)
    again = run_xnf(["run", "macswap", "--mode", "tc", "--iface", port, "--attach", "clsact"], ns=pair.dut_ns)
    assert again.returncode != 0 and f"tc filter del dev {port} ingress" in again.stderr
    subprocess.run(["ip", "netns", "exec", pair.dut_ns, "tc", "filter", "del", "dev", port, "ingress"], check=True)
    wrong = run_xnf(["run", "macswap", "--mode", "xdp", "--iface", port, "--attach", "clsact"], ns=pair.dut_ns)
    assert wrong.returncode != 0 and "--attach clsact puts the program in a tc filter" in wrong.stderr


def test_pins_a_killed_instance_left_are_cleared_by_the_next_and_a_live_ones_kept(bpffs, two_port):
    pins = bpffs / "edge-fw"
    first = NfInstance.start(two_port, "firewall", "xdp", ["dut0"], extra=["--pin", str(pins)])
    second = run_xnf(["run", "firewall", "--mode", "xdp", "--iface", "dut1", "--pin", str(pins), "--name",
                      "second"], ns=two_port.dut_ns)
    assert second.returncode == 1 and "pins its maps there and runs" in second.stderr
    first.stop(signal.SIGKILL)
    left = sorted(p.name for p in pins.iterdir())
    assert "fw_acl" in left   # nobody could remove them
    again = NfInstance.start(two_port, "firewall", "xdp", ["dut1"], extra=["--pin", str(pins)], name="again")
    _ = again.request("info")
    assert sorted(p.name for p in pins.iterdir()) == left   # the new instance's own pins, same names
    assert again.stop() == 0
    assert not any(pins.iterdir())
    assert not list(control.run_dir().glob(".pin-*.owner"))

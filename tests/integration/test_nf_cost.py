"""`xnf cost`: an NF run on a mix's frames natively and in XDP, without a topology: the verdicts are the mix's,
exactly, and both sides report a time per frame; what cannot be measured says why."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from lab_helpers import run_xnf, wait_until
from xnf import nf_cost, programs
from xnf.model import cases

MIX = ["--class", "legit:share=0.75,flows=64,vary=sport", "--class", "attack:saddr=203.0.113.0/28,share=0.25"]
FRAMES = 1024   # one turn of xnf-gen's 1,024-slot schedule: the shares exactly


def test_the_mix_gets_the_verdicts_its_shares_say_on_both_sides(tmp_path):
    rules = tmp_path / "fw.rules"
    rules.write_text("".join(f"drop udp 203.0.113.{i} 9 198.18.0.2 9\n" for i in range(16)))
    out = run_xnf(["cost", "firewall", "--rules", str(rules), *MIX, "--frames", str(FRAMES), "--repeat", "20",
                   "--json"], timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["frames"] == FRAMES and result["verdicts"] == {"drop": FRAMES // 4, "tx": FRAMES * 3 // 4}
    times = [result[f"{side}_ns_per_frame"] for side in ("native", "native_warm", "xdp_cold", "xdp_warm")]
    assert all(t > 0 for t in times)
    # the XDP time the model takes: the program's warm time plus the misses a native batch meets (nf_cost.c)
    native, native_warm, _, xdp_warm = times
    assert abs(result["xdp_ns_per_frame"] - (xdp_warm + native - native_warm)) < 0.05


def _allowed_cpus(pid: int) -> str:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return line.split(":", 1)[1].strip()
    return ""


def test_the_run_keeps_to_the_core_it_started_on(tmp_path):
    """A move between cores would leave the NF's tables in the other core's cache (nf_cost.c): the run pins itself
    to one core, whatever it was allowed before."""
    pcap = tmp_path / "mix.pcap"
    nf_cost.mix_frames(pcap, 64, ["--flows", "64", "--vary", "sport"])
    argv = [str(programs.nf_binary("macswap")), "cost", "--frames", str(pcap), "--repeat", "1000000"]
    run = subprocess.Popen(["taskset", "-c", "0,1", *argv], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                           text=True)
    try:
        def pinned() -> str:
            assert run.poll() is None, f"the cost run ended early: {run.stderr.read()}"
            cpus = _allowed_cpus(run.pid)
            return cpus if cpus and "," not in cpus and "-" not in cpus else ""

        assert wait_until(pinned, timeout_s=30, what="the cost run pinned to one core") in ("0", "1")
    finally:
        run.kill()
        run.wait()


def test_a_chain_and_a_sized_map_are_measured_too():
    chain = run_xnf(["cost", "chain:firewall,macswap", "--frames", "64", "--repeat", "5", "--json"], timeout=120)
    assert chain.returncode == 0, chain.stderr
    assert json.loads(chain.stdout)["verdicts"] == {"tx": 64}
    sized = run_xnf(["cost", "memload", "--map-size", "ml_area=1K", "--frames", "64", "--repeat", "5", "--json"],
                    timeout=120)
    assert sized.returncode == 0, sized.stderr


def test_what_cannot_be_measured_says_why(tmp_path):
    missing = run_xnf(["cost", "firewall", "--rules", str(tmp_path / "none.rules")])
    assert missing.returncode == 1 and "none.rules" in missing.stderr and "Traceback" not in missing.stderr
    bad_class = run_xnf(["cost", "firewall", "--class", "x:share=2"])
    assert bad_class.returncode == 1 and "frames could not be made" in bad_class.stderr
    bad_map = run_xnf(["cost", "firewall", "--map-size", "nosuch=4"])
    assert bad_map.returncode == 1 and "no map called 'nosuch'" in bad_map.stderr


def _flows_in(pcap) -> set[tuple[str, int]]:
    from scapy.all import IP, UDP, rdpcap

    return {(p[IP].src, p[UDP].sport) for p in rdpcap(str(pcap))}


def test_the_default_sample_holds_every_flow_of_the_mix(tmp_path):
    """1,010 flows, 1,000 of them in half the frames: xnf-gen says the mix takes 2,000 frames to send each once,
    they hold all 1,010 (and 1,800 do not), and xnf cost times the NF on that many by default."""
    from xnf import nf_cost

    mix = ["--class", "many:share=0.5,flows=1000,vary=sport", "--class", "few:saddr=203.0.113.1,share=0.5,"
           "flows=10,vary=sport"]
    assert nf_cost.sample_frames(mix) == 2000
    for count, flows in ((2000, 1010), (1800, 910)):
        nf_cost.mix_frames(tmp_path / "mix.pcap", count, mix)
        assert len(_flows_in(tmp_path / "mix.pcap")) == flows
    out = run_xnf(["cost", "macswap", *mix, "--json"], timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["frames"] == 2000 and result["repeat"] == nf_cost.passes(2000)
    assert nf_cost.sample_frames([]) == nf_cost.MIN_FRAMES


def test_cost_and_advise_refuse_what_never_ends_or_is_no_number():
    for device in ("/dev/zero", "/dev/urandom"):
        refused = run_xnf(["cost", "firewall", "--rules", device], timeout=60)
        assert refused.returncode == 1 and device in refused.stderr and "Traceback" not in refused.stderr
    too_many = run_xnf(["cost", "firewall", "--frames", "100000000"])
    assert too_many.returncode == 2 and "from 1 to 65,536" in too_many.stderr
    cores = run_xnf(["advise", "firewall", "--cores", "1000000000"], timeout=60)
    assert cores.returncode == 1 and "at most 65 cores" in cores.stderr


# the advisor-check's NAT case (on the lab's one port, to a remote), on 4,096 flows
NEW_FLOWS = ["--mix", " ".join(cases.nat_flows(4096))]


def _first_over_steady(nf: str, rules: list[str]) -> tuple[float, float]:
    out = run_xnf(["cost", nf, *rules, *NEW_FLOWS, "--sessions", "new", "--json"], timeout=120)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["frames"] == 4096 and result["sessions"] == "new"   # every frame a flow of its own
    return (result["native_first_ns_per_frame"] - result["native_ns_per_frame"],
            result["xdp_first_ns_per_frame"] - result["xdp_ns_per_frame"])


def test_a_session_made_costs_more_than_one_found(tmp_path):
    """The NAT makes a mapping and a session on each flow's first frame, macswap nothing: only the NAT's first pass
    costs more than its later ones (475 ns natively and 316-379 in XDP here, macswap's within 5 ns)."""
    rules = tmp_path / "nat.rules"
    rules.write_text(cases.nat_on_a_stick())
    nat_native, nat_xdp = _first_over_steady("nat", ["--rules", str(rules)])
    swap_native, swap_xdp = _first_over_steady("macswap", [])
    assert nat_native > swap_native + 150 and nat_xdp > swap_xdp + 100


def test_new_sessions_are_priced_only_where_every_frame_is_new(tmp_path):
    classes = run_xnf(["cost", "macswap", "--class", "a:share=0.5,flows=10", "--class", "b:share=0.5,flows=3",
                       "--sessions", "new"], timeout=60)
    assert classes.returncode == 1 and "a mix of one class" in classes.stderr
    one = run_xnf(["cost", "macswap", "--mix", "legit:share=1,flows=10", "--sessions", "new", "--json"], timeout=60)
    assert one.returncode == 0 and json.loads(one.stdout)["frames"] == 10, one.stderr   # a mix of one class is one
    repeated = run_xnf(["cost", "macswap", "--flows", "100", "--frames", "200", "--sessions", "new"], timeout=60)
    assert repeated.returncode == 1 and "give at most 100" in repeated.stderr
    verified = run_xnf(["advise", "macswap", "--sessions", "new", "--verify"], timeout=60)
    assert verified.returncode == 1 and "--verify measures established flows" in verified.stderr

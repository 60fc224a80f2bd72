"""Every benchmark study runs through `xnf bench run` in its smallest form, on real veth pairs, and writes a
results file whose samples cover each subject it names with frames actually completed (not a benchmark:
the numbers are only checked to be there and non-zero)."""

from __future__ import annotations

import csv
import json

import pytest

from lab_helpers import run_xnf
from xnf.bench.studies import capture_cost, continuity, local_app_load, mixed_traffic, stack_forwarding
from xnf.lab import bpf_maps, paths
from xnf.service import apply as applying

USER = paths.find("afxdp").key   # the user-space path on this kernel's default transmit path
# Studies of live frames themselves: what they measure this kernel must run.
NEEDS = {"generator-reference": ("live_frames",), "live-tx": ("live_frames",)}
UPF_PATHS = "xdp,afxdp-poll,chain-split"
CASES = {  # study: (its smallest options, the subjects it must measure, the sample field that says it did)
    "xdp-overhead": (["--rounds", "1", "--seconds", "0.3"], {"xnf-drop", "hand-drop", "xnf-macswap", "hand-macswap"}),
    "generator-reference": (["--rounds", "1", "--seconds", "0.3", "--placements", "shared"],
                            {"xnf-gen stamp=1/64 batch=64", "reference batch=64"}),
    "afxdp-modes": (["--rounds", "1", "--seconds", "0.3", "--only", "afxdp,reference loop"],
                    {"afxdp", "reference loop"}),
    "live-tx": (["--rounds", "1", "--seconds", "0.3", "--no-dpdk"],
                {"afxdp rx-drop", "afxdp live macswap", "afxdp xsk macswap", "xdp macswap"}),
    "mixed-traffic": (["--rounds", "1", "--seconds", "0.3", "--shares", "0.5"],
                      set(mixed_traffic.SUBJECTS), "legit_mpps"),
    "local-app": (["--rounds", "1", "--seconds", "1", "--load-kpps", "50"], set(local_app_load.SUBJECTS), "tps"),
    "dispatch": (["--rounds", "1", "--seconds", "0.3"], {"none", "software", "queue"}),
    "capture-cost": (["--rounds", "1", "--seconds", "0.3"],
                     {f"{m} {s}" for m in capture_cost.MODES for s in capture_cost.STATES}),
    "frame-prefetch": (["--rounds", "1", "--seconds", "0.3", "--cases", "macswap", "--measure", "rate"],
                       {"yardstick", f"macswap {USER} prefetch rate", f"macswap {USER} no-prefetch rate"}),
    "nf-cost": (["--rounds", "1", "--frames", "64", "--repeat", "5"],
                {"macswap", "firewall", "firewall-10k", "lb", "router", "checksum-16", "memload-16M", "chain"},
                "native_ns"),
    "af-packet": (["--rounds", "1", "--seconds", "0.3"], {"af_packet-v2", "af_packet-v3", "af_xdp", "xdp"}),
    "stack-forwarding": (["--rounds", "1", "--seconds", "0.3"], set(stack_forwarding.subjects())),
    "goodput": (["--rounds", "1", "--seconds", "1", "--only", "router/tc,lb/afxdp,nat/tc"],
                {"linux", "nftables", "router/tc", f"lb/{USER}", "nat/tc"}, "http_rps"),
    "nodes": (["--rounds", "1", "--seconds", "0.3", "--nodes", "1,2"], {"1 node", "2 nodes"}),
    "soak": (["--minutes", "0.05", "--sample-seconds", "1", "--churn-per-s", "20"],
             {"firewall-xdp", "firewall-afxdp", "lb-xdp", "lb-afxdp"}),
    "acl-rules": (["--rounds", "1", "--seconds", "0.3", "--counts", "10", "--shapes", "prefixes", "--paths", "xdp"],
                  {"nftables 10 prefixes", "xdp 10 prefixes"}),
    "nat-rates": (["--rounds", "1", "--seconds", "0.3", "--scenarios", "established", "--paths", "xdp"],
                  {"nftables established", "xdp established"}),
    "conntrack-rates": (["--rounds", "1", "--seconds", "0.3", "--scenarios", "established,new", "--paths", "xdp,tc"],
                        {"nftables established", "xdp established", "tc established", "nftables new", "xdp new",
                         "tc new", "xdp-redirect established", "xdp-stateless established",
                         "tc-stateless established"}),
    "upf-paths": (["--rounds", "1", "--seconds", "0.3", "--sessions", "10", "--paths", UPF_PATHS, "--no-advice"],
                  {f"{d} 10 {p}" for d in ("uplink", "downlink") for p in UPF_PATHS.split(",")}),
    "senders": (["--rounds", "1", "--seconds", "0.3"], {"tc", "socket", "ref-mmsg", "ref-tpacket", "ref-afxdp"}),
}


@pytest.mark.parametrize("study", [pytest.param(s, marks=pytest.mark.kernel(*NEEDS.get(s, ()))) for s in sorted(CASES)])
def test_a_study_runs_and_writes_its_results(study, tmp_path):
    options, subjects, *metric = CASES[study]
    ran = run_xnf(["bench", "run", study, "--out", str(tmp_path), *options], timeout=300)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("*.json")
    doc = json.loads(results.read_text())
    assert doc["environment"]["kernel"] and doc["command"]
    measured = {s["subject"] for s in doc["samples"] if s[metric[0] if metric else "mpps"] > 0}
    assert subjects <= measured, subjects - measured
    rows = list(csv.DictReader(results.with_suffix(".csv").open()))
    assert rows and "subject" in rows[0]
    assert doc.get("yardstick") is None or doc["yardstick"] in measured


def test_a_study_refuses_what_it_does_not_take():
    wrong = run_xnf(["bench", "run", "live-tx", "--frobnicate"])
    assert wrong.returncode == 2 and "unrecognized arguments: --frobnicate" in wrong.stderr
    grid_option = run_xnf(["bench", "run", "smoke", "--rounds", "3"])
    assert grid_option.returncode == 1 and "a grid benchmark takes --set KEY=VALUE" in grid_option.stderr
    wrong_key = run_xnf(["bench", "run", "smoke", "--set", "colour=blue"])
    assert wrong_key.returncode == 1 and "no setting 'colour'" in wrong_key.stderr
    wrong_loss = run_xnf(["bench", "run", "smoke", "--loss", "2"])
    assert wrong_loss.returncode == 1 and "--loss: a share" in wrong_loss.stderr


def test_a_grid_runs_as_the_user_changed_it(tmp_path):
    config = tmp_path / "mine.toml"
    config.write_text('modes = ["xdp"]\nrepetitions = 3\n[params]\nsize = [128]\n')
    ran = run_xnf(["bench", "run", "smoke", "--out", str(tmp_path), "--config", str(config),
                   "--set", "repetitions=1", "--seconds", "0.2", "--loss", "0.01"], timeout=300)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("smoke-*.json")
    doc = json.loads(results.read_text())
    bench = doc["benchmark"]
    assert (bench["modes"], bench["params"], bench["repetitions"], bench["seconds"], bench["loss_threshold"]) == \
        (["xdp"], {"size": [128]}, 1, 0.2, 0.01)          # the command line won over the file
    [row] = doc["summary"]
    assert row["size"] == 128 and row["samples"] == 1
    assert row["ndr_mean_mpps"] > 0 and row["mean_mpps"] > 0   # no loss at all, beside at most 1 %


def test_the_worker_settings_and_queue_counts_of_the_reproduction_grids_reach_the_nf(tmp_path):
    """ring-size sets --ring-size, batch-latency --batch, and two queues get two workers: each run's NF is started
    with them (a wrong one would refuse to start and fail the run)."""
    config = tmp_path / "two.toml"
    config.write_text('modes = ["afxdp"]\nrepetitions = 1\nseconds = 0.2\n[params]\ngen_cores = [[0, 1]]\n')
    for name, options in (("ring-size", ["--set", "nf_params.ring_size=256"]),
                          ("batch-latency", ["--set", "nf_params.nf_batch=8"]), ("queues", ["--config", str(config)])):
        ran = run_xnf(["bench", "run", name, "--out", str(tmp_path), "--set", "repetitions=1", "--seconds", "0.2",
                       *options], timeout=300)
        assert ran.returncode == 0, ran.stderr
        [results] = tmp_path.glob(f"{name}-*.json")
        [row] = json.loads(results.read_text())["summary"]
        assert row["mean_mpps"] > 0 and row["samples"] == 1


def test_frame_prefetch_measures_what_the_frames_cost_the_worker_in_both_builds(tmp_path):
    """The cost measurement: both builds forward the offered frames on afxdp-poll, and the worker core's busy
    time per frame is read for each (a variant that did not run, or a worker that did no work, would show none)."""
    ran = run_xnf(["bench", "run", "frame-prefetch", "--out", str(tmp_path), "--rounds", "1", "--cases", "macswap",
                   "--measure", "cost", "--cost-mpps", "0.2", "--cost-seconds", "1"], timeout=300)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("frame_prefetch-*.json")
    doc = json.loads(results.read_text())
    costs = {s["build"]: s for s in doc["samples"] if s.get("kind") == "cost"}
    assert set(costs) == {"prefetch", "no-prefetch"}
    for sample in costs.values():
        assert sample["path"] == paths.find("afxdp-poll").key and sample["sent"] >= 150000
        assert sample["loss_ratio"] < 0.01 and sample["worker_ns_per_frame"] > 0
    [gain] = doc["summary"]["gains"]
    assert gain["measured"] == "cost" and gain["prefetch_over_without"] > 0


def test_continuity_counts_every_datagram_through_every_event(tmp_path):
    """The continuity study in its smallest form: every event gets its window, nothing but the AF_XDP kill loses a
    datagram on the way (a drop in the receiving host's own socket is counted apart) or one of xnf-gen's frames, the
    TCP connection is never reset and the first mappings are kept. xnf-gen goes at a modest rate here: what half
    the capacity costs is the benchmark's to measure (docs/results.md), not a test's to assert."""
    ran = run_xnf(["bench", "run", "continuity", "--out", str(tmp_path), "--rounds", "1", "--seconds", "2",
                   "--pps", "2000", "--gen-pps", "20000", "--tcp-mbit", "20"], timeout=900)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("continuity-*.json")
    doc = json.loads(results.read_text())
    rows = {row["event"]: row for row in doc["events"]}
    assert list(rows) == ["none", "reload", "restart", "upgrade", "kill", "to-afxdp", "afxdp-none", "afxdp-reload",
                          "afxdp-restart", "afxdp-kill", "to-xdp"]
    assert doc["gen_pps"] == 20000 and min(doc["capacity_pps"].values()) > 20000, doc
    for name, row in rows.items():
        assert row["sent"] >= 4000 and row["unfinished"] == 0, row
        assert row["gen_sent"] >= doc["gen_pps"], row
        if name != "afxdp-kill":
            assert row["lost"] - row["lost_at_receiver"] == 0 and row["gen_lost"] == 0, row
    assert not doc["tcp_reset"] and doc["mappings_kept"] and doc["mappings_before"] >= 1, doc
    assert not applying.log_path(continuity.INSTANCE).exists(), "a run that went well leaves no service log"


def _answered_entries(map_name: str) -> tuple[int, int]:
    """(entries, entries whose connection has seen a reply) in the newest BPF hash map of that name."""
    dump = bpf_maps.entries(map_name)
    return len(dump), sum(1 for e in dump if e["value"]["seen_reply"] & 1)   # as BTF names it; bit 0 XNF_CT_REPLIED


@pytest.mark.parametrize("scenario", ["established", "established-tcp"])
def test_conntrack_rates_establishes_every_flow_before_the_clock(scenario, tmp_path):
    """The established flows are established in the DUT's table: each opened from inside and answered from outside,
    none of the answers lost (sent flat out, most were, and most flows stayed new); TCP's through their windows."""
    from xnf.bench.study import Place
    from xnf.bench.studies import conntrack_rates
    from xnf.lab.topology import Topology
    from xnf.lab.xdp_subject import detach

    with Topology("two-port", gen_xdp="drop") as t:
        nf = conntrack_rates._dut(t, "xdp", Place(tmp_path))
        t.pin_dut_receive(conntrack_rates.DUT_CORE)   # as the study's trials: receive in NAPI threads on one core
        try:
            tries = conntrack_rates._establish(t, conntrack_rates._proto(scenario))
            entries, answered = _answered_entries("acl_ct")
        finally:
            detach(nf)
    assert tries >= 2
    assert (entries, answered) == (conntrack_rates.ESTABLISHED_FLOWS, conntrack_rates.ESTABLISHED_FLOWS)


def test_conntrack_rates_gives_a_frames_cost_where_the_frames_fill_the_trial(tmp_path):
    """The DUT core's busy time per frame for flows flat out, beside the rate; none for the burst of new connections,
    whose short window the lab's own process starts would fill."""
    ran = run_xnf(["bench", "run", "conntrack-rates", "--out", str(tmp_path), "--rounds", "1", "--seconds", "0.5",
                   "--scenarios", "established,new", "--paths", "xdp", "--no-bounds"], timeout=300)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("*.json")
    doc = json.loads(results.read_text())
    cost = {s["subject"]: s["core1_ns_per_frame"] for s in doc["samples"]}
    assert cost["nftables new"] is None and cost["xdp new"] is None
    assert cost["nftables established"] > 0 and cost["xdp established"] > 0
    rows = {row["subject"]: row for row in doc["summary"]}
    assert rows["xdp established"]["core1_ns_per_frame"] == cost["xdp established"]
    assert "core1_ns_per_frame" not in rows["xdp new"]
    assert "ns a frame" in ran.stdout

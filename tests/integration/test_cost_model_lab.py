"""The cost model on real veth pairs: a profile fitted by `model-fit` in its smallest form, checked by
`model-check` and `advisor-check`, and `xnf advise` answering from it (and measuring its pick with --verify).
Not benchmarks: the numbers are checked to be there, consistent with each other and with what was measured."""

from __future__ import annotations

import json

import pytest

from lab_helpers import run_xnf
from xnf import contract, control
from xnf.argv_words import option_value
from xnf.lab import paths
from xnf.lab.nf_process import NfInstance
from xnf.model.cases import GEN_MAC
from xnf.model import profile as profiles

# One path of each kind, the workers on this kernel's default transmit path (live frames where it runs them).
USER = paths.find("afxdp").key
FIT_PATHS = ",".join(paths.representative())
ATTACK_MIX = "legit:share=0.75,flows=16,vary=sport; attack:saddr=203.0.113.0/28,share=0.25"
FIREWALL_RULES = "".join(f"drop udp 203.0.113.{i} 9 198.18.0.2 9\n" for i in range(16))


@pytest.fixture(scope="module")
def fitted(tmp_path_factory):
    """A profile fitted from two task costs and the drop NF on three paths, one round (about a minute)."""
    out = tmp_path_factory.mktemp("fit")
    ran = run_xnf(["bench", "run", "model-fit", "--rounds", "1", "--seconds", "0.3", "--points",
                   "cycles-0,cycles-3000,drop", "--paths", FIT_PATHS, "--no-install", "--out", str(out)], timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = out.glob("model_fit-*.json")
    [profile_file] = out.glob("profile-*.json")
    return json.loads(results.read_text()), profile_file


@pytest.fixture
def isolated_profile(tmp_path, monkeypatch):
    """Where `xnf advise` and the checks look by default, empty: nothing of the machine's own is read or written."""
    path = tmp_path / "installed-profile.json"
    monkeypatch.setenv("XNF_PROFILE", str(path))
    return path


def test_the_fit_measures_every_point_on_every_path_and_writes_a_profile(fitted):
    doc, profile_file = fitted
    measured = {(s["point"], s["path"]) for s in doc["samples"] if s["mpps"] > 0}
    assert {(p, k) for p in ("cycles-0", "cycles-3000", "drop") for k in FIT_PATHS.split(",")} <= measured
    assert any(s["point"] == "yardstick" and s["mpps"] > 0 for s in doc["samples"])
    # every rate bracketed by the cores' round trip, just before and after its search
    assert all(len(s["round_trip_ns"]) == 2 and min(s["round_trip_ns"]) > 0 for s in doc["samples"] if s["path"])
    profile = profiles.load(profile_file)
    assert profile.source == "measured" and set(profile.paths) == set(FIT_PATHS.split(","))
    assert profile.yardsticks["hand_macswap_mpps"] > 0
    for key, path in profile.paths.items():
        assert path.task_scale > 0 and all(r.fixed_ns["forward"] > 0 for r in path.roles.values()), key
        assert path.fit["points"] == 2
    # the heavy point is slower than the light one on every path, as measured, but where both sat on the other
    # role's time (hybrid on the xsk ring): that path takes its scale from the one with the NF on the same role
    rows = {(r["point"], r["path"]): r for r in doc["fit_table"]}
    for key in FIT_PATHS.split(","):
        donor = profile.paths[key].fit.get("scale_from")
        assert donor or rows[("cycles-3000", key)]["y_ns"] > rows[("cycles-0", key)]["y_ns"], key
        assert donor in (None, *FIT_PATHS.split(",")) and profile.paths[key].task_scale > 0
        assert rows[("cycles-3000", key)]["x_ns"] > rows[("cycles-0", key)]["x_ns"] == 0


def test_a_refit_fits_the_same_samples_again_without_measuring(fitted, isolated_profile, tmp_path):
    doc, profile_file = fitted
    ran = run_xnf(["bench", "run", "model-fit", "--refit", str(next(profile_file.parent.glob("model_fit-*.json"))),
                   "--no-install", "--out", str(tmp_path)], timeout=120)
    assert ran.returncode == 0, ran.stderr
    [again] = tmp_path.glob("model_fit-*.json")
    redone = json.loads(again.read_text())
    assert redone["samples"] == doc["samples"] and redone["environment"] == doc["environment"]
    assert redone["profile"]["paths"] == doc["profile"]["paths"]      # the fit has not changed since
    assert doc["profile"]["statistic"] == "best"                         # the default: the best of the rounds
    ran = run_xnf(["bench", "run", "model-fit", "--refit", str(next(profile_file.parent.glob("model_fit-*.json"))),
                   "--statistic", "median", "--no-install", "--out", str(tmp_path / "median")], timeout=120)
    assert ran.returncode == 0, ran.stderr
    [median] = (tmp_path / "median").glob("profile-*.json")
    assert profiles.load(median).statistic == "median" and "medians of the rounds" in profiles.load(median).description
    bad = run_xnf(["bench", "run", "model-fit", "--refit", str(profile_file), "--out", str(tmp_path)])
    assert bad.returncode != 0 and "is not a model-fit results file" in bad.stderr + bad.stdout
    assert "Traceback" not in bad.stderr


def at_both_placements(samples: list[dict], far_factor: float) -> list[dict]:
    """The samples as if measured at the near placement, and a copy of each rate at the far one, far_factor of it."""
    near = [dict(s, round_trip_ns=[250.0, 260.0]) if s.get("round_trip_ns") else s for s in samples]
    far = [dict(s, round_trip_ns=[1300.0, 1250.0], mpps=s["mpps"] * far_factor) for s in samples
           if s.get("round_trip_ns")]
    return near + far


def test_a_fit_at_the_near_placement_keeps_what_the_far_one_cost(fitted, isolated_profile, tmp_path):
    doc, _ = fitted
    doctored = tmp_path / "model_fit-both-placements.json"
    doctored.write_text(json.dumps({**doc, "samples": at_both_placements(doc["samples"], 0.8)}))
    ran = run_xnf(["bench", "run", "model-fit", "--refit", str(doctored), "--placement", "near", "--no-install",
                   "--out", str(tmp_path / "near")], timeout=120)
    assert ran.returncode == 0, ran.stderr
    [refit] = (tmp_path / "near").glob("model_fit-*.json")
    redone = json.loads(refit.read_text())
    assert redone["profile"]["paths"] == doc["profile"]["paths"]          # the far copies were left out
    # a far copy at 0.8 of the rate: every path's roles take more time per frame there, none less
    adds = redone["profile"]["placement"]["far_adds_ns"]
    assert set(adds) == set(FIT_PATHS.split(","))
    for key, path in redone["profile"]["paths"].items():
        assert set(adds[key]) == set(path["roles"]) and max(adds[key].values()) > 0, key
        assert all(0 <= ns <= 400 for ns in adds[key].values()), key
    probed = sum(1 for s in doc["samples"] if s["path"])
    assert redone["placement"]["measurements"] == {"near": probed, "far": probed, "mixed": 0}
    only_far = run_xnf(["bench", "run", "model-fit", "--refit", str(doctored), "--placement", "far", "--no-install",
                        "--out", str(tmp_path / "far")], timeout=120)
    assert only_far.returncode == 0, only_far.stderr    # the far copies alone fit too: every point is there


def test_advise_answers_from_the_profile_and_its_pick_is_measured(fitted, isolated_profile, tmp_path):
    _, profile_file = fitted
    rules = tmp_path / "fw.rules"
    rules.write_text(FIREWALL_RULES)
    out = run_xnf(["advise", "firewall", "--rules", str(rules), "--mix", ATTACK_MIX, "--profile", str(profile_file),
                   "--rounds", "1", "--verify", "2", "--json"], timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    labels = [c["label"] for c in answer["candidates"]]
    assert set(FIT_PATHS.split(",")) <= set(labels) and f"offload {USER}" in labels   # the firewall has drop rules
    assert answer["task"]["drop_share"] == pytest.approx(0.25, abs=0.01)
    assert answer["recommendation"]["label"] == labels[0]
    assert [c["mpps"] for c in answer["candidates"]] == sorted((c["mpps"] for c in answer["candidates"]),
                                                               reverse=True)
    verified = [c for c in answer["candidates"] if "measured_mpps" in c]
    assert len(verified) == 2 and all(c["measured_mpps"] > 0 for c in verified)
    assert answer["verification"]["fastest"] in {c["label"] for c in verified}
    assert not isolated_profile.exists()


def test_advise_puts_bulk_tcp_from_containers_at_tc_and_a_64_byte_flood_in_xdp(fitted, isolated_profile, tmp_path):
    """The same router, two mixes, a profile of the kernel's two hooks: a flood of 64-byte frames is picked for XDP
    and bulk TCP in 64 KiB segments for tc (one skb a segment, where XDP sees 45 frames); --verify measures both
    candidates of each, RFC 2544 for the flood and iperf3 between the lab's containers for the segments, and the
    pick is the faster as measured."""
    _, profile_file = fitted
    hooks = tmp_path / "profile-xdp-tc.json"
    doc = json.loads(profile_file.read_text())
    hooks.write_text(json.dumps({**doc, "paths": {k: v for k, v in doc["paths"].items() if k in paths.kernel_hooks()}}))
    rules = tmp_path / "router.rules"
    rules.write_text(f"route 198.18.0.0/16 via {GEN_MAC} port 0\n")
    answers = {}
    for name, mix in (("flood", []), ("bulk", ["--mix", "--segment 65160"])):
        out = run_xnf(["advise", "router", "--rules", str(rules), *mix, "--profile", str(hooks), "--rounds", "1",
                       "--verify", "2", "--json"], timeout=400)
        assert out.returncode == 0, out.stderr
        answers[name] = json.loads(out.stdout)
    flood, bulk = answers["flood"], answers["bulk"]
    assert flood["recommendation"]["label"] == "xdp" and bulk["recommendation"]["label"] == "tc"
    assert bulk["segments"] == {"payload": 65160, "frame": 1518, "ip_version": 4}
    for answer, unit in ((flood, "mpps"), (bulk, "gbit_s")):
        measured = {c["label"]: c[f"measured_{unit}"] for c in answer["candidates"]}
        assert set(measured) == set(paths.kernel_hooks()) and min(measured.values()) > 0
        assert answer["verification"]["fastest"] == answer["recommendation"]["label"]
        assert answer["verification"]["pick_holds"]
    assert bulk["verification"]["streams"] == 1 and len(bulk["verification"]["yardstick_gbit_s"]) == 3


def test_advise_on_a_chain_weighs_its_split_points(fitted, isolated_profile):
    _, profile_file = fitted
    out = run_xnf(["advise", "chain:firewall,checksum", "--profile", str(profile_file), "--rounds", "1",
                   "--frames", "256", "--json"], timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert f"split firewall@xdp | checksum@{USER}" in [c["label"] for c in answer["candidates"]]
    assert [m["nf"] for m in answer["task"]["members"]] == ["firewall", "checksum"]


def test_advise_moves_a_running_instance_to_its_pick(fitted, isolated_profile, bpffs, tmp_path, monkeypatch, pair):
    """--move NAME: the macswap running in tc with --state is moved to the recommended path, with the options that
    path takes; where the pick is tc itself, or a mode that cannot take state over, it stays and says why."""
    _, profile_file = fitted
    monkeypatch.setenv("XNF_RUN_DIR", str(tmp_path / "run"))
    nf = NfInstance.start(pair, "macswap", "tc", ["dut0"], name="edge-swap",
                          extra=["--state", str(bpffs / "edge-swap")])
    out = run_xnf(["advise", "macswap", "--profile", str(profile_file), "--rounds", "1", "--frames", "256",
                   "--move", "edge-swap", "--json"], timeout=300)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    pick = answer["candidates"][0]
    mode = option_value(pick["run"], "--mode")
    if mode == "tc":
        assert "runs in tc already" in answer["move"]
    elif not contract.mode(mode)["keeps_state"]:
        assert "cannot take its state over yet" in answer["move"]
    else:
        assert answer["move"].startswith(f"moved edge-swap from tc to {mode}"), answer["move"]
        assert nf.process.wait(timeout=10) == 0
    info = control.request_json("edge-swap", "info")
    assert info["mode"] == (mode if contract.mode(mode)["keeps_state"] else "tc")
    assert run_xnf(["stop", "--name", "edge-swap", "--drop-state"], ns=pair.dut_ns, timeout=60).returncode == 0
    wrong = run_xnf(["advise", "firewall", "--profile", str(profile_file), "--move", "edge-swap"])
    assert wrong.returncode == 1 and "no running instance named 'edge-swap'" in wrong.stderr, wrong.stderr


def test_model_check_validates_a_copy_of_the_profile(fitted, isolated_profile, tmp_path):
    _, profile_file = fitted
    ran = run_xnf(["bench", "run", "model-check", "--profile", str(profile_file), "--rounds", "1", "--seconds", "0.3",
                   "--cases", "checksum-16,firewall-attack", "--paths", f"xdp,{USER}", "--out", str(tmp_path)],
                  timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("model_check-*.json")
    doc = json.loads(results.read_text())
    assert {(r["case"], r["path"]) for r in doc["summary"]} == \
        {(c, k) for c in ("checksum-16", "firewall-attack") for k in ("xdp", USER)}
    for row in doc["summary"]:
        assert row["measured_mpps"] > 0 and row["predicted_mpps"] > 0
        # both rates are rounded to 4 places in the file: their ratio is known to a part in a thousand
        assert row["error"] + 1 == pytest.approx(row["predicted_mpps"] / row["measured_mpps"], rel=1e-3)
    [validated] = tmp_path.glob("profile-validated-*.json")
    checked = profiles.load(validated)
    assert checked.validation["cases"] == 4 and set(checked.paths) == set(FIT_PATHS.split(","))
    assert not isolated_profile.exists()          # a profile given by --profile is not installed
    # judged again from its samples: nothing measured, the same predictions and errors
    again = run_xnf(["bench", "run", "model-check", "--profile", str(profile_file), "--from", str(results),
                     "--paths", f"xdp,{USER}", "--out", str(tmp_path / "again")], timeout=120)
    assert again.returncode == 0, again.stderr
    [rejudged] = (tmp_path / "again").glob("model_check-*.json")
    assert json.loads(rejudged.read_text())["summary"] == doc["summary"]
    # the same samples with a far copy of each: judged at the near placement, the far copies are left out
    doctored = tmp_path / "model_check-both-placements.json"
    doctored.write_text(json.dumps({**doc, "samples": at_both_placements(doc["samples"], 0.5)}))
    for placement, same in (("near", True), ("all", False)):
        out = tmp_path / placement
        judged = run_xnf(["bench", "run", "model-check", "--profile", str(profile_file), "--from", str(doctored),
                          "--paths", f"xdp,{USER}", "--placement", placement, "--out", str(out)], timeout=120)
        assert judged.returncode == 0, judged.stderr
        [summary] = [json.loads(f.read_text())["summary"] for f in out.glob("model_check-*.json")]
        assert (summary == doc["summary"]) == same, placement
    # judged each at its own level: the far copies against the prediction with the path's far time added, a
    # measurement whose probes disagree left out; a profile fitted on the medians of every placement's rounds keeps
    # no far time to add
    medians = tmp_path / "profile-medians.json"
    medians.write_text(json.dumps({**json.loads(profile_file.read_text()), "statistic": "median",
                                   "placement": {"kept": "all"}}))
    refused = run_xnf(["bench", "run", "model-check", "--profile", str(medians), "--from", str(doctored),
                       "--paths", f"xdp,{USER}", "--placement", "each", "--out", str(tmp_path / "refused")])
    assert refused.returncode != 0 and "a profile of the near placement" in refused.stderr + refused.stdout
    assert "Traceback" not in refused.stderr
    near_fitted = tmp_path / "profile-near.json"
    adds = {"xdp": {"sender": 0.0}, USER: {"sender": 80.0, "worker": 80.0}}
    near_fitted.write_text(json.dumps({**json.loads(profile_file.read_text()),
                                       "placement": {"kept": "near", "far_adds_ns": adds}}))
    mixed = [dict(s, round_trip_ns=[250.0, 1300.0]) for s in doc["samples"] if s["path"]]
    doctored.write_text(json.dumps({**doc, "samples": at_both_placements(doc["samples"], 0.5) + mixed}))
    judged = run_xnf(["bench", "run", "model-check", "--profile", str(near_fitted), "--from", str(doctored),
                      "--paths", f"xdp,{USER}", "--placement", "each", "--out", str(tmp_path / "each")], timeout=120)
    assert judged.returncode == 0, judged.stderr
    [each] = [json.loads(f.read_text()) for f in (tmp_path / "each").glob("model_check-*.json")]
    assert all(r["rounds"] == 2 for r in each["summary"])          # near and far; the mixed left out
    assert each["placement"]["kept"] == "each"
    at = {(s["case"], s["path"], s["placement"]): s["predicted_mpps"] for s in each["samples"]
          if s["path"] and s["placement"] != "mixed"}
    for (case, key, level), mpps in at.items():
        if level == "far":   # every role 80 ns more a frame on the user-space path; firewall-attack's drops cross too
            assert mpps == pytest.approx(1e3 / (1e3 / at[(case, key, "near")] + adds[key]["sender"]), rel=1e-3)


def test_advisor_check_measures_every_candidate_it_weighs(fitted, isolated_profile, tmp_path):
    _, profile_file = fitted
    ran = run_xnf(["bench", "run", "advisor-check", "--profile", str(profile_file), "--rounds", "1", "--seconds",
                   "0.3", "--cases", "firewall-16/attack-50", "--paths", f"xdp,{USER}", "--out", str(tmp_path)],
                  timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("advisor_check-*.json")
    doc = json.loads(results.read_text())
    assert {r["candidate"] for r in doc["summary"]} == {"xdp", USER, f"offload {USER}"}
    [verdict] = doc["verdicts"]
    rows = {r["candidate"]: r for r in doc["summary"]}
    assert verdict["pick"] == max(rows, key=lambda k: rows[k]["predicted_mpps"])
    assert verdict["fastest"] == max(rows, key=lambda k: rows[k]["relative"])
    assert verdict["plain_fastest"] == max(rows, key=lambda k: rows[k]["measured_mpps"])
    # one round is one block: judged against it or on the plain rates, the same candidate is fastest
    assert verdict["fastest"] == verdict["plain_fastest"]


def test_what_the_advisor_cannot_do_it_says(isolated_profile, tmp_path):
    missing = run_xnf(["advise", "firewall", "--profile", str(tmp_path / "nowhere.json")])
    assert missing.returncode == 1 and "model-fit" in missing.stderr and "Traceback" not in missing.stderr
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    wrong = run_xnf(["advise", "firewall", "--profile", str(broken)])
    assert wrong.returncode == 1 and "not an xnf machine profile" in wrong.stderr
    bad_mix = run_xnf(["advise", "firewall", "--profile", str(broken), "--mix", "--rate 5"])
    assert bad_mix.returncode == 1 and "not --rate" in bad_mix.stderr
    both = run_xnf(["advise", "firewall", "--verify", "--cores", "4"])
    assert both.returncode == 1 and "leave out --cores" in both.stderr
    padded = run_xnf(["advise", "router", "--profile", str(broken), "--mix", "--segment 065160"])
    assert padded.returncode == 1 and "plain decimal" in padded.stderr and "Traceback" not in padded.stderr
    unruled = run_xnf(["advise", "firewall", "--profile", str(broken), "--mix", "--segment 65160", "--verify"])
    assert unruled.returncode == 1 and "not 'firewall'" in unruled.stderr


def test_new_sessions_are_judged_as_new_over_established(fitted, tmp_path):
    """The NAT's flows opened (every frame a mapping) and then found, on two paths: each trial makes every mapping,
    and the summary sets the measured new-over-established beside the advisor's two predictions."""
    _, profile_file = fitted
    flows = 2000
    ran = run_xnf(["bench", "run", "new-sessions", "--profile", str(profile_file), "--rounds", "1", "--seconds", "0.3",
                   "--flows", str(flows), "--paths", f"xdp,{USER}", "--out", str(tmp_path)], timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = tmp_path.glob("new_sessions-*.json")
    doc = json.loads(results.read_text())
    assert {s["subject"] for s in doc["samples"]} == {"xdp", USER}
    for sample in doc["samples"]:
        assert sample["made"] == flows and sample["refused"] == 0
        assert sample["new_mpps"] > 0 and sample["established_mpps"] > 0
    for row in doc["summary"]:
        assert row["predicted_ratio"] == pytest.approx(row["predicted_new_mpps"] / row["predicted_established_mpps"],
                                                       rel=1e-3)
        assert row["ratio_error"] + 1 == pytest.approx(row["predicted_ratio"] / row["measured_ratio"], rel=1e-3)
    # a session made costs the NAT more than one found, on both sides (xnf cost's first pass)
    c_task = doc["c_task"]
    assert c_task["new"]["native_ns_over_baseline"] > c_task["established"]["native_ns_over_baseline"]
    assert c_task["new"]["xdp_ns_over_baseline"] > c_task["established"]["xdp_ns_over_baseline"]
    refused = run_xnf(["bench", "run", "new-sessions", "--profile", str(profile_file), "--flows", "70000"])
    assert refused.returncode != 0 and "--flows from 1,024 to 60,000" in refused.stderr
    # the stateful acl: a connection made per flow, priced the same way
    acl_out = tmp_path / "acl"
    ran = run_xnf(["bench", "run", "new-sessions", "--nf", "acl", "--profile", str(profile_file), "--rounds", "1",
                   "--seconds", "0.3", "--flows", str(flows), "--paths", "xdp", "--out", str(acl_out)], timeout=600)
    assert ran.returncode == 0, ran.stderr
    [results] = acl_out.glob("new_sessions-*.json")
    doc = json.loads(results.read_text())
    assert doc["nf"] == "acl" and [(s["made"], s["refused"]) for s in doc["samples"]] == [(flows, 0)]

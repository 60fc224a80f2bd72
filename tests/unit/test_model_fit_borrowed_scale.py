"""model-fit on a path whose every point sat on its other role's time (hybrid on the xsk ring, its worker slower than
the NF's heaviest point in XDP): the points say nothing of the NF's scale, and a line through them finds it below
zero, which would make a heavy NF look free there. The path takes the scale of the path that runs the NF on the same
role and side (xdp), says so, and keeps the measured floor: a heavier NF is predicted slower, never faster."""

from __future__ import annotations

import pytest

from xnf.model import lab_paths, predict, profile_fit

XDP_SENDER_NS, HYBRID_WORKER_NS = 200.0, 1000.0
NF_NS = {"cycles-0": 10.0, "cycles-250": 110.0, "cycles-750": 310.0, "drop": 5.0}
# the worker's time, a little faster at the heavier points by the host's noise alone
HYBRID_NS = {"cycles-0": 1000.0, "cycles-250": 998.0, "cycles-750": 995.0, "drop": 240.0}
ENV = {"started_utc": "2026-12-07T15:00:00Z"}


def hybrid_key() -> str:
    """Hybrid as the lab prices it here (on the transmit path this kernel runs)."""
    return next(k for k, p in lab_paths.PATHS.items() if p.described["datapath"] == "hybrid")


def samples() -> list[dict]:
    out = [{"point": "yardstick", "path": None, "mpps": 4.0, "round": 0}]
    for point, nf_ns in NF_NS.items():
        for path, y_ns in (("xdp", XDP_SENDER_NS + nf_ns - NF_NS["cycles-0"]), (hybrid_key(), HYBRID_NS[point])):
            out.append({"point": point, "path": path, "round": 0, "mpps": 1e3 / y_ns, "xdp_ns": nf_ns,
                        "native_ns": nf_ns, "generator_ns_per_packet": 100.0})
    return out


def test_a_path_on_its_floor_takes_the_scale_of_the_path_with_the_nf_on_the_same_role():
    profile, _ = profile_fit.fit_profile(samples(), ["xdp", hybrid_key()], ENV)
    xdp, hybrid = profile.paths["xdp"], profile.paths[hybrid_key()]
    assert xdp.task_scale == pytest.approx(1.0, rel=1e-3) and "scale_from" not in xdp.fit
    assert hybrid.task_scale == xdp.task_scale and hybrid.fit["scale_from"] == "xdp"
    assert hybrid.roles["worker"].fixed_ns["forward"] == pytest.approx(995.0, rel=1e-3)   # the floor as measured
    light, heavy = (predict.predict(hybrid, predict.Load({"forward": 1.0}, [predict.Part("sender", x, hybrid.task_scale)]))
                    for x in (0.0, 2000.0))
    assert heavy.mpps < light.mpps / 2, (light, heavy)    # 2 us of NF work in XDP halves a 1 us path at least


def test_a_path_without_such_a_path_is_marked_undetermined():
    profile, _ = profile_fit.fit_profile([s for s in samples() if s["path"] != "xdp"], [hybrid_key()], ENV)
    assert profile.paths[hybrid_key()].fit["scale_undetermined"] is True

"""model-fit at one placement: a task point a path was never measured at there is left out of that path's line (and
said so in its fit), while the baseline and the drop point, which the line's fixed times come from, stay required."""

from __future__ import annotations

import pytest

from xnf.model import profile_fit

SENDER_NS = 200.0
XDP_NS = {"cycles-0": 10.0, "cycles-250": 110.0, "cycles-750": 310.0, "drop": 5.0}
ENV = {"started_utc": "2026-11-25T13:00:00Z"}
RUN_MEASURED = list(XDP_NS)     # what the whole run measured: every point, at one placement or another


def samples(leave: tuple[str, ...] = ()) -> list[dict]:
    """One round of XDP measurements on a path that takes exactly 200 ns per frame plus the NF's XDP time."""
    out = [{"point": "yardstick", "path": None, "mpps": 4.0, "round": 0}]
    for point, xdp_ns in XDP_NS.items():
        if point in leave:
            continue
        out.append({"point": point, "path": "xdp", "round": 0, "mpps": 1e3 / (SENDER_NS + xdp_ns - XDP_NS["cycles-0"]),
                    "xdp_ns": xdp_ns, "native_ns": xdp_ns, "generator_ns_per_packet": 100.0})
    return out


def test_a_point_missing_at_the_placement_kept_is_left_out_of_the_paths_line():
    profile, table = profile_fit.fit_profile(samples(leave=("cycles-750",)), ["xdp"], ENV, "near",
                                            RUN_MEASURED)
    xdp = profile.paths["xdp"]
    assert xdp.fit["points_left_out"] == ["cycles-750"]
    assert xdp.fit["points"] == 2 and {r["point"] for r in table} == {"cycles-0", "cycles-250", "drop"}
    # the two points left still give the path's line: 200 ns plus the NF's time over the baseline
    assert xdp.roles["sender"].fixed_ns["forward"] == pytest.approx(SENDER_NS, rel=1e-3)
    assert xdp.task_scale == pytest.approx(1.0, rel=1e-3)


def test_a_path_measured_at_every_point_leaves_nothing_out():
    profile, _ = profile_fit.fit_profile(samples(), ["xdp"], ENV, "near", RUN_MEASURED)
    assert "points_left_out" not in profile.paths["xdp"].fit and profile.paths["xdp"].fit["points"] == 3


@pytest.mark.parametrize("required", ["cycles-0", "drop"])
def test_the_baseline_and_the_drop_point_are_never_left_out(required):
    with pytest.raises(SystemExit, match=f"no measurement of point {required}.* at the placement kept"):
        profile_fit.fit_profile(samples(leave=(required,)), ["xdp"], ENV, "near", RUN_MEASURED)

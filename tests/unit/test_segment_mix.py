"""A segment mix (`xnf advise --mix "--segment BYTES"`): what the mix states is taken exactly or refused, and the
advisor weighs each path by what its hook sees of a segment: one skb at tc, the frames it is cut into at XDP."""

from __future__ import annotations

from dataclasses import replace

import pytest
from hypothesis import given, strategies as st

from xnf import mix
from xnf.errors import XnfError
from xnf.model import advisor, segments
from xnf.model.profile import PathCost, Profile, Role
from xnf.model.task import TaskCost

from test_cost_model import BASELINE, cost, synthetic_profile


def of(text: str):
    return segments.of_words(mix.parse(text, segments=True))


def test_a_segment_mix_gives_tcp_frames_of_a_full_mtu_for_c_task():
    gen, seg = of("--segment 65160 --flows 4")
    assert seg == segments.SegmentMix(65160, 1518, 4)
    assert gen == ["--flows", "4", "--proto", "tcp", "--size", "1518"]
    assert seg.payload_per_frame == 1448            # Linux's MSS at a 1500-byte MTU, with timestamps
    assert (seg.frames_per_segment("tc"), seg.frames_per_segment("xdp")) == (1, 45)


def test_the_frame_size_and_ip_version_shape_the_frames_at_xdp():
    _, seg = of("--segment=9000 --size 1000 --ipv6 --proto tcp")
    assert (seg.frame, seg.ip_version, seg.payload_per_frame) == (1000, 6, 910)
    assert seg.frames_per_segment("xdp") == 10 and seg.payload_per_unit("xdp") == 900


def test_a_mix_without_segments_is_left_as_it_was():
    assert of("--flows 8 --size 128") == (["--flows", "8", "--size", "128"], None)


@pytest.mark.parametrize("text, says", [
    ("--segment 065160", "plain decimal"),
    ("--segment +100", "plain decimal"),
    ("--segment 0x100", "plain decimal"),
    ("--segment 0", "1 to 65,483"),
    ("--segment 65484", "1 to 65,483"),
    ("--segment 100 --segment 200", "--segment is given twice"),
    ("--segment", "needs a number"),
    ("--segment 100 --proto udp", "must be tcp"),
    ("--segment 100 --size 70", "no room"),
    ("--segment 100 --size 01000", "plain decimal"),
])
def test_what_cannot_be_taken_exactly_is_refused_with_why(text, says):
    with pytest.raises(XnfError, match=says):
        of(text)


def test_classes_with_segments_are_refused():
    with pytest.raises(XnfError, match="not classes"):
        segments.of_words(["--class", "legit:share=1", "--segment", "100"])


def test_xnf_cost_is_told_segments_are_for_advise():
    with pytest.raises(XnfError, match="xnf advise"):
        mix.parse("--segment 65160")


@given(text=st.text(max_size=60))
def test_any_segment_value_is_taken_whole_or_refused(text):
    try:
        _, seg = segments.of_words(["--segment", text])
    except XnfError:
        return
    assert str(seg.payload) == text


def with_tc() -> Profile:
    """The synthetic profile and a tc path: 600 ns per skb on the sender, three times XDP's 200 per frame."""
    profile = synthetic_profile()
    tc = PathCost("tc", None, {"sender": Role(1, {"forward": 600, "drop_kernel": 150}, load_ns=50)}, "sender", "xdp",
                  1.2)
    return replace(profile, paths={**profile.paths, "tc": tc})


def test_a_64_byte_flood_belongs_in_xdp_and_bulk_tcp_from_containers_at_tc():
    task = TaskCost(cost("router", 10, 15), BASELINE)
    flood = advisor.advice(with_tc(), "router", task, False)
    assert flood["recommendation"]["label"] == "xdp" and flood["unit"] == "Mpps"
    _, seg = of("--segment 65160")
    bulk = advisor.advice(with_tc(), "router", task, False, segments=seg)
    assert bulk["recommendation"]["label"] == "tc" and bulk["unit"] == "Gbit/s of TCP payload"
    rows = {r["label"]: r for r in bulk["candidates"]}
    # the same prediction in frames (skbs) per second, each carrying a segment at tc and a frame's payload at XDP
    assert rows["tc"]["gbit_s"] == pytest.approx(segments.gbit_s(rows["tc"]["mpps"], 65160), rel=1e-3)
    assert rows["xdp"]["gbit_s"] == pytest.approx(segments.gbit_s(rows["xdp"]["mpps"], 65160 / 45), rel=1e-3)
    assert any("45 frames" in line for line in bulk["reasons"])
    assert advisor.SEGMENTS_UNPRICED in bulk["reasons"]


def test_a_segment_pick_the_measurement_refutes_is_not_the_recommendation(monkeypatch):
    """--verify on a segment mix judges the measured Gbit/s the same way as a frame mix's Mpps."""
    from xnf.model import advise_command

    _, seg = of("--segment 65160")
    answer = advisor.advice(with_tc(), "router", TaskCost(cost("router", 10, 15), BASELINE), False, segments=seg)
    pick, other = answer["candidates"][0]["label"], answer["candidates"][1]["label"]
    rates = {None: [9.0, 9.5, 9.2], 0: [1.0, 1.1, 0.9], 1: [4.0, 4.2, 3.9]}
    v = advise_command._judged(answer["candidates"][:2], rates, 3, "gbit_s")
    assert (v["pick_holds"], v["recommended"], v["fastest"]) == (False, other, other)
    assert answer["candidates"][0]["measured_gbit_s"] == 1.0 and pick == "tc"

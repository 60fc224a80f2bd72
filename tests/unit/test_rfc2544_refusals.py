"""The RFC 2544 search judges a paced trial by what the DUT took of what was offered: on veth a DUT whose receive
ring is full refuses frames to the sender (send_errors) instead of losing them, and those are the DUT's loss. An
unpaced trial offers what the generator put out: refusals there only hold the generator back."""

from __future__ import annotations

from xnf.lab.measure import Trial
from xnf.lab.rfc2544 import search_once

SECONDS = 1.0


def trial(offered_pps: float, sent: float, refused: float, lost: float, achieved_pps: float) -> Trial:
    return Trial(offered_pps=offered_pps, sent=int(sent), send_errors=int(refused), received=int(sent - lost),
                 lost=int(lost), loss_ratio=lost / sent if sent else 0.0, reordered=0, achieved_pps=achieved_pps,
                 frame_bytes=64,
                 seconds=SECONDS, latency_ns={}, cpu={}, dut_ns_per_packet=None, dut_cycles_per_packet=None,
                 generator_ns_per_packet=None)


def refusing_dut(capacity: float, generator_max: float):
    """A DUT that takes `capacity` frames per second and refuses the rest at its port, losing none it took
    (the busy-poll AF_XDP path on veth); unpaced, the generator outruns it and what it sent beyond is lost."""
    def run(rate: float) -> Trial:
        if rate == 0:
            return trial(0, generator_max, 0, generator_max - capacity, generator_max)
        taken = min(rate, capacity)
        return trial(rate, taken, rate - taken, 0, taken)
    return run


def test_a_paced_trial_whose_frames_were_refused_does_not_pass():
    result = search_once(refusing_dut(2.0e6, 4.0e6), loss_threshold=0.01, precision=0.005)
    most = 2.0e6 / (1 - 0.01)   # at most 1 % of what is offered beyond what the DUT takes
    assert 1.95e6 <= result.throughput_pps <= most, result.throughput_pps
    assert all(t.offered_pps <= most for t in result.trials if t.offered_pps and t.passes(0.01))


def test_refusals_count_against_what_was_offered():
    t = trial(4.0e6, 2.0e6, 2.0e6, 0.02e6, 2.0e6)
    assert t.loss_ratio == 0.01 and t.offered_loss_ratio == (0.02e6 + 2.0e6) / 4.0e6
    assert not t.passes(0.02)


def test_an_unpaced_trial_held_back_by_refusals_is_the_dut_s_rate():
    """The hand-written XDP yardstick: the sender's core also runs the DUT's receive, the ring refuses what the
    core cannot take yet, and the generator's rate is what went through: generator-limited, at that rate."""
    flat = trial(0, 4.7e6, 0.3e6, 0, 4.7e6)
    result = search_once(lambda rate: flat if rate == 0 else None, loss_threshold=0.001)
    assert result.generator_limited and result.throughput_pps == 4.7e6


def test_a_passing_trial_is_credited_with_what_the_generator_managed():
    """The generator shares its core with the DUT's receive: offered more than the two manage, it sends the trial's
    frames over a longer time. Nothing is lost, and the rate is what went through, not what was asked."""
    def late_generator(rate: float) -> Trial:
        if rate == 0:
            return trial(0, 4.0e6, 0, 0.2e6, 4.0e6)        # unpaced: loses 5 %
        achieved = min(rate, 3.0e6)
        return trial(rate, rate * SECONDS, 0, 0, achieved)
    result = search_once(late_generator, loss_threshold=0.01, precision=0.005)
    assert result.throughput_pps == 3.0e6


def test_the_soak_search_counts_refusals_against_the_legitimate_class():
    """The soak judges its search on the legitimate class; refused frames carry no class and still count."""
    from xnf.bench.studies.soak import SearchTrial
    assert SearchTrial(2.0e6, 1.0e6, legit_loss_ratio=0.0, refused_ratio=0.5).passes(0.001) is False
    assert SearchTrial(2.0e6, 2.0e6, legit_loss_ratio=0.0, refused_ratio=0.0).passes(0.001) is True
    result = search_once(lambda rate: SearchTrial(rate, min(rate, 1e6) if rate else 3e6, 0.0,
                                                  max(rate - 1e6, 0) / rate if rate else 0.0)
                         if rate else SearchTrial(0, 3e6, 0.5, 0.0), loss_threshold=0.001, precision=0.005)
    assert 0.98e6 <= result.throughput_pps <= 1.0e6 / (1 - 0.001), result.throughput_pps

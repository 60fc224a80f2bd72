"""CPU accounting: busy time is wall time minus the exact idle time; tick samples only split it."""

from __future__ import annotations

import os
import time

from xnf.lab import cpu

TICKS = round(1 / cpu.TICK_S)  # /proc/stat units per second


def snap(t: float, **fields: int) -> cpu.CpuSnapshot:
    values = {f: 0 for f in cpu.FIELDS} | fields
    return cpu.CpuSnapshot({0: values}, t)


def test_busy_time_is_wall_minus_idle_whatever_the_samples_say():
    # 2 s of wall time, 1.5 s idle: 0.5 s busy, though the tick caught only 0.04 s of it (3 : 1).
    usage = cpu.split(snap(10.0), snap(12.0, idle=int(1.5 * TICKS), system=3, softirq=1))[0]
    assert usage["busy"] == 0.5 and usage["idle"] == 1.5 and usage["busy_share"] == 0.25
    assert usage["system"] == 0.375 and usage["softirq"] == 0.125 and usage["user"] == 0.0


def test_oversampled_bursts_cannot_exceed_the_wall_time():
    # The tick may land on every burst: 1.8 s sampled busy in a 2 s window that was 1.6 s idle.
    usage = cpu.split(snap(0.0), snap(2.0, idle=int(1.6 * TICKS), softirq=int(1.8 * TICKS)))[0]
    assert abs(usage["busy"] - 0.4) < 1e-9 and usage["softirq"] == usage["busy"]


def test_busy_time_with_no_sample_is_still_counted():
    usage = cpu.split(snap(0.0), snap(1.0, idle=int(0.9 * TICKS)))[0]
    assert abs(usage["busy"] - 0.1) < 1e-9 and usage["system"] == usage["busy"] and usage["sampled_ticks"] == 0


def test_steal_is_not_busy_time():
    usage = cpu.split(snap(0.0), snap(1.0, idle=int(0.5 * TICKS), steal=int(0.2 * TICKS)))[0]
    assert abs(usage["busy"] - 0.3) < 1e-9


def test_short_bursts_between_ticks_are_seen():
    """A thread busy 0.5 ms in every 4 ms (one tick period) for 2 s: about 0.25 s of work that tick sampling
    can miss entirely or count as a whole core. The exact idle time sees at least the work the thread did (its own
    CPU time, which the scheduler counts exactly); other programs on the core can only add to it. A host that makes
    the waking core wait has that wait counted as both idle and steal: busy time can read low by up to the steal."""
    allowed = os.sched_getaffinity(0)
    core = max(allowed)
    os.sched_setaffinity(0, {core})
    try:
        before, own_before = cpu.snapshot(), time.thread_time()
        start = time.monotonic()
        period = 0.004
        while (now := time.monotonic()) - start < 2.0:
            spin_until = now + 0.0005
            while time.monotonic() < spin_until:
                pass
            time.sleep(max(0.0, period - (time.monotonic() - now)))
        usage = cpu.split(before, cpu.snapshot())[core]
        own = time.thread_time() - own_before
    finally:
        os.sched_setaffinity(0, allowed)
    assert own > 0.1, own
    unit_error = 2 * cpu.TICK_S  # idle and steal are each read in /proc/stat's unit
    assert usage["busy"] + usage["steal"] >= 0.9 * own - unit_error, (usage, own)

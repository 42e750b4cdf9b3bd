"""Phantom queue (Uno §3.2, §4.1.3) and RED marking arithmetic."""

from __future__ import annotations

import numpy as np
import pytest

from uno.core.rng import UniformBuffer
from uno.net.phantom import PhantomQueue
from uno.net.red import RedMarker

GBPS = 1_000_000_000


def uniform(seed=0):
    return UniformBuffer(np.random.default_rng(seed))


def phantom(size=1_000_000, drain_gbps=90.0, kmin=250_000, kmax=750_000):
    return PhantomQueue(size, drain_gbps * GBPS, kmin, kmax, uniform())


def feed(ph: PhantomQueue, rate_gbps: float, duration_ps: int, pkt=4160):
    """Arrivals of ``pkt`` bytes at ``rate_gbps`` for ``duration_ps``; returns the levels."""
    gap = pkt * 8 * 1000 / rate_gbps  # ps
    t = 0.0
    levels = []
    while t <= duration_ps:
        ph.enqueue(int(t), pkt)
        levels.append(ph.level_bytes)
        t += gap
    return levels


def test_grows_at_the_difference_of_arrival_and_drain_rates():
    ph = phantom(size=10**9)  # never full here
    duration = 100_000_000  # 100 us
    feed(ph, 100.0, duration)
    # arrivals at 100 Gb/s, drain at 90 Gb/s: growth 10 Gb/s = 1.25 B/ns
    expected = 10 * GBPS / 8 * duration / 1e12
    # sampled right after an arrival: within one packet of the fluid value
    assert ph.level_at(ph.last_ps) == pytest.approx(expected, abs=4160)


def test_stays_near_zero_below_drain_rate():
    ph = phantom()
    levels = feed(ph, 80.0, 100_000_000)
    # each arrival drains fully before the next: the level never exceeds one packet
    assert max(levels) <= 4160
    assert ph.level_at(ph.last_ps + 1_000_000) == 0.0


def test_drains_lazily_at_configured_rate_without_events():
    ph = phantom(size=10**7, drain_gbps=50.0)
    ph.enqueue(0, 1_000_000)
    # 50 Gb/s = 6.25 B/ns: after 80 us, 500,000 B have drained
    assert ph.level_at(80_000_000) == pytest.approx(500_000)
    assert ph.level_at(200_000_000) == 0.0


def test_never_exceeds_its_size():
    ph = phantom(size=100_000)
    levels = feed(ph, 400.0, 10_000_000)
    assert max(levels) == 100_000
    assert all(level <= 100_000 for level in levels)


def test_marks_by_its_own_thresholds():
    ph = phantom(size=1_000_000, kmin=250_000, kmax=750_000)
    ph.enqueue(0, 200_000)
    assert not any(ph.decide_mark(0) for _ in range(200))  # below kmin: never
    ph.enqueue(0, 700_000)  # level 900,000 > kmax
    assert all(ph.decide_mark(0) for _ in range(200))  # above kmax: always
    ph2 = phantom(size=1_000_000, kmin=250_000, kmax=750_000)
    ph2.enqueue(0, 500_000)  # halfway up the ramp: p = 0.5
    marks = sum(ph2.decide_mark(0) for _ in range(4000))
    assert 1800 < marks < 2200


def test_red_probability_ramp():
    red = RedMarker(100, 300, uniform())
    assert red.probability(100) == 0.0
    assert red.probability(200) == pytest.approx(0.5)
    assert red.probability(301) == 1.0
    with pytest.raises(ValueError):
        RedMarker(300, 100, uniform())

"""Units, the event engine, and seeded random streams."""

from __future__ import annotations

from uno.core.engine import Engine
from uno.core.rng import RngStreams
from uno.core.units import serialization_ps, us_to_ps


def test_serialisation_matches_design_reference_numbers():
    # docs/design.md: 4160 B data packet at 100 Gb/s takes 332.8 ns, a 64 B ACK 5.12 ns.
    assert serialization_ps(4160, 100_000_000_000) == 332_800
    assert serialization_ps(64, 100_000_000_000) == 5_120
    # rounded up, never down
    assert serialization_ps(1, 3_000_000_000) == 2_667


def test_fast_calls_run_in_time_then_fifo_order():
    eng = Engine()
    seen = []
    eng.call_at(30, seen.append, "c")
    eng.call_at(10, seen.append, "a1")
    eng.call_at(10, seen.append, "a2")
    eng.call_at(20, seen.append, "b")
    eng.run_until(100)
    assert seen == ["a1", "a2", "b", "c"]


def test_simpy_processes_interleave_with_fast_calls():
    eng = Engine()
    seen = []

    def proc():
        yield eng.timeout(15)
        seen.append(("proc", eng.now))
        yield eng.timeout(10)
        seen.append(("proc", eng.now))

    eng.process(proc())
    eng.call_at(20, lambda _: seen.append(("call", eng.now)))
    eng.run_until(100)
    assert seen == [("proc", 15), ("call", 20), ("proc", 25)]


def test_run_until_stops_at_time_and_keeps_later_events():
    eng = Engine()
    seen = []
    for t in (5, 10, 15):
        eng.call_at(t, seen.append, t)
    eng.run_until(10)
    assert seen == [5, 10]
    assert eng.now == 10
    eng.run_until(20)
    assert seen == [5, 10, 15]


def test_run_until_stop_event():
    eng = Engine()
    stop = eng.event()
    seen = []
    eng.call_at(5, lambda _: stop.succeed())
    eng.call_at(7, seen.append, 7)
    eng.run_until(100, stop)
    assert eng.now == 5 and seen == []


def test_rng_streams_are_independent_and_reproducible():
    a, b = RngStreams(7), RngStreams(7)
    x1 = a.stream("lb").random(3)
    a.stream("ecn").random(100)  # using another stream must not shift "lb"
    x2 = a.stream("lb").random(3)
    y = b.stream("lb").random(6)
    assert list(y) == list(x1) + list(x2)
    assert list(RngStreams(8).stream("lb").random(3)) != list(x1)
    assert us_to_ps(1.5) == 1_500_000


def test_a_failing_simpy_process_raises_out_of_run_until():
    eng = Engine()

    def broken():
        yield eng.timeout(5)
        raise ValueError("boom")

    eng.process(broken())
    eng.call_at(10, lambda _: None)
    try:
        eng.run_until(100)
    except ValueError as exc:
        assert "boom" in str(exc)
    else:
        raise AssertionError("the process failure was swallowed")


def test_simpy_internals_the_engine_shares():
    """The engine pushes entries onto SimPy's heap with ids from SimPy's counter and sets its
    clock (``_queue``, ``_eid``, ``_now``): the pinned SimPy keeps them as it expects — a heap
    list of (time, priority, eid, event) entries, an id counter shared with SimPy's own events,
    and the clock ``now`` reads."""
    import itertools

    import simpy

    env = simpy.Environment()
    assert isinstance(env._queue, list) and isinstance(env._eid, itertools.count)
    env.timeout(5)
    (entry,) = env._queue
    assert len(entry) == 4 and entry[0] == 5 and isinstance(entry[3], simpy.events.Timeout)
    env._now = 3
    assert env.now == 3
    eng = Engine()
    eng.timeout(7)  # a SimPy event, then a fast call: ids from one counter, in order
    eng.call_at(7, lambda _: None)
    ids = sorted(e[2] for e in eng._queue)
    assert len(ids) == 2 and ids[1] == ids[0] + 1

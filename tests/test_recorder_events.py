"""The recorder's sample events (:class:`uno.metrics.recorder.Recorder`) take their places in
the engine's order as a SimPy process's timeouts would: the same (time, priority, event id)
keys, event for event, among other events at the same times, so a run's events keep their
order whether the samples are Python events or the hybrid's kernel takes them."""

from __future__ import annotations

from uno.core.engine import Engine
from uno.metrics.recorder import Recorder

INTERVAL_PS = 7


def _noop(_arg=None) -> None:
    pass


def _keys(engine: Engine, start, n_events: int) -> list[tuple]:
    """The keys of the first ``n_events`` entries the engine handles, with other events due at
    the samples' times scheduled before and after the samples start."""
    engine.call_in(INTERVAL_PS, _noop)
    start()
    engine.call_in(INTERVAL_PS, _noop)
    engine.call_in(2 * INTERVAL_PS, _noop)
    keys = []
    for _ in range(n_events):
        keys.append(tuple(engine._queue[0][:3]))
        engine.step()
    return keys


def test_the_recorders_events_are_keyed_as_a_simpy_process_would_key_them():
    recording = Engine()
    recorder = Recorder(recording, INTERVAL_PS, True, False, False)  # (no flow: samples nothing)
    as_recorder = _keys(recording, recorder.start, 12)

    reference = Engine()

    def samples():
        while True:
            yield reference.timeout(INTERVAL_PS)

    as_process = _keys(reference, lambda: reference.process(samples()), 12)
    assert as_recorder == as_process
    # the start entry (urgent, now), then the samples every interval among the others
    assert as_recorder[0] == (0, 0, 1)
    assert [k[0] for k in as_recorder[1:]] == [7, 7, 7, 14, 14, 21, 28, 35, 42, 49, 56]

"""The event engine: a :class:`simpy.Environment` with a fast path for packet events.

SimPy processes (flow arrivals, samplers, timers that want generator syntax) run unchanged.
Packet movement, the hot path, does not create SimPy ``Event`` objects: :meth:`Engine.call_at`
pushes a ``(time_ps, priority, eid, fn, arg)`` entry onto SimPy's own heap and the engine's
loop calls ``fn(arg)`` when it comes due. SimPy entries are 4-tuples; the two kinds share one
heap and one ``eid`` counter, so ordering (time, then FIFO among equal times) is SimPy's.

Time is an integer number of picoseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, Event

#: priority of the end-of-run sentinel: after SimPy's URGENT (0) and NORMAL (1) at the same time
_AFTER_ALL = 2


class _Stop(Exception):
    """Raised inside the loop to end :meth:`Engine.run_until` early."""


class Engine(simpy.Environment):
    """SimPy environment whose clock is integer picoseconds, with a callback fast path."""

    def __init__(self) -> None:
        super().__init__(initial_time=0)

    @property
    def events_scheduled(self) -> int:
        """Entries ever scheduled (SimPy events and fast calls)."""
        return next(self._eid) - 1  # peeking consumes one id; ids are only compared, never reused

    # ---- fast path -------------------------------------------------------------------
    def call_at(self, time_ps: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` at absolute time ``time_ps`` (>= now)."""
        heappush(self._queue, (time_ps, NORMAL, next(self._eid), fn, arg))

    def call_in(self, delay_ps: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` after ``delay_ps`` picoseconds."""
        heappush(self._queue, (self._now + delay_ps, NORMAL, next(self._eid), fn, arg))

    # ---- SimPy compatibility ---------------------------------------------------------
    def step(self) -> None:
        """Process one entry (SimPy event or fast callback). Used by :meth:`simpy.Environment.run`."""
        try:
            entry = heappop(self._queue)
        except IndexError:
            raise EmptySchedule() from None
        self._now = entry[0]
        if len(entry) == 5:
            entry[3](entry[4])
        else:
            _fire(entry[3])

    def run_until(self, until_ps: int, stop_event: Event | None = None) -> None:
        """Run until ``until_ps`` or until ``stop_event`` is processed, whichever is first.

        Entries due exactly at ``until_ps`` are processed. The clock is left at the time of the
        last processed entry, or at ``until_ps`` if the schedule ran past it."""
        if stop_event is not None:
            if stop_event.callbacks is None:  # already processed
                return
            stop_event.callbacks.append(_raise_stop)
        # A sentinel after everything due at until_ps ends the loop without a per-entry check.
        sentinel = (until_ps, _AFTER_ALL, next(self._eid), _raise_stop, None)
        heappush(self._queue, sentinel)
        queue = self._queue
        pop = heappop
        try:
            while queue:
                entry = pop(queue)
                self._now = entry[0]
                if len(entry) == 5:
                    entry[3](entry[4])
                else:
                    _fire(entry[3])
        except (_Stop, StopSimulation):
            pass
        finally:
            try:
                queue.remove(sentinel)
                heapify(queue)
            except ValueError:
                pass  # the sentinel itself ended the run


def _fire(event: Event) -> None:
    """Process a SimPy event exactly as :meth:`simpy.Environment.step` does."""
    callbacks, event.callbacks = event.callbacks, None
    for callback in callbacks:
        callback(event)
    if not event._ok and not hasattr(event, "_defused"):
        exc = type(event._value)(*event._value.args)
        exc.__cause__ = event._value
        raise exc


def _raise_stop(_arg=None) -> None:
    raise _Stop()

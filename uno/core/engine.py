"""The event engine: a :class:`simpy.Environment` with a fast path for packet events.

SimPy processes (flow arrivals, timers that want generator syntax) run unchanged.
Packet movement, the hot path, does not create SimPy ``Event`` objects: :meth:`Engine.call_at`
pushes a ``(time_ps, priority, eid, fn, arg)`` entry onto SimPy's own heap and the engine's
loop calls ``fn(arg)`` when it comes due. SimPy entries are 4-tuples; the two kinds share one
heap and one ``eid`` counter, so ordering (time, then FIFO among equal times) is SimPy's.

Time is an integer number of picoseconds. The engine reads SimPy's own heap, event-id counter
and clock (``_queue``, ``_eid``, ``_now``): the SimPy version is pinned to the 4.1 series, and
``tests/test_units_engine.py`` checks that contract.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from heapq import heapify, heappop, heappush
from itertools import count
from typing import Any

import simpy
from simpy.core import EmptySchedule, StopSimulation
from simpy.events import NORMAL, Event

#: priority of the end-of-run sentinel: after SimPy's URGENT (0) and NORMAL (1) at the same time
_AFTER_ALL = 2
#: a time after every event (uno.net.compiled.NEVER_PS, the top of an empty kernel heap)
_NEVER_PS = 1 << 62


class _Stop(Exception):
    """Raised inside the loop to end :meth:`Engine.run_until` early."""


class Engine(simpy.Environment):
    """SimPy environment whose clock is integer picoseconds, with a callback fast path."""

    def __init__(self) -> None:
        super().__init__(initial_time=0)
        #: the compiled data plane (uno.net.compiled), whose kernel keeps the packet events
        self._dataplane = None
        #: the scheduling API of the packet hot path (ports, the compiled data plane):
        #: ``push_entry((time_ps, 1, next_eid(), fn, arg))`` schedules ``fn(arg)`` as
        #: :meth:`call_at` does, without a Python call of its own (both are C functions bound
        #: to this engine's heap and id counter); ``next_eid()`` takes the next id of the
        #: counter SimPy events share, so entries keep their FIFO order among equal times
        self.push_entry = partial(heappush, self._queue)
        self.next_eid = self._eid.__next__

    def eid_counter(self) -> int:
        """The next event id the engine will hand out (for a kernel that hands out the ids of
        a stretch of events itself, then :meth:`set_eid_counter`)."""
        nxt = next(self._eid)
        self.set_eid_counter(nxt)
        return nxt

    def set_eid_counter(self, next_eid: int) -> None:
        """Hand out event ids from ``next_eid`` on (after a kernel handed out those before)."""
        self._eid = count(next_eid)
        self.next_eid = self._eid.__next__

    def set_clock(self, now_ps: int) -> None:
        """Move the clock to ``now_ps``: the compiled data plane's kernel ran the events up to
        then and hands control back to Python code that reads ``now``."""
        self._now = now_ps

    def attach_dataplane(self, dataplane) -> None:
        """Let ``dataplane``'s kernel hold the packet events: :meth:`run_until` interleaves them
        with this heap's entries by (time, priority, eid), the kernel's events being priority 1
        with eids from this engine's counter."""
        self._dataplane = dataplane

    @property
    def events_scheduled(self) -> int:
        """Entries ever scheduled (SimPy events, fast calls and the compiled data plane's)."""
        # peeking consumes one id; ids are only compared, never reused
        n = next(self._eid) - 1
        if self._dataplane is not None:
            n += self._dataplane.events_scheduled
        return n

    # ---- fast path -------------------------------------------------------------------
    def call_at(self, time_ps: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` at absolute time ``time_ps`` (>= now)."""
        heappush(self._queue, (time_ps, NORMAL, next(self._eid), fn, arg))

    def call_in(self, delay_ps: int, fn: Callable[[Any], None], arg: Any = None) -> None:
        """Call ``fn(arg)`` after ``delay_ps`` picoseconds."""
        heappush(self._queue, (self._now + delay_ps, NORMAL, next(self._eid), fn, arg))

    # ---- SimPy compatibility ---------------------------------------------------------
    def step(self) -> None:
        """Process one entry (SimPy event or fast callback). Used by :meth:`simpy.Environment.run`.
        With a compiled data plane whose next event comes first, that step is the kernel's run
        up to the heap's next entry or the first delivery to a host."""
        dp = self._dataplane
        if dp is not None and dp.top[0] < _NEVER_PS:
            queue = self._queue
            top = queue[0] if queue else (_NEVER_PS, _AFTER_ALL, 0)
            if _kernel_first(dp.top, top):
                delivery = dp.run(top[0], top[1], top[2])
                if delivery is not None:
                    delivery[1].receive(delivery[0])
                return
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
            if self._dataplane is not None:
                self._loop_dataplane()
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

    def _loop_dataplane(self) -> None:
        """The loop of :meth:`run_until` with a compiled data plane: before each heap entry, the
        kernel runs its events that come first ((time, 1, eid) < the entry's key); a delivery to
        a host stops it and is handed to the host here. Ends by raising like the plain loop (the
        sentinel is always in the heap)."""
        dp = self._dataplane
        queue = self._queue
        pop = heappop
        while queue:
            top = queue[0]
            t = top[0]
            k_t, k_eid = dp.top
            # the kernel's next event (k_t, 1, k_eid) before the entry's key (inlined _kernel_first)
            if k_t < t or (k_t == t and (top[1] > 1 or (top[1] == 1 and k_eid < top[2]))):
                delivery = dp.run(t, top[1], top[2])
                if delivery is not None:
                    delivery[1].receive(delivery[0])
                continue
            entry = pop(queue)
            self._now = t
            if len(entry) == 5:
                entry[3](entry[4])
            else:
                _fire(entry[3])


def _kernel_first(kernel_top: tuple[int, int], entry: tuple) -> bool:
    """Whether the kernel event keyed (time, 1, eid) comes before heap ``entry``."""
    k_t, k_eid = kernel_top
    t = entry[0]
    return k_t < t or (k_t == t and (entry[1] > 1 or (entry[1] == 1 and k_eid < entry[2])))


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

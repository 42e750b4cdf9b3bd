"""Kernel calls bounded in wall time.

A Numba kernel keeps the interpreter until it returns: Ctrl-C (SIGINT is handled between Python
bytecodes) and the progress watcher's thread (:mod:`uno.metrics.progress`) wait for it. So an
engine that advances in a compiled loop (the fluid engine's steps, the max-min engine's rate
computations) calls its kernel for a number of work units that a :class:`WallBudget` sizes from
the pace of the calls before it: the first call is small, each next one takes what the measured
pace fills in ``aim_s`` of wall time, at most twice the last one. A pace that holds or changes
gradually keeps every call near ``aim_s``; a call that ran long (a pace that dropped within one
call, by a factor f: that call lasts about f x ``aim_s``) makes the next one as short as its own
pace says, at once.

Chunking decides only when control returns to Python: the kernels keep their whole state in
arrays that carry over from one call to the next, so the results are the same bit for bit
whatever the chunks are (``tests/test_progress.py`` checks it).
"""

from __future__ import annotations

import time
from collections.abc import Callable

#: wall time a kernel call aims at: Ctrl-C within a fraction of a second, and a call's own cost
#: (a few tens of microseconds) negligible beside it
CALL_AIM_S = 0.1
#: units of the first call, before any pace is known
FIRST_UNITS = 16
#: the most units a call may be given (keeps step indices far from int64 overflow)
MAX_UNITS = 1 << 40


class WallBudget:
    """How many work units the next kernel call may take: :meth:`units` before the call,
    :meth:`spent` after it with the units it did. ``clock`` (seconds) is injectable for tests."""

    def __init__(
        self,
        aim_s: float = CALL_AIM_S,
        first: int = FIRST_UNITS,
        clock: Callable[[], float] = time.perf_counter,
    ):
        if not aim_s > 0 or first < 1:
            raise ValueError(f"WallBudget needs aim_s > 0 and first >= 1 (got {aim_s}, {first})")
        self.aim_s = aim_s
        self.clock = clock
        self._next = first
        self._t0 = 0.0

    def units(self) -> int:
        """The units the next call may take; the call's wall time counts from here."""
        self._t0 = self.clock()
        return self._next

    def spent(self, done: int) -> float:
        """The call did ``done`` units (fewer than given when something else ended it): size the
        next one from its pace. Returns the call's wall time."""
        wall_s = self.clock() - self._t0
        if done > 0:
            # growth from the units done, not given: calls cut short by the engine's own stops
            # (sample times, ...) are no evidence that a longer call would fit
            grown = max(self._next, 2 * done)
            fits = done * self.aim_s / wall_s if wall_s > 0 else grown
            self._next = int(max(1, min(grown, fits, MAX_UNITS)))
        return wall_s

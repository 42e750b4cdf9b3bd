"""Phantom (virtual) queue, Uno paper §3.2 and §4.1.3 (after HULL, NSDI'12).

A counter that grows by every byte enqueued in the physical queue it shadows, drains
continuously at ``drain_rate_bps`` (a fraction of line rate, Table 2: 0.9), is capped at
``size_bytes``, and marks ECN by its own RED thresholds. It needs no timer events: its level is
drained lazily from the time elapsed since it was last touched. Its RED ramp draws from the
port's own random stream, the one the port's physical RED uses.
"""

from __future__ import annotations

from numba import njit

from uno.core.rng import UniformBuffer
from uno.core.units import BITS_PER_BYTE, PS_PER_S
from uno.net.red import RedMarker


@njit(cache=True)
def phantom_level(level_bytes, elapsed_ps, drain_bytes_per_ps):
    """A phantom queue's level ``elapsed_ps`` after it was ``level_bytes``: drained
    continuously, never below 0."""
    level = level_bytes - elapsed_ps * drain_bytes_per_ps
    return level if level > 0.0 else 0.0


@njit(cache=True)
def phantom_after_enqueue(level_bytes, elapsed_ps, drain_bytes_per_ps, size_bytes, cap_bytes):
    """The level once ``size_bytes`` arrive ``elapsed_ps`` after it was ``level_bytes``: drain
    since then, add, cap at ``cap_bytes``."""
    level = phantom_level(level_bytes, elapsed_ps, drain_bytes_per_ps) + size_bytes
    return level if level < cap_bytes else cap_bytes


@njit(cache=True)
def phantom_raised(level_bytes, elapsed_ps, drain_bytes_per_ps, floor_bytes, cap_bytes):
    """The level ``elapsed_ps`` after it was ``level_bytes``, raised to ``floor_bytes`` if that
    is higher (capped at ``cap_bytes``): the hybrid's port taking over the level the fluid model
    kept for its link, the fluid flows' bytes counted (:mod:`uno.fluid.shared_ports`)."""
    level = phantom_level(level_bytes, elapsed_ps, drain_bytes_per_ps)
    if floor_bytes > level:
        level = floor_bytes if floor_bytes < cap_bytes else cap_bytes
    return level


class PhantomQueue:
    """Lazily drained virtual queue. Levels in bytes (float), time in integer picoseconds."""

    __slots__ = (
        "size_bytes",
        "drain_rate_bps",
        "drain_bytes_per_ps",
        "level_bytes",
        "last_ps",
        "red",
    )

    def __init__(
        self,
        size_bytes: float,
        drain_rate_bps: float,
        kmin_bytes: float,
        kmax_bytes: float,
        uniform: UniformBuffer,
    ):
        if size_bytes <= 0:
            raise ValueError("phantom size_bytes must be > 0")
        if drain_rate_bps <= 0:
            raise ValueError("phantom drain_rate_bps must be > 0")
        self.size_bytes = float(size_bytes)
        self.drain_rate_bps = float(drain_rate_bps)
        self.drain_bytes_per_ps = drain_rate_bps / (BITS_PER_BYTE * PS_PER_S)
        self.level_bytes = 0.0
        self.last_ps = 0
        self.red = RedMarker(kmin_bytes, kmax_bytes, uniform)

    def level_at(self, time_ps: int) -> float:
        """Occupancy at ``time_ps`` (>= the last update), without changing state."""
        return _level(self.level_bytes, time_ps - self.last_ps, self.drain_bytes_per_ps)

    def enqueue(self, time_ps: int, size_bytes: int) -> None:
        """Account ``size_bytes`` arriving at ``time_ps``: drain since last touch, add, cap."""
        self.level_bytes = _after_enqueue(
            self.level_bytes, time_ps - self.last_ps, self.drain_bytes_per_ps, size_bytes,
            self.size_bytes,
        )  # fmt: skip
        self.last_ps = time_ps

    def raise_to(self, time_ps: int, floor_bytes: float) -> None:
        """At ``time_ps``, at least ``floor_bytes`` (:func:`phantom_raised`)."""
        self.level_bytes = _raised(
            self.level_bytes, time_ps - self.last_ps, self.drain_bytes_per_ps, floor_bytes,
            self.size_bytes,
        )  # fmt: skip
        self.last_ps = time_ps

    def decide_mark(self, time_ps: int) -> bool:
        """ECN decision for a packet leaving the physical queue at ``time_ps``."""
        level = _level(self.level_bytes, time_ps - self.last_ps, self.drain_bytes_per_ps)
        red = self.red
        if level <= red.kmin_bytes:  # the common case, without further calls
            return False
        return red.decide(level)


# the Python data plane runs the drain interpreted (a compiled call per packet costs more)
_level = phantom_level.py_func
_after_enqueue = phantom_after_enqueue.py_func
_raised = phantom_raised.py_func

"""RED-style ECN marking on the instantaneous queue (Uno paper §5.1, "Parameter settings").

A packet is never marked while the occupancy is at or below ``kmin_bytes``, always marked above
``kmax_bytes``, and marked with a probability rising linearly from 0 to ``pmax`` (default 1;
DCQCN's RED uses a small Pmax) in between. The port
decides at dequeue, on the occupancy left behind the departing packet (as htsim does).

``uniform`` must be the port's own random stream (shared at most with the port's phantom queue),
so that its draws follow the port's departure order alone (see :mod:`uno.net.network`).

The ramp is written once, in :func:`red_zone`, :func:`red_ramp_marks` and
:func:`red_probability`: the compiled data plane and the fluid engines call them compiled, the
Python data plane (:class:`RedMarker`) interpreted."""

from __future__ import annotations

from numba import njit

from uno.core.rng import UniformBuffer

#: what :func:`red_zone` says of an occupancy
RED_NEVER, RED_RAMP, RED_ALWAYS = -1, 0, 1


@njit(cache=True)
def red_zone(occupancy_bytes, kmin_bytes, kmax_bytes, span_bytes):
    """Where ``occupancy_bytes`` falls on a RED ramp: ``RED_NEVER`` at or below ``kmin_bytes``,
    ``RED_ALWAYS`` above ``kmax_bytes`` (or on a ramp of no width), else ``RED_RAMP`` (the
    decision takes one uniform draw: :func:`red_ramp_marks`). ``span_bytes`` is
    (kmax - kmin) / pmax."""
    if occupancy_bytes <= kmin_bytes:
        return RED_NEVER
    if occupancy_bytes > kmax_bytes or span_bytes <= 0.0:
        return RED_ALWAYS
    return RED_RAMP


@njit(cache=True)
def red_ramp_marks(uniform, occupancy_bytes, kmin_bytes, span_bytes):
    """The marking decision on the ramp for the uniform draw ``uniform`` in [0, 1)."""
    return uniform * span_bytes < occupancy_bytes - kmin_bytes


@njit(cache=True)
def red_probability(occupancy_bytes, kmin_bytes, kmax_bytes, span_bytes):
    """Marking probability at ``occupancy_bytes`` (what the fluid engines apply as a rate)."""
    zone = red_zone(occupancy_bytes, kmin_bytes, kmax_bytes, span_bytes)
    if zone != RED_RAMP:
        return 1.0 if zone == RED_ALWAYS else 0.0
    return (occupancy_bytes - kmin_bytes) / span_bytes


class RedMarker:
    """Marking decision for one queue. Thresholds in bytes; ``kmin_bytes <= kmax_bytes``."""

    __slots__ = ("kmin_bytes", "kmax_bytes", "_span", "_uniform")

    def __init__(
        self, kmin_bytes: float, kmax_bytes: float, uniform: UniformBuffer, pmax: float = 1.0
    ):
        if kmin_bytes < 0 or kmax_bytes < kmin_bytes:
            raise ValueError(f"need 0 <= kmin_bytes ({kmin_bytes}) <= kmax_bytes ({kmax_bytes})")
        if not 0 < pmax <= 1:
            raise ValueError(f"need 0 < pmax <= 1, got {pmax}")
        self.kmin_bytes = kmin_bytes
        self.kmax_bytes = kmax_bytes
        # the ramp reaches pmax at kmax: probability (q - kmin) / (span / pmax); span / 1.0 is
        # span exactly, so pmax = 1 draws and decides as before
        self._span = (kmax_bytes - kmin_bytes) / pmax
        self._uniform = uniform

    @property
    def span_bytes(self) -> float:
        """(kmax - kmin) / pmax: the ramp's width scaled to reach probability 1 (bytes)."""
        return self._span

    @property
    def uniform(self) -> UniformBuffer:
        """The random stream the ramp draws from."""
        return self._uniform

    def probability(self, occupancy_bytes: float) -> float:
        """Marking probability at ``occupancy_bytes``."""
        return _probability(occupancy_bytes, self.kmin_bytes, self.kmax_bytes, self._span)

    def decide(self, occupancy_bytes: float) -> bool:
        """Draw the marking decision at ``occupancy_bytes`` (one uniform draw in the ramp)."""
        zone = _zone(occupancy_bytes, self.kmin_bytes, self.kmax_bytes, self._span)
        if zone != RED_RAMP:
            return zone == RED_ALWAYS
        return _ramp_marks(self._uniform.next(), occupancy_bytes, self.kmin_bytes, self._span)


# the Python data plane runs the ramp interpreted (a compiled call per packet costs more)
_zone = red_zone.py_func
_ramp_marks = red_ramp_marks.py_func
_probability = red_probability.py_func

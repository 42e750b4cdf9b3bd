"""RED-style ECN marking on the instantaneous queue (Uno paper §5.1, "Parameter settings").

A packet is never marked while the occupancy is at or below ``kmin_bytes``, always marked above
``kmax_bytes``, and marked with a probability rising linearly from 0 to ``pmax`` (default 1;
DCQCN's RED uses a small Pmax) in between. The port
decides at dequeue, on the occupancy left behind the departing packet (as htsim does).

``uniform`` must be the port's own random stream (shared at most with the port's phantom queue),
so that its draws follow the port's departure order alone (see :mod:`uno.net.network`)."""

from __future__ import annotations

from uno.core.rng import UniformBuffer


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

    def probability(self, occupancy_bytes: float) -> float:
        """Marking probability at ``occupancy_bytes``."""
        if occupancy_bytes <= self.kmin_bytes:
            return 0.0
        if occupancy_bytes > self.kmax_bytes or self._span <= 0:
            return 1.0
        return (occupancy_bytes - self.kmin_bytes) / self._span

    def decide(self, occupancy_bytes: float) -> bool:
        """Draw the marking decision at ``occupancy_bytes`` (one uniform draw in the ramp)."""
        if occupancy_bytes <= self.kmin_bytes:
            return False
        if occupancy_bytes > self.kmax_bytes or self._span <= 0:
            return True
        return self._uniform.next() * self._span < occupancy_bytes - self.kmin_bytes

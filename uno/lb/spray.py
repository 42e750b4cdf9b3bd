"""Random packet spraying (Dixit et al., INFOCOM 2013): a fresh random entropy for every data
packet, drawn from the run's seeded stream."""

from __future__ import annotations

from uno.core.rng import UniformBuffer
from uno.lb.base import ENTROPY_SPACE, LoadBalancer


class Spray(LoadBalancer):
    name = "spray"

    def __init__(self, uniform: UniformBuffer):
        self._uniform = uniform

    def next_entropy(self, now_ps: int) -> int:
        return int(self._uniform.next() * ENTROPY_SPACE)

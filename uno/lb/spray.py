"""Random packet spraying (Dixit et al., INFOCOM 2013): a fresh random entropy for every data
packet, drawn uniformly from ``n_entropies`` values (htsim's default is 256 path ids) with the
flow's own seeded stream."""

from __future__ import annotations

from uno.core.rng import UniformBuffer
from uno.lb.base import ENTROPY_SPACE, LoadBalancer


class Spray(LoadBalancer):
    name = "spray"

    def __init__(self, uniform: UniformBuffer, n_entropies: int = 256):
        if not 1 <= n_entropies <= ENTROPY_SPACE:
            raise ValueError(f"n_entropies must be in [1, {ENTROPY_SPACE}]")
        self._uniform = uniform
        self._n = n_entropies

    def next_entropy(self, now_ps: int) -> int:
        return int(self._uniform.next() * self._n)

"""Random packet spraying (Dixit et al., INFOCOM 2013): a fresh random entropy for every data
packet, drawn uniformly from ``lb.n_entropies`` values (htsim's default is 256 path ids) with
the flow's own seeded stream."""

from __future__ import annotations

from uno.lb.base import LoadBalancer


class Spray(LoadBalancer):
    name = "spray"

    def __init__(self, ctx, uniform, cfg):
        super().__init__(ctx, uniform)
        self._n = cfg.n_entropies

    @property
    def n_entropies(self) -> int:
        """How many entropy values it sprays over."""
        return self._n

    def next_entropy(self, now_ps: int) -> int:
        return int(self._uniform.next() * self._n)

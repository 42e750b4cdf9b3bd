"""ECMP: one entropy per flow, drawn once from the flow's own seeded stream, so every packet of
the flow hashes onto the same path."""

from __future__ import annotations

from uno.lb.base import LoadBalancer


class Ecmp(LoadBalancer):
    name = "ecmp"

    def __init__(self, ctx, uniform, cfg=None):
        super().__init__(ctx, uniform)
        self.entropy = self.random_entropy()

    def next_entropy(self, now_ps: int) -> int:
        return self.entropy

"""ECMP: one entropy per flow, drawn once from the flow's own seeded stream, so every packet of
the flow hashes onto the same path."""

from __future__ import annotations

from uno.core.rng import UniformBuffer
from uno.lb.base import ENTROPY_SPACE, LoadBalancer


class Ecmp(LoadBalancer):
    name = "ecmp"

    def __init__(self, uniform: UniformBuffer):
        self.entropy = uniform.integer(ENTROPY_SPACE)

    def next_entropy(self, now_ps: int) -> int:
        return self.entropy

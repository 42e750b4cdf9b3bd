"""Seeded random streams. One run seed drives a :class:`numpy.random.SeedSequence`; every
consumer asks for its own child stream by name, so adding a consumer never shifts the draws of
another and two simulations in one process never share state."""

from __future__ import annotations

import zlib

import numpy as np


def _name_key(name: str) -> int:
    # Stable across processes and Python versions (unlike hash() of a str).
    return zlib.crc32(name.encode("utf-8"))


class RngStreams:
    """Factory of independent, reproducible random generators derived from one seed."""

    def __init__(self, seed: int):
        if seed < 0:
            raise ValueError("seed must be >= 0")
        self.seed = int(seed)
        self._streams: dict[str, np.random.Generator] = {}

    def stream(self, name: str) -> np.random.Generator:
        """The generator for consumer ``name`` (created on first use, then shared)."""
        gen = self._streams.get(name)
        if gen is None:
            seq = np.random.SeedSequence(entropy=self.seed, spawn_key=(_name_key(name),))
            gen = np.random.Generator(np.random.PCG64(seq))
            self._streams[name] = gen
        return gen

    def buffered(self, name: str, block: int = 4096) -> UniformBuffer:
        """A cheap per-draw source of U[0,1) floats backed by stream ``name``."""
        return UniformBuffer(self.stream(name), block)


class UniformBuffer:
    """Draws U[0,1) floats in blocks from a generator: one numpy call per ``block`` draws, so a
    per-packet draw costs a list index instead of a numpy call. The sequence of values is the
    generator's own, so results depend only on the seed."""

    __slots__ = ("_gen", "_block", "_buf", "_i")

    def __init__(self, gen: np.random.Generator, block: int = 4096):
        self._gen = gen
        self._block = block
        self._buf: list[float] = []
        self._i = 0

    def next(self) -> float:
        i = self._i
        buf = self._buf
        if i >= len(buf):
            buf = self._buf = self._gen.random(self._block).tolist()
            i = 0
        self._i = i + 1
        return buf[i]

    def integer(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return int(self.next() * n)

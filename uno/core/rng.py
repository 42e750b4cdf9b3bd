"""Seeded random streams. One run seed drives a :class:`numpy.random.SeedSequence`; every
consumer asks for its own child stream by name, so adding a consumer never shifts the draws of
another and two simulations in one process never share state.

A consumer whose draws happen in an order that depends on something outside itself must have
a stream of its own, or that order leaks into the results. Example: switch ports decide ECN
lazily, when next touched (see :mod:`uno.net.port`); with one stream for all ports, a sampler
touching ports would change which port gets which number. So every port, and every flow's load
balancer, draws from its own named stream; within one consumer the order is its own (a port's
FIFO departure order, a flow's send order)."""

from __future__ import annotations

import zlib

import numpy as np

#: A buffered stream draws this many values the first time, then doubles up to its maximum:
#: most of a large run's streams (one per flow, one per port) draw a handful of values or none.
FIRST_BLOCK = 16
MAX_BLOCK = 4096


def _name_key(name: str) -> int:
    # Stable across processes and Python versions (unlike hash() of a str).
    return zlib.crc32(name.encode("utf-8"))


class RngStreams:
    """Factory of independent, reproducible random generators derived from one seed."""

    def __init__(self, seed: int):
        if seed < 0:
            raise ValueError("seed must be >= 0")
        self.seed = int(seed)
        self._streams: dict[str, np.random.Generator | UniformBuffer] = {}
        # CRC-32 key -> name: two names with one key would silently get the same stream.
        self._owner_of_key: dict[int, str] = {}

    def _key(self, name: str) -> int:
        key = _name_key(name)
        owner = self._owner_of_key.setdefault(key, name)
        if owner != name:
            raise ValueError(
                f"random streams {owner!r} and {name!r} have the same key; rename one of them"
            )
        return key

    def stream(self, name: str) -> np.random.Generator:
        """The generator for consumer ``name`` (created on first use, then shared)."""
        gen = self._streams.get(name)
        if gen is None:
            seq = np.random.SeedSequence(entropy=self.seed, spawn_key=(self._key(name),))
            gen = np.random.Generator(np.random.PCG64(seq))
            self._streams[name] = gen
        elif not isinstance(gen, np.random.Generator):
            raise ValueError(f"random stream {name!r} is already in use as a buffered stream")
        return gen

    def buffered(self, name: str, max_block: int = MAX_BLOCK) -> UniformBuffer:
        """A cheap per-draw source of U[0,1) floats from stream ``name`` (created on first use,
        then shared). Its generator is only built at the first draw."""
        buf = self._streams.get(name)
        if buf is None:
            buf = UniformBuffer(
                max_block=max_block, entropy=self.seed, spawn_key=(self._key(name),)
            )
            self._streams[name] = buf
        elif not isinstance(buf, UniformBuffer):
            raise ValueError(f"random stream {name!r} is already in use as a generator")
        return buf


class UniformBuffer:
    """Draws U[0,1) floats in blocks from a generator: one numpy call per block, so a
    per-packet draw costs one step of a list iterator instead of a numpy call.

    The generator is either given (``gen``) or built from ``SeedSequence(entropy, spawn_key)``
    at the first draw, so a stream that never draws costs a small object and no numpy state.
    Blocks start at :data:`FIRST_BLOCK` values and double up to ``max_block``. PCG64 spends one
    64-bit output per float, so the values are the generator's own sequence however it is cut
    into blocks: they depend only on the seed and the stream name."""

    __slots__ = ("_gen", "_entropy", "_spawn_key", "_block", "_max_block", "_it")

    def __init__(
        self,
        gen: np.random.Generator | None = None,
        max_block: int = MAX_BLOCK,
        *,
        entropy: int | None = None,
        spawn_key: tuple[int, ...] = (),
    ):
        if (gen is None) == (entropy is None):
            raise ValueError("give either a generator or the entropy to build one from")
        if max_block < 1:
            raise ValueError("max_block must be >= 1")
        self._gen = gen
        self._entropy = entropy
        self._spawn_key = spawn_key
        self._block = min(FIRST_BLOCK, max_block)
        self._max_block = max_block
        self._it = iter(())

    def next(self) -> float:
        # Iterator step in the common case; an exhausted block raises once per block.
        try:
            return next(self._it)
        except StopIteration:
            return self._refill()

    def _refill(self) -> float:
        """Draw the next block and return its first value."""
        gen = self._gen
        if gen is None:
            seq = np.random.SeedSequence(entropy=self._entropy, spawn_key=self._spawn_key)
            gen = self._gen = np.random.Generator(np.random.PCG64(seq))
        block = self._block
        self._block = min(2 * block, self._max_block)
        it = self._it = iter(gen.random(block).tolist())
        return next(it)

    def integer(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return int(self.next() * n)

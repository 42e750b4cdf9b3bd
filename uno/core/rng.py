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

import math
import zlib
from collections.abc import Sequence

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
        # stream name -> U[0,1) draws already handed out by first_uniforms
        self._read_ahead: dict[str, int] = {}

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
            skip = self._read_ahead.pop(name, 0)
            if skip:
                gen.random(skip)  # one 64-bit output per float: past the values read ahead
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
                max_block=max_block,
                entropy=self.seed,
                spawn_key=(self._key(name),),
                skip=self._read_ahead.pop(name, 0),
            )
            self._streams[name] = buf
        elif not isinstance(buf, UniformBuffer):
            raise ValueError(f"random stream {name!r} is already in use as a generator")
        return buf

    def first_uniforms(self, names: Sequence[str], count: int) -> np.ndarray:
        """The first ``count`` U[0,1) draws of each stream in ``names``, as an array of shape
        (len(names), count): row i holds exactly what ``buffered(names[i])`` (or
        ``stream(names[i]).random``) would return first, computed for all streams at once
        without building a generator per stream (a run's thousands of per-flow streams that
        each draw a few values). The streams must be new; asking for one of them later goes
        on after the values read here."""
        n = len(names)
        if len(set(names)) != n:
            raise ValueError("first_uniforms: a stream is named twice")
        out = np.zeros((n, count))
        if n == 0 or count == 0:
            return out
        keys = np.empty(n, dtype=np.uint32)
        for i, name in enumerate(names):
            if name in self._streams or name in self._read_ahead:
                raise ValueError(f"random stream {name!r} is already in use")
            keys[i] = self._key(name)
        out = _pcg64_first_uniforms(self.seed, keys, count)
        # numpy's generators are the reference: should their seeding ever change, fall back
        first = np.random.Generator(np.random.PCG64(self._seed_sequence(int(keys[0]))))
        if not np.array_equal(first.random(count), out[0]):
            out = np.array([
                np.random.Generator(np.random.PCG64(self._seed_sequence(int(k)))).random(count)
                for k in keys
            ])  # fmt: skip
        for name in names:
            self._read_ahead[name] = count
        return out

    def _seed_sequence(self, key: int) -> np.random.SeedSequence:
        return np.random.SeedSequence(entropy=self.seed, spawn_key=(key,))


class UniformBuffer:
    """Draws U[0,1) floats in blocks from a generator: one numpy call per block, so a
    per-packet draw costs one step of a list iterator instead of a numpy call.

    The generator is either given (``gen``) or built from ``SeedSequence(entropy, spawn_key)``
    at the first draw, so a stream that never draws costs a small object and no numpy state;
    ``skip``: the first values of that sequence were already used (read ahead), pass them over.
    Blocks start at :data:`FIRST_BLOCK` values and double up to ``max_block``. PCG64 spends one
    64-bit output per float, so the values are the generator's own sequence however it is cut
    into blocks: they depend only on the seed and the stream name."""

    __slots__ = ("_gen", "_entropy", "_spawn_key", "_skip", "_block", "_max_block", "_it")

    def __init__(
        self,
        gen: np.random.Generator | None = None,
        max_block: int = MAX_BLOCK,
        *,
        entropy: int | None = None,
        spawn_key: tuple[int, ...] = (),
        skip: int = 0,
    ):
        if (gen is None) == (entropy is None):
            raise ValueError("give either a generator or the entropy to build one from")
        if max_block < 1:
            raise ValueError("max_block must be >= 1")
        self._gen = gen
        self._entropy = entropy
        self._spawn_key = spawn_key
        self._skip = skip  # values of the sequence already used elsewhere, passed over first
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
        if self._skip:
            gen.random(self._skip)
            self._skip = 0
        block = self._block
        self._block = min(2 * block, self._max_block)
        it = self._it = iter(gen.random(block).tolist())
        return next(it)

    def integer(self, n: int) -> int:
        """A uniform integer in [0, n)."""
        return int(self.next() * n)

    @property
    def started(self) -> bool:
        """Whether its generator exists (given, or built by a first draw)."""
        return self._gen is not None

    @property
    def entropy(self) -> int | None:
        """The entropy its generator is built from (None: the generator was given)."""
        return self._entropy

    @property
    def spawn_key(self) -> tuple[int, ...]:
        """The spawn key its generator is built from."""
        return self._spawn_key

    @property
    def skip(self) -> int:
        """Values of its sequence passed over before its first draw (0 once drawn)."""
        return self._skip


# ---- many streams' first draws at once ----------------------------------------------------
# numpy's SeedSequence (numpy/random/bit_generator.pyx: 32-bit hash mixing of the entropy words
# into a pool of 4, then 8 words of state out of it) and PCG64 (numpy/random/src/pcg64: a
# 128-bit LCG seeded with (state, increment), XSL-RR output), evaluated for many spawn keys at
# once; RngStreams.first_uniforms checks the result against numpy's own generator every time.
_POOL_SIZE = 4
_INIT_A, _MULT_A = 0x43B0D7E5, 0x931E8875
_INIT_B, _MULT_B = 0x8B51F9DD, 0x58F38DED
_MIX_MULT_L, _MIX_MULT_R = 0xCA01F9DD, 0x4973F715
_MASK32, _MASK64, _MASK128 = (1 << 32) - 1, (1 << 64) - 1, (1 << 128) - 1
_PCG_MULT = 0x2360ED051FC65DA44385DF649FCCF645
_TO_UNIT = 1.0 / 9007199254740992.0  # 2**-53: a 53-bit integer to a float in [0, 1)


def _uint32_words(value: int) -> list[int]:
    """``value`` as little-endian 32-bit words, at least one (numpy's coercion of an int)."""
    n_words = max(1, math.ceil(value.bit_length() / 32))
    return [(value >> (32 * i)) & _MASK32 for i in range(n_words)]


def _pcg64_first_uniforms(seed: int, keys: np.ndarray, count: int) -> np.ndarray:
    """First ``count`` U[0,1) floats of ``Generator(PCG64(SeedSequence(seed, spawn_key=(k,))))``
    for every 32-bit key ``k`` of ``keys`` (shape (len(keys), count))."""
    n = len(keys)
    hash_const = _INIT_A

    def hashmix(value: np.ndarray) -> np.ndarray:
        nonlocal hash_const
        value = value ^ np.uint32(hash_const)
        hash_const = hash_const * _MULT_A & _MASK32
        value = value * np.uint32(hash_const)
        return value ^ (value >> np.uint32(16))

    def mix(x: np.ndarray, y: np.ndarray) -> np.ndarray:
        result = np.uint32(_MIX_MULT_L) * x - np.uint32(_MIX_MULT_R) * y
        return result ^ (result >> np.uint32(16))

    run = _uint32_words(seed)
    run += [0] * (_POOL_SIZE - len(run))  # padded when there is a spawn key
    entropy = [np.full(n, w, dtype=np.uint32) for w in run] + [keys.astype(np.uint32)]
    pool = [hashmix(entropy[i]) for i in range(_POOL_SIZE)]
    for i_src in range(_POOL_SIZE):
        for i_dst in range(_POOL_SIZE):
            if i_src != i_dst:
                pool[i_dst] = mix(pool[i_dst], hashmix(pool[i_src]))
    for word in entropy[_POOL_SIZE:]:
        for i_dst in range(_POOL_SIZE):
            pool[i_dst] = mix(pool[i_dst], hashmix(word))
    # generate_state(4, uint64): 8 words from the pool, paired little-endian
    hash_const = _INIT_B
    words = []
    for i in range(8):
        value = pool[i % _POOL_SIZE] ^ np.uint32(hash_const)
        hash_const = hash_const * _MULT_B & _MASK32
        value = value * np.uint32(hash_const)
        words.append((value ^ (value >> np.uint32(16))).astype(np.uint64))
    seed_hi, seed_lo, inc_hi, inc_lo = (
        (words[2 * j] | (words[2 * j + 1] << np.uint64(32))).astype(object) for j in range(4)
    )
    # PCG64 in exact integers (object arrays of Python ints). Seeding: state 0, one step
    # (state = increment), add the seed, one more step; each draw steps, then outputs XSL-RR
    # of the new state, and a float takes its top 53 bits.
    inc = (((inc_hi << 64) | inc_lo) << 1 | 1) & _MASK128
    state = (inc + ((seed_hi << 64) | seed_lo)) & _MASK128
    state = (state * _PCG_MULT + inc) & _MASK128
    out = np.empty((n, count))
    for j in range(count):
        state = (state * _PCG_MULT + inc) & _MASK128
        xored = ((state >> 64) ^ state) & _MASK64
        rot = state >> 122
        raw = ((xored >> rot) | (xored << ((64 - rot) & 63))) & _MASK64
        out[:, j] = (raw >> 11).astype(np.float64) * _TO_UNIT
    return out

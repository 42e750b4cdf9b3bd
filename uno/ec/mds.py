"""MDS (Reed–Solomon) erasure coding of message blocks, as UnoRC uses it for inter-DC flows.

Source: Uno paper, §3.3 and §4.2 "Erasure Coding": a message is cut into blocks of ``x`` data
and ``y`` parity packets (the evaluation uses (8, 2), §5); the receiver rebuilds a block once any
``x`` of its ``x + y`` packets arrived, and NACKs the block when a timer expires first.

The code
--------
An ``(x + y, x)`` block code is the Reed–Solomon code of ``y`` parity symbols over GF(2^8), as
``galois.ReedSolomon(255, 255 - y, systematic=True)`` defines it, *shortened* to ``x`` message
symbols (galois docs, ``FEC.encode``: "for the shortened [n-s, k-s, d] code, pass k-s message
symbols"). The plain ``(x + y, x)`` Reed–Solomon code does not exist for most shapes, (10, 8)
included: an RS code of length n needs a primitive n-th root of unity, so n must divide q - 1
(255 = 3·5·17 for GF(2^8)). Shortening keeps the MDS property: any ``x`` of the ``x + y`` symbols
determine the message. The systematic codeword is the message followed by the parity, so
positions ``0 .. x-1`` are data and ``x .. x+y-1`` parity. ``y = 0`` is the identity code (no
parity, every packet needed). The field, its products and the generator matrix come from
:mod:`uno.ec.gf256` (compiled, cached kernels); galois stays the reference the tests compare
with.

Each packet carries ``symbols_per_packet`` one-byte symbols (GF(2^8) elements) per block and the
code runs column-wise: symbol ``j`` of the ``x + y`` packets is one codeword, so packet ``i``
carries symbol ``i`` of each of the ``symbols_per_packet`` codewords.

Decoding inverts the ``x × x`` submatrix of the systematic generator at the received positions
and caches the inverse per erasure pattern on the coder; a decode is then one ``x × x`` by
``x × symbols_per_packet`` product: about 8 µs per (10, 8) block of 4 codewords on a quiet
2-core machine, some 200 times less than galois's general errors-and-erasures decoder
(``benchmarks/ec_decode_speed.py``). Encoding and decoding are per block (the sender encodes a
block when its first packet leaves, the receiver decodes it when its ``x``-th packet arrives);
on the Fig. 13 A run the payload adds a few percent to the wall time of the count-only run
(``benchmarks/ec_payload_speed.py``).

Last block
----------
A message of ``N`` data packets has ``ceil(N / x)`` blocks; every block but the last has ``x`` data
packets, the last has ``k = N - (blocks - 1) x`` (1 .. x), and *every* block, the short last one
included, gets ``y`` parity packets. The short block uses the ``(k + y, k)`` code, which is the
same RS code shortened further; its codewords are those of the ``(x + y, x)`` code whose first
``x - k`` data symbols are zero (never sent). So loss tolerance is ``y`` packets in every block.

API
---
- :class:`MdsCode` ``(data_packets=8, parity_packets=2, symbols_per_packet=4)``: ``x``, ``y``,
  ``n``, ``generator``; ``encode(data) -> coded``; ``decode(received, check=True) -> data``;
  ``inverse_cache_size``, ``clear_inverse_cache()``.
- :func:`block_layout` ``(n_data_packets, x, y) -> BlockLayout``: pure mapping between wire
  packets and (block, position); ``BlockLayout.new_receiver(block) -> BlockReceiver``.
- :class:`BlockReceiver`: per-block receiver state: ``add(position, symbols=None) -> bool``
  (True when that arrival makes the block decodable), ``missing()``, ``decodable``, ``decoded``.
- :class:`BlockCoder` ``(data_packets=8, parity_packets=2, symbols_per_packet=4, payload=True,
  seed=0)``: what a transport holds. ``layout(n)``; ``encode_block(flow_id, layout, block)`` gives
  the symbols of each wire packet of the block; ``decode_block(flow_id, block, receiver)`` decodes
  and compares with the data that was sent, raising :class:`DecodeMismatchError` on a mismatch.
  ``payload=False`` is the count-only mode: same bookkeeping, no symbols, no code built.
- :func:`block_data` ``(seed, flow_id, block, k, symbols_per_packet)``: the data symbols of a block,
  a pure function of its arguments, so the receiver regenerates what the sender encoded.

Typical transport use (sender, then receiver)::

    coder = BlockCoder(8, 2)
    lay = coder.layout(flow.n_packets)
    for b in range(lay.n_blocks):
        coded = coder.encode_block(flow.flow_id, lay, b)  # (k + y, symbols) or None
        for pos, seq in enumerate(lay.wire_range(b)):     # data positions, then parity
            send(seq, None if coded is None else coded[pos])
    ...
    block, pos = lay.locate(seq)                          # on each arrival
    rx = receivers.get(block)
    if rx is None:
        rx = receivers[block] = lay.new_receiver(block)
    if rx.add(pos, symbols):
        coder.decode_block(flow.flow_id, block, rx)       # raises on a wrong decode
    ...
    nack_seqs = [lay.wire_seq(block, p) for p in rx.missing()]   # on the block timer
"""

from __future__ import annotations

import operator
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from numba import njit
from numpy.typing import ArrayLike

from uno.core.errors import InvariantError
from uno.ec.gf256 import EXP, INV, MUL, gf_inverse, gf_matmul, rs_generator
from uno.ec.gf256 import ORDER as FIELD_ORDER
from uno.net.hashing import GOLDEN, mix64

#: GF(2^8): one symbol is one byte, so a code has at most 2^8 - 1 = 255 positions
MAX_BLOCK_PACKETS = FIELD_ORDER - 1


class UndecodableError(ValueError):
    """Fewer than ``x`` distinct positions of a block arrived: the block cannot be decoded yet."""


class DecodeMismatchError(InvariantError):
    """A decoded block differs from what was sent (or its received symbols contradict each other)."""


class InconsistentBlockError(DecodeMismatchError):
    """More than ``x`` positions arrived and the surplus ones disagree with the decoded data."""


def _check_shape(x: int, y: int) -> tuple[int, int]:
    x = operator.index(x)
    y = operator.index(y)
    if x < 1:
        raise ValueError(f"data_packets must be >= 1, got {x}")
    if y < 0:
        raise ValueError(f"parity_packets must be >= 0, got {y}")
    if x + y > MAX_BLOCK_PACKETS:
        raise ValueError(
            f"data_packets + parity_packets must be <= {MAX_BLOCK_PACKETS} (GF(2^8)), got {x + y}"
        )
    return x, y


class MdsCode:
    """(n = x + y, x) systematic MDS code over GF(2^8): the Reed–Solomon code of
    ``galois.ReedSolomon(255, 255 - y)`` shortened to ``x`` message symbols (``y = 0``: identity
    code).

    A block is ``x`` data packets of ``symbols_per_packet`` one-byte symbols each; ``encode``
    returns all ``n`` packets' symbols, the first ``x`` rows being the data (systematic).
    Inverses are cached per erasure pattern on the instance: at most C(n, x) - 1 of them
    (none for the all-data pattern), 44 for (10, 8).
    """

    def __init__(self, data_packets: int = 8, parity_packets: int = 2, symbols_per_packet: int = 4):
        x, y = _check_shape(data_packets, parity_packets)
        spp = operator.index(symbols_per_packet)
        if spp < 1:
            raise ValueError(f"symbols_per_packet must be >= 1, got {spp}")
        self._x = x
        self._y = y
        self._spp = spp
        gen = rs_generator(MUL, EXP, x, y)  # (x, n)
        self._gen_t = np.ascontiguousarray(gen.T)  # (n, x): row p maps the data to position p
        self._parity_t = self._gen_t[x:]  # (y, x), C-contiguous (a slice of whole rows)
        self._inverses: dict[tuple[int, ...], np.ndarray] = {}

    @property
    def x(self) -> int:
        """Data packets (message symbols per codeword) in a block."""
        return self._x

    @property
    def y(self) -> int:
        """Parity packets in a block: any ``y`` lost packets are recovered."""
        return self._y

    @property
    def n(self) -> int:
        """Packets in a block, ``x + y``."""
        return self._x + self._y

    @property
    def symbols_per_packet(self) -> int:
        """One-byte symbols each packet carries for the block (= codewords per block)."""
        return self._spp

    @property
    def generator(self) -> np.ndarray:
        """The (x, n) systematic generator matrix of the shortened code, uint8 (a copy)."""
        return self._gen_t.T.copy()

    @property
    def inverse_cache_size(self) -> int:
        """Erasure patterns whose decoding inverse is cached on this instance."""
        return len(self._inverses)

    def clear_inverse_cache(self) -> None:
        """Forget the cached inverses (they are recomputed on demand)."""
        self._inverses.clear()

    def _inverse(self, positions: tuple[int, ...]) -> np.ndarray:
        inv = self._inverses.get(positions)
        if inv is None:
            # Received rows R = G[:, P]^T @ data, so data = (G[:, P]^T)^-1 @ R; any x columns of
            # an MDS generator are independent, so the inverse exists.
            inv = gf_inverse(MUL, INV, self._gen_t[list(positions)])
            self._inverses[positions] = inv
        return inv

    def _as_symbols(self, arr: ArrayLike, rows: int, what: str) -> np.ndarray:
        a = np.asarray(arr)
        if a.shape != (rows, self._spp):
            raise ValueError(f"{what} must have shape ({rows}, {self._spp}), got {a.shape}")
        if a.dtype != np.uint8:
            if not np.issubdtype(a.dtype, np.integer) or a.min() < 0 or a.max() >= FIELD_ORDER:
                raise ValueError(f"{what} must be bytes (integers 0..255)")
            a = a.astype(np.uint8)
        # one compiled form of the kernels: C-contiguous uint8
        return np.ascontiguousarray(a)

    def encode(self, data: ArrayLike) -> np.ndarray:
        """Encode one block: ``data`` (x, symbols_per_packet) bytes -> (n, symbols_per_packet)
        uint8, row ``i`` being the symbols of packet ``i``; rows ``0 .. x-1`` equal ``data``."""
        d = self._as_symbols(data, self._x, "data")
        out = np.empty((self.n, self._spp), dtype=np.uint8)
        out[: self._x] = d
        if self._y:
            out[self._x :] = gf_matmul(MUL, self._parity_t, d)
        return out

    def decode(self, received: Mapping[int, ArrayLike], check: bool = True) -> np.ndarray:
        """Decode one block from ``received``: position (0 .. n-1) -> that packet's
        ``symbols_per_packet`` bytes. Returns the data, (x, symbols_per_packet) uint8.

        Uses the ``x`` lowest received positions (one canonical cache key per set, and data rows
        are preferred). Raises :class:`UndecodableError` if fewer than ``x`` positions arrived.
        With ``check`` and more than ``x`` positions, the surplus ones are re-encoded and compared:
        a single corrupted symbol is then always caught (the punctured code has distance >= 2),
        raising :class:`InconsistentBlockError`. With exactly ``x`` positions a wrong symbol
        cannot be detected here; it yields wrong data (decoding is a bijection), which the
        caller's comparison with what was sent catches.
        """
        positions = sorted(operator.index(p) for p in received)
        if positions and (positions[0] < 0 or positions[-1] >= self.n):
            raise ValueError(f"positions must be in 0..{self.n - 1}, got {positions}")
        if len(positions) < self._x:
            raise UndecodableError(
                f"{len(positions)} of {self.n} positions received, {self._x} needed"
            )
        use = tuple(positions[: self._x])
        rows = self._as_symbols(
            np.stack([np.asarray(received[p]) for p in use]), self._x, "received symbols"
        )
        if use[-1] == self._x - 1:  # all data packets arrived: the inverse is the identity
            data = rows.copy()
        else:
            data = gf_matmul(MUL, self._inverse(use), rows)
        if check and len(positions) > self._x:
            extra = positions[self._x :]
            got = self._as_symbols(
                np.stack([np.asarray(received[p]) for p in extra]), len(extra), "received symbols"
            )
            if not np.array_equal(gf_matmul(MUL, self._gen_t[extra], data), got):
                raise InconsistentBlockError(
                    f"received positions {extra} disagree with the data decoded from {list(use)}"
                )
        return data


_MASK64 = (1 << 64) - 1
_ONE = np.uint64(1)
_U56 = np.uint64(56)


def block_data(seed: int, flow_id: int, block: int, k: int, symbols_per_packet: int) -> np.ndarray:
    """Data symbols of a block, (k, symbols_per_packet) uint8: a pure function of its arguments
    (SplitMix64 over a counter, keyed by seed, flow and block), so the receiver regenerates
    what the sender encoded without either keeping it or sharing a random stream."""
    return _block_symbols(
        np.uint64(seed & _MASK64),
        np.uint64(flow_id & _MASK64),
        np.uint64(block & _MASK64),
        operator.index(k),
        operator.index(symbols_per_packet),
    )


@njit(cache=True)
def _block_symbols(seed, flow_id, block, k, symbols_per_packet):
    """:func:`block_data` on uint64 keys (one compiled call per block: the sender and the
    receiver each draw every block once)."""
    key = mix64(seed + GOLDEN) ^ flow_id
    key = mix64(key + GOLDEN) ^ block
    out = np.empty((k, symbols_per_packet), dtype=np.uint8)
    ctr = np.uint64(0)
    for i in range(k):
        for j in range(symbols_per_packet):
            ctr += _ONE
            # top byte: the best-mixed bits of the finaliser
            out[i, j] = np.uint8(mix64(key + ctr * GOLDEN) >> _U56)
    return out


class BlockReceiver:
    """Receiver state of one block of ``data_packets`` (k) data and ``parity_packets`` (y) parity
    packets: which positions (0 .. k+y-1) arrived, their symbols until the block is decoded."""

    __slots__ = ("k", "size", "_mask", "_count", "symbols", "decoded")

    def __init__(self, data_packets: int, parity_packets: int):
        k, y = _check_shape(data_packets, parity_packets)
        self.k = k
        self.size = k + y
        self._mask = 0  # bit p set: position p arrived
        self._count = 0
        #: position -> symbols of the packets that carried some (payload mode), until decoded
        self.symbols: dict[int, np.ndarray] = {}
        self.decoded = False

    def add(self, position: int, symbols: np.ndarray | None = None) -> bool:
        """Record an arrival. True exactly once: when this is the k-th distinct position (the
        block just became decodable). Duplicates and later arrivals return False; symbols that
        arrive after the block was decoded are not kept."""
        p = operator.index(position)
        if not 0 <= p < self.size:
            raise ValueError(f"position {p} outside 0..{self.size - 1}")
        bit = 1 << p
        if self._mask & bit:
            return False
        self._mask |= bit
        self._count += 1
        if symbols is not None and not self.decoded:
            self.symbols[p] = symbols
        return self._count == self.k

    @property
    def n_received(self) -> int:
        """Distinct positions that arrived."""
        return self._count

    @property
    def decodable(self) -> bool:
        """At least k distinct positions arrived."""
        return self._count >= self.k

    def has(self, position: int) -> bool:
        """Whether ``position`` arrived."""
        return bool(self._mask >> position & 1)

    def missing(self) -> tuple[int, ...]:
        """Positions not yet arrived, ascending (what a NACK asks the sender to resend)."""
        return tuple(p for p in range(self.size) if not self._mask >> p & 1)

    def mark_decoded(self) -> None:
        """The block was decoded: drop its symbols."""
        self.decoded = True
        self.symbols = {}


@dataclass(frozen=True)
class BlockLayout:
    """How a message of ``n_data`` data packets maps onto blocks of ``x`` data + ``y`` parity
    packets and onto wire packets. Pure arithmetic, no per-packet storage.

    Wire sequence numbers run block by block; within a block, data positions 0 .. k-1 (message
    data packets in order) then parity positions k .. k+y-1. Block ``b`` starts at wire sequence
    ``b (x + y)``; only the last block may be short (k < x), and it still has ``y`` parity.
    The counts are computed once per layout (a transport asks for them on every packet).
    """

    n_data: int
    x: int
    y: int

    def __post_init__(self) -> None:
        _check_shape(self.x, self.y)
        if operator.index(self.n_data) < 1:
            raise ValueError(f"a message has at least one data packet, got {self.n_data}")

    @cached_property
    def n_blocks(self) -> int:
        """Blocks in the message, ceil(n_data / x)."""
        return -(-self.n_data // self.x)

    @cached_property
    def n_wire(self) -> int:
        """Wire packets of the message (data and parity), each sent once."""
        return self.n_data + self.n_blocks * self.y

    @cached_property
    def n_parity(self) -> int:
        """Parity packets of the message, y per block."""
        return self.n_blocks * self.y

    def _check_block(self, block: int) -> int:
        b = operator.index(block)
        if not 0 <= b < self.n_blocks:
            raise ValueError(f"block {b} outside 0..{self.n_blocks - 1}")
        return b

    def data_packets(self, block: int) -> int:
        """Data packets (k) of ``block``: x, except possibly for the last block."""
        b = self._check_block(block)
        return self.x if b < self.n_blocks - 1 else self.n_data - b * self.x

    def block_size(self, block: int) -> int:
        """Wire packets of ``block``, k + y."""
        return self.data_packets(block) + self.y

    def wire_range(self, block: int) -> range:
        """Wire sequence numbers of ``block`` in send order (position = index in the range)."""
        start = self._check_block(block) * (self.x + self.y)
        return range(start, start + self.block_size(block))

    def wire_seq(self, block: int, position: int) -> int:
        """Wire sequence number of ``position`` in ``block``."""
        size = self.block_size(block)
        if not 0 <= position < size:
            raise ValueError(f"position {position} outside 0..{size - 1} of block {block}")
        return block * (self.x + self.y) + position

    def locate(self, wire_seq: int) -> tuple[int, int]:
        """(block, position) of a wire packet."""
        s = operator.index(wire_seq)
        if not 0 <= s < self.n_wire:
            raise ValueError(f"wire sequence {s} outside 0..{self.n_wire - 1}")
        return divmod(s, self.x + self.y)

    def is_parity(self, block: int, position: int) -> bool:
        """Whether ``position`` of ``block`` is a parity packet."""
        return position >= self.data_packets(block)

    def data_index(self, block: int, position: int) -> int | None:
        """Index (0 .. n_data-1) in the message of a data position; None for a parity position."""
        if self.is_parity(block, position):
            return None
        return block * self.x + position

    def locate_data(self, data_index: int) -> tuple[int, int]:
        """(block, position) of the message's data packet ``data_index``."""
        i = operator.index(data_index)
        if not 0 <= i < self.n_data:
            raise ValueError(f"data packet {i} outside 0..{self.n_data - 1}")
        return divmod(i, self.x)

    def new_receiver(self, block: int) -> BlockReceiver:
        """Fresh receiver state for ``block``."""
        return BlockReceiver(self.data_packets(block), self.y)


def block_layout(n_data_packets: int, x: int, y: int) -> BlockLayout:
    """Layout of a message of ``n_data_packets`` data packets in (x + y, x) blocks."""
    return BlockLayout(n_data_packets, x, y)


class BlockCoder:
    """The erasure-coding end of a transport: encodes blocks on the sender side and decodes and
    verifies them on the receiver side. One instance can serve every flow of a run.

    ``payload=True``: blocks carry real symbols (``symbols_per_packet`` bytes per packet); a
    decode is compared with the data that was sent (regenerated by :func:`block_data` from
    ``seed``, flow and block) and a difference raises :class:`DecodeMismatchError`.
    ``payload=False`` (count-only, for the largest sweeps): the same decodability decisions from
    the same bookkeeping, no symbols and no code built.
    The ``MdsCode`` per block shape (full blocks, and each short last-block size) is built on
    first use and kept on the instance.
    """

    def __init__(
        self,
        data_packets: int = 8,
        parity_packets: int = 2,
        symbols_per_packet: int = 4,
        payload: bool = True,
        seed: int = 0,
    ):
        self.x, self.y = _check_shape(data_packets, parity_packets)
        self.symbols_per_packet = operator.index(symbols_per_packet)
        if self.symbols_per_packet < 1:
            raise ValueError(f"symbols_per_packet must be >= 1, got {self.symbols_per_packet}")
        self.payload = bool(payload)
        self.seed = operator.index(seed)
        self._codes: dict[int, MdsCode] = {}

    def layout(self, n_data_packets: int) -> BlockLayout:
        """Block layout of a message of ``n_data_packets`` data packets."""
        return BlockLayout(n_data_packets, self.x, self.y)

    def code(self, k: int) -> MdsCode:
        """The (k + y, k) code of a block with k data packets (built once per k)."""
        c = self._codes.get(k)
        if c is None:
            c = self._codes[k] = MdsCode(k, self.y, self.symbols_per_packet)
        return c

    def block_data(self, flow_id: int, block: int, k: int) -> np.ndarray:
        """The data symbols the sender encodes for ``block`` of ``flow_id``, (k, symbols)."""
        return block_data(self.seed, flow_id, block, k, self.symbols_per_packet)

    def encode_block(self, flow_id: int, layout: BlockLayout, block: int) -> np.ndarray | None:
        """Symbols of every wire packet of ``block``, (k + y, symbols_per_packet) uint8, row =
        position (same order as ``layout.wire_range(block)``); None in count-only mode."""
        if not self.payload:
            return None
        k = layout.data_packets(block)
        return self.code(k).encode(self.block_data(flow_id, block, k))

    def decode_block(self, flow_id: int, block: int, receiver: BlockReceiver) -> None:
        """Decode ``block`` of ``flow_id`` from what ``receiver`` holds, check it against what
        was sent, and mark it decoded. Raises :class:`UndecodableError` if fewer than k
        positions arrived (payload mode: carrying symbols) and :class:`DecodeMismatchError` if
        the decode differs from the data sent."""
        k = receiver.k
        if not receiver.decodable:
            raise UndecodableError(
                f"flow {flow_id} block {block}: {receiver.n_received} of {receiver.size} "
                f"positions received, {k} needed"
            )
        if self.payload:
            decoded = self.code(k).decode(receiver.symbols)
            if not np.array_equal(decoded, self.block_data(flow_id, block, k)):
                raise DecodeMismatchError(
                    f"flow {flow_id} block {block}: data decoded from positions "
                    f"{sorted(receiver.symbols)[:k]} differs from the data sent"
                )
        receiver.mark_decoded()

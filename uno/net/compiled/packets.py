"""The packet pool: a packet in the network is a row of ``PK`` (columns
:data:`uno.net.compiled.layout.K`); free rows are chained through the ``next`` column, and so
are the rows of a port's FIFO. Rows never move, so a FIFO is a linked list of rows: no per-port
ring buffer has to be sized for a WAN link's packets."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.net.compiled.layout import KI, H, K
from uno.net.hashing import flow_key


@njit(cache=True)
def hash_key(src, dst, entropy):
    """The ECMP hash key of (``src``, ``dst``, ``entropy``) as the int64 a row holds
    (:func:`uno.net.hashing.flow_key`)."""
    return np.int64(flow_key(src, dst, entropy))


@njit(cache=True)
def take_row(ST, PK):
    """A row off the pool's free list (the caller made sure there is one)."""
    slot = ST[H.free]
    ST[H.free] = PK[slot, K.next]
    ST[H.in_pool] += 1
    return slot


@njit(cache=True)
def new_packet(ST, PK, kind, size, src, dst, entropy, hkey, ecn, flow, seq, payload):
    """A row off the free list holding a new packet (``size`` wire bytes, ``payload`` bytes,
    hash key ``hkey``), not yet in a PFC ingress queue and (INT on) without records."""
    slot = take_row(ST, PK)
    PK[slot, K.kind] = kind
    PK[slot, K.bytes] = size
    PK[slot, K.dst] = dst
    PK[slot, K.ecn] = ecn
    PK[slot, K.hkey] = hkey
    PK[slot, K.flow] = flow
    PK[slot, K.seq] = seq
    PK[slot, K.payload] = payload
    PK[slot, K.src] = src
    PK[slot, K.entropy] = entropy
    PK[slot, K.ingress] = -1
    PK[slot, K.credit] = -1
    PK[slot, K.pfq_bytes] = 0
    PK[slot, K.credit_rate] = 0
    PK[slot, K.dqm_rate] = 0
    if ST[H.int_max] > 0:
        PK[slot, KI.n_records] = 0  # (a reused row: no records yet)
    return slot


@njit(cache=True)
def free_row(ST, PK, slot):
    """Return row ``slot`` to the pool's free list."""
    PK[slot, K.next] = ST[H.free]
    ST[H.free] = slot
    ST[H.in_pool] -= 1


@njit(cache=True)
def fifo_append(ST, PK, head_at, tail_at, slot):
    """Append ``slot`` to the linked FIFO whose head and tail are ``ST[head_at]``,
    ``ST[tail_at]`` (a port's queue, control lane or wire)."""
    PK[slot, K.next] = -1
    tail = ST[tail_at]
    if tail >= 0:
        PK[tail, K.next] = slot
    else:
        ST[head_at] = slot
    ST[tail_at] = slot

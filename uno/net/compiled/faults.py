"""Link faults in the kernel (:mod:`uno.faults.models`: a failed link, i.i.d. and correlated
block loss), applied where a packet leaves a link's wire, before the next node, as the Python
``FaultyLink`` does: each faulty port's models in order (rows :data:`M_DOWN`, :data:`M_IID`,
:data:`M_BLOCK` of :mod:`uno.net.compiled.layout`), their probabilities in rows of ``F`` after
the ports', their draws from the port's ``fault/<port>`` stream."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.net.compiled.layout import FM, M_BLOCK, M_DOWN, M_IID, N_MODEL, REASON, H, P
from uno.net.compiled.pcg import pcg64_next_double

#: the largest block of the block loss model the kernel keeps (a bit per position, int64)
MAX_BLOCK_PACKETS = 63


@njit(cache=True)
def _fault_float(ST, F, i):
    """The fault models' ``i``-th float (probabilities): they fill the rows of ``F`` after the
    ports', a row's width at a time."""
    width = F.shape[1]
    return F[ST[H.n_ports] + i // width, i % width]


@njit(cache=True)
def _new_block(ST, F, U, mb, rng):
    """Block loss model row ``mb`` starts a block (:meth:`uno.faults.models.BlockLoss._new_block`):
    one draw picks how many of its packets are lost (k), then positions are drawn, uniformly
    among the block's, until k distinct ones are doomed (the same draws in the same order)."""
    u = pcg64_next_double(U, rng)
    k = 0
    first = ST[mb + M_BLOCK.cumulative_at]
    for i in range(ST[mb + M_BLOCK.n_cumulative]):
        if u < _fault_float(ST, F, first + i):
            k = i + 1
            break
    n = ST[mb + M_BLOCK.packets]
    doomed = np.int64(0)
    count = 0
    while count < k:
        pos = np.int64(pcg64_next_double(U, rng) * n)
        bit = np.int64(1) << pos
        if not doomed & bit:
            doomed |= bit
            count += 1
    ST[mb + M_BLOCK.doomed] = doomed
    counters = ST[mb + M_BLOCK.counters_at]
    ST[counters] += 1
    ST[counters + 1 + k] += 1


@njit(cache=True)
def fault_drop(ST, F, U, pb, now):
    """Whether the faults of the port whose row starts at ``pb`` drop the packet leaving its
    link at ``now`` (:meth:`uno.faults.models.FaultyLink.receive`): its models in order, the
    first that drops decides (so the later ones draw nothing for this packet). Returns the
    reason (``REASON.*``), ``REASON.none`` to pass the packet on."""
    off = ST[pb + P.flt_off]
    rng = ST[pb + P.flt_rng]
    for m in range(ST[pb + P.flt_n]):
        mb = off + m * N_MODEL
        kind = ST[mb + M_DOWN.type]
        if kind == FM.down:
            end = ST[mb + M_DOWN.end_ps]
            if now >= ST[mb + M_DOWN.start_ps] and (end < 0 or now < end):
                return REASON.down
        elif kind == FM.iid:
            if pcg64_next_double(U, rng) < _fault_float(ST, F, ST[mb + M_IID.p_at]):
                return REASON.random
        else:
            i = ST[mb + M_BLOCK.position]
            if i == 0:
                _new_block(ST, F, U, mb, rng)
            ST[mb + M_BLOCK.position] = i + 1 if i + 1 < ST[mb + M_BLOCK.packets] else 0
            if ST[mb + M_BLOCK.doomed] & (np.int64(1) << i):
                return REASON.block
    return REASON.none

"""Retransmission timers too far ahead for a flow's delay line.

A flow's line holds a slot per step of its round trip (:mod:`uno.fluid.rings`); its lost
bytes wait for their retransmission timer, which may expire several round trips after the send
(a cross-DC flow's default timeout is its base RTT and the drain time of every buffer on its
path). Filed in the line, a single loss would grow the line to the timeout's length for the
rest of the flow's life (on Gear's Fig. 8 traffic, 228 of 1,913 cross-DC flows: lines three
times as long). So a timer beyond the line's end waits in a heap of the pool (``RingPool.far``: a row
per timer, ordered by its step, then by the order of filing), and enters the line's slot of its
step at the start of that step (:func:`drain_far_timers`), before the step reads it. Once a
flow has a timer there, its later timers follow it there until every one has entered its line
(``RingPool.far_count``), so a slot sums its timers in the order they were filed: while the
step keeps its size the run is the same, bit for bit, as with every timer in the line. Where the heap is full a timer goes
into the line, which grows for it (:func:`uno.fluid.rings.fit_lag`). When the step changes
size the timers move to the steps of the new size as the lines' slots do
(:func:`rescale_far_timers`; timers that meet in a coarse step then add up in the order of
their filing, where the lines' slots add up by their fine steps: the same bytes, at the same
step).

Units: steps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.columns import R_TIMEOUT
from uno.fluid.rings import mark_ring_due

#: a heap row's fields: the step the timer expires at, its place in the order of filing, the
#: flow, its bytes
FAR_STEP, FAR_SEQ, FAR_FLOW, FAR_BYTES = 0, 1, 2, 3
#: the heap's rows a flow may use on average (one timer per step in which a flow lost bytes,
#: for a timeout's span; full, the timers go into the lines), and the most it has (128 MiB)
FAR_TIMERS_PER_FLOW = 32
FAR_TIMERS_MAX = 1 << 22


def far_timer_arrays(n_flows: int):
    """The heap of a run of ``n_flows`` flows (:data:`uno.fluid.state.RingPool`'s ``far``,
    ``far_meta``: its rows in use and the next place in the order of filing, ``far_count``:
    each flow's timers in it)."""
    rows = min(FAR_TIMERS_PER_FLOW * n_flows + 64, FAR_TIMERS_MAX)
    return (np.zeros((rows, 4)), np.zeros(2, dtype=np.int64), np.zeros(n_flows, dtype=np.int64))


@njit(cache=True, error_model="numpy", inline="always")
def _before(far, i, j) -> bool:
    """Whether heap row ``i`` comes before row ``j``: its step, then its filing, first."""
    if far[i, FAR_STEP] != far[j, FAR_STEP]:
        return far[i, FAR_STEP] < far[j, FAR_STEP]
    return far[i, FAR_SEQ] < far[j, FAR_SEQ]


@njit(cache=True, error_model="numpy", inline="always")
def _swap(far, i, j) -> None:
    for c in range(4):
        far[i, c], far[j, c] = far[j, c], far[i, c]


@njit(cache=True, error_model="numpy")
def file_far_timer(pool, f, k, lag, lost) -> bool:
    """Flow ``f``'s ``lost`` bytes, filed at step ``k``, time out ``lag`` steps later: into
    the heap if that is beyond the end of the flow's line (or the flow has timers there
    already) and the heap has room; returns whether it took them."""
    if lag < pool.length[f] and pool.far_count[f] == 0:
        return False  # (its line holds it)
    step = k + lag
    far, meta = pool.far, pool.far_meta
    i = meta[0]
    if i >= far.shape[0]:
        return False
    far[i, FAR_STEP] = step
    far[i, FAR_SEQ] = meta[1]
    far[i, FAR_FLOW] = f
    far[i, FAR_BYTES] = lost
    meta[0] = i + 1
    meta[1] += 1
    pool.far_count[f] += 1
    while i > 0:  # (up the heap)
        parent = (i - 1) >> 1
        if not _before(far, i, parent):
            break
        _swap(far, i, parent)
        i = parent
    return True


@njit(cache=True, error_model="numpy", inline="always")
def _sift_down(far, i, n) -> None:
    """Row ``i`` down the heap of ``n`` rows to its place."""
    while True:
        left = 2 * i + 1
        if left >= n:
            return
        child = left
        if left + 1 < n and _before(far, left + 1, left):
            child = left + 1
        if not _before(far, child, i):
            return
        _swap(far, i, child)
        i = child


@njit(cache=True, error_model="numpy")
def _pop_first(far, meta) -> None:
    """The heap's first row off it."""
    last = meta[0] - 1
    meta[0] = last
    if last > 0:
        for c in range(4):
            far[0, c] = far[last, c]
        _sift_down(far, 0, last)


@njit(cache=True, error_model="numpy")
def drain_far_timers(k, fs, ring, pool, calendar) -> None:
    """The timers of the heap that expire at step ``k`` (or before: none) into their flows'
    lines' slot of step ``k``, before the step reads it; a finished flow's (no line) are
    dropped, as its line's were."""
    far, meta = pool.far, pool.far_meta
    while meta[0] > 0 and far[0, FAR_STEP] <= k:
        f = int(far[0, FAR_FLOW])
        lost = far[0, FAR_BYTES]
        _pop_first(far, meta)
        pool.far_count[f] -= 1
        if pool.ptr[f] >= 0:
            ring[pool.ptr[f] + k % pool.length[f], R_TIMEOUT] += lost
            mark_ring_due(calendar, fs, k, f)


@njit(cache=True, error_model="numpy")
def rescale_far_timers(pool, factor, finer) -> None:
    """The step changes size ``factor``-fold (``finer``: it shrinks): every timer apart moves
    to the step of the new size that its line's slot would move to
    (:func:`uno.fluid.rings.coarsen`: the coarse step holding it; :func:`~uno.fluid.rings.refine`:
    the first fine step of its span), and the heap is ordered again (steps that meet are
    ordered by filing)."""
    far, n = pool.far, pool.far_meta[0]
    for i in range(n):
        step = int(far[i, FAR_STEP])
        far[i, FAR_STEP] = step * factor if finer else step // factor
    for i in range(n // 2 - 1, -1, -1):
        _sift_down(far, i, n)

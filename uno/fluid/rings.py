"""The flows' delay lines: what the network did to a step's bytes comes back to the flow one RTT
later through its line, a ring of slots (``R_*`` columns, :mod:`uno.fluid.columns`), one slot
per step. The running flows take their lines from a pool and give them back when they finish
(:func:`ring_take`, :func:`ring_give`); a line starts a few base RTTs long and grows, when a
delay does not fit, up to the longest RTT and timeout its flow can meet (:func:`fit_lag`), so
its memory follows the delays the run meets, not the worst case the buffers allow. A calendar
says which flows have something due at which step (:func:`mark_due`), so a step passes over the
others; :func:`coarsen` refiles every line when the step grows.

Units: time in ps, delays in steps where named so.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.fluid.columns import (
    FS_ACK_LAST,
    FS_DUE_LAST,
    FS_LOSS_AT,
    FS_RTTMIN,
    FS_WAIT_LAST,
    FX_QUIET,
    R_ARRIVE,
    R_DSENT,
    R_RTTMIN,
    R_SENTMAX,
    R_WIRE_ACK,
    RING_SAMPLES,
)
from uno.fluid.int_records import SLOT_FIELDS
from uno.fluid.state import RingPool


@njit(cache=True, error_model="numpy", inline="always")
def take_block(pool, length) -> int:
    """The first row of a free, all-zero block of ``length`` rows (one of ``pool.class_len``):
    one a line of that length left, else the next rows never used (``pool.top``)."""
    c = np.searchsorted(pool.class_len, length)
    if pool.free_count[c] > 0:
        pool.free_count[c] -= 1
        return pool.free_rows[pool.free_base[c] + pool.free_count[c]]
    start = pool.top[0]
    pool.top[0] += length
    return start


@njit(cache=True, error_model="numpy", inline="always")
def give_block(pool, start, length) -> None:
    """Rows ``start`` .. ``start + length - 1``, all zero, are free again: the head of their
    class's stack of free lines (:func:`take_block`)."""
    c = np.searchsorted(pool.class_len, length)
    pool.free_rows[pool.free_base[c] + pool.free_count[c]] = start
    pool.free_count[c] += 1


@njit(cache=True, error_model="numpy")
def ring_take(pool, f) -> None:
    """Give flow ``f``, starting, its delay line: ``pool.length[f]`` all-zero rows of the
    ring, a line of that length a finished flow gave back, else rows never used. ``pool``:
    :data:`uno.fluid.state.RingPool`. Only the running flows hold rows, so the rows touched
    (and the memory the ring occupies: untouched pages stay unmapped) follow the number of
    flows running at once, not the workload's length, and reused rows are warm in cache. A
    line starts short (a few base RTTs) and grows when a delay does not fit
    (:func:`fit_lag`)."""
    pool.ptr[f] = take_block(pool, pool.length[f])


@njit(cache=True, error_model="numpy")
def ring_give(ring, pool, f, k, fs, calendar) -> None:
    """Flow ``f`` finished at step ``k``: its delay line goes back to the pool
    (:func:`ring_take`), cleared (feedback still due for it is never read).

    Only the slots of the steps after ``k``, up to ``FS_DUE_LAST``, whose calendar bit says
    something is due for ``f`` can hold anything (every earlier slot was read and zeroed at its
    step, and every write marks its step, :func:`mark_due`); only those are written. Clearing
    the whole line instead touched every page of it: most of a line is never reached, and the
    first touch of a page is a fault."""
    start = pool.ptr[f]
    n = pool.length[f]
    span = calendar.shape[0]
    word = f >> 6
    bit = np.uint64(1) << np.uint64(f & 63)
    last = int(fs[f, FS_DUE_LAST])
    if last > k + n - 1:  # (a write's step is at most n - 1 after its own)
        last = k + n - 1
    for step in range(k + 1, last + 1):
        if calendar[step % span, word] & bit:
            row = start + step % n
            for c in range(ring.shape[1]):
                ring[row, c] = 0.0
    give_block(pool, start, n)
    pool.ptr[f] = -1


@njit(cache=True, error_model="numpy", inline="always")
def grown_length(pool, f, need) -> int:
    """The length flow ``f``'s line grows to for a delay of ``need`` - 1 steps: the least
    power of two above its length now that holds ``need``, or its longest (``pool.cap``). (A
    line that starts at another length, :func:`uno.fluid.arrays.first_line_lengths`, joins the
    powers of two at its first growth.)"""
    n = 1
    while n <= pool.length[f]:
        n *= 2
    while n < need:
        n *= 2
    return min(n, pool.cap[f])


@njit(cache=True, error_model="numpy")
def grow_line(ring, pool, f, k, need) -> None:
    """Flow ``f``'s delay line, at step ``k``, grows to hold ``need`` slots
    (:func:`grown_length`): each of its slots (the steps ``k`` .. ``k + n - 1``, one each)
    moves to the new line's slot of the same step, and the old line goes back to the pool
    zeroed. A run reads the same feedback at the same steps whatever the lines' lengths."""
    n = pool.length[f]
    n_new = grown_length(pool, f, need)
    old = pool.ptr[f]
    start = take_block(pool, n_new)
    for step in range(k, k + n):
        src = old + step % n
        dst = start + step % n_new
        for c in range(ring.shape[1]):
            ring[dst, c] = ring[src, c]
            ring[src, c] = 0.0
    give_block(pool, old, n)
    pool.ptr[f] = start
    pool.length[f] = n_new


@njit(cache=True, error_model="numpy", inline="always")
def fit_lag(f, k, lag, ring, pool) -> int:
    """A delay of ``lag`` steps after step ``k`` as flow ``f``'s delay line holds it: at least
    the next step; the line grows to hold it (:func:`grow_line`), up to its longest
    (``pool.cap``: the engine sizes that for the longest RTT and timeout), beyond which the
    delay is the longest the line holds. Returns the delay; the line's slot for it is
    ``pool.ptr[f] + (k + lag) % pool.length[f]`` (a slot found before a growth is stale)."""
    if lag < 1:
        return 1
    if lag >= pool.length[f]:
        if pool.length[f] < pool.cap[f]:
            grow_line(ring, pool, f, k, lag + 1)
        if lag >= pool.length[f]:
            return pool.length[f] - 1
    return lag


@njit(cache=True, error_model="numpy")
def step_not_before(at, dt_ps) -> int:
    """The first step whose start is not before ``at`` ps (:func:`uno.fluid.kernels.advance`
    sees a report due at ``at`` there: it compares the step's start with it)."""
    step = int(at // dt_ps)
    while step * dt_ps < at:
        step += 1
    return step


@njit(cache=True, error_model="numpy", inline="always")
def mark_due(calendar, step, f) -> None:
    """Flow ``f`` has something due at step ``step`` (feedback in its delay line, a timer, a
    loss report): its bit in the calendar (rows: steps modulo their number, longer than any
    delay; each row a bitset of the flows, 64 a word). A step handles the feedback of the
    flows whose bit its row holds and passes over the others
    (:func:`uno.fluid.kernels.advance`)."""
    calendar[step % calendar.shape[0], f >> 6] |= np.uint64(1) << np.uint64(f & 63)


@njit(cache=True, error_model="numpy", inline="always")
def mark_ring_due(calendar, fs, step, f) -> None:
    """Flow ``f`` wrote to its delay line's slot of step ``step``: its calendar bit
    (:func:`mark_due`) and its latest due step (``FS_DUE_LAST``, up to which
    :func:`ring_give` clears)."""
    mark_due(calendar, step, f)
    if step > fs[f, FS_DUE_LAST]:
        fs[f, FS_DUE_LAST] = step


@njit(cache=True, error_model="numpy", inline="always")
def least_sample(held, sample):
    """The least of two RTT samples, ``held`` 0 meaning none yet (``R_RTTMIN``,
    ``FS_BLOCK_RTTMIN``); a sample of 0 is none."""
    if sample > 0.0 and (held == 0.0 or sample < held):
        return sample
    return held


@njit(cache=True, error_model="numpy", inline="always")
def mark_loss_report(f, k_new, dt_new_ps, fs, fx, fresh) -> None:
    """Flow ``f``'s loss report due at ``FS_LOSS_AT`` (ps), in the new calendar ``fresh`` at
    the first step of the new size whose start is not before it (at least ``k_new``); the
    flow is woken (its quiet flag off) to look at its line again."""
    at = fs[f, FS_LOSS_AT]
    if at >= 0.0:
        step = step_not_before(at, dt_new_ps)
        mark_due(fresh, step if step > k_new else k_new, f)
    fx[f, FX_QUIET] = 0.0


@njit(cache=True, error_model="numpy", inline="always")
def refile_scratch(ring_len, active, n_active, n_col, calendar):
    """Working arrays to refile the running flows' delay lines: a line's worth of slots and
    their steps (the longest line), and an empty calendar."""
    longest = 1
    for i in range(n_active):
        if ring_len[active[i]] > longest:
            longest = ring_len[active[i]]
    held = np.zeros((longest, n_col))
    held_step = np.zeros(longest, dtype=np.int64)
    return held, held_step, np.zeros_like(calendar)


@njit(cache=True, error_model="numpy", inline="always")
def take_due_slots(f, k, fs, ring, ring_ptr, ring_len, calendar, held, held_step) -> int:
    """Flow ``f``'s delay-line slots from step ``k`` on that hold anything (its calendar bits,
    up to ``FS_DUE_LAST``: nothing is due after it, :func:`ring_give`), moved into ``held``
    (their steps in ``held_step``) and zeroed; returns their number."""
    start = ring_ptr[f]
    n = ring_len[f]
    span = calendar.shape[0]
    word = f >> 6
    bit = np.uint64(1) << np.uint64(f & 63)
    m = 0
    last = min(k + n - 1, int(fs[f, FS_DUE_LAST]))
    for j in range(k, last + 1):
        if calendar[j % span, word] & bit:
            row = start + j % n
            for c in range(ring.shape[1]):
                held[m, c] = ring[row, c]
                ring[row, c] = 0.0
            held_step[m] = j
            m += 1
    return m


@njit(cache=True, error_model="numpy")
def coarsen(factor, k, dt_new_ps, fs, cp, ring, ring_pool, active, n_active, calendar, fx,
            int_col=-1) -> int:  # fmt: skip
    """The step grows ``factor``-fold (to ``dt_new_ps``) at step ``k``, a multiple of
    ``factor``: returns the same instant's step at the new size, ``k // factor``. What each
    running flow's delay line holds for fine step ``j`` moves to the coarse step ``j //
    factor`` (the one whose span holds it), slots meeting there merged (bytes added; the
    latest send and the last ACK's arrival, their maxima; the least RTT sample (``R_RTTMIN``),
    the smaller; the acknowledged bytes at the latest send, the later slot's; from column
    ``int_col`` on (-1: none), the INT records, three columns a hop, the later of the two:
    :mod:`uno.fluid.int_records`). The calendar is
    rebuilt for the new steps (a loss report due at ``FS_LOSS_AT`` in the first coarse step
    whose start is not before it, :func:`step_not_before`), and so are the flows' step fields
    (``FS_DUE_LAST``, ``FS_ACK_LAST``, ``FS_WAIT_LAST``). Bytes and times are untouched:
    only where the feedback is filed changes. The delay lines keep their lengths (sized for
    the fine step, they hold the coarse one's lags with room to spare)."""
    ring_ptr, ring_len = ring_pool[0], ring_pool[1]
    n_col = ring.shape[1]
    n_plain = n_col if int_col < 0 else int_col
    samples = ring_pool.wide[0] >= RING_SAMPLES  # (else QCN's columns may sit at R_RTTMIN ..)
    k_new = k // factor
    held, held_step, fresh = refile_scratch(ring_len, active, n_active, n_col, calendar)
    for i in range(n_active):
        f = active[i]
        start = ring_ptr[f]
        n = ring_len[f]
        m = take_due_slots(f, k, fs, ring, ring_ptr, ring_len, calendar, held, held_step)
        rtt_min = samples and fs[f, FS_RTTMIN] > 0.0
        for t in range(m):
            j_new = held_step[t] // factor
            row = start + j_new % n
            mark_due(fresh, j_new, f)
            later = held[t, R_SENTMAX] >= ring[row, R_SENTMAX]
            for c in range(n_plain):
                v = held[t, c]
                if c == R_SENTMAX or c == R_ARRIVE or c == R_WIRE_ACK:
                    if v > ring[row, c]:
                        ring[row, c] = v
                elif c == R_RTTMIN and samples:
                    if rtt_min:
                        ring[row, c] = least_sample(ring[row, c], v)
                elif c == R_DSENT and samples:
                    if later:
                        ring[row, c] = v
                else:
                    ring[row, c] += v
            for c in range(n_plain, n_col, SLOT_FIELDS):  # (a hop's record: the later)
                if held[t, c] > ring[row, c]:
                    for d in range(SLOT_FIELDS):
                        ring[row, c + d] = held[t, c + d]
        mark_loss_report(f, k_new, dt_new_ps, fs, fx, fresh)
    calendar[:] = fresh
    for f in range(fs.shape[0]):
        for c in (FS_DUE_LAST, FS_ACK_LAST, FS_WAIT_LAST):
            fs[f, c] = math.floor(fs[f, c] / factor)
    return k_new


@njit(cache=True, error_model="numpy")
def refine(factor, k, dt_new_ps, fs, ring, ring_pool, active, n_active, calendar, fx) -> int:
    """The step shrinks ``factor``-fold (to ``dt_new_ps``) at step ``k``: returns the same
    instant's step at the new size, ``k * factor``. What each running flow's delay line holds
    for coarse step ``j`` moves to the fine step ``j * factor``, the first of its span (the
    coarse step would have handed it over at that instant; nothing is merged, so nothing is
    split). The calendar is rebuilt for the new steps (a loss report due at ``FS_LOSS_AT`` in
    the first fine step whose start is not before it, :func:`step_not_before`), and so are the
    flows' step fields (``FS_DUE_LAST``, ``FS_ACK_LAST``, ``FS_WAIT_LAST``). Bytes and times are
    untouched. A line too short for its fine lags grows (:func:`grown_length`; emptied by
    the refiling, it takes a longer block), up to its longest (``pool.cap``), which is sized for
    the fine step, so every coarse lag fits at the fine one."""
    pool = RingPool(*ring_pool)
    ring_ptr, ring_len = pool.ptr, pool.length
    n_col = ring.shape[1]
    k_new = k * factor
    held, held_step, fresh = refile_scratch(ring_len, active, n_active, n_col, calendar)
    for i in range(n_active):
        f = active[i]
        m = take_due_slots(f, k, fs, ring, ring_ptr, ring_len, calendar, held, held_step)
        need = 0
        for t in range(m):
            need = max(need, held_step[t] * factor - k_new + 1)
        if need > ring_len[f] and ring_len[f] < pool.cap[f]:  # (its line is all zero now)
            give_block(pool, ring_ptr[f], ring_len[f])
            ring_len[f] = grown_length(pool, f, need)
            ring_ptr[f] = take_block(pool, ring_len[f])
        start = ring_ptr[f]
        n = ring_len[f]
        for t in range(m):
            # (within the line's length of step k_new: a lag clamped at the coarse step stays
            # the line's longest)
            j_new = min(held_step[t] * factor, k_new + n - 1)
            row = start + j_new % n
            mark_due(fresh, j_new, f)
            for c in range(n_col):
                ring[row, c] += held[t, c]
        mark_loss_report(f, k_new, dt_new_ps, fs, fx, fresh)
    calendar[:] = fresh
    for f in range(fs.shape[0]):
        for c in (FS_DUE_LAST, FS_ACK_LAST, FS_WAIT_LAST):
            fs[f, c] = fs[f, c] * factor
    return k_new

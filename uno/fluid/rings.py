"""The flows' delay lines: what the network did to a step's bytes comes back to the flow one RTT
later through its line, a ring of slots (``R_*`` columns, :mod:`uno.fluid.columns`), one slot
per step. The running flows take their lines from a pool and give them back when they finish
(:func:`ring_take`, :func:`ring_give`); a line starts a few base RTTs long and grows, when a
delay does not fit, up to the longest RTT and timeout its flow can meet (:func:`fit_lag`), so
its memory follows the delays the run meets, not the worst case the buffers allow. A calendar
says which flows have something due at which step (:func:`mark_due`), so a step passes over the
others; :func:`coarsen` refiles every line when the step grows.

A line grows to at most ``engine.fluid_line_slots`` slots (``pool.cap``). A flow whose delays
may run longer (``pool.reach``: a cross-DC round trip behind full buffers at a fine step) files
what is due beyond its line in its tail (:func:`tail_lag`): slots of ``pool.tail_width`` steps
each, whose content is spread evenly over the line's slots of their steps as the first of
them comes (:func:`pour_tail`). Beyond a line's length feedback thus comes back at its own
time scale, less than a tail slot early or late and at the rate it was filed at, and a flow's
memory is bounded by its line and its tail, not by its round trip in steps.

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
    R_ACK,
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
    tail = pool.tail_ptr[f]
    last = int(fs[f, FS_DUE_LAST])
    if last > k + n - 1 and tail < 0:  # (a write's step is at most n - 1 after its own)
        last = k + n - 1
    for step in range(k + 1, last + 1):
        if calendar[step % span, word] & bit:
            if step - k < n:
                row = start + step % n
                for c in range(ring.shape[1]):
                    ring[row, c] = 0.0
            row = tail_row_at(pool, f, step)
            if row >= 0:
                for c in range(ring.shape[1]):
                    ring[row, c] = 0.0
    give_block(pool, start, n)
    pool.ptr[f] = -1
    if tail >= 0:
        give_block(pool, tail, pool.tail_meta[0])
        pool.tail_ptr[f] = -1


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
            return tail_lag(pool, f, k, lag)
    return lag


@njit(cache=True, error_model="numpy", inline="always")
def longest_lag(pool, f) -> int:
    """The longest delay (steps) flow ``f``'s line holds grown to its longest, or its tail
    (the calendar's span, and at most its reach): :func:`fit_lag` files a longer one there."""
    w = pool.tail_width[f]
    if w == 0:
        return pool.cap[f] - 1
    return min((pool.tail_meta[0] - 2) * w, pool.reach[f] - 1)


@njit(cache=True, error_model="numpy")
def tail_lag(pool, f, k, lag) -> int:
    """A delay of ``lag`` steps after step ``k`` beyond flow ``f``'s line at its longest, as
    its tail files it: the first step of the tail slot (``pool.tail_width[f]`` steps) holding
    step ``k + lag``, the tail taken on its first use; at most the longest its tail holds and
    its reach (the calendar spans every flow's reach). Where
    that slot begins within the line, the line's last slot (less than a slot early). A flow
    without a tail (its delays fit its line) gets the longest its line holds."""
    w = pool.tail_width[f]
    n = pool.length[f]
    if w == 0:
        return n - 1
    longest = longest_lag(pool, f)
    if lag > longest:
        lag = longest
    first = (k + lag) - (k + lag) % w - k
    if first < n:
        return n - 1
    if pool.tail_ptr[f] < 0:
        pool.tail_ptr[f] = take_block(pool, pool.tail_meta[0])
    return first


@njit(cache=True, error_model="numpy", inline="always")
def line_row(pool, f, k, lag) -> int:
    """The ring row holding what is due for flow ``f`` ``lag`` steps after step ``k`` (a lag
    :func:`fit_lag` returned): its line's slot of that step, or beyond the line its tail's
    slot beginning there (:func:`tail_lag`)."""
    n = pool.length[f]
    if lag < n:
        return pool.ptr[f] + (k + lag) % n
    return pool.tail_ptr[f] + ((k + lag) // pool.tail_width[f]) % pool.tail_meta[0]


@njit(cache=True, error_model="numpy", inline="always")
def tail_row_at(pool, f, step) -> int:
    """The row of flow ``f``'s tail slot beginning at step ``step``; -1 where it has no tail or
    no tail slot begins there."""
    if pool.tail_ptr[f] < 0:
        return -1
    w = pool.tail_width[f]
    if step % w != 0:
        return -1
    return pool.tail_ptr[f] + (step // w) % pool.tail_meta[0]


@njit(cache=True, error_model="numpy", inline="always")
def row_is_empty(ring, row) -> bool:
    for c in range(ring.shape[1]):
        if ring[row, c] != 0.0:
            return False
    return True


@njit(cache=True, error_model="numpy", inline="always")
def merge_row(ring, dst, src, i, n_plain, samples, rtt_min, share=1.0) -> None:
    """Slot ``i`` of ``src`` (the ring or a copy of its rows) merged into ring row ``dst``: two
    slots meeting at one step. Bytes add up (``share`` of the source's: a tail slot spread over
    its steps, :func:`pour_tail`); the latest send and the last ACK's arrival, their maxima;
    the least RTT sample (``R_RTTMIN``, where ``samples`` and the flow takes it, ``rtt_min``),
    the smaller; the acknowledged bytes at the latest send, the later slot's; from column
    ``n_plain`` on, the INT records, three columns a hop, the later of the two
    (:mod:`uno.fluid.int_records`)."""
    later = src[i, R_SENTMAX] >= ring[dst, R_SENTMAX]
    for c in range(n_plain):
        v = src[i, c]
        if c == R_SENTMAX or c == R_ARRIVE or c == R_WIRE_ACK:
            if v > ring[dst, c]:
                ring[dst, c] = v
        elif c == R_RTTMIN and samples:
            if rtt_min:
                ring[dst, c] = least_sample(ring[dst, c], v)
        elif c == R_DSENT and samples:
            if later:
                ring[dst, c] = v
        else:
            ring[dst, c] += v * share
    for c in range(n_plain, ring.shape[1], SLOT_FIELDS):  # (a hop's record: the later)
        if src[i, c] > ring[dst, c]:
            for d in range(SLOT_FIELDS):
                ring[dst, c + d] = src[i, c + d]


@njit(cache=True, error_model="numpy", inline="always")
def merge_args(pool, fs, f, n_col):
    """:func:`merge_row`'s ``n_plain``, ``samples`` and ``rtt_min`` for flow ``f`` in a ring
    of ``n_col`` columns (the INT records' first, ``pool.tail_meta[1]``; -1: none)."""
    int_col = pool.tail_meta[1]
    n_plain = n_col if int_col < 0 else int_col
    samples = pool.wide[0] >= RING_SAMPLES  # (else QCN's columns may sit at R_RTTMIN ..)
    return n_plain, samples, samples and fs[f, FS_RTTMIN] > 0.0


@njit(cache=True, error_model="numpy")
def pour_tail(ring, pool, calendar, fs, f, k) -> None:
    """What flow ``f``'s tail holds in its slot beginning at step ``k`` is spread evenly over
    the line's slots of that slot's steps, ``k`` to ``k + pool.tail_width[f] - 1``, before the
    step reads its own (:func:`merge_row`): its bytes come back at the rate they were filed at,
    not in a burst every slot. Their calendar bits, and the latest steps anything and any ACK
    is due (``FS_DUE_LAST``, ``FS_ACK_LAST``), follow."""
    row = tail_row_at(pool, f, k)
    if row < 0 or row_is_empty(ring, row):
        return
    w = pool.tail_width[f]
    n_plain, samples, rtt_min = merge_args(pool, fs, f, ring.shape[1])
    start, n = pool.ptr[f], pool.length[f]
    for step in range(k, k + w):
        merge_row(ring, start + step % n, ring, row, n_plain, samples, rtt_min, 1.0 / w)
        mark_due(calendar, step, f)
    last = k + w - 1
    if last > fs[f, FS_DUE_LAST]:
        fs[f, FS_DUE_LAST] = last
    if ring[row, R_ACK] > 0.0 and last > fs[f, FS_ACK_LAST]:
        fs[f, FS_ACK_LAST] = last
    for c in range(ring.shape[1]):
        ring[row, c] = 0.0


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
def refile_scratch(pool, active, n_active, n_col, calendar):
    """Working arrays to refile the running flows' delay lines: a line's and a tail's worth of
    slots and their steps (the longest line), and an empty calendar."""
    longest = 1
    for i in range(n_active):
        f = active[i]
        rows = pool.length[f] + (pool.tail_meta[0] if pool.tail_ptr[f] >= 0 else 0)
        if rows > longest:
            longest = rows
    held = np.zeros((longest, n_col))
    held_step = np.zeros(longest, dtype=np.int64)
    return held, held_step, np.zeros_like(calendar)


@njit(cache=True, error_model="numpy")
def take_due_slots(f, k, fs, ring, pool, calendar, held, held_step) -> int:
    """Flow ``f``'s delay-line slots from step ``k`` on that hold anything (its calendar bits,
    up to ``FS_DUE_LAST``: nothing is due after it, :func:`ring_give`), moved into ``held``
    (their steps in ``held_step``) and zeroed, a tail slot with the line's slot of its first
    step (whole: refiling is rare); returns their number."""
    start = pool.ptr[f]
    n = pool.length[f]
    span = calendar.shape[0]
    word = f >> 6
    bit = np.uint64(1) << np.uint64(f & 63)
    n_col = ring.shape[1]
    n_plain, samples, rtt_min = merge_args(pool, fs, f, n_col)
    m = 0
    last = int(fs[f, FS_DUE_LAST])
    if pool.tail_ptr[f] < 0 and last > k + n - 1:
        last = k + n - 1
    for j in range(k, last + 1):
        if not calendar[j % span, word] & bit:
            continue
        got = j - k < n
        if got:
            row = start + j % n
            for c in range(n_col):
                held[m, c] = ring[row, c]
                ring[row, c] = 0.0
        row = tail_row_at(pool, f, j)
        if row >= 0 and not row_is_empty(ring, row):
            if not got:
                for c in range(n_col):
                    held[m, c] = 0.0
            merge_row(held, m, ring, row, n_plain, samples, rtt_min)
            for c in range(n_col):
                ring[row, c] = 0.0
            got = True
        if got:
            held_step[m] = j
            m += 1
    return m


@njit(cache=True, error_model="numpy", inline="always")
def refile_row(pool, f, k, step):
    """Where a slot of flow ``f`` due at ``step`` goes when its line is refiled at step ``k``:
    (its row, the step it is due at), its line's slot of that step or, beyond the line, its
    tail's (:func:`tail_lag`: the first step of the tail slot holding it)."""
    lag = step - k
    if lag < pool.length[f]:
        return pool.ptr[f] + step % pool.length[f], step
    lag = tail_lag(pool, f, k, lag)
    return line_row(pool, f, k, lag), k + lag


@njit(cache=True, error_model="numpy", inline="always")
def keep_last_steps(f, step, row, ring, last) -> None:
    """A refiled slot due at ``step`` (row ``row``): the latest step anything is due for flow
    ``f`` (``last[0]``) and the latest its ACKs are (``last[1]``)."""
    if step > last[0]:
        last[0] = step
    if ring[row, R_ACK] > 0.0 and step > last[1]:
        last[1] = step


@njit(cache=True, error_model="numpy")
def coarsen(factor, k, dt_new_ps, fs, cp, ring, ring_pool, active, n_active, calendar, fx,
            int_col=-1) -> int:  # fmt: skip
    """The step grows ``factor``-fold (to ``dt_new_ps``) at step ``k``, a multiple of
    ``factor``: returns the same instant's step at the new size, ``k // factor``. What each
    running flow's delay line holds for fine step ``j`` moves to the coarse step ``j //
    factor`` (the one whose span holds it; beyond the line, its tail's slot holding that
    step: :func:`refile_row`), slots meeting there merged (:func:`merge_row`; the INT
    records from column ``int_col`` on, -1: none). The calendar is
    rebuilt for the new steps (a loss report due at ``FS_LOSS_AT`` in the first coarse step
    whose start is not before it, :func:`step_not_before`), and so are the flows' step fields
    (``FS_DUE_LAST``, ``FS_ACK_LAST``, ``FS_WAIT_LAST``). Bytes and times are untouched:
    only where the feedback is filed changes. The delay lines keep their lengths (sized for
    the fine step, they hold the coarse one's lags with room to spare)."""
    pool = RingPool(*ring_pool)
    n_col = ring.shape[1]
    n_plain = n_col if int_col < 0 else int_col
    samples = pool.wide[0] >= RING_SAMPLES  # (else QCN's columns may sit at R_RTTMIN ..)
    k_new = k // factor
    held, held_step, fresh = refile_scratch(pool, active, n_active, n_col, calendar)
    lasts = np.full((n_active, 2), -1, dtype=np.int64)
    for i in range(n_active):
        f = active[i]
        m = take_due_slots(f, k, fs, ring, pool, calendar, held, held_step)
        rtt_min = samples and fs[f, FS_RTTMIN] > 0.0
        for t in range(m):
            j_new = held_step[t] // factor
            beyond = j_new - k_new >= pool.length[f]
            row, j_new = refile_row(pool, f, k_new, j_new)
            mark_due(fresh, j_new, f)
            merge_row(ring, row, held, t, n_plain, samples, rtt_min)
            if beyond:
                keep_last_steps(f, j_new, row, ring, lasts[i])
        mark_loss_report(f, k_new, dt_new_ps, fs, fx, fresh)
    calendar[:] = fresh
    for f in range(fs.shape[0]):
        for c in (FS_DUE_LAST, FS_ACK_LAST, FS_WAIT_LAST):
            fs[f, c] = math.floor(fs[f, c] / factor)
    keep_due_fields(fs, active, n_active, lasts)
    return k_new


@njit(cache=True, error_model="numpy", inline="always")
def keep_due_fields(fs, active, n_active, lasts) -> None:
    """After a refiling: a flow's latest due step and latest ACK step (``FS_DUE_LAST``,
    ``FS_ACK_LAST``) are at least those its refiled slots hold (``lasts``: a tail slot's
    last step may come after them)."""
    for i in range(n_active):
        f = active[i]
        if lasts[i, 0] > fs[f, FS_DUE_LAST]:
            fs[f, FS_DUE_LAST] = lasts[i, 0]
        if lasts[i, 1] > fs[f, FS_ACK_LAST]:
            fs[f, FS_ACK_LAST] = lasts[i, 1]


@njit(cache=True, error_model="numpy")
def refine(factor, k, dt_new_ps, fs, ring, ring_pool, active, n_active, calendar, fx) -> int:
    """The step shrinks ``factor``-fold (to ``dt_new_ps``) at step ``k``: returns the same
    instant's step at the new size, ``k * factor``. What each running flow's delay line holds
    for coarse step ``j`` moves to the fine step ``j * factor``, the first of its span (the
    coarse step would have handed it over at that instant; nothing is merged, so nothing is
    split; beyond the line, into its tail's slot holding that step, merged there). The
    calendar is rebuilt for the new steps (a loss report due at ``FS_LOSS_AT`` in the first
    fine step whose start is not before it, :func:`step_not_before`), and so are the flows'
    step fields (``FS_DUE_LAST``, ``FS_ACK_LAST``, ``FS_WAIT_LAST``). Bytes and times are
    untouched. A line too short for its fine lags grows (:func:`grown_length`; emptied by the
    refiling, it takes a longer block), up to its longest (``pool.cap``), which is sized for
    the fine step, so every coarse lag fits at the fine one, in the line or its tail."""
    pool = RingPool(*ring_pool)
    ring_ptr, ring_len = pool.ptr, pool.length
    n_col = ring.shape[1]
    k_new = k * factor
    held, held_step, fresh = refile_scratch(pool, active, n_active, n_col, calendar)
    lasts = np.full((n_active, 2), -1, dtype=np.int64)
    for i in range(n_active):
        f = active[i]
        m = take_due_slots(f, k, fs, ring, pool, calendar, held, held_step)
        n_plain, samples, rtt_min = merge_args(pool, fs, f, n_col)
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
            j_new = held_step[t] * factor
            if j_new - k_new >= n and pool.tail_width[f] > 0:
                row, j_new = refile_row(pool, f, k_new, j_new)
                mark_due(fresh, j_new, f)
                merge_row(ring, row, held, t, n_plain, samples, rtt_min)
                keep_last_steps(f, j_new, row, ring, lasts[i])
                continue
            # (within the line's length of step k_new: a lag clamped at the coarse step stays
            # the line's longest)
            j_new = min(j_new, k_new + n - 1)
            row = start + j_new % n
            mark_due(fresh, j_new, f)
            for c in range(n_col):
                ring[row, c] += held[t, c]
        mark_loss_report(f, k_new, dt_new_ps, fs, fx, fresh)
    calendar[:] = fresh
    for f in range(fs.shape[0]):
        for c in (FS_DUE_LAST, FS_ACK_LAST, FS_WAIT_LAST):
            fs[f, c] = fs[f, c] * factor
    keep_due_fields(fs, active, n_active, lasts)
    return k_new

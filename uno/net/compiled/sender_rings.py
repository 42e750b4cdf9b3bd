"""A kernel sender's per-packet bookkeeping (:class:`uno.transport.sender.Sender`'s): its
outstanding packets, the RTO FIFO of (send time, seq) pairs (a ring), the retransmission queue
(a ring) and the sorted send times of acknowledged packets sent after the FIFO's oldest entry
(fast retransmit). All live in ST at the offsets of the sender's row ``sb``
(:data:`uno.net.compiled.layout.S`); times in ps."""

from __future__ import annotations

from numba import njit

from uno.net.compiled.layout import S


@njit(cache=True)
def wire_of(ST, sb, seq):
    """Wire bytes of packet ``seq`` of the flow whose sender row is ``sb``."""
    return ST[sb + S.full_wire] if seq != ST[sb + S.last_seq] else ST[sb + S.last_wire]


@njit(cache=True)
def fifo_front(ST, sb):
    """Offset in ST of the RTO FIFO's oldest (send time, seq) pair."""
    return ST[sb + S.fifo_off] + 2 * ST[sb + S.fifo_head]


@njit(cache=True)
def fifo_pop(ST, sb):
    """Drop the RTO FIFO's oldest pair."""
    head = ST[sb + S.fifo_head] + 1
    ST[sb + S.fifo_head] = head if head < ST[sb + S.fifo_cap] else 0
    ST[sb + S.fifo_n] -= 1


@njit(cache=True)
def drop_acked_before(ST, sb):
    """Forget the acknowledged send times at or before the FIFO's oldest entry, all of them if
    it is empty (:meth:`uno.transport.sender.Sender._drop_acked_before`)."""
    n = ST[sb + S.later_n]
    if n == 0:
        return
    off = ST[sb + S.later_off]
    if ST[sb + S.fifo_n] == 0:
        ST[sb + S.later_n] = 0
        return
    oldest = ST[fifo_front(ST, sb)]
    i = 0
    while i < n and ST[off + i] <= oldest:
        i += 1
    if i:
        ST[off : off + n - i] = ST[off + i : off + n].copy()
        ST[sb + S.later_n] = n - i


@njit(cache=True)
def fifo_push(ST, sb, t, seq):
    """Append (``t``, ``seq``) to the RTO FIFO. A full ring first drops its stale entries
    (acknowledged, or retransmitted since), which every reader skips; the acknowledged send
    times at or before the new oldest entry are dropped as the reader that would have popped
    the stale ones would drop them (so the fast-retransmit counts are unchanged)."""
    n = ST[sb + S.fifo_n]
    cap = ST[sb + S.fifo_cap]
    off = ST[sb + S.fifo_off]
    head = ST[sb + S.fifo_head]
    if n == cap:
        out = ST[sb + S.out_off]
        kept = 0
        for i in range(n):
            at = off + 2 * ((head + i) % cap)
            if ST[out + ST[at + 1]] == ST[at] + 1:
                to = off + 2 * ((head + kept) % cap)
                ST[to] = ST[at]
                ST[to + 1] = ST[at + 1]
                kept += 1
        n = kept
        ST[sb + S.fifo_n] = n
        if n == cap:  # (cannot happen: live entries are at most one per packet, cap > 2n)
            raise RuntimeError("compiled data plane: a kernel sender's RTO FIFO overflowed")
        if ST[sb + S.dupthr]:
            drop_acked_before(ST, sb)
    at = off + 2 * ((head + n) % cap)
    ST[at] = t
    ST[at + 1] = seq
    ST[sb + S.fifo_n] = n + 1


@njit(cache=True)
def retx_push(ST, sb, seq):
    """Queue ``seq`` for retransmission (a ring of the flow's packet count: a packet is
    queued at most once, as it leaves the outstanding set to be queued)."""
    cap = ST[sb + S.rq_cap]
    ST[ST[sb + S.rq_off] + (ST[sb + S.rq_head] + ST[sb + S.rq_n]) % cap] = seq
    ST[sb + S.rq_n] += 1


@njit(cache=True)
def retx_push_front(ST, sb, seq):
    """Queue ``seq`` for retransmission ahead of every other (a trimmed copy's)."""
    head = ST[sb + S.rq_head] - 1
    if head < 0:
        head = ST[sb + S.rq_cap] - 1
    ST[sb + S.rq_head] = head
    ST[ST[sb + S.rq_off] + head] = seq
    ST[sb + S.rq_n] += 1


@njit(cache=True)
def retx_pop(ST, sb):
    """The oldest seq queued for retransmission, off the queue."""
    seq = ST[ST[sb + S.rq_off] + ST[sb + S.rq_head]]
    head = ST[sb + S.rq_head] + 1
    ST[sb + S.rq_head] = head if head < ST[sb + S.rq_cap] else 0
    ST[sb + S.rq_n] -= 1
    return seq


@njit(cache=True)
def declare_lost(ST, sb, seq):
    """Outstanding packet ``seq`` is lost: out of flight, queued for retransmission."""
    ST[ST[sb + S.out_off] + seq] = 0
    ST[sb + S.inflight] -= wire_of(ST, sb, seq)
    retx_push(ST, sb, seq)


@njit(cache=True)
def expire(ST, sb, now):
    """Every packet of sender row ``sb`` unacknowledged ``rto`` after its (re)transmission
    leaves the bytes in flight for the retransmission queue, oldest first
    (:meth:`uno.transport.sender.Sender._expire`); returns how many."""
    rto = ST[sb + S.rto]
    out = ST[sb + S.out_off]
    lost = 0
    while ST[sb + S.fifo_n]:
        at = fifo_front(ST, sb)
        sent = ST[at]
        seq = ST[at + 1]
        if ST[out + seq] != sent + 1:
            fifo_pop(ST, sb)
            continue
        if sent + rto > now:
            break
        fifo_pop(ST, sb)
        declare_lost(ST, sb, seq)
        lost += 1
    if ST[sb + S.dupthr]:
        drop_acked_before(ST, sb)
    return lost

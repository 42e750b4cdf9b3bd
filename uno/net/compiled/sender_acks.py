"""What a kernel sender hears: an ACK (:meth:`uno.transport.sender.Sender.on_control` without
coding: acknowledgement, its law's feedback, completion, fast retransmit), a trimmed copy's
NACK, a switch's congestion notice and its retransmission timer (:meth:`uno.transport.sender.Sender._on_timer`). Times in ps, sizes in
wire bytes."""

from __future__ import annotations

from numba import njit

from uno.cc.law import LOSS_NACK
from uno.metrics.rtts import rtt_bin
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.law_calls import (
    cc_on_ack,
    cc_on_loss,
    cc_on_notify,
    law_rows,
    on_loss_episode,
    on_timeouts,
)
from uno.net.compiled.layout import ERR_OUTSTANDING, EV, EV_BITS, H, K, S
from uno.net.compiled.sender_rings import (
    declare_lost,
    drop_acked_before,
    expire,
    fifo_front,
    fifo_pop,
    retx_push_front,
    wire_of,
)
from uno.net.compiled.senders import scan_while_resending, try_send


@njit(cache=True)
def detect_losses(ST, F, sb, now, acked_sent_ps):
    """Fast retransmit (:meth:`uno.transport.sender.Sender._detect_losses`), on an ACK at
    ``now`` of a packet sent at ``acked_sent_ps``: every outstanding packet with
    ``dupack_threshold`` or more packets sent after it acknowledged is lost, oldest first."""
    later = ST[sb + S.later_off]
    if ST[sb + S.fifo_n] and acked_sent_ps > ST[fifo_front(ST, sb)]:
        n = ST[sb + S.later_n]
        i = n
        while i > 0 and ST[later + i - 1] > acked_sent_ps:
            ST[later + i] = ST[later + i - 1]
            i -= 1
        ST[later + i] = acked_sent_ps
        ST[sb + S.later_n] = n + 1
    out = ST[sb + S.out_off]
    lost = 0
    while ST[sb + S.fifo_n]:
        at = fifo_front(ST, sb)
        seq = ST[at + 1]
        if ST[out + seq] == ST[at] + 1:
            if ST[sb + S.later_n] < ST[sb + S.dupthr]:
                break
            declare_lost(ST, sb, seq)
            lost += 1
        fifo_pop(ST, sb)
        drop_acked_before(ST, sb)
    if lost:
        ST[sb + S.lost] += lost
        ST[sb + S.fast_retx] += lost
        on_loss_episode(F, ST[sb + S.frow], ST, sb, now, False)


@njit(cache=True)
def on_timer(ST, F, U, PK, f, now):
    """Kernel sender ``f``'s retransmission timer at ``now``: every packet unacknowledged
    ``rto`` after its (re)transmission is lost; the timer re-arms for the oldest outstanding
    one, at most once per granularity."""
    sb = ST[H.off_senders] + f * S.size
    ST[sb + S.armed] = 0
    if ST[sb + S.done]:
        return
    lost = expire(ST, sb, now)
    if lost:
        on_timeouts(F, ST[sb + S.frow], ST, sb, now, lost)
    if ST[sb + S.fifo_n]:
        ST[sb + S.armed] = 1
        due = ST[fifo_front(ST, sb)] + ST[sb + S.rto]
        floor = now + ST[sb + S.gran]
        heap_push(ST, due if due > floor else floor, next_eid(ST), (f << EV_BITS) | EV.rto)
    try_send(ST, F, U, PK, f, now, False)


@njit(cache=True)
def _complete(ST, sb):
    """Every packet is acknowledged: the flow completes
    (:meth:`uno.transport.sender.Sender._finish`). Returns 1, or ``-ERR_OUTSTANDING`` if a
    packet is still outstanding."""
    out = ST[sb + S.out_off]
    if ST[sb + S.inflight] != 0:
        for i in range(ST[sb + S.n]):
            if ST[out + i]:
                return -ERR_OUTSTANDING
    ST[sb + S.done] = 1
    ST[sb + S.inflight] = 0
    return 1


@njit(cache=True)
def sender_on_ack(ST, F, U, PK, f, slot, now):
    """The ACK in row ``slot`` of PK (of packet ``seq``, sent at ``sent_ps``, its ECN echo)
    reaches kernel sender ``f`` at ``now``; the caller frees the row after. Returns 1 if the
    flow completed, an error code (``ERR_*`` negated) if its completion broke an invariant,
    else 0."""
    seq = PK[slot, K.seq]
    ecn = PK[slot, K.ecn]
    sent_ps = PK[slot, K.sent]
    sb = ST[H.off_senders] + f * S.size
    if ST[sb + S.done]:
        return 0
    wire = wire_of(ST, sb, seq)
    acked = ST[sb + S.acked_off]
    if ST[acked + seq]:
        ST[sb + S.dup] += 1
        if ST[sb + S.dup_cc]:
            # a law that hears duplicates (MP-RDMA as the artifact runs it: its per-ACK rule,
            # uno.cc.mprdma's update_on_duplicate_ack)
            cc_on_ack(
                F, ST[sb + S.frow], ST, sb, PK, slot, now, wire, ecn, now - sent_ps, sent_ps, 1,
                0, 0,
            )  # fmt: skip
        return 0
    ST[acked + seq] = 1
    ST[sb + S.n_acked] += 1
    out = ST[sb + S.out_off]
    if ST[out + seq]:
        ST[out + seq] = 0
        ST[sb + S.inflight] -= wire
    ST[sb + S.acked_bytes] += wire
    if ecn:
        ST[sb + S.ecn_acks] += 1
    rate_bytes = rate_ps = 0
    if ST[sb + S.rate]:  # the delivery-rate sample since this copy's send; the clock advances
        rate_bytes = ST[sb + S.acked_bytes] - PK[slot, K.tx_delivered]
        rate_ps = now - PK[slot, K.tx_delivered_ps]
        ST[sb + S.delivered_ps] = now
    cc_on_ack(F, ST[sb + S.frow], ST, sb, PK, slot, now, wire, ecn, now - sent_ps, sent_ps, 0,
              rate_bytes, rate_ps)  # fmt: skip
    if ST[H.rtt_bins]:
        ST[ST[H.off_rtt] + rtt_bin(now - sent_ps)] += 1
    if ST[sb + S.n_acked] == ST[sb + S.n]:
        return _complete(ST, sb)
    if ST[sb + S.dupthr]:
        detect_losses(ST, F, sb, now, sent_ps)
    scan_while_resending(ST, F, sb, now)
    try_send(ST, F, U, PK, f, now, False)
    return 0


@njit(cache=True)
def sender_on_notice(ST, F, f, level, now):
    """A switch's congestion notice of ``level`` reaches kernel sender ``f`` at ``now``
    (:meth:`uno.transport.sender.Sender.on_control`): its law hears it, unless the flow is
    done."""
    sb = ST[H.off_senders] + f * S.size
    if ST[sb + S.done]:
        return
    ST[sb + S.notices] += 1
    cc_on_notify(F, ST[sb + S.frow], ST, sb, now, level)


@njit(cache=True)
def sender_on_trim_nack(ST, F, U, PK, f, slot, now):
    """The NACK in row ``slot`` reaches kernel sender ``f`` at ``now``: a switch trimmed the
    copy of its ``seq`` sent at its ``sent`` (:meth:`uno.transport.sender.Sender._on_trim_nack`).
    If that copy is the one in flight, it leaves the flight and is resent at once, ahead of
    other retransmissions, and the law hears a NACK; the caller frees the row."""
    sb = ST[H.off_senders] + f * S.size
    if ST[sb + S.done]:
        return
    ST[sb + S.trims] += 1
    seq = PK[slot, K.seq]
    out = ST[sb + S.out_off]
    if ST[ST[sb + S.acked_off] + seq] or ST[out + seq] != PK[slot, K.sent] + 1:
        return  # acknowledged already, or a newer copy is in flight
    ST[out + seq] = 0
    ST[sb + S.inflight] -= wire_of(ST, sb, seq)
    retx_push_front(ST, sb, seq)
    s, p = law_rows(F, ST[sb + S.frow], ST)
    cc_on_loss(ST[sb + S.law], s, p, float(now), LOSS_NACK)
    try_send(ST, F, U, PK, f, now, False)

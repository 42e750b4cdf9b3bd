"""A kernel sender's congestion control: its law (:mod:`uno.cc.law`), called through the
dispatch :mod:`uno.cc.registry` generates, on rows of ``F``: the sender's row holds the law's
state in its first ``H.law_state_width`` columns, then its constants. Times in ps, sizes in wire
bytes, rates in bit/s."""

from __future__ import annotations

from numba import njit

from uno.cc.law import INT_FIELDS, LOSS_NACK, LOSS_TIMEOUT, ack_feedback
from uno.cc.registry import on_feedback as cc_on_feedback
from uno.cc.registry import on_loss as cc_on_loss
from uno.cc.registry import on_notify as cc_notify
from uno.cc.registry import pacing_rate as cc_pacing_rate
from uno.net.compiled.layout import KI, H, S


@njit(cache=True)
def law_rows(F, fr, ST):
    """A kernel sender's law rows: its state and its constants (views of its F row ``fr``)."""
    sw = ST[H.law_state_width]
    return F[fr, :sw], F[fr, sw:]


@njit(cache=True)
def _ack_records(F, ST, PK, slot):
    """The INT records of the ACK in row ``slot`` of PK as a law reads them: float64 rows
    (``INT_FIELDS`` columns), copied to the F rows kept for them (none: INT off)."""
    r0 = ST[H.int_rec]
    n = PK[slot, KI.n_records] if ST[H.int_max] > 0 else 0
    for i in range(n):
        at = KI.size + i * INT_FIELDS
        for j in range(INT_FIELDS):
            F[r0 + i, j] = PK[slot, at + j]
    return F[r0 : r0 + n, :INT_FIELDS]


@njit(cache=True)
def cc_on_ack(F, fr, ST, sb, PK, slot, now, acked_bytes, ecn, rtt_ps, sent_ps, duplicate,
              rate_bytes, rate_ps):  # fmt: skip
    """The sender's law hears of the ACK in row ``slot`` of PK (a batch of one: its INT records
    with it, and its delivery-rate sample: ``rate_bytes`` over ``rate_ps``, 0 for none)."""
    s, p = law_rows(F, fr, ST)
    rec = _ack_records(F, ST, PK, slot)
    fb = ack_feedback(now, acked_bytes, ecn, rtt_ps, sent_ps, ST[sb + S.inflight],
                      ST[sb + S.acked_bytes], rate_bytes, rate_ps, duplicate,
                      rec.shape[0])  # fmt: skip
    cc_on_feedback(ST[sb + S.law], s, p, fb, rec)


@njit(cache=True)
def cc_on_notify(F, fr, ST, sb, now, level):
    """The sender's law hears a switch's congestion notice of ``level`` (1..63)."""
    s, p = law_rows(F, fr, ST)
    cc_notify(ST[sb + S.law], s, p, float(now), level)


@njit(cache=True)
def pacing_rate(F, fr, ST, sb):
    """The sender's pacing rate (bit/s): its law's (0: it does not pace)."""
    s, p = law_rows(F, fr, ST)
    return cc_pacing_rate(ST[sb + S.law], s, p)


@njit(cache=True)
def on_timeouts(F, fr, ST, sb, now, lost):
    """``lost`` packets timed out at ``now``: counted, and the law hears of one loss episode per
    base RTT, or of each packet when the sender reports every timeout
    (:meth:`uno.transport.sender.Sender._report_timeouts`)."""
    ST[sb + S.lost] += lost
    if not ST[sb + S.every_timeout]:
        on_loss_episode(F, fr, ST, sb, now, True)
        return
    s, p = law_rows(F, fr, ST)
    for _ in range(lost):
        ST[sb + S.timeouts] += 1
        ST[sb + S.last_timeout] = now
        cc_on_loss(ST[sb + S.law], s, p, float(now), LOSS_TIMEOUT)


@njit(cache=True)
def on_loss_episode(F, fr, ST, sb, now, timeout):
    """A loss at ``now`` (a retransmission timeout, or fast retransmit's): the law hears of at
    most one per base RTT (one episode)."""
    if timeout:
        if now - ST[sb + S.last_timeout] >= ST[sb + S.base_rtt] or ST[sb + S.timeouts] == 0:
            ST[sb + S.timeouts] += 1
            ST[sb + S.last_timeout] = now
            s, p = law_rows(F, fr, ST)
            cc_on_loss(ST[sb + S.law], s, p, float(now), LOSS_TIMEOUT)
    else:
        last = ST[sb + S.last_fast]
        if last < 0 or now - last >= ST[sb + S.base_rtt]:
            ST[sb + S.last_fast] = now
            s, p = law_rows(F, fr, ST)
            cc_on_loss(ST[sb + S.law], s, p, float(now), LOSS_NACK)

"""UnoCC's law as ``@njit`` functions over per-flow state arrays: the compiled form of
:class:`uno.cc.uno.UnoCC` (Uno paper §4.1 and Algorithm 1: additive increase, epochs with the
EWMA E of marked packets and a multiplicative decrease, gentle reduction, Quick Adapt), which
stays the per-ACK reference implementation. The compiled data plane's senders call these; each
does the Python method's arithmetic in the same order, so windows are the same doubles bit for
bit (``tests/test_compiled_senders.py`` runs both on random ACK sequences).

State of one flow: in its row of ``F`` (``fr``) the window, floor and cap (bytes,
:mod:`uno.cc.window_kernel`), then alpha (bytes), the MD gain 4K/(K + BDP), the epoch period's
RTT scale, E, MD_scale, the EWMA gain, the gentle factor, beta, the QA window scale and the
window after a timeout (bytes, 0: unchanged); in ``ST`` from ``ib`` the int64 of the epoch and
Quick Adapt state (ps, bytes, counts), the fixed periods (ps) and the switches of the variant.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.window_kernel import W_CWND, load_window, set_cwnd, store_window

# the doubles (F row, after the window's three)
(F_ALPHA, F_MD_GAIN, F_RTT_SCALE, F_EWMA, F_MD_SCALE, F_G, F_GENTLE, F_BETA, F_QA_SCALE,
 F_TIMEOUT_CWND) = range(3, 13)  # fmt: skip
N_FLOATS = 13
# the ints (ST, from ib)
(I_STARTED, I_EPOCH_START, I_EPOCH_ACKS, I_EPOCH_MARKED, I_EPOCH_BYTES, I_QA_START, I_QA_BYTES,
 I_SKIPPING, I_QA_TIME, I_EPOCHS, I_MD_EVENTS, I_GENTLE_EVENTS, I_QA_EVENTS, I_EPOCH_PERIOD,
 I_QA_PERIOD, I_GENTLE_THRESHOLD, I_BASE_RTT, I_USE_RTT_SCALE, I_COMPOUNDS,
 I_EWMA_FALL) = range(20)  # fmt: skip
N_INTS = 20

_STATE_INTS = (
    (I_STARTED, "started"),
    (I_EPOCH_START, "epoch_start_ps"),
    (I_EPOCH_ACKS, "epoch_acks"),
    (I_EPOCH_MARKED, "epoch_marked"),
    (I_EPOCH_BYTES, "epoch_bytes"),
    (I_QA_START, "qa_start_ps"),
    (I_QA_BYTES, "qa_bytes"),
    (I_SKIPPING, "skipping"),
    (I_QA_TIME, "qa_time_ps"),
    (I_EPOCHS, "epochs"),
    (I_MD_EVENTS, "md_events"),
    (I_GENTLE_EVENTS, "gentle_events"),
    (I_QA_EVENTS, "qa_events"),
)


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.uno.UnoCC`'s parameters and state into its rows."""
    p = cc.p
    load_window(cc, F, fr)
    F[fr, F_ALPHA] = cc.alpha_bytes
    F[fr, F_MD_GAIN] = cc.md_gain
    F[fr, F_RTT_SCALE] = cc.epoch_rtt_scale if cc.epoch_rtt_scale is not None else 0.0
    F[fr, F_EWMA] = cc.ecn_ewma
    F[fr, F_MD_SCALE] = cc.md_scale
    F[fr, F_G] = p.ecn_ewma_gain
    F[fr, F_GENTLE] = p.gentle_factor
    F[fr, F_BETA] = p.qa_beta
    F[fr, F_QA_SCALE] = p.qa_window_scale
    F[fr, F_TIMEOUT_CWND] = p.timeout_cwnd_mss * cc.ctx.mss_bytes
    for col, attr in _STATE_INTS:
        ST[ib + col] = getattr(cc, attr)
    ST[ib + I_EPOCH_PERIOD] = cc.epoch_period_ps
    ST[ib + I_QA_PERIOD] = cc.qa_period_ps
    ST[ib + I_GENTLE_THRESHOLD] = cc.gentle_threshold_ps
    ST[ib + I_BASE_RTT] = cc.ctx.base_rtt_ps
    ST[ib + I_USE_RTT_SCALE] = cc.epoch_rtt_scale is not None
    ST[ib + I_COMPOUNDS] = p.gentle_compounds
    ST[ib + I_EWMA_FALL] = p.ewma_fall_increase


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the rows' state back into the :class:`uno.cc.uno.UnoCC`."""
    store_window(cc, F, fr)
    cc.ecn_ewma = float(F[fr, F_EWMA])
    cc.md_scale = float(F[fr, F_MD_SCALE])
    for col, attr in _STATE_INTS:
        value = int(ST[ib + col])
        setattr(cc, attr, bool(value) if attr in ("started", "skipping") else value)


@njit(cache=True)
def _end_epoch(F, fr, ST, ib, rtt_ps):
    """Alg. 1 OnEpoch (:meth:`uno.cc.uno.UnoCC._end_epoch`): E's update; on a congested epoch
    one decrease, gentle when the RTT shows no physical queue."""
    ST[ib + I_EPOCHS] += 1
    marked = ST[ib + I_EPOCH_MARKED]
    frac = marked / ST[ib + I_EPOCH_ACKS]
    g = F[fr, F_G]
    old_ewma = F[fr, F_EWMA]
    ewma = (1.0 - g) * old_ewma + g * frac
    F[fr, F_EWMA] = ewma
    if marked > 0 and ST[ib + I_EWMA_FALL] and 0.0 < ewma < old_ewma and ewma <= 0.9:
        cwnd = F[fr, W_CWND]
        set_cwnd(F, fr, cwnd + F[fr, F_ALPHA] * ST[ib + I_EPOCH_BYTES] / cwnd)
    elif marked > 0:
        if rtt_ps - ST[ib + I_BASE_RTT] < ST[ib + I_GENTLE_THRESHOLD]:
            base = F[fr, F_MD_SCALE] if ST[ib + I_COMPOUNDS] else 1.0
            F[fr, F_MD_SCALE] = base * F[fr, F_GENTLE]
            ST[ib + I_GENTLE_EVENTS] += 1
        else:
            F[fr, F_MD_SCALE] = 1.0
        md = ewma * F[fr, F_MD_GAIN] * F[fr, F_MD_SCALE]
        set_cwnd(F, fr, F[fr, W_CWND] * (1.0 - (1.0 if 1.0 < md else md)))
        ST[ib + I_MD_EVENTS] += 1
    ST[ib + I_EPOCH_ACKS] = 0
    ST[ib + I_EPOCH_MARKED] = 0
    ST[ib + I_EPOCH_BYTES] = 0
    if not ST[ib + I_USE_RTT_SCALE]:
        ST[ib + I_EPOCH_START] += ST[ib + I_EPOCH_PERIOD]
    else:
        # Python's round: half to even, as np.rint
        ST[ib + I_EPOCH_START] += np.int64(np.rint(rtt_ps * F[fr, F_RTT_SCALE]))


@njit(cache=True)
def _quick_adapt_check(F, fr, ST, ib, now_ps):
    """Alg. 1 OnQA (:meth:`uno.cc.uno.UnoCC._quick_adapt_check`)."""
    if ST[ib + I_QA_BYTES] < F[fr, F_BETA] * F[fr, W_CWND]:
        set_cwnd(F, fr, F[fr, F_QA_SCALE] * ST[ib + I_QA_BYTES])
        ST[ib + I_QA_EVENTS] += 1
        ST[ib + I_SKIPPING] = 1
        ST[ib + I_QA_TIME] = now_ps
        ST[ib + I_EPOCH_ACKS] = 0
        ST[ib + I_EPOCH_MARKED] = 0
        ST[ib + I_EPOCH_BYTES] = 0
    ST[ib + I_QA_START] = now_ps
    ST[ib + I_QA_BYTES] = 0


@njit(cache=True)
def on_ack(F, fr, ST, ib, now_ps, acked_bytes, ecn, rtt_ps, sent_ps):
    """An ACK (:meth:`uno.cc.uno.UnoCC.on_ack`): additive increase unless marked, then (after a
    Quick Adapt's skipped round trip) the epoch's and the QA period's accounting."""
    if not ST[ib + I_STARTED]:
        ST[ib + I_STARTED] = 1
        ST[ib + I_EPOCH_START] = now_ps
        ST[ib + I_QA_START] = now_ps
    if not ecn:
        cwnd = F[fr, W_CWND]
        set_cwnd(F, fr, cwnd + F[fr, F_ALPHA] * acked_bytes / cwnd)
    if ST[ib + I_SKIPPING]:
        if sent_ps < ST[ib + I_QA_TIME]:
            return
        ST[ib + I_SKIPPING] = 0
        ST[ib + I_QA_START] = now_ps
        ST[ib + I_QA_BYTES] = 0
        ST[ib + I_EPOCH_START] = now_ps
    ST[ib + I_QA_BYTES] += acked_bytes
    ST[ib + I_EPOCH_BYTES] += acked_bytes
    ST[ib + I_EPOCH_ACKS] += 1
    if ecn:
        ST[ib + I_EPOCH_MARKED] += 1
    if sent_ps >= ST[ib + I_EPOCH_START]:
        _end_epoch(F, fr, ST, ib, rtt_ps)
    if now_ps - ST[ib + I_QA_START] >= ST[ib + I_QA_PERIOD]:
        _quick_adapt_check(F, fr, ST, ib, now_ps)


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    """A retransmission timeout (:meth:`uno.cc.uno.UnoCC.on_timeout`): the window after it, if
    one is set."""
    if F[fr, F_TIMEOUT_CWND] > 0:
        set_cwnd(F, fr, F[fr, F_TIMEOUT_CWND])


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    """A loss found by fast retransmit: as a timeout (:meth:`uno.cc.uno.UnoCC.on_nack`)."""
    on_timeout(F, fr, ST, ib, now_ps)

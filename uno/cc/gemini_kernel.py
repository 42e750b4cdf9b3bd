"""GEMINI's law as ``@njit`` functions over per-flow state arrays: the compiled form of
:class:`uno.cc.gemini.Gemini` (Zeng et al., Algorithm 1 and §III-B/C: a cut by max(alpha F,
beta) on an ECN echo or when RTT_min exceeds RTT_base + T, h / cwnd per ACK otherwise; slow
start after a timeout; TCP's halving on a fast-retransmit loss), which stays the per-ACK
reference implementation. The compiled data plane's senders call these; each does the Python
method's arithmetic in the same order, so windows are the same doubles bit for bit
(``tests/test_compiled_senders.py`` runs both on random ACK sequences).

State of one flow: in its row of ``F`` (``fr``) the window, floor and cap (bytes,
:mod:`uno.cc.window_kernel`), then alpha, the EWMA gain g, F's scale 4K/(C RTT + K), beta, the
largest cut, h (bytes per RTT) and ssthresh (bytes); in ``ST`` from ``ib`` the int64 of the
rounds (ps, bytes), the RTT minima and the last reduction, cycle, timeout and loss times (ps;
-1 for none), slow start, and the fixed facts and switches (base RTT and T in ps, the timeout
hold-off in ps, whether the delay signal is used, per-base-RTT bookkeeping, exit on a cut).
"""

from __future__ import annotations

from numba import njit

from uno.cc.window_kernel import W_CWND, W_MIN, load_window, set_cwnd, store_window

# the doubles (F row, after the window's three)
F_ALPHA, F_G, F_SCALE, F_BETA, F_MAX_CUT, F_H, F_SSTHRESH = range(3, 10)
N_FLOATS = 10
# the ints (ST, from ib); -1 stands for None in the optional times and RTTs
(I_W_ACTIVE, I_W_START, I_ACKED, I_MARKED, I_RTT_MIN_WINDOW, I_RTT_MIN_PREV, I_LAST_REDUCTION,
 I_CYCLE_START, I_LAST_TIMEOUT, I_LAST_LOSS, I_SLOW_START, I_BASE_RTT, I_T, I_HOLDOFF,
 I_USE_DELAY, I_PER_BASE_RTT, I_EXIT_ON_CUT) = range(17)  # fmt: skip
N_INTS = 17

_OPTIONAL = (
    (I_RTT_MIN_WINDOW, "rtt_min_window"),
    (I_RTT_MIN_PREV, "rtt_min_prev"),
    (I_LAST_REDUCTION, "last_reduction_ps"),
    (I_CYCLE_START, "cycle_start_ps"),
    (I_LAST_TIMEOUT, "last_timeout_ps"),
    (I_LAST_LOSS, "last_loss_ps"),
)


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.gemini.Gemini`'s parameters and state into its rows."""
    p = cc.p
    load_window(cc, F, fr)
    F[fr, F_ALPHA] = cc.alpha
    F[fr, F_G] = p.g
    F[fr, F_SCALE] = cc.f_scale
    F[fr, F_BETA] = p.beta
    F[fr, F_MAX_CUT] = p.max_cut
    F[fr, F_H] = cc.h_bytes
    F[fr, F_SSTHRESH] = cc.ssthresh
    ST[ib + I_W_ACTIVE] = cc.window.active
    ST[ib + I_W_START] = cc.window.start_ps
    ST[ib + I_ACKED] = cc.acked_in_window
    ST[ib + I_MARKED] = cc.marked_in_window
    for col, attr in _OPTIONAL:
        value = getattr(cc, attr)
        ST[ib + col] = -1 if value is None else value
    ST[ib + I_SLOW_START] = cc.slow_start
    ST[ib + I_BASE_RTT] = cc.base_rtt_ps
    ST[ib + I_T] = cc.t_ps
    ST[ib + I_HOLDOFF] = cc.timeout_holdoff_ps
    ST[ib + I_USE_DELAY] = cc.use_delay
    ST[ib + I_PER_BASE_RTT] = cc.per_base_rtt
    ST[ib + I_EXIT_ON_CUT] = p.slow_start_exit_on_cut


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the rows' state back into the :class:`uno.cc.gemini.Gemini`."""
    store_window(cc, F, fr)
    cc.alpha = float(F[fr, F_ALPHA])
    cc.ssthresh = float(F[fr, F_SSTHRESH])
    cc.window.active = bool(ST[ib + I_W_ACTIVE])
    cc.window.start_ps = int(ST[ib + I_W_START])
    cc.acked_in_window = int(ST[ib + I_ACKED])
    cc.marked_in_window = int(ST[ib + I_MARKED])
    for col, attr in _OPTIONAL:
        value = int(ST[ib + col])
        setattr(cc, attr, None if value < 0 else value)
    cc.slow_start = bool(ST[ib + I_SLOW_START])


@njit(cache=True)
def _update_alpha(F, fr, ST, ib):
    frac = ST[ib + I_MARKED] / ST[ib + I_ACKED]
    g = F[fr, F_G]
    F[fr, F_ALPHA] = (1.0 - g) * F[fr, F_ALPHA] + g * frac


@njit(cache=True)
def _reset_window(ST, ib, now_ps):
    ST[ib + I_ACKED] = 0
    ST[ib + I_MARKED] = 0
    ST[ib + I_RTT_MIN_WINDOW] = -1
    ST[ib + I_W_START] = now_ps
    ST[ib + I_W_ACTIVE] = 1


@njit(cache=True)
def on_ack(F, fr, ST, ib, now_ps, acked_bytes, ecn, rtt_ps, sent_ps):
    """An ACK (:meth:`uno.cc.gemini.Gemini.on_ack`, Algorithm 1)."""
    ST[ib + I_ACKED] += acked_bytes
    if ecn:
        ST[ib + I_MARKED] += acked_bytes
    base_rtt = ST[ib + I_BASE_RTT]
    per_base_rtt = ST[ib + I_PER_BASE_RTT]
    if per_base_rtt:
        if ST[ib + I_CYCLE_START] < 0:  # first ACK: the first window is out
            ST[ib + I_CYCLE_START] = now_ps
            ST[ib + I_LAST_REDUCTION] = now_ps
        elif now_ps - ST[ib + I_CYCLE_START] > base_rtt:
            _update_alpha(F, fr, ST, ib)
            ST[ib + I_CYCLE_START] = now_ps
            ST[ib + I_ACKED] = 0
            ST[ib + I_MARKED] = 0
            ST[ib + I_RTT_MIN_WINDOW] = -1
        if ST[ib + I_RTT_MIN_WINDOW] < 0 or rtt_ps < ST[ib + I_RTT_MIN_WINDOW]:
            ST[ib + I_RTT_MIN_WINDOW] = rtt_ps
    else:
        if ST[ib + I_RTT_MIN_WINDOW] < 0 or rtt_ps < ST[ib + I_RTT_MIN_WINDOW]:
            ST[ib + I_RTT_MIN_WINDOW] = rtt_ps
        if not ST[ib + I_W_ACTIVE]:
            ST[ib + I_W_START] = now_ps
            ST[ib + I_W_ACTIVE] = 1
        elif sent_ps >= ST[ib + I_W_START]:
            _update_alpha(F, fr, ST, ib)
            ST[ib + I_RTT_MIN_PREV] = ST[ib + I_RTT_MIN_WINDOW]
            _reset_window(ST, ib, now_ps)
    if ST[ib + I_SLOW_START] and F[fr, W_CWND] >= F[fr, F_SSTHRESH]:
        ST[ib + I_SLOW_START] = 0
    # wan_congested: RTT_min > RTT_base + T
    rtt_min = ST[ib + I_RTT_MIN_WINDOW] if per_base_rtt else ST[ib + I_RTT_MIN_PREV]
    congested_wan = ST[ib + I_USE_DELAY] and rtt_min >= 0 and rtt_min > base_rtt + ST[ib + I_T]
    if ecn or congested_wan:
        last = ST[ib + I_LAST_REDUCTION]
        may_reduce = (not per_base_rtt) if last < 0 else now_ps - last > base_rtt
        if may_reduce:
            f_dcn = F[fr, F_ALPHA] * F[fr, F_SCALE] if ecn else 0.0
            f_wan = F[fr, F_BETA] if congested_wan else 0.0
            worst = f_wan if f_wan > f_dcn else f_dcn
            cut = worst if worst < F[fr, F_MAX_CUT] else F[fr, F_MAX_CUT]
            set_cwnd(F, fr, F[fr, W_CWND] * (1.0 - cut))
            ST[ib + I_LAST_REDUCTION] = now_ps
            if per_base_rtt:
                ST[ib + I_CYCLE_START] = now_ps
            if ST[ib + I_SLOW_START] and ST[ib + I_EXIT_ON_CUT]:
                ST[ib + I_SLOW_START] = 0
                F[fr, F_SSTHRESH] = F[fr, W_CWND]
    elif ST[ib + I_SLOW_START]:
        set_cwnd(F, fr, F[fr, W_CWND] + acked_bytes)
    else:
        cwnd = F[fr, W_CWND]
        set_cwnd(F, fr, cwnd + F[fr, F_H] * acked_bytes / cwnd)


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    """A retransmission timeout (:meth:`uno.cc.gemini.Gemini.on_timeout`): at most once per
    hold-off, ssthresh = half the window, restart from the floor in slow start."""
    last = ST[ib + I_LAST_TIMEOUT]
    if last >= 0 and now_ps - last <= ST[ib + I_HOLDOFF]:
        return
    ST[ib + I_LAST_TIMEOUT] = now_ps
    half = F[fr, W_CWND] / 2.0
    floor = F[fr, W_MIN]
    F[fr, F_SSTHRESH] = half if half > floor else floor
    set_cwnd(F, fr, floor)
    ST[ib + I_SLOW_START] = F[fr, W_CWND] < F[fr, F_SSTHRESH]
    ST[ib + I_LAST_REDUCTION] = now_ps
    ST[ib + I_RTT_MIN_PREV] = -1
    _reset_window(ST, ib, now_ps)
    if ST[ib + I_PER_BASE_RTT]:
        ST[ib + I_CYCLE_START] = now_ps


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    """A loss found by fast retransmit (:meth:`uno.cc.gemini.Gemini.on_nack`): TCP's halving,
    once per base RTT of losses."""
    last = ST[ib + I_LAST_LOSS]
    if last >= 0 and now_ps - last <= ST[ib + I_BASE_RTT]:
        return
    ST[ib + I_LAST_LOSS] = now_ps
    set_cwnd(F, fr, F[fr, W_CWND] / 2.0)
    F[fr, F_SSTHRESH] = F[fr, W_CWND]
    ST[ib + I_SLOW_START] = 0
    ST[ib + I_LAST_REDUCTION] = now_ps

"""DCQCN's reaction point as ``@njit`` functions over per-flow state arrays: the compiled form
of :class:`uno.cc.dcqcn.Dcqcn` (Zhu et al., SIGCOMM 2015, §3, the RP algorithm of Fig. 7), which
stays the per-event reference implementation. The compiled data plane's senders call these;
each does the Python method's arithmetic in the same order, so rates and alpha are the same
doubles bit for bit (``tests/test_compiled_senders.py`` runs both on random send, ACK, CNP,
timeout and loss sequences).

The timers are lazy, as in the class: every hook first applies the expiries up to its time
(:func:`advance`), and the sender asks for :func:`next_rate_change_ps` after each send to wake
at a rate timer that shortens its pacing gap (uno/net/compiled.py, ``_EV_RATE``).

State of one flow: in its row of ``F`` (``fr``) the window, floor and cap (bytes; the window is
infinite unless ``max_cwnd_bdp`` caps it, and never changes), then R_C, R_T (bit/s), alpha, g,
the line rate, the minimum rate, R_AI, R_HAI (bit/s) and the rate on the first CNP (a fraction);
in ``ST`` from ``ib`` the timer and byte-counter stages, the bytes counted, the CNPs heard, the
next alpha and rate-timer expiries (ps, -1 before the first CNP), their periods (ps), B (bytes),
F (stages), and whether the target rate is clamped at every CNP and a loss counts as a CNP.
"""

from __future__ import annotations

from numba import njit

from uno.cc.window_kernel import W_CWND, W_MAX, W_MIN

F_RC, F_RT, F_ALPHA, F_G, F_LINE, F_MIN_RATE, F_AI, F_HAI, F_FIRST = range(3, 12)
N_FLOATS = 12
(I_T_STAGE, I_B_STAGE, I_BYTES, I_CNPS, I_ALPHA_NEXT, I_RATE_NEXT, I_ALPHA_PERIOD,
 I_RATE_PERIOD, I_B, I_F, I_CLAMP, I_LOSS_AS_CNP) = range(12)  # fmt: skip
N_INTS = 12


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.dcqcn.Dcqcn`'s parameters and state into its rows."""
    p = cc.p
    F[fr, W_CWND] = cc.cwnd_bytes
    F[fr, W_MIN] = 0.0
    F[fr, W_MAX] = cc.cwnd_bytes
    F[fr, F_RC] = cc.pacing_rate_bps
    F[fr, F_RT] = cc.target_rate_bps
    F[fr, F_ALPHA] = cc.alpha
    F[fr, F_G] = p.g
    F[fr, F_LINE] = cc.line_rate_bps
    F[fr, F_MIN_RATE] = cc.min_rate_bps
    F[fr, F_AI] = cc.rate_ai_bps
    F[fr, F_HAI] = cc.rate_hai_bps
    F[fr, F_FIRST] = p.rate_on_first_cnp
    ST[ib + I_T_STAGE] = cc.timer_stage
    ST[ib + I_B_STAGE] = cc.byte_stage
    ST[ib + I_BYTES] = cc.bytes_counted
    ST[ib + I_CNPS] = cc.cnps
    ST[ib + I_ALPHA_NEXT] = -1 if cc._alpha_next_ps is None else cc._alpha_next_ps
    ST[ib + I_RATE_NEXT] = -1 if cc._rate_next_ps is None else cc._rate_next_ps
    ST[ib + I_ALPHA_PERIOD] = cc.alpha_period_ps
    ST[ib + I_RATE_PERIOD] = cc.rate_period_ps
    ST[ib + I_B] = p.byte_counter_bytes
    ST[ib + I_F] = p.fast_recovery_stages
    ST[ib + I_CLAMP] = p.clamp_target_rate
    ST[ib + I_LOSS_AS_CNP] = p.loss_as_cnp


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the rows' state back into the :class:`uno.cc.dcqcn.Dcqcn`."""
    cc.pacing_rate_bps = float(F[fr, F_RC])
    cc.target_rate_bps = float(F[fr, F_RT])
    cc.alpha = float(F[fr, F_ALPHA])
    cc.timer_stage = int(ST[ib + I_T_STAGE])
    cc.byte_stage = int(ST[ib + I_B_STAGE])
    cc.bytes_counted = int(ST[ib + I_BYTES])
    cc.cnps = int(ST[ib + I_CNPS])
    alpha_next, rate_next = int(ST[ib + I_ALPHA_NEXT]), int(ST[ib + I_RATE_NEXT])
    cc._alpha_next_ps = None if alpha_next < 0 else alpha_next
    cc._rate_next_ps = None if rate_next < 0 else rate_next


@njit(cache=True)
def _increase(F, fr, ST, ib):
    """One rate-increase event, its stage count already advanced (:meth:`Dcqcn._increase`)."""
    f = ST[ib + I_F]
    t = ST[ib + I_T_STAGE]
    b = ST[ib + I_B_STAGE]
    if t > f or b > f:
        low = t if t < b else b
        if low > f:
            rt = F[fr, F_RT] + (low - f) * F[fr, F_HAI]  # hyper increase
        else:
            rt = F[fr, F_RT] + F[fr, F_AI]  # additive increase
        F[fr, F_RT] = rt if rt < F[fr, F_LINE] else F[fr, F_LINE]
    F[fr, F_RC] = (F[fr, F_RT] + F[fr, F_RC]) / 2.0


@njit(cache=True)
def _cnp(F, fr, ST, ib, now_ps):
    """A CNP (:meth:`Dcqcn._cnp`): cut R_C by alpha / 2, then update alpha; restart the stages,
    the byte counter and both timers."""
    rc = F[fr, F_RC]
    first = F[fr, F_FIRST]
    if ST[ib + I_CNPS] == 0 and first != 1.0:
        rc = max(F[fr, F_MIN_RATE], first * rc)
        F[fr, F_RT] = rc
    ST[ib + I_CNPS] += 1
    if ST[ib + I_CLAMP] or ST[ib + I_T_STAGE] or ST[ib + I_B_STAGE]:
        F[fr, F_RT] = rc
    F[fr, F_RC] = max(F[fr, F_MIN_RATE], rc * (1.0 - F[fr, F_ALPHA] / 2.0))
    g = F[fr, F_G]
    F[fr, F_ALPHA] = (1.0 - g) * F[fr, F_ALPHA] + g
    ST[ib + I_T_STAGE] = 0
    ST[ib + I_B_STAGE] = 0
    ST[ib + I_BYTES] = 0
    ST[ib + I_ALPHA_NEXT] = now_ps + ST[ib + I_ALPHA_PERIOD]
    ST[ib + I_RATE_NEXT] = now_ps + ST[ib + I_RATE_PERIOD]


@njit(cache=True)
def advance(F, fr, ST, ib, now_ps):
    """Apply every timer expiry at or before ``now_ps`` (:meth:`Dcqcn.advance`)."""
    nxt = ST[ib + I_ALPHA_NEXT]
    if nxt < 0:
        return
    if nxt <= now_ps:
        period = ST[ib + I_ALPHA_PERIOD]
        n = (now_ps - nxt) // period + 1
        # (a float exponent: libm's pow, as Python's float ** int)
        F[fr, F_ALPHA] *= (1.0 - F[fr, F_G]) ** float(n)
        ST[ib + I_ALPHA_NEXT] = nxt + n * period
    period = ST[ib + I_RATE_PERIOD]
    line = F[fr, F_LINE]
    while ST[ib + I_RATE_NEXT] <= now_ps:
        if F[fr, F_RC] >= line and F[fr, F_RT] >= line:
            # at line rate every increase event leaves both rates there: count them at once
            n = (now_ps - ST[ib + I_RATE_NEXT]) // period + 1
            ST[ib + I_T_STAGE] += n
            ST[ib + I_RATE_NEXT] += n * period
            break
        ST[ib + I_T_STAGE] += 1
        _increase(F, fr, ST, ib)
        ST[ib + I_RATE_NEXT] += period


@njit(cache=True)
def next_rate_change_ps(F, fr, ST, ib):
    """The next rate-timer expiry that can change the rate, -1 if none
    (:meth:`Dcqcn.next_rate_timer_ps`)."""
    nxt = ST[ib + I_RATE_NEXT]
    if nxt < 0:
        return -1
    line = F[fr, F_LINE]
    if F[fr, F_RC] >= line and F[fr, F_RT] >= line:
        return -1
    return nxt


@njit(cache=True)
def on_send(F, fr, ST, ib, now_ps, wire_bytes):
    """A data packet of ``wire_bytes`` leaves at ``now_ps`` (:meth:`Dcqcn.on_send`): the byte
    counter, once the first CNP started it."""
    advance(F, fr, ST, ib, now_ps)
    if ST[ib + I_RATE_NEXT] < 0:
        return
    b = ST[ib + I_B]
    counted = ST[ib + I_BYTES] + wire_bytes
    while counted >= b:
        counted -= b
        ST[ib + I_B_STAGE] += 1
        _increase(F, fr, ST, ib)
    ST[ib + I_BYTES] = counted


@njit(cache=True)
def on_ack(F, fr, ST, ib, now_ps, ecn):
    """An ACK; ``ecn``: it carries a CNP (:meth:`Dcqcn.on_ack`)."""
    advance(F, fr, ST, ib, now_ps)
    if ecn:
        _cnp(F, fr, ST, ib, now_ps)


@njit(cache=True)
def on_loss(F, fr, ST, ib, now_ps):
    """A NACK or a retransmission timeout (:meth:`Dcqcn.on_nack`, :meth:`Dcqcn.on_timeout`):
    the timers advance; with ``loss_as_cnp`` it counts as a CNP."""
    advance(F, fr, ST, ib, now_ps)
    if ST[ib + I_LOSS_AS_CNP]:
        _cnp(F, fr, ST, ib, now_ps)


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    on_loss(F, fr, ST, ib, now_ps)


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    on_loss(F, fr, ST, ib, now_ps)

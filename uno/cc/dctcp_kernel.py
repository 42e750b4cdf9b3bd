"""DCTCP's window law as ``@njit`` functions over per-flow state arrays: the compiled form of
:class:`uno.cc.dctcp.Dctcp` (Alizadeh et al., SIGCOMM 2010, §3.1, eqs. 1-2), which stays the
per-ACK reference implementation. The compiled data plane's senders (uno/net/compiled.py) call
these; each does the Python method's arithmetic in the same order, so windows are the same
doubles bit for bit (``tests/test_compiled_senders.py`` runs both on random ACK sequences).

State of one flow: six doubles in a row of ``F`` (``fr``: the window, its floor and cap, in
bytes, as :mod:`uno.cc.window_kernel` lays them out; the slow-start threshold, alpha, the gain
g) and seven int64 in ``ST`` from ``ib``: the
rounds delimited by send times (the EWMA window's and the once-per-window cut's: active flag,
start, in ps), the bytes acknowledged and marked in the current window, the MSS (bytes).
"""

from __future__ import annotations

from numba import njit

from uno.cc.window_kernel import W_CWND as D_CWND
from uno.cc.window_kernel import W_MIN, load_window, set_cwnd, store_window

# the doubles (F row, after the window's three)
D_SSTHRESH, D_ALPHA, D_G = 3, 4, 5
N_FLOATS = 6
# the ints (ST, from ib)
I_W_ACTIVE, I_W_START, I_CWR_ACTIVE, I_CWR_START, I_ACKED, I_MARKED, I_MSS = range(7)
N_INTS = 7


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.dctcp.Dctcp`'s state into its rows."""
    load_window(cc, F, fr)
    F[fr, D_SSTHRESH] = cc.ssthresh
    F[fr, D_ALPHA] = cc.alpha
    F[fr, D_G] = cc.p.g
    ST[ib + I_W_ACTIVE] = cc.window.active
    ST[ib + I_W_START] = cc.window.start_ps
    ST[ib + I_CWR_ACTIVE] = cc.cwr.active
    ST[ib + I_CWR_START] = cc.cwr.start_ps
    ST[ib + I_ACKED] = cc.acked_in_window
    ST[ib + I_MARKED] = cc.marked_in_window
    ST[ib + I_MSS] = cc.mss


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the rows' state back into the :class:`uno.cc.dctcp.Dctcp` (for samplers and
    tables)."""
    store_window(cc, F, fr)
    cc.ssthresh = float(F[fr, D_SSTHRESH])
    cc.alpha = float(F[fr, D_ALPHA])
    cc.window.active = bool(ST[ib + I_W_ACTIVE])
    cc.window.start_ps = int(ST[ib + I_W_START])
    cc.cwr.active = bool(ST[ib + I_CWR_ACTIVE])
    cc.cwr.start_ps = int(ST[ib + I_CWR_START])
    cc.acked_in_window = int(ST[ib + I_ACKED])
    cc.marked_in_window = int(ST[ib + I_MARKED])


@njit(cache=True)
def on_ack(F, fr, ST, ib, now_ps, acked_bytes, ecn, sent_ps):
    """An ACK of ``acked_bytes`` (ECN echo ``ecn``) for a packet sent at ``sent_ps``
    (:meth:`uno.cc.dctcp.Dctcp.on_ack`): alpha's EWMA once per window (eq. 1), a cut by
    alpha / 2 at most once per window on an echo (eq. 2), else slow start or one MSS per
    window."""
    ST[ib + I_ACKED] += acked_bytes
    if ecn:
        ST[ib + I_MARKED] += acked_bytes
    if not ST[ib + I_W_ACTIVE]:
        ST[ib + I_W_START] = now_ps
        ST[ib + I_W_ACTIVE] = 1
    elif sent_ps >= ST[ib + I_W_START]:
        frac = ST[ib + I_MARKED] / ST[ib + I_ACKED]
        g = F[fr, D_G]
        F[fr, D_ALPHA] = (1.0 - g) * F[fr, D_ALPHA] + g * frac
        ST[ib + I_ACKED] = 0
        ST[ib + I_MARKED] = 0
        ST[ib + I_W_START] = now_ps
    if ecn:
        if not ST[ib + I_CWR_ACTIVE] or sent_ps >= ST[ib + I_CWR_START]:
            set_cwnd(F, fr, F[fr, D_CWND] * (1.0 - F[fr, D_ALPHA] / 2.0))
            F[fr, D_SSTHRESH] = F[fr, D_CWND]
            ST[ib + I_CWR_START] = now_ps
            ST[ib + I_CWR_ACTIVE] = 1
    elif F[fr, D_CWND] < F[fr, D_SSTHRESH]:
        set_cwnd(F, fr, F[fr, D_CWND] + acked_bytes)
    else:
        set_cwnd(F, fr, F[fr, D_CWND] + ST[ib + I_MSS] * acked_bytes / F[fr, D_CWND])


@njit(cache=True)
def _halve(F, fr, ST, ib, now_ps):
    half = F[fr, D_CWND] / 2.0
    floor = F[fr, W_MIN]
    F[fr, D_SSTHRESH] = half if half > floor else floor
    ST[ib + I_CWR_START] = now_ps
    ST[ib + I_CWR_ACTIVE] = 1


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    """A retransmission timeout (:meth:`uno.cc.dctcp.Dctcp.on_timeout`): ssthresh = half the
    window (at least the floor), the window restarts from the floor."""
    _halve(F, fr, ST, ib, now_ps)
    set_cwnd(F, fr, F[fr, W_MIN])


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    """A loss found by fast retransmit (:meth:`uno.cc.dctcp.Dctcp.on_nack`): the window
    halves, as TCP's fast recovery."""
    _halve(F, fr, ST, ib, now_ps)
    set_cwnd(F, fr, F[fr, D_SSTHRESH])

"""MP-RDMA's window law as ``@njit`` functions over per-flow state arrays: the compiled form of
:class:`uno.cc.mprdma.Mprdma` (Lu et al., NSDI 2018: cwnd += MSS x acked / cwnd per unmarked
ACK, cwnd -= a fixed decrement per marked ACK), which stays the per-ACK reference
implementation. The compiled data plane's senders call these; each does the Python method's
arithmetic in the same order, so windows are the same doubles bit for bit
(``tests/test_compiled_senders.py`` runs both on random ACK sequences).

State of one flow: in its row of ``F`` (``fr``) the window, floor and cap (bytes,
:mod:`uno.cc.window_kernel`) and the decrement per marked ACK (bytes); in ``ST`` from ``ib`` the
MSS (bytes) and whether a timeout resets the window to the floor.
"""

from __future__ import annotations

from numba import njit

from uno.cc.window_kernel import W_CWND, W_MIN, load_window, set_cwnd, store_window

F_ECN_DECREASE = 3
N_FLOATS = 4
I_MSS, I_TIMEOUT_RESETS = 0, 1
N_INTS = 2


def load(cc, F, fr: int, ST, ib: int) -> None:
    """Copy a :class:`uno.cc.mprdma.Mprdma`'s parameters and window into its rows."""
    load_window(cc, F, fr)
    F[fr, F_ECN_DECREASE] = cc.ecn_decrease_bytes
    ST[ib + I_MSS] = cc.mss
    ST[ib + I_TIMEOUT_RESETS] = cc.p.timeout_resets_cwnd


def store(cc, F, fr: int, ST, ib: int) -> None:
    """Copy the window back into the :class:`uno.cc.mprdma.Mprdma`."""
    store_window(cc, F, fr)


@njit(cache=True)
def on_ack(F, fr, ST, ib, now_ps, acked_bytes, ecn, rtt_ps, sent_ps):
    """An ACK (:meth:`uno.cc.mprdma.Mprdma.on_ack`; also a duplicate's, with
    ``update_on_duplicate_ack``)."""
    cwnd = F[fr, W_CWND]
    if ecn:
        set_cwnd(F, fr, cwnd - F[fr, F_ECN_DECREASE])
    else:
        set_cwnd(F, fr, cwnd + ST[ib + I_MSS] * acked_bytes / cwnd)


@njit(cache=True)
def on_timeout(F, fr, ST, ib, now_ps):
    """A retransmission timeout (:meth:`uno.cc.mprdma.Mprdma.on_timeout`): the window drops to
    the floor if so configured."""
    if ST[ib + I_TIMEOUT_RESETS]:
        set_cwnd(F, fr, F[fr, W_MIN])


@njit(cache=True)
def on_nack(F, fr, ST, ib, now_ps):
    """A fast-retransmit loss: MP-RDMA does nothing (the base controller's ``on_nack``)."""

"""The window rules every compiled controller shares (:class:`uno.cc.base.WindowedControl`):
the window and its floor and cap are the first three doubles of the controller's row of
``F`` (bytes), the window is clamped to them, and a paced sender's rate is the window per base
RTT (the sender computes it from the window: uno/net/compiled.py). The controllers' own
kernels (uno/cc/dctcp_kernel.py, uno_kernel.py, gemini_kernel.py) keep their state after these.
"""

from __future__ import annotations

from numba import njit

#: the window, its floor and its cap (bytes): columns 0-2 of every compiled controller's row
W_CWND, W_MIN, W_MAX = 0, 1, 2


def load_window(cc, F, fr: int) -> None:
    """Copy a :class:`uno.cc.base.WindowedControl`'s window, floor and cap into row ``fr``."""
    F[fr, W_CWND] = cc.cwnd_bytes
    F[fr, W_MIN] = cc.min_cwnd
    F[fr, W_MAX] = cc.max_cwnd


def store_window(cc, F, fr: int) -> None:
    """Set the controller's window (and pacing rate, as ``set_cwnd`` does) from row ``fr``."""
    cc.cwnd_bytes = float(F[fr, W_CWND])
    if cc.paced:
        cc.pacing_rate_bps = cc.cwnd_bytes * 8e12 / cc._pacing_rtt_ps


@njit(cache=True)
def set_cwnd(F, fr, cwnd):
    """The window, clamped to [floor, cap] (:meth:`uno.cc.base.WindowedControl.set_cwnd`; the
    pacing rate follows from it)."""
    if cwnd < F[fr, W_MIN]:
        cwnd = F[fr, W_MIN]
    elif not cwnd < F[fr, W_MAX]:
        cwnd = F[fr, W_MAX]
    F[fr, W_CWND] = cwnd

"""SMaRTT with Wait-to-Decrease, the congestion control REPS is designed with (Bonato et al.,
"REPS: Recycling Entropies for Packet Spraying", §3.0.1, citing Bonato et al., "SMaRTT-REPS",
arXiv 2404.01630). The REPS paper gives only Wait-to-Decrease; the rest is read from the
authors' public htsim code (``spcl/HTSIM``: the x/y/z/w-gain SMaRTT of its ``sim/uec.cpp`` in
the archived 2025 tree, the pending increases and Quick Adapt's gate of the current ``uec.cpp``).

Per ACK, with ``rtt`` the ACK's RTT sample against the target RTT ``target = target_rtt_factor x
base RTT`` (the code: 1.51, "50% over base" plus one point), MSS and windows in wire bytes:

=========================  ==================================================================
no ECN, rtt < target       cwnd += min((target - rtt) / rtt x y x MSS^2 / cwnd, MSS) + x MSS^2 / cwnd
no ECN, rtt >= target      cwnd += x x MSS^2 / cwnd                      (fair increase only)
ECN, rtt >= target         cwnd -= min(w x (rtt - target) / rtt x MSS + cwnd / BDP x z x MSS, MSS)
ECN, rtt < target          cwnd -= cwnd / BDP x z x MSS
=========================  ==================================================================

with the code's gains x = 0.15, y = z = w = 1. **Wait-to-Decrease** (REPS §3.0.1): every ACK
updates ``avg = alpha x ecn + (1 - alpha) x avg``, and the two decreases apply only while
``avg >= wtd_threshold``: 0.25 in the paper ("unless 25 percent or more of the acknowledgments
indicate congestion"), 0.3 in the authors' code, whose alpha is 0.125 (the paper gives none:
``cc=smartt`` takes 0.125 and 0.25, ``cc=smartt_htsim`` 0.125 and 0.3).

**Pending increases.** Increases are not applied ACK by ACK but summed and applied together once
``apply_every_mss`` MSS have been acknowledged since the last application or a base RTT has
passed (the current code: 8 MTU or one network RTT; 0: every ACK, as the archived code);
decreases apply at once.

**Quick Adapt** (on trims): a NACK (a trimmed packet's, :data:`uno.cc.law.LOSS_NACK`) makes the
window the bytes acknowledged over the last base RTT (x ``bonus_drop``, at least one MSS), at
most once per ``qa_rtts`` base RTTs (the code: 3), and only when that is below the window (the
current code gates it on "less than an eighth of the largest window acknowledged"; here a drop
must be a drop). After it, ECN decreases and further NACKs are ignored until the window it left
in flight has been acknowledged. A NACK that does not trigger it takes ``nack_decrease_mss`` MSS
(the code: 1). A timeout takes one MSS (the current code; REPS reads timeouts as failures, its
balancer's business, not congestion).

A feedback batch of several ACKs (the fluid engine) applies the rules to its marked and unmarked
ACKs as counts, with the batch's RTT; for one ACK this is exactly the table.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import (
    LOSS_NACK,
    Law,
    init_window,
    params_layout,
    set_cwnd,
    state_layout,
    window_params,
)
from uno.config.fields import num


@dataclass
class SmarttParams:
    """SMaRTT settings (defaults: the authors' code). Windows in flow BDPs or MSS."""

    #: target RTT, in base RTTs (the code: 1.51)
    target_rtt_factor: float = num(1.51, "> 1")
    #: fair increase per RTT, in MSS (x)
    x_gain: float = num(0.15, ">= 0")
    #: proportional increase below the target (y)
    y_gain: float = num(1.0, ">= 0")
    #: decrease with the window's share of the BDP (z)
    z_gain: float = num(1.0, ">= 0")
    #: decrease with the RTT's excess over the target (w)
    w_gain: float = num(1.0, ">= 0")
    #: Wait-to-Decrease: decreases only while the ECN average is at least wtd_threshold
    wtd: bool = True
    #: the ECN average's gain per ACK
    wtd_alpha: float = num(0.125, "(0, 1]")
    #: the ECN average from which decreases apply (the paper: 0.25; the code: 0.3)
    wtd_threshold: float = num(0.25, "[0, 1]")
    #: increases are summed and applied every this many MSS acknowledged (or each base RTT);
    #: 0: every ACK
    apply_every_mss: float = num(8.0, ">= 0")
    #: Quick Adapt on NACKs (trimmed packets)
    quick_adapt: bool = True
    #: Quick Adapt's window: the bytes acknowledged over the last base RTT x this
    bonus_drop: float = num(1.0, "> 0")
    #: Quick Adapt at most once per this many base RTTs
    qa_rtts: float = num(3.0, "> 0")
    #: window taken by a NACK that does not trigger Quick Adapt, in MSS
    nack_decrease_mss: float = num(1.0, ">= 0")
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: window cap, in flow BDPs (the current code: 1.5)
    max_cwnd_bdp: float = num(1.5, ">= 0")
    #: pace at cwnd / base RTT
    pacing: bool = False


#: the ECN average; the pending increase (bytes) and the bytes acknowledged and time since it
#: was last applied; the bytes acknowledged in this base-RTT window and the last one, and the
#: window's start; the last Quick Adapt's time (-1: none) and the bytes to acknowledge before
#: decreases count again
S = state_layout("SmarttState", (
    "ecn_avg", "pending", "since_bytes", "since_ps", "win_acked", "last_win_acked",
    "win_start", "qa_ps", "qa_ignore",
))  # fmt: skip
#: target RTT (ps), BDP (bytes), the gains, Wait-to-Decrease, the application step (bytes),
#: Quick Adapt's switch, factor and spacing (ps), a NACK's decrease (bytes)
P = params_layout("SmarttConsts", (
    "target", "bdp", "x", "y", "z", "w", "wtd", "wtd_alpha", "wtd_threshold", "apply_bytes",
    "qa", "bonus_drop", "qa_gap", "nack_bytes",
))  # fmt: skip


def pack(params: SmarttParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.target] = params.target_rtt_factor * ctx.base_rtt_ps
    p[P.bdp] = ctx.bdp_bytes
    p[P.x], p[P.y], p[P.z], p[P.w] = params.x_gain, params.y_gain, params.z_gain, params.w_gain
    p[P.wtd] = 1.0 if params.wtd else 0.0
    p[P.wtd_alpha] = params.wtd_alpha
    p[P.wtd_threshold] = params.wtd_threshold
    p[P.apply_bytes] = params.apply_every_mss * ctx.mss_bytes
    p[P.qa] = 1.0 if params.quick_adapt else 0.0
    p[P.bonus_drop] = params.bonus_drop
    p[P.qa_gap] = params.qa_rtts * ctx.base_rtt_ps
    p[P.nack_bytes] = params.nack_decrease_mss * ctx.mss_bytes
    return p


@njit(cache=True)
def init(s, p):
    init_window(s, p)
    s[S.qa_ps] = -1.0
    s[S.since_ps] = -1.0
    s[S.win_start] = -1.0


@njit(cache=True)
def _count_window(s, p, now, acked):
    """Bytes acknowledged per base RTT, for Quick Adapt."""
    if s[S.win_start] < 0.0:
        s[S.win_start] = now
    elif now - s[S.win_start] >= p[P.base_rtt]:
        s[S.last_win_acked] = s[S.win_acked]
        s[S.win_acked] = 0.0
        s[S.win_start] = now
    s[S.win_acked] += acked


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """The four cases on ECN x RTT against the target, Wait-to-Decrease, pending increases."""
    now = fb.now_ps
    mss = p[P.mss]
    _count_window(s, p, now, fb.acked_bytes)
    if s[S.qa_ignore] > 0.0:
        s[S.qa_ignore] = max(0.0, s[S.qa_ignore] - fb.acked_bytes)
    marked = fb.marked_acks
    unmarked = fb.acks - marked
    # Wait-to-Decrease's average, one EWMA step per ACK
    a = p[P.wtd_alpha]
    keep = (1.0 - a) ** fb.acks
    frac = marked / fb.acks if fb.acks > 0.0 else 0.0
    s[S.ecn_avg] = keep * s[S.ecn_avg] + (1.0 - keep) * frac
    cwnd = s[S.cwnd]
    rtt = fb.rtt_ps
    target = p[P.target]
    if unmarked > 0.0:
        inc = p[P.x] * mss * mss / cwnd
        if rtt < target:
            inc += min((target - rtt) / rtt * p[P.y] * mss * mss / cwnd, mss)
        s[S.pending] += unmarked * inc
    decrease_allowed = s[S.qa_ignore] <= 0.0 and (
        p[P.wtd] == 0.0 or s[S.ecn_avg] >= p[P.wtd_threshold]
    )
    if marked > 0.0 and decrease_allowed:
        dec = cwnd / p[P.bdp] * p[P.z] * mss
        if rtt >= target:
            dec = min(p[P.w] * (rtt - target) / rtt * mss + dec, mss)
        set_cwnd(s, p, cwnd - marked * dec)
    # pending increases, applied every apply_bytes acknowledged or each base RTT
    if s[S.since_ps] < 0.0:
        s[S.since_ps] = now
    s[S.since_bytes] += fb.acked_bytes
    if s[S.since_bytes] >= p[P.apply_bytes] or now - s[S.since_ps] >= p[P.base_rtt]:
        set_cwnd(s, p, s[S.cwnd] + s[S.pending])
        s[S.pending] = 0.0
        s[S.since_bytes] = 0.0
        s[S.since_ps] = now


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A NACK (a trimmed packet): Quick Adapt if due, else ``nack_decrease_mss``; none while
    Quick Adapt's window is in flight. A timeout: one MSS."""
    cwnd = s[S.cwnd]
    if loss != LOSS_NACK:
        set_cwnd(s, p, cwnd - p[P.mss])
        return
    if s[S.qa_ignore] > 0.0:
        return
    if p[P.qa] > 0.0 and (s[S.qa_ps] < 0.0 or now_ps - s[S.qa_ps] >= p[P.qa_gap]):
        # the last whole base-RTT window's bytes, or this one's if it is already longer
        acked = max(s[S.last_win_acked], s[S.win_acked])
        window = max(acked * p[P.bonus_drop], p[P.mss])
        if window < cwnd:
            set_cwnd(s, p, window)
            s[S.qa_ps] = now_ps
            s[S.qa_ignore] = cwnd
            s[S.pending] = 0.0
            return
    set_cwnd(s, p, cwnd - p[P.nack_bytes])


LAW = Law(
    name="smartt",
    params=SmarttParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    signals=("ecn", "rtt"),
)

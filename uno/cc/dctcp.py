"""DCTCP (Alizadeh et al., "Data Center TCP", SIGCOMM 2010, §3.1 "Algorithm").

The sender keeps ``alpha``, an EWMA (gain ``g`` = 1/16) of the fraction of bytes whose ACKs
carried an ECN echo, updated once per window of data (§3.1, eq. 1: alpha <- (1-g) alpha + g F).
On ECN echoes it cuts the window at most once per window: cwnd <- cwnd x (1 - alpha/2) (§3.1,
eq. 2). Otherwise it grows like TCP: slow start below ``ssthresh``, then one MSS per window of
ACKs (cwnd += MSS x acked / cwnd; ``inter_ai_ratio_max`` gives inter-DC flows min(that,
CRTT / IRTT) MSS, as Gear's evaluation does). A retransmission timeout sets ssthresh = cwnd/2 and restarts
from one MSS; a loss found by fast retransmit (DCTCP keeps TCP's loss recovery, §3.1;
``cc=dctcp`` turns on the transport's duplicate-ACK rule, ``transport.dupack_threshold: 3``)
halves the window, as TCP's fast recovery (RFC 5681). Windows of data are delimited by send
times: a window that starts at an ACK ends at the first ACK of a packet sent at or after then
(robust to reordering). Pacing (off by default) is at cwnd / base RTT.

The initial window defaults to the path BDP (line rate), as the datacenter transports in the
Uno paper do; ``alpha_init`` defaults to 1 (Linux's ``dctcp_alpha_on_init``).

A feedback batch (:mod:`uno.cc.law`) counts in the window all its bytes and its marked bytes;
the cut happens when the batch holds a whole marked ACK (``mark_events``), and the window grows
by the batch's unmarked bytes: for one ACK, exactly the per-ACK rules above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import LOSS_NACK, Law, params_layout, set_cwnd, state_layout, window_params
from uno.config.fields import num


@dataclass
class DctcpParams:
    """DCTCP settings. Windows are in multiples of the flow's path BDP or of the MSS."""

    #: EWMA gain of alpha (§3.1: 1/16)
    g: float = num(1.0 / 16.0, "(0, 1]")
    #: alpha at the flow's start (Linux: 1)
    alpha_init: float = num(1.0, "[0, 1]")
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: window cap, in flow BDPs
    max_cwnd_bdp: float = num(0.0, ">= 0")  # 0: no cap
    #: pace at cwnd / base RTT
    pacing: bool = False
    #: inter-DC flows' additive increase, in intra-DC ones' (1 MSS per window): min(this,
    #: CRTT / IRTT); null: 1 MSS for every flow. Gear's evaluation sets 500 (Han et al., IEEE/ACM
    #: ToN, §IV-A (i): "cross-DC flows can hardly obtain any bandwidth" otherwise)
    inter_ai_ratio_max: float | None = num(None, "> 0")


#: the window's slow-start threshold (bytes); alpha; the window of data alpha is measured over
#: (whether one is open, its start in ps, the bytes acknowledged and marked in it); the round
#: that holds off a second cut (whether one is open, its start)
S = state_layout("DctcpState", (
    "ssthresh", "alpha", "win_active", "win_start", "acked", "marked", "cwr_active",
    "cwr_start",
))  # fmt: skip
#: alpha's gain and start; the additive increase per window of ACKs (bytes)
P = params_layout("DctcpConsts", ("g", "alpha_init", "ai_bytes"))


def pack(params: DctcpParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.g] = params.g
    p[P.alpha_init] = params.alpha_init
    ai = 1.0
    if params.inter_ai_ratio_max is not None and ctx.is_inter_dc:
        ai = min(params.inter_ai_ratio_max, ctx.base_rtt_ps / ctx.intra_rtt_ps)
    p[P.ai_bytes] = ai * ctx.mss_bytes
    return p


@njit(cache=True)
def init(s, p):
    s[:] = 0.0
    set_cwnd(s, p, p[P.init_cwnd])
    s[S.ssthresh] = np.inf
    s[S.alpha] = p[P.alpha_init]


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """alpha's EWMA once per window of data (eq. 1); a cut by alpha / 2 at most once per window
    when the batch holds a marked ACK (eq. 2); growth on the unmarked bytes: slow start below
    ssthresh, else one MSS per window."""
    now = fb.now_ps
    sent = fb.sent_ps
    s[S.acked] += fb.acked_bytes
    s[S.marked] += fb.marked_bytes
    if s[S.win_active] == 0.0:
        s[S.win_start] = now
        s[S.win_active] = 1.0
    elif sent >= s[S.win_start]:
        frac = s[S.marked] / s[S.acked]
        g = p[P.g]
        s[S.alpha] = (1.0 - g) * s[S.alpha] + g * frac
        s[S.acked] = 0.0
        s[S.marked] = 0.0
        s[S.win_start] = now
    if fb.mark_events > 0.0:
        if s[S.cwr_active] == 0.0 or sent >= s[S.cwr_start]:
            set_cwnd(s, p, s[S.cwnd] * (1.0 - s[S.alpha] / 2.0))
            s[S.ssthresh] = s[S.cwnd]
            s[S.cwr_start] = now
            s[S.cwr_active] = 1.0
    unmarked = fb.acked_bytes - fb.marked_bytes
    if unmarked > 0.0:
        cwnd = s[S.cwnd]
        if cwnd < s[S.ssthresh]:
            set_cwnd(s, p, cwnd + unmarked)
        else:
            set_cwnd(s, p, cwnd + p[P.ai_bytes] * unmarked / cwnd)


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A retransmission timeout: ssthresh = half the window (at least the floor), the window
    restarts from the floor. A loss found by fast retransmit: the window halves, as TCP's fast
    recovery (RFC 5681 §3.2, as DCTCP keeps TCP's loss response, §3.1)."""
    half = s[S.cwnd] / 2.0
    floor = p[P.min_cwnd]
    s[S.ssthresh] = half if half > floor else floor
    s[S.cwr_start] = now_ps
    s[S.cwr_active] = 1.0
    set_cwnd(s, p, s[S.ssthresh] if loss == LOSS_NACK else floor)


LAW = Law(
    name="dctcp",
    params=DctcpParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    signals=("ecn",),
)

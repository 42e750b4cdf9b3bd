"""TIMELY (Mittal et al., "TIMELY: RTT-based Congestion Control for the Datacenter", SIGCOMM
2015, §4, Algorithm 1), with the parameters and the once-per-round-trip update of the HPCC
authors' ns-3 implementation (alibaba-edu/High-Precision-Congestion-Control,
``rdma-hw.cc`` ``UpdateRateTimely`` and ``run.py``'s TIMELY settings) — the TIMELY that Gear
(IEEE/ACM ToN) and MLCC (ICPP 2025) compare against.

A rate-based controller: the sender paces at rate R and has no window. Once per round trip —
at the first ACK of a packet sent after the last update (ns-3: ``ack_seq > lastUpdateSeq``,
then ``lastUpdateSeq = snd_nxt``; here by send times, as every round of uno) — with that ACK's
RTT sample (the time since its data packet left):

* new_rtt_diff = new_rtt - prev_rtt; rtt_diff = (1 - alpha) rtt_diff + alpha new_rtt_diff
  (Alg. 1 lines 2-4; ``alpha`` is the new sample's weight, 0.875 in ns-3);
* normalized_gradient = rtt_diff / minRTT (line 5; minRTT = 20 µs);
* new_rtt < T_low (50 µs): R += delta (lines 6-8);
* new_rtt > T_high (500 µs): R x= 1 - beta (1 - T_high / new_rtt) (lines 9-11; beta = 0.8);
* gradient <= 0: R += delta, or the hyper-active increase delta_HAI once ``hai_after`` (5)
  increases came in a row (lines 12-15; ns-3's ``incStage``);
* otherwise R x= 1 - beta x gradient, never below 0 (line 16);

then R within [R_min, line rate] (an increase resets nothing; a decrease resets the increase
count). The first round only records its sample. Defaults (ns-3 ``run.py`` for a NIC of B Gb/s:
delta = B Mb/s, delta_HAI = 5 B Mb/s, R_min = 1 Gb/s; the values below for 100 Gb/s).
Losses: ns-3's NIC retransmits (go-back-N on a NACK) and leaves the rate to the RTT feedback;
so does this law (a loss changes nothing). The rate starts at the line rate (the flow's
bottleneck rate, ``FlowContext.bottleneck_bps``).

A feedback batch (:mod:`uno.cc.law`) updates once when it holds the ACK that ends the round,
with the batch's RTT sample: for one ACK, exactly the per-ACK rule above.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import Law, params_layout, state_layout
from uno.config.fields import num
from uno.core.errors import ConfigError


@dataclass
class TimelyParams:
    """TIMELY settings (defaults: the HPCC authors' ns-3 TIMELY at 100 Gb/s)."""

    #: weight of the newest RTT difference in the EWMA of RTT differences (ns-3: 0.875)
    alpha: float = num(0.875, "(0, 1]")
    #: multiplicative-decrease factor (Alg. 1: beta = 0.8)
    beta: float = num(0.8, "(0, 1]")
    #: below this RTT the rate increases whatever the gradient (T_low)
    t_low_us: float = num(50.0, ">= 0")
    #: above this RTT the rate decreases in proportion to the excess (T_high)
    t_high_us: float = num(500.0, "> 0")
    #: the RTT differences are normalised by this (minRTT)
    min_rtt_us: float = num(20.0, "> 0")
    #: additive increase delta
    rate_ai_mbps: float = num(100.0, "> 0")
    #: hyper-active increase delta_HAI, after ``hai_after`` increases in a row
    rate_hai_mbps: float = num(500.0, "> 0")
    #: increases in a row before the hyper-active increase (ns-3: 5)
    hai_after: int = num(5, "[0, 1000000]")
    #: the rate never falls below this (ns-3 run.py: 1 Gb/s)
    min_rate_mbps: float = num(1000.0, "> 0")

    def check_consistency(self, prefix: str) -> None:
        if not self.t_high_us >= self.t_low_us:
            raise ConfigError(
                f"{prefix}.t_high_us",
                f"must be >= t_low_us ({self.t_low_us}), got {self.t_high_us}",
            )


#: the rate (bit/s); the EWMA of RTT differences and the last update's sample (ps); increases
#: in a row; the round: whether one is open and its start (ps); updates so far
S = state_layout("TimelyState", (
    "rate", "rtt_diff", "prev_rtt", "inc_stage", "round_active", "round_start", "updates",
))  # fmt: skip
P = params_layout("TimelyConsts", (
    "alpha", "beta", "t_low", "t_high", "min_rtt", "rate_ai", "rate_hai", "hai_after",
    "min_rate", "max_rate",
))  # fmt: skip


def pack(params: TimelyParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    p[P.mss] = ctx.mss_bytes
    p[P.base_rtt] = ctx.base_rtt_ps
    p[P.pacing_rtt] = ctx.base_rtt_ps
    p[P.min_cwnd] = ctx.mss_bytes
    p[P.max_cwnd] = np.inf  # no window: the rate alone limits the sender
    p[P.init_cwnd] = np.inf
    p[P.alpha] = params.alpha
    p[P.beta] = params.beta
    p[P.t_low] = params.t_low_us * 1e6
    p[P.t_high] = params.t_high_us * 1e6
    p[P.min_rtt] = params.min_rtt_us * 1e6
    p[P.rate_ai] = params.rate_ai_mbps * 1e6
    p[P.rate_hai] = params.rate_hai_mbps * 1e6
    p[P.hai_after] = params.hai_after
    p[P.max_rate] = float(ctx.bottleneck_bps)
    p[P.min_rate] = min(params.min_rate_mbps * 1e6, p[P.max_rate])
    return p


@njit(cache=True)
def init(s, p):
    s[:] = 0.0
    s[S.cwnd] = p[P.max_cwnd]
    s[S.rate] = p[P.max_rate]


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """Once per round trip, the rate update of Algorithm 1 with the batch's RTT sample."""
    if s[S.round_active] > 0.0 and fb.sent_ps < s[S.round_start]:
        return  # (ns-3's fast reaction of TIMELY does nothing)
    rtt = fb.rtt_ps
    if s[S.round_active] > 0.0:
        diff = (1.0 - p[P.alpha]) * s[S.rtt_diff] + p[P.alpha] * (rtt - s[S.prev_rtt])
        gradient = diff / p[P.min_rtt]
        rate = s[S.rate]
        if rtt < p[P.t_low] or (rtt <= p[P.t_high] and gradient <= 0.0):
            step = p[P.rate_ai] if s[S.inc_stage] < p[P.hai_after] else p[P.rate_hai]
            rate = rate + step
            if rate > p[P.max_rate]:
                rate = p[P.max_rate]
            s[S.inc_stage] += 1.0
        else:
            if rtt > p[P.t_high]:
                c = 1.0 - p[P.beta] * (1.0 - p[P.t_high] / rtt)
            else:
                c = 1.0 - p[P.beta] * gradient
                if c < 0.0:
                    c = 0.0
            rate = rate * c
            if rate < p[P.min_rate]:
                rate = p[P.min_rate]
            s[S.inc_stage] = 0.0
        s[S.rate] = rate
        s[S.rtt_diff] = diff
        s[S.updates] += 1.0
    s[S.prev_rtt] = rtt
    s[S.round_active] = 1.0
    s[S.round_start] = fb.now_ps


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """Losses leave the rate to the RTT feedback (ns-3: go-back-N, no rate change)."""


@njit(cache=True)
def pacing_rate(s, p):
    return s[S.rate]


LAW = Law(
    name="timely",
    params=TimelyParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    pacing_rate=pacing_rate,
    signals=("rtt",),
)

"""GEMINI (Zeng et al., "Congestion Control for Cross-Datacenter Networks", IEEE/ACM ToN 2022,
extended version of ICNP 2019): §III-B, Algorithm 1, Tables III/IV, §III-C, Appendix A/B.

Rules, applied on every newly acknowledged data packet (Algorithm 1):

* DCN congestion (``congested_dcn``): this ACK carries an ECN echo (§III-B: "the ECN-Echo flag
  set in the ACKs"). ``alpha`` is the EWMA of the fraction of ECN-marked bytes, updated once per
  window of data as in DCTCP (§III-B: "The ECN signal is generated exactly the same as DCTCP"):
  alpha <- (1 - g) alpha + g x marked/acked.
* WAN congestion (``congested_wan``): RTT_min > RTT_base + T, where RTT_min is "the minimum RTT
  observed in previous RTT (window)" (§III-B), i.e. the minimum RTT sample of the last completed
  window of data.
* Decrease, at most once per RTT (§III-B; Algorithm 1 line 5 "time since last cwnd reduction >
  1 RTT", and Table III: "RTT: simplified notation of RTT_base"): if either signal fires and more
  than ``base_rtt_ps`` has passed since the last reduction,
  cwnd <- cwnd x (1 - max(alpha x F x congested_dcn, beta x congested_wan)), with
  F = 4K / (C x RTT_base + K) (§III-B, Theorem 1 / Appendix A eq. 10). K and C x RTT_base are
  both in bytes here (the paper uses packets for both; F is dimensionless, so any common unit
  gives the same F). C = ``ctx.bottleneck_bps``, RTT_base = ``ctx.base_rtt_ps``.
* Increase, only on an ACK that signals no congestion (the ``else`` of Algorithm 1 pairs with
  line 4; §III-B "When there is no congestion indication, for each ACK"; Appendix B Theorem 2):
  cwnd <- cwnd + h/cwnd with cwnd in packets, i.e. h MSS per RTT (§III-C "grows its congestion
  window size by h MSS every RTT"). In wire bytes: cwnd += h_bytes x acked_bytes / cwnd with
  h_bytes = h x MSS. h = H x C x RTT_base with C in bit/s and RTT_base in seconds, which is the
  unit the paper's example implies (§III-C: H = 1.2e-7 "leads to h = 1 when C = 1Gbps and
  RTT = 8ms"), clamped to [0.1, 5] MSS per RTT (§III-C: "bounded minimum/maximum increase speed
  of 0.1/5 respectively as a protection").

Windows. "Per window" (the alpha update and RTT_min) is a round of data delimited by send
times: a window starts at an ACK and ends at the first ACK for a packet sent at or after that
time (DCTCP's once-per-window-of-data rule, robust to reordering). The ACK that ends a window is
counted in the window it ends, then the new window starts. The "once per RTT" reduction hold-off
is explicit time: ``now_ps - last_reduction_ps > ctx.base_rtt_ps`` (strict, as in Algorithm 1).
RTT_base is the flow's propagation + serialisation base RTT ``ctx.base_rtt_ps`` (the simulator
knows it; in the paper it is the minimum RTT "observed during a long time", and no sample can be
below it here).

Defaults and where they come from:

* ``h_coeff`` (H) = 1.2e-7: Table IV; §III-C.
* ``h_min_mss`` / ``h_max_mss`` = 0.1 / 5 MSS per RTT: §III-C (clamp on h).
* ``beta`` = 0.2: Table IV; §III-C ("the same reduction factor as Cubic and Vegas").
* ``t_us`` (T) = 5000 us (5 ms): Table IV; §III-C.
* K enters only F: it is the switches' marking threshold, which the controller must assume
  correctly (§III-B derives F for a given K); the controller never marks anything itself. So
  by default (``k_source: switch``) K is the threshold the switch ports on the flow's path are
  configured with (``FlowContext.ecn_k_bytes``, the smallest RED Kmin on the path). Where no port
  on the path marks, F is unused and K falls back to Table IV's rule: ``k_pkts_per_gbps`` = 50
  packets of ``k_packet_bytes`` = 1,500 B (the paper's MTU, §II-B) per Gbps of bottleneck rate
  (``k_source: rule`` forces it). ``k_bytes`` overrides both. ``cc=gemini`` pairs the controller
  with ``switch=gemini``: step marking at K = C x RTT_intra / 7 at DC switch ports (§III-B's
  DCTCP guideline, F = 1/2 for intra-DC flows; Table IV's 50 packets/Gbps is 7.5 MB at 100 Gb/s,
  more than the Uno topology's 1 MiB buffers, see conf/switch/gemini.yaml).
* ``g`` = 1/16: NOT IN THE PAPER (it gives no EWMA gain); DCTCP's gain, since §III-B says the
  ECN part follows DCTCP.
* ``alpha_init`` = 1: NOT IN THE PAPER; Linux DCTCP's initial alpha (the paper's implementation is
  a Linux 4.9 kernel module, §IV-A), same as :mod:`uno.cc.dctcp`.
* ``max_cut`` = 1: NOT IN THE PAPER. F can exceed 1 (e.g. F = 4K/(C RTT + K) -> 4 when
  K >> C x RTT, as for intra-DC flows with the Table IV K at high link rates), so alpha x F can
  exceed 1 and the paper's formula would give a negative window; the paper leaves this open
  (its analysis assumes alpha F / 2 << 1, Appendix A). The cut fraction max(f_dcn, f_wan) is
  clamped to at most ``max_cut``; the default 1 only rules out negative windows (a cut of 1
  leaves the floor ``min_cwnd_mss``). 0.5 would bound it like DCTCP's largest cut.
* ``pacing`` = true: §III-C ("we use a per-flow rate limiter at the sender to evenly pace out
  each packet"); §IV-D. The rate formula is not in the paper: cwnd / RTT_base is used.
* ``init_cwnd_bdp`` = 1: NOT IN THE PAPER; the Uno paper's datacenter transports (and its
  artifact's Gemini) start at one BDP.
* ``min_cwnd_mss`` = 1, ``max_cwnd_bdp`` = 0 (no cap): NOT IN THE PAPER.
* ``delay_signal_intra`` / ``delay_signal_inter`` = true: the paper applies both signals to every
  flow (Algorithm 1). Its Fig. 8 experiments disable the RTT module.

Not in the paper and chosen here: slow start is not described (Algorithm 1 is congestion
avoidance only), so a flow starts in congestion avoidance at ``init_cwnd_bdp`` x BDP. A
retransmission timeout sets ssthresh = max(min cwnd, cwnd/2), cwnd = min cwnd (1 MSS), clears the
RTT_min history and the current window's counters (alpha is kept), counts as a reduction for the
once-per-RTT hold-off, and enters slow start (cwnd += acked per non-congested ACK) until
cwnd >= ssthresh; a congestion cut during slow start ends it, as TCP's congestion response sets
ssthresh (``slow_start_exit_on_cut``). Loss recovery: GEMINI is a Linux TCP module and keeps TCP's
fast retransmit/recovery (§III-B); ``cc=gemini`` turns on the transport's duplicate-ACK rule
(``transport.dupack_threshold: 3``), whose loss signal reaches ``on_loss`` as a ``LOSS_NACK``:
ssthresh = cwnd = max(min cwnd, cwnd/2), at most once per base RTT of losses (its own hold-off:
an ECN cut just before does not suppress it, as in TCP, where a loss during ECN's reduced state
still triggers fast recovery; with one shared hold-off an inter-DC flow's tiny ECN cuts,
alpha x F ~ 0.5 %, would swallow every loss response). A congested ACK within the hold-off
neither cuts nor grows the window.

Uno artifact values (htsim ``GeminiSrc``, spcl/Uno_SC25 ``sim/gemini.cpp``; figure scripts for
Figs 3/8/9, also Figs 10-12), for a config preset:

* H = 0.00024 applied as h = H x BDP_inter bytes per RTT for both flow classes (the artifact
  multiplies the intra-DC H by BDP_inter/BDP_intra), i.e. h = 0.00024 x 22,400,515 B ~ 5,376 B
  per RTT for every flow, with no [0.1, 5] clamp: ``h_inter_bdp_frac`` = 0.00024 (h follows the
  inter-DC reference path's BDP when the WAN delay changes, Fig. 11); the Figs. 3/8/9 preset
  gives the same h as ``h_bytes_per_rtt`` = 5,376.12 B (absolute, used as is, no clamp).
* beta = 0.1; T = 0.1 ms (``t_us`` = 100) for Figs 3/8/9 and 5 ms for Figs 10-12; g = 0.5;
  K = 6 x 4096 = 24,576 B (``k_bytes``: LCP's K, not the 250 KB its switches mark at); pacing
  at cwnd/base RTT; init cwnd = cap = 1 BDP (``max_cwnd_bdp`` = 1); alpha starts at 0
  (``alpha_init`` = 0); delay signal only for inter-DC flows (``delay_signal_intra`` = false).
* Rules (``GeminiSrc``): a cut during slow start does not end it, slow start ends only at
  ssthresh (``slow_start_exit_on_cut`` = false); the window reacts to a timeout at most once per
  RTO (``timeout_holdoff`` = rto); alpha is updated when more than one base RTT has passed since
  the last update or cut, RTT_min is the running minimum of that period, and no cut comes before
  one base RTT after the first window is out (``alpha_update`` = base_rtt; the first window's end
  is taken as the first ACK). Losses are found by timeout only (no fast retransmit).

A feedback batch (:mod:`uno.cc.law`) counts all its bytes and its marked bytes in the window
(or the period) and its least RTT sample (``rtt_min_ps``) in the window's RTT_min; the DCN
signal is a batch that holds a whole marked ACK (``mark_events``), and unless the WAN signal
holds the window grows by the batch's unmarked bytes (after the cut, when the batch holds both):
for one ACK, exactly the per-ACK rules above.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import LOSS_NACK, Law, params_layout, set_cwnd, state_layout, window_params
from uno.config.fields import choice, num
from uno.core.errors import ConfigError

_PS_PER_S = 1e12
_PS_PER_US = 1e6
_BITS_PER_BYTE = 8


@dataclass
class GeminiParams:
    """GEMINI settings (defaults: the paper's Table IV / §III-C, see the module docstring)."""

    #: H (Table IV): h = H x C[bit/s] x RTT_base[s] MSS per RTT
    h_coeff: float = num(1.2e-7, "> 0")
    #: clamp on the paper-formula h, MSS per RTT (§III-C)
    h_min_mss: float = num(0.1, "> 0")
    #: upper clamp on the paper-formula h, MSS per RTT (§III-C)
    h_max_mss: float = num(5.0, "> 0")
    #: absolute h in wire bytes per RTT; overrides H and bypasses the clamp (None: paper formula)
    h_bytes_per_rtt: float | None = num(None, "> 0")
    #: h = this fraction of the inter-DC reference path's BDP, bytes per RTT, for every flow,
    #: unclamped (the Uno artifact's -geminiH); overrides H (None: h_bytes_per_rtt or the paper)
    h_inter_bdp_frac: float | None = num(None, "> 0")
    #: beta, WAN window-reduction factor (Table IV)
    beta: float = num(0.2, "[0, 1)")
    #: T, delay threshold in microseconds (Table IV: 5 ms)
    t_us: float = num(5000.0, ">= 0")
    #: where K (the switches' marking threshold, which F assumes) comes from when ``k_bytes`` is
    #: null: "switch" (the ECN threshold the switch ports on the flow's path are configured
    #: with; the Table IV rule if none of them marks) or "rule" (Table IV)
    k_source: str = choice("switch", ("switch", "rule"))
    #: Table IV's rule: K = k_pkts_per_gbps packets of k_packet_bytes per Gbps of bottleneck rate
    k_pkts_per_gbps: float = num(50.0, "> 0")
    #: the paper's packets: 1.5 KB MTU (§II-B testbed)
    k_packet_bytes: float = num(1500.0, "> 0")
    #: absolute K in bytes; overrides k_source (None: see k_source)
    k_bytes: float | None = num(None, "> 0")
    #: EWMA gain for alpha (not in the paper; DCTCP's 1/16)
    g: float = num(1.0 / 16.0, "(0, 1]")
    #: alpha at the flow's start
    alpha_init: float = num(1.0, "[0, 1]")
    #: upper bound on the cut fraction max(alpha F, beta) (not in the paper)
    max_cut: float = num(1.0, "(0, 1]")
    #: lower bound on F (0: none, as the Gemini paper); Gear's evaluation runs 0.05 (Han et al.,
    #: IEEE/ACM ToN, Appendix: without it inter-DC flows' F ~ 4K / (C x CRTT) starves intra-DC ones)
    f_min: float = num(0.0, "[0, 1]")
    #: intra-DC flows take the delay signal (RTT_min above base RTT + T) as congestion
    delay_signal_intra: bool = True
    #: inter-DC flows take the delay signal as congestion
    delay_signal_inter: bool = True
    #: pace at cwnd / base RTT
    pacing: bool = True
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    max_cwnd_bdp: float = num(0.0, ">= 0")  # 0: no cap
    #: an ECN or delay cut during slow start ends it (TCP: a congestion response sets ssthresh);
    #: false keeps slow start until cwnd reaches ssthresh (the Uno artifact)
    slow_start_exit_on_cut: bool = True
    #: the window reacts to a retransmission timeout at most once per "base_rtt" (one loss
    #: episode, as the transport reports them) or once per "rto" (the Uno artifact)
    timeout_holdoff: str = choice("base_rtt", ("base_rtt", "rto"))
    #: alpha and RTT_min bookkeeping: "window" (once per window of data, RTT_min of the previous
    #: window: DCTCP's rule, which §III-B follows) or "base_rtt" (the Uno artifact: alpha updated
    #: when more than one base RTT has passed since the last update or cut, RTT_min the running
    #: minimum of that period, and no cut before one base RTT after the first ACK)
    alpha_update: str = choice("window", ("window", "base_rtt"))

    def check_consistency(self, prefix: str) -> None:
        if not self.h_max_mss >= self.h_min_mss:
            raise ConfigError(
                f"{prefix}.h_max_mss",
                f"must be >= h_min_mss ({self.h_min_mss}), got {self.h_max_mss}",
            )


#: the slow-start threshold (bytes); alpha; the window of data alpha and RTT_min are measured
#: over (whether one is open, its start, the bytes acknowledged and marked in it); the least RTT
#: sample of that window and of the last complete one (ps, inf: none); the last reduction, the
#: start of the period (``alpha_update=base_rtt``), the last timeout and the last fast-retransmit
#: loss (ps, NO_TIME: none yet); whether in slow start
S = state_layout("GeminiState", (
    "ssthresh", "alpha", "win_active", "win_start_ps", "acked_in_window", "marked_in_window",
    "rtt_min_window", "rtt_min_prev", "last_reduction_ps", "cycle_start_ps", "last_timeout_ps",
    "last_loss_ps", "slow_start",
))  # fmt: skip
#: alpha's EWMA gain and start; K and C x RTT_base (bytes) and F = 4K / (C x RTT_base + K); h as
#: the paper's formula gives it (MSS per RTT, before the clamp) and as applied (bytes per RTT);
#: beta, T (ps), the largest cut; whether the delay signal counts, whether alpha and RTT_min
#: are kept per base RTT, whether a cut ends slow start; the timeout hold-off (ps)
P = params_layout("GeminiConsts", (
    "g", "alpha_init", "k_bytes", "c_rtt_bytes", "f_scale", "h_mss_unclamped", "h_bytes",
    "beta", "t_ps", "max_cut", "use_delay", "per_base_rtt", "exit_on_cut",
    "timeout_holdoff_ps",
))  # fmt: skip

#: a time before every event: no such event yet (its hold-off has always passed)
NO_TIME = -math.inf


def pack(params: GeminiParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.g] = params.g
    p[P.alpha_init] = params.alpha_init
    # F = 4K / (C x RTT_base + K), K and C x RTT_base in bytes.
    c_rtt_bytes = ctx.bottleneck_bps * ctx.base_rtt_ps / (_BITS_PER_BYTE * _PS_PER_S)
    rule_k = params.k_pkts_per_gbps * (ctx.bottleneck_bps / 1e9) * params.k_packet_bytes
    if params.k_bytes is not None:
        k_bytes = float(params.k_bytes)
    elif params.k_source == "switch" and ctx.ecn_k_bytes is not None:
        k_bytes = float(ctx.ecn_k_bytes)
    else:
        k_bytes = rule_k
    p[P.k_bytes] = k_bytes
    p[P.c_rtt_bytes] = c_rtt_bytes
    p[P.f_scale] = max(params.f_min, 4.0 * k_bytes / (c_rtt_bytes + k_bytes))
    # h = H x C[bit/s] x RTT_base[s] MSS per RTT, clamped; or an absolute override in bytes.
    h_mss_unclamped = params.h_coeff * ctx.bottleneck_bps * ctx.base_rtt_ps / _PS_PER_S
    p[P.h_mss_unclamped] = h_mss_unclamped
    if params.h_inter_bdp_frac is not None:
        if ctx.inter_bdp_bytes is None:
            raise ConfigError(
                "cc.gemini.h_inter_bdp_frac", "needs an inter-DC path (a two-datacenter topology)"
            )
        p[P.h_bytes] = params.h_inter_bdp_frac * ctx.inter_bdp_bytes
    elif params.h_bytes_per_rtt is not None:
        p[P.h_bytes] = float(params.h_bytes_per_rtt)
    else:
        h_mss = min(params.h_max_mss, max(params.h_min_mss, h_mss_unclamped))
        p[P.h_bytes] = h_mss * ctx.mss_bytes
    p[P.beta] = params.beta
    p[P.t_ps] = round(params.t_us * _PS_PER_US)
    p[P.max_cut] = params.max_cut
    use_delay = params.delay_signal_inter if ctx.is_inter_dc else params.delay_signal_intra
    p[P.use_delay] = 1.0 if use_delay else 0.0
    p[P.per_base_rtt] = 1.0 if params.alpha_update == "base_rtt" else 0.0
    p[P.exit_on_cut] = 1.0 if params.slow_start_exit_on_cut else 0.0
    p[P.timeout_holdoff_ps] = ctx.rto_ps if params.timeout_holdoff == "rto" else 0
    return p


@njit(cache=True)
def init(s, p):
    s[:] = 0.0
    set_cwnd(s, p, p[P.init_cwnd])
    s[S.alpha] = p[P.alpha_init]
    s[S.rtt_min_window] = np.inf
    s[S.rtt_min_prev] = np.inf
    s[S.last_reduction_ps] = NO_TIME
    s[S.cycle_start_ps] = NO_TIME
    s[S.last_timeout_ps] = NO_TIME
    s[S.last_loss_ps] = NO_TIME


@njit(cache=True)
def wan_congested(s, p):
    """RTT_min > RTT_base + T (§III-B): RTT_min of the last full window, or with
    ``alpha_update=base_rtt`` the running minimum of the current period."""
    rtt_min = s[S.rtt_min_window] if p[P.per_base_rtt] > 0.0 else s[S.rtt_min_prev]
    return p[P.use_delay] > 0.0 and rtt_min < np.inf and rtt_min > p[P.base_rtt] + p[P.t_ps]


@njit(cache=True)
def _update_alpha(s, p):
    frac = s[S.marked_in_window] / s[S.acked_in_window]
    g = p[P.g]
    s[S.alpha] = (1.0 - g) * s[S.alpha] + g * frac


@njit(cache=True)
def _reset_window(s, now_ps):
    s[S.acked_in_window] = 0.0
    s[S.marked_in_window] = 0.0
    s[S.rtt_min_window] = np.inf
    s[S.win_start_ps] = now_ps
    s[S.win_active] = 1.0


@njit(cache=True)
def _measure(s, p, fb):
    """update_transport_state(alpha, rtt_base, rtt_min) (Algorithm 1, line 1): the batch into
    the window's counts and RTT_min; alpha once per window (or period) of data."""
    now = fb.now_ps
    s[S.acked_in_window] += fb.acked_bytes
    s[S.marked_in_window] += fb.marked_bytes
    if p[P.per_base_rtt] > 0.0:
        if s[S.cycle_start_ps] == NO_TIME:  # first ACK: the first window is out
            s[S.cycle_start_ps] = now
            s[S.last_reduction_ps] = now
        elif now - s[S.cycle_start_ps] > p[P.base_rtt]:
            _update_alpha(s, p)
            s[S.cycle_start_ps] = now
            s[S.acked_in_window] = 0.0
            s[S.marked_in_window] = 0.0
            s[S.rtt_min_window] = np.inf
        if fb.rtt_min_ps < s[S.rtt_min_window]:
            s[S.rtt_min_window] = fb.rtt_min_ps
        return
    # (the batch that ends a window is counted in it)
    if fb.rtt_min_ps < s[S.rtt_min_window]:
        s[S.rtt_min_window] = fb.rtt_min_ps
    if s[S.win_active] == 0.0:
        s[S.win_start_ps] = now
        s[S.win_active] = 1.0
    elif fb.sent_ps >= s[S.win_start_ps]:
        _update_alpha(s, p)
        s[S.rtt_min_prev] = s[S.rtt_min_window]
        _reset_window(s, now)


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """Algorithm 1: the window's bookkeeping; on a DCN (a whole marked ACK in the batch) or WAN
    signal a cut by max(alpha F, beta) at most once per base RTT (lines 4-9); growth on the
    unmarked bytes unless the WAN signal holds (lines 10-12; slow start after a timeout)."""
    now = fb.now_ps
    _measure(s, p, fb)
    if s[S.slow_start] > 0.0 and s[S.cwnd] >= s[S.ssthresh]:
        s[S.slow_start] = 0.0
    congested_dcn = fb.mark_events > 0.0  # line 2
    congested_wan = wan_congested(s, p)  # line 3
    if congested_dcn or congested_wan:  # line 4
        last = s[S.last_reduction_ps]
        if last == NO_TIME:  # (per base RTT, the first ACK starts the hold-off)
            may_reduce = p[P.per_base_rtt] == 0.0
        else:
            may_reduce = now - last > p[P.base_rtt]  # line 5
        if may_reduce:
            f_dcn = s[S.alpha] * p[P.f_scale] if congested_dcn else 0.0  # lines 6-7
            f_wan = p[P.beta] if congested_wan else 0.0  # line 8
            worst = f_wan if f_wan > f_dcn else f_dcn
            cut = worst if worst < p[P.max_cut] else p[P.max_cut]
            set_cwnd(s, p, s[S.cwnd] * (1.0 - cut))  # line 9
            s[S.last_reduction_ps] = now
            if p[P.per_base_rtt] > 0.0:
                s[S.cycle_start_ps] = now
            if s[S.slow_start] > 0.0 and p[P.exit_on_cut] > 0.0:
                s[S.slow_start] = 0.0
                s[S.ssthresh] = s[S.cwnd]
    if congested_wan:
        return
    unmarked = fb.acked_bytes - fb.marked_bytes
    if unmarked > 0.0:
        cwnd = s[S.cwnd]
        if s[S.slow_start] > 0.0:
            set_cwnd(s, p, cwnd + unmarked)
        else:  # lines 10-12: cwnd += h / cwnd per packet
            set_cwnd(s, p, cwnd + p[P.h_bytes] * unmarked / cwnd)


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A loss found by fast retransmit: TCP's halving, once per base RTT of losses (its own
    hold-off: an ECN cut just before, alpha x F well below 1% for an inter-DC flow, must not
    swallow it). A retransmission timeout, at most once per hold-off: ssthresh = half the window
    (at least the floor), restart from the floor in slow start, the RTT history and the
    window's counts cleared (alpha kept)."""
    if loss == LOSS_NACK:
        if now_ps - s[S.last_loss_ps] <= p[P.base_rtt]:
            return
        s[S.last_loss_ps] = now_ps
        set_cwnd(s, p, s[S.cwnd] / 2.0)
        s[S.ssthresh] = s[S.cwnd]
        s[S.slow_start] = 0.0
        s[S.last_reduction_ps] = now_ps
        return
    if now_ps - s[S.last_timeout_ps] <= p[P.timeout_holdoff_ps]:
        return
    s[S.last_timeout_ps] = now_ps
    half = s[S.cwnd] / 2.0
    floor = p[P.min_cwnd]
    s[S.ssthresh] = half if half > floor else floor
    set_cwnd(s, p, floor)
    s[S.slow_start] = 1.0 if s[S.cwnd] < s[S.ssthresh] else 0.0
    s[S.last_reduction_ps] = now_ps
    s[S.rtt_min_prev] = np.inf
    _reset_window(s, now_ps)
    if p[P.per_base_rtt] > 0.0:
        s[S.cycle_start_ps] = now_ps


LAW = Law(
    name="gemini",
    params=GeminiParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    signals=("ecn", "rtt_min"),
)

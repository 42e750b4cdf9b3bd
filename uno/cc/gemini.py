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

Windows. "Per window" (the alpha update and RTT_min) uses :class:`uno.cc.base.SendTimeWindow`:
a window starts at an ACK and ends at the first ACK for a packet sent at or after that time
(DCTCP's once-per-window-of-data rule, robust to reordering). The ACK that ends a window is
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
(``transport.dupack_threshold: 3``), whose loss signal reaches :meth:`Gemini.on_nack`: ssthresh =
cwnd = max(min cwnd, cwnd/2), at most once per base RTT of losses (its own hold-off: an ECN cut
just before does not suppress it, as in TCP, where a loss during ECN's reduced state still
triggers fast recovery; with one shared hold-off an inter-DC flow's tiny ECN cuts, alpha x F
~ 0.5 %, would swallow every loss response). A congested ACK within the hold-off neither cuts nor
grows the window.

Uno artifact values (htsim ``GeminiSrc``, spcl/Uno_SC25 ``sim/gemini.cpp``; figure scripts for
Figs 3/8/9, also Figs 10-12), for a config preset:

* H = 0.00024 applied as h = H x BDP_inter bytes per RTT for both flow classes (the artifact
  multiplies the intra-DC H by BDP_inter/BDP_intra), i.e. h = 0.00024 x 22,400,515 B ~ 5,376 B
  per RTT for every flow, with no [0.1, 5] clamp. :class:`FlowContext` does not carry the
  inter-DC BDP, so the preset sets ``h_bytes_per_rtt`` (absolute h in bytes per RTT, used as is,
  no clamp) instead; it must be recomputed when the inter-DC BDP changes.
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
"""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import FlowContext, SendTimeWindow, WindowedControl
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


class Gemini(WindowedControl):
    name = "gemini"

    def __init__(self, ctx: FlowContext, params: GeminiParams):
        p = params
        super().__init__(ctx, p.init_cwnd_bdp, p.min_cwnd_mss, p.max_cwnd_bdp, p.pacing)
        self.p = p
        self.mss = ctx.mss_bytes
        self.base_rtt_ps = ctx.base_rtt_ps

        # F = 4K / (C x RTT_base + K), K and C x RTT_base in bytes.
        self.c_rtt_bytes = ctx.bottleneck_bps * ctx.base_rtt_ps / (_BITS_PER_BYTE * _PS_PER_S)
        rule_k = p.k_pkts_per_gbps * (ctx.bottleneck_bps / 1e9) * p.k_packet_bytes
        if p.k_bytes is not None:
            self.k_bytes = float(p.k_bytes)
        elif p.k_source == "switch" and ctx.ecn_k_bytes is not None:
            self.k_bytes = float(ctx.ecn_k_bytes)
        else:
            self.k_bytes = rule_k
        self.f_scale = 4.0 * self.k_bytes / (self.c_rtt_bytes + self.k_bytes)

        # h = H x C[bit/s] x RTT_base[s] MSS per RTT, clamped; or an absolute override in bytes.
        self.h_mss_unclamped = p.h_coeff * ctx.bottleneck_bps * ctx.base_rtt_ps / _PS_PER_S
        if p.h_bytes_per_rtt is not None:
            self.h_bytes = float(p.h_bytes_per_rtt)
        else:
            h_mss = min(p.h_max_mss, max(p.h_min_mss, self.h_mss_unclamped))
            self.h_bytes = h_mss * ctx.mss_bytes

        self.t_ps = round(p.t_us * _PS_PER_US)
        self.use_delay = p.delay_signal_inter if ctx.is_inter_dc else p.delay_signal_intra
        self.per_base_rtt = p.alpha_update == "base_rtt"
        self.timeout_holdoff_ps = ctx.rto_ps if p.timeout_holdoff == "rto" else 0

        self.alpha = p.alpha_init
        self.window = SendTimeWindow()
        self.acked_in_window = 0
        self.marked_in_window = 0
        self.rtt_min_window: int | None = None  # min RTT sample of the current window
        self.rtt_min_prev: int | None = None  # RTT_min: min RTT sample of the last full window
        self.last_reduction_ps: int | None = None
        self.cycle_start_ps: int | None = None  # alpha_update=base_rtt: start of the period
        self.last_timeout_ps: int | None = None
        self.last_loss_ps: int | None = None
        self.slow_start = False
        self.ssthresh = 0.0

    # ---- helpers -------------------------------------------------------------------------
    def _may_reduce(self, now_ps: int) -> bool:
        last = self.last_reduction_ps
        if last is None:
            return not self.per_base_rtt
        return now_ps - last > self.base_rtt_ps

    def _reset_window(self, now_ps: int) -> None:
        self.acked_in_window = 0
        self.marked_in_window = 0
        self.rtt_min_window = None
        self.window.restart(now_ps)

    def wan_congested(self) -> bool:
        """RTT_min > RTT_base + T (§III-B): RTT_min of the last full window, or with
        ``alpha_update=base_rtt`` the running minimum of the current period."""
        rtt_min = self.rtt_min_window if self.per_base_rtt else self.rtt_min_prev
        return self.use_delay and rtt_min is not None and rtt_min > self.base_rtt_ps + self.t_ps

    def _update_alpha(self) -> None:
        frac = self.marked_in_window / self.acked_in_window
        self.alpha = (1.0 - self.p.g) * self.alpha + self.p.g * frac

    # ---- hooks ---------------------------------------------------------------------------
    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        # update_transport_state(alpha, rtt_base, rtt_min)  (Algorithm 1, line 1)
        self.acked_in_window += acked_bytes
        if ecn:
            self.marked_in_window += acked_bytes
        if self.per_base_rtt:
            if self.cycle_start_ps is None:  # first ACK: the first window is out
                self.cycle_start_ps = now_ps
                self.last_reduction_ps = now_ps
            elif now_ps - self.cycle_start_ps > self.base_rtt_ps:
                self._update_alpha()
                self.cycle_start_ps = now_ps
                self.acked_in_window = 0
                self.marked_in_window = 0
                self.rtt_min_window = None
            if self.rtt_min_window is None or rtt_ps < self.rtt_min_window:
                self.rtt_min_window = rtt_ps
        else:
            if self.rtt_min_window is None or rtt_ps < self.rtt_min_window:
                self.rtt_min_window = rtt_ps
            window = self.window
            if not window.active:
                window.restart(now_ps)
            elif window.ended_by(sent_ps):
                self._update_alpha()
                self.rtt_min_prev = self.rtt_min_window
                self._reset_window(now_ps)
        if self.slow_start and self.cwnd_bytes >= self.ssthresh:
            self.slow_start = False

        congested_dcn = ecn  # line 2
        congested_wan = self.wan_congested()  # line 3
        if congested_dcn or congested_wan:  # line 4
            if self._may_reduce(now_ps):  # line 5
                f_dcn = self.alpha * self.f_scale if congested_dcn else 0.0  # lines 6-7
                f_wan = self.p.beta if congested_wan else 0.0  # line 8
                cut = min(self.p.max_cut, max(f_dcn, f_wan))
                self.set_cwnd(self.cwnd_bytes * (1.0 - cut))  # line 9
                self.last_reduction_ps = now_ps
                if self.per_base_rtt:
                    self.cycle_start_ps = now_ps
                if self.slow_start and self.p.slow_start_exit_on_cut:
                    self.slow_start = False
                    self.ssthresh = self.cwnd_bytes
        elif self.slow_start:
            self.set_cwnd(self.cwnd_bytes + acked_bytes)
        else:  # lines 10-12: cwnd += h / cwnd per packet
            self.set_cwnd(self.cwnd_bytes + self.h_bytes * acked_bytes / self.cwnd_bytes)

    def on_timeout(self, now_ps: int) -> None:
        last = self.last_timeout_ps
        if last is not None and now_ps - last <= self.timeout_holdoff_ps:
            return
        self.last_timeout_ps = now_ps
        self.ssthresh = max(self.min_cwnd, self.cwnd_bytes / 2.0)
        self.set_cwnd(self.min_cwnd)
        self.slow_start = self.cwnd_bytes < self.ssthresh
        self.last_reduction_ps = now_ps
        self.rtt_min_prev = None
        self._reset_window(now_ps)
        if self.per_base_rtt:
            self.cycle_start_ps = now_ps

    def on_nack(self, now_ps: int) -> None:
        """TCP fast recovery: halve, once per base RTT of losses. The hold-off is the loss's own:
        a small ECN cut just before (an inter-DC flow's alpha x F is well below 1%) must not
        swallow the halving, as TCP reduces on a loss even right after an ECN response."""
        last = self.last_loss_ps
        if last is not None and now_ps - last <= self.base_rtt_ps:
            return
        self.last_loss_ps = now_ps
        self.set_cwnd(self.cwnd_bytes / 2.0)
        self.ssthresh = self.cwnd_bytes
        self.slow_start = False
        self.last_reduction_ps = now_ps

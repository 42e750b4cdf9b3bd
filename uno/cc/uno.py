"""UnoCC, the congestion control of Uno (Bonato et al., SC'25), §4.1 and Algorithm 1.

A window-based AIMD controller driven by ECN, with three states (Fig. 6):

- **Additive increase** (Alg. 1 ``OnAck``, §4.1.1): on every ACK that is not ECN-marked,
  ``cwnd += alpha * bytes_acked / cwnd`` with ``alpha = 0.001 x BDP`` of the flow (Table 2), so
  cwnd grows by ``alpha`` per RTT.
- **Epochs and multiplicative decrease** (Alg. 1 ``OnEpoch``, §4.1.1): the epoch activates at
  the first ACK, with start time ``T_epoch`` = that ACK's arrival. An epoch ends when an ACK
  arrives for a data packet sent at or after ``T_epoch``; then ``T_epoch`` advances by
  ``epoch_period``, "a time span proportional to the packet's RTT", "set based on intra-DC RTT,
  for both inter- and intra-DC flows" (§4.1.1). Both sentences hold with
  ``epoch_period = RTT sample of the ending ACK x intra-DC base RTT / the flow's base RTT``
  (``epoch_period: rtt_sample``, the default): an unqueued inter-DC flow ends an epoch every
  intra-DC RTT, queueing stretches the period in proportion. The Uno artifact does exactly this
  (``LcpSrc`` "short" epochs: RTT sample x BDP_intra / BDP_inter for inter-DC flows, x 1 for
  intra-DC flows, whose base RTT is the intra-DC reference). ``epoch_period: intra_rtt`` keeps
  the period fixed at the intra-DC base RTT (an earlier reading of the same text). After a stall
  (no ACKs for a while), ``T_epoch`` lags behind the send times: every later ACK ends an epoch
  and advances it by one period until it catches up, so a stall is followed by a burst of short
  epochs (each updates E and may cut). The paper's "increases T_epoch by epoch_period" says so
  and the artifact does the same; it is kept, not smoothed. At each epoch end the EWMA ``E`` of
  the fraction of ECN-marked packets is updated; if any packet of the epoch was marked (a
  congested epoch), ``cwnd *= 1 - MD_ECN x MD_scale`` with ``MD_ECN = E x 4K/(K + BDP)`` and
  ``K = intra-DC BDP / 7`` (Table 2).
- **Gentle reduction** (Alg. 1 lines 9-13, §4.1.1): in a congested epoch whose delay shows no
  physical queueing, ``MD_scale *= 0.3``; otherwise ``MD_scale = 1``. "No physical queueing" is
  decided here on the RTT sample of the ACK that ends the epoch:
  ``RTT - base_RTT < gentle_qdelay_us + gentle_qdelay_base_rtt_frac x base_RTT``. The default
  threshold, 1 µs, is three full packets of queueing at 100 Gb/s: the one or two packets that
  paced flows meeting at a port briefly queue count as "empty", a standing queue does not. The
  paper says only "delay == 0" (Alg. 1 line 9). Taken literally, the compounding lets an
  intra-DC flow's MD_scale decay towards 0 over a run of gentle epochs, so its cuts vanish for
  a while; in fig3_fairness this gives short unfair episodes that ``gentle_compounds: false``
  (the artifact's reading) does not (experiments/fig3_fairness/README.md).
- **Quick Adapt** (Alg. 1 ``OnQA``, §4.1.2): once per RTT (the flow's base RTT), if the bytes
  acknowledged in that period are below ``beta x cwnd`` (beta = 0.5, Table 2), ``cwnd = bytes
  acknowledged in that period``, and the next RTT has neither QA nor MD.

Where the paper is silent: the EWMA gain ``g`` of ``E`` (DCTCP's 1/16 here; the artifact uses
0.65), the window cap (1 BDP, as in the artifact), pacing (the paper does not say UnoCC paces;
here, as in the artifact, the sender paces at cwnd / base RTT, ``pacing: true``), the reaction
to a retransmission timeout (none, as the artifact's ``-noRto``), and how "skips one RTT" is
measured. Here the skipped RTT
is the flow's own round trip: it ends with the first ACK for a packet sent after the Quick
Adapt, as epochs are delimited by send times (the artifact re-arms QA the same way). A fixed
base-RTT timer would instead end the skip while the flow may still be blocked by packets lost
before the QA (they count as in flight until their retransmission timeout), and the next QA
period would then measure that stall rather than the new window. During the skip no epoch ends
and no ECN is counted (those ACKs are for packets sent before QA, whose congestion QA already
answered); the next QA period and epoch start when the skip ends.

The authors' artifact (spcl/Uno_SC25, class ``LcpSrc``) differs in a few constants; the preset
``cc=uno_artifact`` uses them: gentle factor 0.35 applied afresh in each congested epoch, window
after QA 0.96 x bytes acked, K = 24,576 B, EWMA gain 0.65, QA period 1.05 x base RTT, "no
physical queueing" when RTT <= 1.055 x base RTT, and one rule the paper does not describe
(``ewma_fall_increase``): a congested epoch in which E fell since the previous epoch gets an
additive increase of the epoch's acknowledged bytes instead of a decrease. The artifact preset
also takes the artifact's transport and switches: class reference paths (every intra-DC flow's
base RTT, BDP and RTO are those of the 6-hop path), full-size packets, 10^6-B buffers, and
phantom queues that count dropped data packets but not ACKs (docs/artifact_audit.md).

Units: time in integer picoseconds, windows in wire bytes, rates in bit/s.
"""

from __future__ import annotations

from dataclasses import dataclass

from uno.cc.base import FlowContext, WindowedControl
from uno.config.fields import choice, num
from uno.core.errors import ConfigError
from uno.core.units import PS_PER_US


@dataclass
class UnoParams:
    """UnoCC constants (defaults: the Uno paper's Table 2 and §4.1; see the module docstring)."""

    #: alpha = ai_bdp_frac x flow BDP (Table 2: 0.001)
    ai_bdp_frac: float = num(0.001, "> 0")
    #: Quick Adapt threshold beta (Table 2: 0.5)
    qa_beta: float = num(0.5, "(0, 1]")
    #: K in bytes; null: intra-DC BDP / k_intra_bdp_divisor (Table 2: K = intra-DC BDP / 7)
    k_bytes: float | None = num(None, "> 0")
    #: with k_bytes null: K = intra-DC BDP / this
    k_intra_bdp_divisor: float = num(7.0, "> 0")
    #: EWMA gain of E, the marked fraction across epochs (paper silent: DCTCP's 1/16)
    ecn_ewma_gain: float = num(0.0625, "(0, 1]")
    #: how T_epoch advances at an epoch end (§4.1.1, see the module docstring): "rtt_sample"
    #: (by the ending ACK's RTT sample scaled to the intra-DC RTT: x intra-DC base RTT / the
    #: flow's base RTT) or "intra_rtt" (by the intra-DC base RTT, a fixed period)
    epoch_period: str = choice("rtt_sample", ("rtt_sample", "intra_rtt"))
    #: a multiplier on that period
    epoch_period_intra_rtt: float = num(1.0, "> 0")
    #: gentle reduction factor (Alg. 1 line 10: 0.3)
    gentle_factor: float = num(0.3, "(0, 1]")
    #: true: MD_scale <- MD_scale x factor (Alg. 1); false: MD_scale = factor each time (artifact)
    gentle_compounds: bool = True
    #: "no physical queueing" if RTT - base RTT < gentle_qdelay_us + frac x base RTT
    gentle_qdelay_us: float = num(1.0, ">= 0")
    #: the base-RTT fraction of that test
    gentle_qdelay_base_rtt_frac: float = num(0.0, ">= 0")
    #: QA is evaluated once per qa_period_base_rtt x base RTT (§4.1.2: once per RTT)
    qa_period_base_rtt: float = num(1.0, "> 0")
    #: window after QA = qa_window_scale x bytes acked in the period (paper: 1.0)
    qa_window_scale: float = num(1.0, "(0, 1]")
    #: initial window and cap, in flow BDPs (the artifact: 1 and 1)
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window cap, in flow BDPs (0: no cap)
    max_cwnd_bdp: float = num(1.0, ">= 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: pace at cwnd / base RTT
    pacing: bool = True
    #: window after a retransmission timeout, in MSS; 0 leaves cwnd unchanged (artifact -noRto)
    timeout_cwnd_mss: float = num(0.0, ">= 0")
    #: artifact only (not in the paper): in a congested epoch where E fell since the previous
    #: epoch (and 0 < previous E, E <= 0.9), add alpha x epoch bytes / cwnd instead of an MD
    ewma_fall_increase: bool = False

    def check_consistency(self, prefix: str) -> None:
        if 0 < self.max_cwnd_bdp < self.init_cwnd_bdp:
            raise ConfigError(
                f"{prefix}.max_cwnd_bdp",
                f"must be >= init_cwnd_bdp ({self.init_cwnd_bdp}) or 0 (no cap), got {self.max_cwnd_bdp}",
            )


class UnoCC(WindowedControl):
    """UnoCC for one flow. See the module docstring for the rules and their sources."""

    name = "uno"

    def __init__(self, ctx: FlowContext, params: UnoParams):
        p = params
        super().__init__(ctx, p.init_cwnd_bdp, p.min_cwnd_mss, p.max_cwnd_bdp, p.pacing)
        self.p = p
        bdp = ctx.bdp_bytes
        self.alpha_bytes = p.ai_bdp_frac * bdp
        self.k_bytes = (
            p.k_bytes if p.k_bytes is not None else ctx.intra_bdp_bytes / p.k_intra_bdp_divisor
        )
        self.md_gain = 4.0 * self.k_bytes / (self.k_bytes + bdp)
        self.epoch_period_ps = int(round(p.epoch_period_intra_rtt * ctx.intra_rtt_ps))
        # rtt_sample: period = sample x intra-DC RTT / base RTT x multiplier
        self.epoch_rtt_scale = (
            p.epoch_period_intra_rtt * ctx.intra_rtt_ps / ctx.base_rtt_ps
            if p.epoch_period == "rtt_sample"
            else None
        )
        self.qa_period_ps = int(round(p.qa_period_base_rtt * ctx.base_rtt_ps))
        self.gentle_threshold_ps = int(
            round(p.gentle_qdelay_us * PS_PER_US + p.gentle_qdelay_base_rtt_frac * ctx.base_rtt_ps)
        )
        self.ecn_ewma = 0.0  # E
        self.md_scale = 1.0
        # epoch state
        self.started = False
        self.epoch_start_ps = 0
        self.epoch_acks = 0
        self.epoch_marked = 0
        self.epoch_bytes = 0
        # Quick Adapt state
        self.qa_start_ps = 0
        self.qa_bytes = 0
        self.skipping = False  # after a QA: no QA/MD until a packet sent after it is acked
        self.qa_time_ps = 0
        # counters, for analysis and tests
        self.epochs = 0
        self.md_events = 0
        self.gentle_events = 0
        self.qa_events = 0

    # ---- ACK processing ------------------------------------------------------------------
    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        if not self.started:
            # The epoch and the first QA period activate at the first ACK (§4.1.1).
            self.started = True
            self.epoch_start_ps = now_ps
            self.qa_start_ps = now_ps
        if not ecn:
            self.set_cwnd(self.cwnd_bytes + self.alpha_bytes * acked_bytes / self.cwnd_bytes)
        if self.skipping:
            if sent_ps < self.qa_time_ps:
                return
            # a packet sent after the QA came back: the skipped round trip is over
            self.skipping = False
            self.qa_start_ps = now_ps
            self.qa_bytes = 0
            self.epoch_start_ps = now_ps
        self.qa_bytes += acked_bytes
        self.epoch_bytes += acked_bytes
        self.epoch_acks += 1
        if ecn:
            self.epoch_marked += 1
        if sent_ps >= self.epoch_start_ps:
            self._end_epoch(rtt_ps)
        if now_ps - self.qa_start_ps >= self.qa_period_ps:
            self._quick_adapt_check(now_ps)

    def _end_epoch(self, rtt_ps: int) -> None:
        """Alg. 1 OnEpoch: update E; on a congested epoch, one multiplicative decrease."""
        self.epochs += 1
        frac = self.epoch_marked / self.epoch_acks
        g = self.p.ecn_ewma_gain
        old_ewma = self.ecn_ewma
        self.ecn_ewma = (1.0 - g) * old_ewma + g * frac
        if (
            self.epoch_marked > 0
            and self.p.ewma_fall_increase
            and 0.0 < self.ecn_ewma < old_ewma
            and self.ecn_ewma <= 0.9
        ):
            # artifact rule: marks are receding, so increase instead of decreasing
            self.set_cwnd(self.cwnd_bytes + self.alpha_bytes * self.epoch_bytes / self.cwnd_bytes)
        elif self.epoch_marked > 0:
            if rtt_ps - self.ctx.base_rtt_ps < self.gentle_threshold_ps:
                # marked, but no physical queue: the phantom queue is congested (gentle reduction)
                base = self.md_scale if self.p.gentle_compounds else 1.0
                self.md_scale = base * self.p.gentle_factor
                self.gentle_events += 1
            else:
                self.md_scale = 1.0
            md = self.ecn_ewma * self.md_gain * self.md_scale
            self.set_cwnd(self.cwnd_bytes * (1.0 - min(md, 1.0)))
            self.md_events += 1
        self.epoch_acks = 0
        self.epoch_marked = 0
        self.epoch_bytes = 0
        if self.epoch_rtt_scale is None:
            self.epoch_start_ps += self.epoch_period_ps
        else:
            self.epoch_start_ps += round(rtt_ps * self.epoch_rtt_scale)

    def _quick_adapt_check(self, now_ps: int) -> None:
        """Alg. 1 OnQA: a sharp drop in acknowledged bytes sets cwnd to what was delivered."""
        if self.qa_bytes < self.p.qa_beta * self.cwnd_bytes:
            self.set_cwnd(self.p.qa_window_scale * self.qa_bytes)
            self.qa_events += 1
            # Skip one round trip without QA or MD (see the module docstring).
            self.skipping = True
            self.qa_time_ps = now_ps
            self.epoch_acks = 0
            self.epoch_marked = 0
            self.epoch_bytes = 0
        self.qa_start_ps = now_ps
        self.qa_bytes = 0

    # ---- losses ------------------------------------------------------------------------
    def on_timeout(self, now_ps: int) -> None:
        if self.p.timeout_cwnd_mss > 0:
            self.set_cwnd(self.p.timeout_cwnd_mss * self.ctx.mss_bytes)

    def on_nack(self, now_ps: int) -> None:
        self.on_timeout(now_ps)

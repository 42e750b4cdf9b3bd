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
additive increase of the epoch's acknowledged bytes instead of a decrease. After a Quick Adapt
the artifact resumes its epochs once the new window has been sent and then counts every
acknowledged byte (``qa_epoch_resume: window_sent``, an option: ``cc=uno_artifact`` keeps the
round-trip skip described above). The artifact preset
also takes the artifact's transport and switches: class reference paths (every intra-DC flow's
base RTT, BDP and RTO are those of the 6-hop path), full-size packets, 10^6-B buffers, and
phantom queues that count dropped data packets but not ACKs (docs/artifact_audit.md).

A feedback batch (:mod:`uno.cc.law`) is read as its ACKs taken together: the additive
increase acts on its unmarked bytes; the epoch and the Quick Adapt period count its bytes, its
ACKs (``acks``) and its ECN-echoed ACKs (``marked_acks``), so E's fraction is marked ACKs over
ACKs; an epoch is congested when its batches held a whole marked ACK (``mark_events``); the
batch ends an epoch when its latest send time is at or after ``T_epoch``, and the gentle test
and the epoch period read its RTT sample; where its packets may have met queueing that sample
does not show (``queued_p``), the epoch counts as physically queued with that chance (against
the batch's ``draw``); Quick Adapt counts the period's bytes in whole packets when the batch
asks for it (``whole_packets``: a packet controller checks at an ACK and counts it whole, so a
window of a few packets whose RTT is over twice the base RTT passes a check that the stream of
its bytes would fail). For one ACK these are exactly the per-ACK rules above.

Units: time in picoseconds, windows in wire bytes, rates in bit/s (all float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import (
    Law,
    in_whole_packets,
    init_window,
    params_layout,
    set_cwnd,
    state_layout,
    window_params,
)
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
    #: when epochs resume after a Quick Adapt: "ack" (with QA, at the first ACK of a packet sent
    #: after it) or "window_sent" (once the new window has been sent after it, in wire bytes,
    #: then counting every ACK's bytes, those of packets sent before the cut too: the artifact's
    #: LcpSrc ``epoch_counter``); QA itself resumes at that first ACK either way
    qa_epoch_resume: str = choice("ack", ("ack", "window_sent"))

    def check_consistency(self, prefix: str) -> None:
        if 0 < self.max_cwnd_bdp < self.init_cwnd_bdp:
            raise ConfigError(
                f"{prefix}.max_cwnd_bdp",
                f"must be >= init_cwnd_bdp ({self.init_cwnd_bdp}) or 0 (no cap), got {self.max_cwnd_bdp}",
            )


#: Epoch (Alg. 1 OnEpoch): whether the first ACK came (the epoch and the QA period start at
#: it), T_epoch, and what the epoch acknowledged: bytes, ACKs, ECN-echoed ACKs and whole marked
#: ACKs; E and MD_scale. Quick Adapt (Alg. 1 OnQA): its period's start and bytes, whether the
#: round trip after a QA is being skipped and when that QA was; whether epochs are paused after
#: a QA and (``qa_epoch_resume: window_sent``) the bytes still to send before they resume.
#: Counts, for analysis and tests.
S = state_layout("UnoState", (
    "started", "epoch_start_ps", "epoch_bytes", "epoch_acks", "epoch_marked_acks",
    "epoch_mark_events", "ecn_ewma", "md_scale", "qa_start_ps", "qa_bytes", "skipping",
    "qa_time_ps", "epochs", "md_events", "gentle_events", "qa_events", "epoch_paused",
    "resume_after_bytes",
))  # fmt: skip
#: alpha (bytes), K (bytes), the MD gain 4K/(K + BDP), the fixed epoch period (ps) and the RTT
#: sample's scale to the epoch period (0: the fixed period), the QA period (ps), the gentle
#: test's threshold (ps), then the parameters as they are (switches as 0 / 1) and the window
#: after a timeout (bytes, 0: unchanged)
P = params_layout("UnoConsts", (
    "alpha_bytes", "k_bytes", "md_gain", "epoch_period_ps", "epoch_rtt_scale", "qa_period_ps",
    "gentle_threshold_ps", "ecn_ewma_gain", "gentle_factor", "gentle_compounds", "qa_beta",
    "qa_window_scale", "timeout_cwnd_bytes", "ewma_fall_increase", "epoch_resume_on_send",
))  # fmt: skip


def pack(params: UnoParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    bdp = ctx.bdp_bytes
    k = params.k_bytes
    if k is None:
        k = ctx.intra_bdp_bytes / params.k_intra_bdp_divisor
    p[P.alpha_bytes] = params.ai_bdp_frac * bdp
    p[P.k_bytes] = k
    p[P.md_gain] = 4.0 * k / (k + bdp)
    p[P.epoch_period_ps] = round(params.epoch_period_intra_rtt * ctx.intra_rtt_ps)
    if params.epoch_period == "rtt_sample":  # period = sample x intra-DC RTT / base RTT x mult.
        p[P.epoch_rtt_scale] = params.epoch_period_intra_rtt * ctx.intra_rtt_ps / ctx.base_rtt_ps
    p[P.qa_period_ps] = round(params.qa_period_base_rtt * ctx.base_rtt_ps)
    p[P.gentle_threshold_ps] = round(
        params.gentle_qdelay_us * PS_PER_US + params.gentle_qdelay_base_rtt_frac * ctx.base_rtt_ps
    )
    p[P.ecn_ewma_gain] = params.ecn_ewma_gain
    p[P.gentle_factor] = params.gentle_factor
    p[P.gentle_compounds] = 1.0 if params.gentle_compounds else 0.0
    p[P.qa_beta] = params.qa_beta
    p[P.qa_window_scale] = params.qa_window_scale
    p[P.timeout_cwnd_bytes] = params.timeout_cwnd_mss * ctx.mss_bytes
    p[P.ewma_fall_increase] = 1.0 if params.ewma_fall_increase else 0.0
    p[P.epoch_resume_on_send] = 1.0 if params.qa_epoch_resume == "window_sent" else 0.0
    return p


def hears_sends(p: np.ndarray) -> bool:
    """Whether a flow with constants ``p`` needs its sends (``qa_epoch_resume: window_sent``)."""
    return bool(p[P.epoch_resume_on_send])


def queue_threshold(p: np.ndarray) -> float:
    """The queueing beyond the base RTT (ps) at which the gentle test sees a physical queue."""
    return float(p[P.gentle_threshold_ps])


@njit(cache=True)
def init(s, p):
    init_window(s, p)
    s[S.md_scale] = 1.0


@njit(cache=True)
def _clear_epoch(s):
    s[S.epoch_bytes] = 0.0
    s[S.epoch_acks] = 0.0
    s[S.epoch_marked_acks] = 0.0
    s[S.epoch_mark_events] = 0.0


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """Additive increase on the unmarked bytes; then, unless the round trip after a Quick
    Adapt is being skipped, the epoch's and the QA period's accounting (module docstring)."""
    now = fb.now_ps
    if s[S.started] == 0.0:
        # The epoch and the first QA period activate at the first ACK (§4.1.1).
        s[S.started] = 1.0
        s[S.epoch_start_ps] = now
        s[S.qa_start_ps] = now
    unmarked = fb.acked_bytes - fb.marked_bytes
    if unmarked > 0.0:
        cwnd = s[S.cwnd]
        set_cwnd(s, p, cwnd + p[P.alpha_bytes] * unmarked / cwnd)
    qa_paused = False
    if s[S.skipping] > 0.0:
        if fb.sent_ps < s[S.qa_time_ps]:
            qa_paused = True
        else:
            # a packet sent after the QA came back: the skipped round trip is over
            s[S.skipping] = 0.0
            s[S.qa_start_ps] = now
            s[S.qa_bytes] = 0.0
            if s[S.epoch_paused] > 0.0 and p[P.epoch_resume_on_send] == 0.0:
                s[S.epoch_paused] = 0.0
                s[S.epoch_start_ps] = now
    if s[S.epoch_paused] == 0.0:
        s[S.epoch_bytes] += fb.acked_bytes
        s[S.epoch_acks] += fb.acks
        s[S.epoch_marked_acks] += fb.marked_acks
        s[S.epoch_mark_events] += fb.mark_events
        if fb.sent_ps >= s[S.epoch_start_ps]:
            _end_epoch(s, p, fb)
    if not qa_paused:
        s[S.qa_bytes] += fb.acked_bytes
        if now - s[S.qa_start_ps] >= p[P.qa_period_ps]:
            _quick_adapt_check(s, p, fb)


@njit(cache=True)
def on_send(s, p, now_ps, wire_bytes):
    """``qa_epoch_resume: window_sent``: epochs resume once the window set by the last Quick
    Adapt has been sent (the epoch starts at that send)."""
    if s[S.epoch_paused] > 0.0 and p[P.epoch_resume_on_send] > 0.0:
        s[S.resume_after_bytes] -= wire_bytes
        if s[S.resume_after_bytes] <= 0.0:
            s[S.epoch_paused] = 0.0
            _clear_epoch(s)
            s[S.epoch_start_ps] = now_ps


@njit(cache=True)
def _end_epoch(s, p, fb):
    """Alg. 1 OnEpoch: update E; on a congested epoch, one multiplicative decrease, gentle when
    the batch's RTT shows no physical queue."""
    s[S.epochs] += 1.0
    acks = s[S.epoch_acks]
    frac = s[S.epoch_marked_acks] / acks if acks > 0.0 else 0.0
    g = p[P.ecn_ewma_gain]
    old_ewma = s[S.ecn_ewma]
    ewma = (1.0 - g) * old_ewma + g * frac
    s[S.ecn_ewma] = ewma
    if s[S.epoch_mark_events] > 0.0:
        cwnd = s[S.cwnd]
        if p[P.ewma_fall_increase] > 0.0 and 0.0 < ewma < old_ewma and ewma <= 0.9:
            # artifact rule: marks are receding, so increase instead of decreasing
            set_cwnd(s, p, cwnd + p[P.alpha_bytes] * s[S.epoch_bytes] / cwnd)
        else:
            if fb.rtt_ps - p[P.base_rtt] < p[P.gentle_threshold_ps] and fb.draw >= fb.queued_p:
                # marked, but no physical queue: the phantom queue is congested (gentle)
                base = s[S.md_scale] if p[P.gentle_compounds] > 0.0 else 1.0
                s[S.md_scale] = base * p[P.gentle_factor]
                s[S.gentle_events] += 1.0
            else:
                s[S.md_scale] = 1.0
            md = ewma * p[P.md_gain] * s[S.md_scale]
            set_cwnd(s, p, cwnd * (1.0 - min(md, 1.0)))
            s[S.md_events] += 1.0
    _clear_epoch(s)
    if p[P.epoch_rtt_scale] > 0.0:
        s[S.epoch_start_ps] += np.rint(fb.rtt_ps * p[P.epoch_rtt_scale])  # (half to even)
    else:
        s[S.epoch_start_ps] += p[P.epoch_period_ps]


@njit(cache=True)
def _quick_adapt_check(s, p, fb):
    """Alg. 1 OnQA: a sharp drop in acknowledged bytes sets cwnd to what was delivered, and the
    next round trip has neither QA nor MD (module docstring)."""
    acked_bytes = s[S.qa_bytes]
    if fb.whole_packets > 0.0:  # (a packet controller checks at an ACK and counts it whole)
        acked_bytes = in_whole_packets(acked_bytes, p[P.mss])
    if acked_bytes < p[P.qa_beta] * s[S.cwnd]:
        set_cwnd(s, p, p[P.qa_window_scale] * acked_bytes)
        s[S.qa_events] += 1.0
        s[S.skipping] = 1.0
        s[S.qa_time_ps] = fb.now_ps
        s[S.epoch_paused] = 1.0
        s[S.resume_after_bytes] = s[S.cwnd]
        _clear_epoch(s)
    s[S.qa_start_ps] = fb.now_ps
    s[S.qa_bytes] = 0.0


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A retransmission timeout or a loss found before one: the window after it, if one is set
    (``timeout_cwnd_mss``; none by default, as the artifact's ``-noRto``)."""
    if p[P.timeout_cwnd_bytes] > 0.0:
        set_cwnd(s, p, p[P.timeout_cwnd_bytes])


def period_ps(p: np.ndarray) -> float:
    """The span of UnoCC's epochs (ps): an inter-DC flow's end about once an intra-DC RTT."""
    return float(p[P.epoch_period_ps])


LAW = Law(
    name="uno",
    params=UnoParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    on_send=on_send,
    hears_sends=hears_sends,
    signals=("ecn", "rtt", "queueing"),
    queue_threshold=queue_threshold,
    period_ps=period_ps,
)

"""Annulus as Gear's evaluation runs it: a DCQCN reaction point that also hears the near-source
congestion notices of QCN congestion points, and a Vegas window on the WAN.

Sources: Saeed et al., "Annulus: A Dual Congestion Control Loop for Datacenter and WAN Traffic
Aggregates" (SIGCOMM 2020; cited as [A]), whose text is not in this repository, as Gear reports
and configures it: Han et al., "In-Band Network Telemetry-Based Congestion Control for
Cross-Datacenter Networks" (IEEE/ACM ToN; [G]) §II-B, §IV-A (v) and §VI. [G] §IV-A (v): "the
parameter w in F_b = (Q - Q_eq) + w (Q - Q_old) is set to 8. The sampling interval on TOR switches
is set to 15KB. Following the recommendation, we set GD to 1/128. Since Annulus did not specify
its CC algorithm at the sender, we applied the DCQCN algorithm for congestion in the data center
and the Vegas algorithm for congestion in WAN. The ratio of AI factor is the same as DCTCP."

The two loops:

* **Near-source loop** ([A]; [G] §VI: the ToR switch "directly forwards the QCN packets back to
  the host"): the congestion points are switch ports (``switch.qcn``, :mod:`uno.net.qcn`, which
  computes F_b and sends its 6-bit level to the sampled packet's source). A notice of level
  ``L`` cuts the sending rate as QCN's reaction point does: R_T = R_C, R_C = R_C (1 - G_D L)
  (``gd`` = 1/128), and restarts the rate-increase machinery.
* **End-to-end loop** ([G]'s choice): DCQCN (:mod:`uno.cc.dcqcn`) for congestion in the data
  center — ECN, which [G] §IV-A enables on intra-DC switches only, echoed as CNPs, cuts R_C by
  alpha / 2 — and Vegas for congestion in the WAN.

Readings (where the texts leave it open):

1. **One rate.** The notices and the CNPs act on one DCQCN reaction point (R_C, R_T, alpha and
   DCQCN's fast recovery, additive and hyper increase by timer and byte counter,
   :mod:`uno.cc.dcqcn`); [G] names one sender algorithm for the data center, DCQCN, whose
   increase is QCN's. ``cross_dc_ecn``: whether cross-DC flows also cut on CNPs (default true:
   ECN marks only in the data center, so a mark is data-center congestion whichever flow it
   reaches).
2. **The AI factor.** "The ratio of AI factor is the same as DCTCP" ([G] §IV-A (i):
   min(500, CRTT/IRTT)): a cross-DC flow's R_AI and R_HAI are that many times the intra-DC
   flows' (``inter_ai_ratio_max``; null: the same for every flow).
3. **Vegas** (Brakmo and Peterson, "TCP Vegas: End to End Congestion Avoidance on a Global
   Internet", IEEE JSAC 1995) for cross-DC flows only, the flows that cross the WAN: a window
   that starts at ``init_cwnd_bdp`` BDPs (line rate, as every flow in [G] §IV-B) and, once per
   round (a round ends at the first ACK of a packet sent after it began), compares
   diff = cwnd (1 - BaseRTT / RTT) with ``vegas_alpha`` and ``vegas_beta`` packets (1 and 3,
   Vegas's own values): below alpha one MSS more, above beta one MSS less. BaseRTT is the least
   RTT sample of the flow, RTT the least of the round. A loss (one per base RTT; a timeout or
   fast retransmit) halves the window, as Reno does and Vegas keeps. The rate R_C paces every
   flow; the window caps a cross-DC flow's bytes in flight. Intra-DC flows have no window.
4. **Loss and DCQCN.** As ``cc=dcqcn``: a loss advances the timers and, with ``loss_as_cnp``,
   counts as a CNP.

Defaults: DCQCN's as ``cc=dcqcn`` (the DCQCN authors' configuration, :mod:`uno.cc.dcqcn`);
G_D = 1/128, w = 8 and the 15-KB sampling from [G] (``conf/cc/annulus.yaml`` sets the switch
side); the AI ratio 500 from [G] §IV-A (i). The fluid engine hears the notices from its links'
congestion points (:mod:`uno.fluid.qcn`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc import dcqcn
from uno.cc.dcqcn import DcqcnParams
from uno.cc.law import COMMON_PARAMS, COMMON_STATE, Law, params_layout, state_layout
from uno.config.fields import num
from uno.core.errors import ConfigError

# DCQCN's own columns (after the common ones; without the layout's "size")
_DCQCN_STATE = dcqcn.S._fields[len(COMMON_STATE) : -1]
_DCQCN_CONSTS = dcqcn.P._fields[len(COMMON_PARAMS) : -1]


@dataclass
class AnnulusParams(DcqcnParams):
    """Annulus's sender (see the module docstring): DCQCN's settings, then its own."""

    #: G_D: a notice of level L (1..63) cuts the rate by G_D x L
    gd: float = num(1.0 / 128.0, "(0, 0.015873]")
    #: cross-DC flows also cut on CNPs (ECN from intra-DC switches)
    cross_dc_ecn: bool = True
    #: cross-DC flows' R_AI and R_HAI are min(this, CRTT / IRTT) times the intra-DC flows'
    #: (null: the same for every flow)
    inter_ai_ratio_max: float | None = num(500.0, "> 0")
    #: cross-DC flows keep a Vegas window (the WAN loop)
    vegas: bool = True
    #: Vegas's alpha (packets of the window queued): below it the window grows by one MSS
    vegas_alpha: float = num(1.0, ">= 0")
    #: Vegas's beta (packets of the window queued): above it the window shrinks by one MSS
    vegas_beta: float = num(3.0, ">= 0")
    #: a cross-DC flow's window at its start (BDPs)
    init_cwnd_bdp: float = num(1.0, "> 0")

    def check_consistency(self, prefix: str) -> None:
        if self.vegas_alpha > self.vegas_beta:
            raise ConfigError(
                f"{prefix}.vegas_alpha",
                f"{self.vegas_alpha} is above vegas_beta ({self.vegas_beta})",
            )


S = state_layout("AnnulusState", (
    *_DCQCN_STATE, "notices", "round_open", "round_start_ps", "round_rtt_ps", "rtt_floor_ps",
))  # fmt: skip
P = params_layout("AnnulusConsts", (
    *_DCQCN_CONSTS, "gd", "cross_dc", "hears_cnp", "vegas", "vegas_alpha", "vegas_beta",
))  # fmt: skip
# DCQCN's functions run on these rows: its columns must keep their places
assert all(getattr(S, f) == getattr(dcqcn.S, f) for f in dcqcn.S._fields[:-1])
assert all(getattr(P, f) == getattr(dcqcn.P, f) for f in dcqcn.P._fields[:-1])


def pack(params: AnnulusParams, ctx) -> np.ndarray:
    """The flow's constants: DCQCN's (:func:`uno.cc.dcqcn.pack`), a cross-DC flow's increase
    steps scaled by the AI ratio and its Vegas window, then Annulus's own."""
    p = np.zeros(P.size)
    p[: dcqcn.P.size] = dcqcn.pack(params, ctx)
    cross = bool(ctx.is_inter_dc)
    if cross and params.inter_ai_ratio_max is not None:
        ratio = min(params.inter_ai_ratio_max, ctx.base_rtt_ps / ctx.intra_rtt_ps)
        p[P.rate_ai_bps] *= ratio
        p[P.rate_hai_bps] *= ratio
    vegas = cross and params.vegas
    if vegas:
        p[P.min_cwnd] = ctx.mss_bytes
        p[P.init_cwnd] = params.init_cwnd_bdp * ctx.bdp_bytes
    p[P.gd] = params.gd
    p[P.cross_dc] = 1.0 if cross else 0.0
    p[P.hears_cnp] = 1.0 if (params.cross_dc_ecn or not cross) else 0.0
    p[P.vegas] = 1.0 if vegas else 0.0
    p[P.vegas_alpha] = params.vegas_alpha
    p[P.vegas_beta] = params.vegas_beta
    return p


@njit(cache=True)
def init(s, p):
    """DCQCN's start (both rates at the line rate); the window at its start; no round open."""
    dcqcn.init(s, p)
    s[S.cwnd] = p[P.init_cwnd]
    s[S.rtt_floor_ps] = math.inf


@njit(cache=True)
def _vegas(s, p, fb):
    """Vegas's per-ACK bookkeeping and, at a round's end, its one-MSS step."""
    rtt = fb.rtt_min_ps
    if rtt < s[S.rtt_floor_ps]:
        s[S.rtt_floor_ps] = rtt
    if s[S.round_open] == 0.0:
        s[S.round_open] = 1.0
        s[S.round_start_ps] = fb.now_ps
        s[S.round_rtt_ps] = rtt
        return
    if rtt < s[S.round_rtt_ps]:
        s[S.round_rtt_ps] = rtt
    if fb.sent_ps < s[S.round_start_ps]:
        return
    # the round ends: diff = cwnd (1 - BaseRTT / RTT), in packets
    mss = p[P.mss]
    cwnd = s[S.cwnd]
    diff = cwnd * (1.0 - s[S.rtt_floor_ps] / s[S.round_rtt_ps]) / mss
    if diff < p[P.vegas_alpha]:
        cwnd += mss
    elif diff > p[P.vegas_beta]:
        cwnd -= mss
    lo = p[P.min_cwnd]
    s[S.cwnd] = cwnd if cwnd > lo else lo
    s[S.round_start_ps] = fb.now_ps
    s[S.round_rtt_ps] = math.inf


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """DCQCN's timers and, if the flow hears them, its CNP cuts; then Vegas on a cross-DC
    flow's ACKs (not on duplicates)."""
    if p[P.hears_cnp] != 0.0:
        dcqcn.on_feedback(s, p, fb, rec)
    else:
        dcqcn.on_timer(s, p, fb.now_ps)
    if p[P.vegas] != 0.0 and fb.duplicate == 0.0 and fb.acks > 0.0:
        _vegas(s, p, fb)


@njit(cache=True)
def on_notify(s, p, now_ps, level):
    """A switch's congestion notice of ``level`` (1..63): the timers up to now, then R_C cut
    by G_D x level (QCN's reaction point)."""
    dcqcn.on_timer(s, p, now_ps)
    s[S.notices] += 1.0
    dcqcn.cut_rate(s, p, now_ps, p[P.gd] * level)


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """DCQCN's reaction to a loss; a cross-DC flow's Vegas window halves."""
    dcqcn.on_loss(s, p, now_ps, loss)
    if p[P.vegas] != 0.0:
        half = s[S.cwnd] / 2.0
        lo = p[P.min_cwnd]
        s[S.cwnd] = half if half > lo else lo


LAW = Law(
    name="annulus",
    params=AnnulusParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    pacing_rate=dcqcn.pacing_rate,
    on_send=dcqcn.on_send,
    next_timer=dcqcn.next_timer,
    on_timer=dcqcn.on_timer,
    on_notify=on_notify,
    signals=("cnp", "timers", "qcn", "rtt_min"),
    cnp_interval_ps=dcqcn.cnp_interval_ps,
)

"""MLCC (Zhao et al., "Efficient Cross-Datacenter Congestion Control with Fast Control Loops",
ICPP 2025), §3: a cross-datacenter flow is governed by three loops.

* **Near-source loop** (§3.2, first paragraph): the sender-side DCI switch reads the INT records
  the sender's datacenter wrote into a data packet, clears them and returns them to the sender
  in a "Switch-INT" notice (:mod:`uno.net.dci`). The sender computes R_NS from them.
* **Receiver-driven loop** (§3.2, Algorithm 1): the receiver-side DCI switch holds the flow in a
  per-flow queue (PFQ) drained at R_credit; the receiver computes R_credit once per round trip
  to the DCI switch (the credit C_R it puts in ACKs comes back stamped on data as C_D) and
  returns it, with C_R, in its ACKs.
* **End-to-end loop** (§3.3, Algorithm 2, eqs. 2-9): at each credit round the receiver predicts
  the PFQ's queue one RTT_C ahead and the rate R_DQM that brings its delay to D_t within theta;
  a token bucket smooths it into R̄_DQM, carried in every ACK. The sender sends at
  R_MLCC = min(R_NS, R̄_DQM) (eq. 10).

The paper leaves open, and this module chooses (each an option where it changes results):

* **How R_NS and R_credit are computed** (§3.2 says only "calculates the fair rate ... based on
  the INT information"): HPCC's law (:mod:`uno.cc.hpcc`, the ``cc.mlcc`` fields it shares with
  ``cc.hpcc``) on the near-source records with T = RTT_D, R_NS = W / T; and HPCC's law at the
  receiver on the records of the receiver-side hops (the receiver-side DCI switch erases the
  others, §3.2 "erases and reinserts the INT information"), once per credit round ("update
  congestion control parameters", Algorithm 1 line 11), each round a HPCC round, with
  T = RTT_D, R_credit = W / T. RTT_D is the network's intra-DC reference RTT (Table 1: "RTT of
  intra-DC"), RTT_C the flow's own base RTT.
* **Which CC intra-DC flows use**: the same HPCC law on their ACKs' INT records (the law of the
  near-source loop with no DCI switch on the path).
* **Algorithm 2 line 5**, "if T̄_pre > T_q then R_DQM <- Eq(5)", whose symbols the text never
  defines: read as D_pre > D_t. ``dqm_gate: always`` (default) applies eq. 5 at every round,
  so a delay below D_t raises the rate (eq. 5 > R_credit) and the per-flow queue settles at
  R_credit x D_t, which is the stated aim (§3.3.1: "maintaining the rate R_DQM for the duration
  of theta will reduce the queuing delay to D_t"); ``above`` applies it only when D_pre > D_t
  and otherwise takes R_DQM = R_credit.
* **Eq. 2's history**: the last n = round(RTT_C / RTT_D) values of R_DQM (eq. 5's, not the
  smoothed rate); until one exists, the predicted enqueue rate is R_credit. Eq. 4's mean is over
  the last m values of R_credit, the current one included.
* **The token bucket** (eqs. 6-8 and Algorithm 2 lines 7-12, which disagree: the listing's
  ``while token < 1`` loop would always end with token >= 1): eqs. 6-8 per ACK the receiver
  sends ("increments the token number with each outgoing packet"): token += min(alpha x
  R_DQM / R_credit, 1); token > 1: dw += 1, token -= 1; token < 1: dw -= 1; token = 1:
  token -= 1 (eq. 6), dw unchanged (eq. 8 names neither). With alpha = 0.5, dw drifts by
  R_DQM / R_credit - 1 per packet, so R̄_DQM = R_credit + dw x MTU / RTT_C (eq. 9) follows R_DQM.
  R̄_DQM is kept within [one MTU per RTT_C, the line rate] (dw stops at the bounds).
* **How often the DCI switch sends Switch-INT** and **a new PFQ's rate**: ``switch.dci``
  (:mod:`uno.net.dci`): every cross-DC data packet (as HPCC reacts per ACK), and the receiving
  host's line rate (HPCC starts flows at line rate).
* **The cross-DC window**: MLCC is rate-based (RDMA); a cross-DC flow's window is
  ``max_cwnd_bdp`` end-to-end BDPs (line rate x RTT_C), as HPCC's window cap.

Parameters from §4.1: theta = 18 ms, D_t = 1 ms, m = 5, alpha = 0.5.

Units: time in picoseconds, rates in bit/s, sizes in wire bytes (all float64).
"""

from __future__ import annotations

import dataclasses
import math
from collections import namedtuple
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc import hpcc
from uno.cc.law import (
    BPS_PS,
    Law,
    ack_feedback,
    clamp_window,
    params_layout,
    state_layout,
    window_pacing,
    window_params,
)
from uno.config.fields import choice, num

#: Algorithm 2 line 5: eq. 5 at every round, or only when D_pre > D_t
DQM_GATES = ("always", "above")
#: the receiver's HPCC step: once per credit round, or per data packet (rounds still by credit)
CREDIT_STEPS = ("per_round", "per_packet")


@dataclass
class MlccParams(hpcc.HpccParams):
    """MLCC settings: HPCC's (the law of R_NS, R_credit and intra-DC flows) and DQM's."""

    #: theta, the time in which eq. 5 brings the predicted delay to D_t (§4.1: 18 ms)
    theta_ms: float = num(18.0, "> 0")
    #: D_t, the PFQ's target queueing delay (§4.1: 1 ms)
    target_delay_ms: float = num(1.0, ">= 0")
    #: m, the R_credit values eq. 4 averages (§4.1: 5)
    credit_window: int = num(5, ">= 1")
    #: alpha of the token bucket, eq. 7 (§4.1: 0.5)
    alpha: float = num(0.5, "> 0")
    #: Algorithm 2 line 5: always (eq. 5 every round) or above (only when D_pre > D_t)
    dqm_gate: str = choice("always", DQM_GATES)
    #: the receiver's HPCC measurement for R_credit: per_round (once per credit round, as
    #: Algorithm 1 line 11) or per_packet (every data packet, HPCC's per-ACK estimate; W^c and
    #: R_credit still change once per credit round)
    credit_step: str = choice("per_round", CREDIT_STEPS)


# ---- the sender -------------------------------------------------------------------------------
#: R̄_DQM the last ACK carried (bit/s, 0: none yet); HPCC's state (R_NS's, or an intra-DC
#: flow's window) follows at column ``size``
S = state_layout("MlccState", ("dqm_rate_bps",))
#: whether the flow crosses datacenters; HPCC's constants follow at column ``size``
P = params_layout("MlccConsts", ("cross",))


def _near_ctx(ctx):
    """The flow's context as HPCC sees it: a cross-DC flow's near-source loop has T = RTT_D and
    W_init = its bottleneck rate x T."""
    if not ctx.is_inter_dc:
        return ctx
    t = ctx.intra_rtt_ps
    return dataclasses.replace(ctx, base_rtt_ps=t, bdp_bytes=ctx.bottleneck_bps * t / BPS_PS)


def pack(params: MlccParams, ctx) -> np.ndarray:
    sub = hpcc.pack(params, _near_ctx(ctx))
    p = np.zeros(P.size + sub.size)
    window_params(p, ctx, params.max_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.cross] = 1.0 if ctx.is_inter_dc else 0.0
    p[P.size :] = sub
    return p


def state_tail(p: np.ndarray) -> int:
    """HPCC's columns and its records."""
    sub = p[P.size :]
    return hpcc.S.size + hpcc.state_tail(sub)


@njit(cache=True)
def _sync(s, p):
    """An intra-DC flow's window is HPCC's; a cross-DC flow's stays at its cap."""
    if p[P.cross] == 0.0:
        s[0] = s[S.size]


@njit(cache=True)
def init(s, p):
    s[:] = 0.0
    hpcc.init(s[S.size :], p[P.size :])
    s[0] = clamp_window(p, p[P.init_cwnd])  # a cross-DC flow's window: its cap
    _sync(s, p)


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """An ACK: an intra-DC flow's HPCC step (a cross-DC flow hears its DCI switches instead)."""
    if p[P.cross] == 0.0:
        hpcc.on_feedback(s[S.size :], p[P.size :], fb, rec)
        _sync(s, p)


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    hpcc.on_loss(s[S.size :], p[P.size :], now_ps, loss)
    _sync(s, p)


@njit(cache=True)
def on_report(s, p, now_ps, sent_ps, rate_bps, rec):
    """A Switch-INT notice (``rec``: the near-source hops of the packet sent at ``sent_ps``): a
    HPCC step on them, R_NS = W / RTT_D; or R̄_DQM from an ACK (``rate_bps``)."""
    if rate_bps > 0.0:
        s[S.dqm_rate_bps] = rate_bps
        return
    n = rec.shape[0]
    if n > 0 and p[P.cross] != 0.0:
        fb = ack_feedback(now_ps, 0.0, False, 0.0, sent_ps, 0.0, 0.0, 0.0, 0.0, False, n)
        hpcc.on_feedback(s[S.size :], p[P.size :], fb, rec)


@njit(cache=True)
def pacing_rate(s, p):
    """An intra-DC flow: HPCC's W / T. A cross-DC flow: min(R_NS, R̄_DQM) (eq. 10)."""
    r_ns = window_pacing(s[S.size :], p[P.size :])
    if p[P.cross] == 0.0:
        return r_ns
    dqm = s[S.dqm_rate_bps]
    if dqm > 0.0 and dqm < r_ns:
        return dqm
    return r_ns


# ---- the receiver ----------------------------------------------------------------------------
#: C_R; R_credit (bit/s); R̄_DQM (bit/s); the latest R_DQM (bit/s); token; dw; eq. 2's and
#: eq. 4's rings (values held, next slot); credit rounds so far. The rings (n, then m columns)
#: and HPCC's state follow at column ``size``
RX = namedtuple("MlccRx", ["state", "consts"])(
    state_layout(
        "MlccRxState",
        (
            "credit",
            "credit_rate_bps",
            "dqm_avg_bps",
            "dqm_bps",
            "token",
            "dw",
            "dqm_held",
            "dqm_next",
            "credit_held",
            "credit_next",
            "rounds",
        ),
    ),  # fmt: skip
    params_layout(
        "MlccRxConsts",
        (
            "theta_ps",
            "target_delay_ps",
            "m",
            "alpha",
            "n",
            "rtt_c_ps",
            "init_rate_bps",
            "line_rate_bps",
            "floor_rate_bps",
            "gate_always",
            "per_packet",
        ),
    ),  # fmt: skip
)
RS, RP = RX


def rx_pack(params: MlccParams, ctx, init_rate_bps: float) -> np.ndarray:
    """The receiver's constants for a cross-DC flow: DQM's, then HPCC's with T = RTT_D and
    W_init = the receiving host's rate x T (``init_rate_bps``: a new PFQ's rate)."""
    t_d = ctx.intra_rtt_ps
    sub = hpcc.pack(params, dataclasses.replace(ctx, base_rtt_ps=t_d,
                                                bdp_bytes=ctx.bottleneck_bps * t_d / BPS_PS))  # fmt: skip
    p = np.zeros(RP.size + sub.size)
    p[RP.mss] = ctx.mss_bytes
    p[RP.theta_ps] = params.theta_ms * 1e9
    p[RP.target_delay_ps] = params.target_delay_ms * 1e9
    p[RP.m] = params.credit_window
    p[RP.alpha] = params.alpha
    p[RP.n] = max(1, round(ctx.base_rtt_ps / t_d))
    p[RP.rtt_c_ps] = ctx.base_rtt_ps
    p[RP.init_rate_bps] = init_rate_bps
    p[RP.line_rate_bps] = ctx.bottleneck_bps
    p[RP.floor_rate_bps] = ctx.mss_bytes * BPS_PS / ctx.base_rtt_ps
    p[RP.gate_always] = 1.0 if params.dqm_gate == "always" else 0.0
    p[RP.per_packet] = 1.0 if params.credit_step == "per_packet" else 0.0
    p[RP.size :] = sub
    return p


def rx_state_size(p: np.ndarray) -> int:
    """The receiver's state columns for constants ``p``: its own, the rings, HPCC's."""
    sub = p[RP.size :]
    return _rx_sub_at(p) + hpcc.S.size + hpcc.state_tail(sub)


@njit(cache=True)
def _rx_sub_at(p):
    return RS.size + int(p[RP.n]) + int(p[RP.m])


@njit(cache=True)
def rx_init(s, p):
    """Before the first data packet: no credit yet (C_R = 0), R_credit = a new PFQ's rate."""
    s[:] = 0.0
    at = _rx_sub_at(p)
    hpcc.init(s[at:], p[RP.size :])
    s[RS.credit_rate_bps] = p[RP.init_rate_bps]
    s[RS.dqm_avg_bps] = p[RP.init_rate_bps]
    s[RS.dqm_bps] = p[RP.init_rate_bps]


@njit(cache=True)
def _ring_push(s, base, cap, held_col, next_col, value):
    s[base + int(s[next_col])] = value
    s[next_col] = (s[next_col] + 1.0) % cap
    if s[held_col] < cap:
        s[held_col] += 1.0


@njit(cache=True)
def _ring_mean(s, base, held):
    total = 0.0
    for i in range(held):
        total += s[base + i]
    return total / held


@njit(cache=True)
def dqm_rate(s, p, queue_bytes):
    """R_DQM for the current round (eqs. 2-5) from the PFQ's queue ``queue_bytes`` (Q_c)."""
    credit = s[RS.credit_rate_bps]
    n = int(p[RP.n])
    held = int(s[RS.dqm_held])
    pre_eq = _ring_mean(s, RS.size, held) if held > 0 else credit  # eq. 2
    q_pre = (pre_eq - credit) * p[RP.rtt_c_ps] / BPS_PS + queue_bytes  # eq. 3 (bytes)
    mean_credit = _ring_mean(s, RS.size + n, int(s[RS.credit_held]))
    d_pre = q_pre * BPS_PS / mean_credit  # eq. 4 (ps): m Q_pre / sum of the last m R_credit
    if p[RP.gate_always] == 0.0 and not d_pre > p[RP.target_delay_ps]:
        return credit
    rate = credit * (1.0 - (d_pre - p[RP.target_delay_ps]) / p[RP.theta_ps])  # eq. 5
    return rate if rate > 0.0 else 0.0


@njit(cache=True)
def token_step(s, p):
    """Eqs. 6-9 for one packet: the token, the dynamic window dw, and R̄_DQM (bit/s)."""
    credit = s[RS.credit_rate_bps]
    inc = p[RP.alpha] * s[RS.dqm_bps] / credit if credit > 0.0 else 1.0
    token = s[RS.token] + (inc if inc < 1.0 else 1.0)  # eq. 7
    dw = s[RS.dw]
    if token > 1.0:  # eq. 8
        dw += 1.0
    elif token < 1.0:
        dw -= 1.0
    if token >= 1.0:  # eq. 6
        token -= 1.0
    step = p[RP.mss] * BPS_PS / p[RP.rtt_c_ps]  # one MTU per RTT_C (bit/s)
    lo = math.ceil((p[RP.floor_rate_bps] - credit) / step)
    hi = math.floor((p[RP.line_rate_bps] - credit) / step)
    if dw < lo:
        dw = lo
    if dw > hi:
        dw = hi
    s[RS.token] = token
    s[RS.dw] = dw
    s[RS.dqm_avg_bps] = credit + dw * step  # eq. 9


@njit(cache=True)
def rx_on_data(s, p, now_ps, c_d, queue_bytes, rec):
    """A cross-DC data packet stamped with credit ``c_d`` (-1: none) and its PFQ's queue
    ``queue_bytes`` arrived with the receiver-side INT records ``rec``: Algorithm 1 (a new
    credit round when C_D = C_R: HPCC's step on ``rec``, R_credit, then DQM), then the token
    step. The ACK carries C_R, R_credit and R̄_DQM (columns ``credit``, ``credit_rate_bps``,
    ``dqm_avg_bps``)."""
    at = _rx_sub_at(p)
    sub_s, sub_p = s[at:], p[RP.size :]
    n = rec.shape[0]
    new_round = s[RS.credit] > 0.0 and c_d == s[RS.credit]
    if n > 0 and (new_round or p[RP.per_packet] != 0.0):
        # (a credit round ends HPCC's round: a send time at its start; otherwise none does)
        fb = ack_feedback(now_ps, 0.0, False, 0.0, now_ps if new_round else -1.0, 0.0, 0.0,
                          0.0, 0.0, False, n)  # fmt: skip
        hpcc.on_feedback(sub_s, sub_p, fb, rec)
    if s[RS.credit] == 0.0:  # the flow's first packet: initialise C_R (Algorithm 1 line 2)
        s[RS.credit] = 1.0
    elif new_round:  # lines 9-13
        s[RS.credit] += 1.0
        s[RS.rounds] += 1.0
        s[RS.credit_rate_bps] = window_pacing(sub_s, sub_p)
        _ring_push(s, RS.size + int(p[RP.n]), p[RP.m], RS.credit_held, RS.credit_next,
                   s[RS.credit_rate_bps])  # fmt: skip
        s[RS.dqm_bps] = dqm_rate(s, p, queue_bytes)
        _ring_push(s, RS.size, p[RP.n], RS.dqm_held, RS.dqm_next, s[RS.dqm_bps])
    token_step(s, p)


#: the receiver's part (:class:`uno.transport.receiver.Receiver`, :mod:`uno.net.dci`)
RECEIVER = namedtuple("ReceiverLaw", ["layout", "pack", "state_size", "init", "on_data"])(
    RX, rx_pack, rx_state_size, rx_init, rx_on_data
)


def period_ps(p: np.ndarray) -> float:
    """T of the near-source HPCC loop (ps): RTT_D for a cross-DC flow."""
    return float(p[P.size + hpcc.P.base_rtt])


LAW = Law(
    name="mlcc",
    params=MlccParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    on_report=on_report,
    pacing_rate=pacing_rate,
    state_tail=state_tail,
    receiver=RECEIVER,
    signals=("int", "dci"),
    period_ps=period_ps,
)

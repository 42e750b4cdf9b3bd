"""Gear (Han et al., "In-Band Network Telemetry-Based Congestion Control for Cross-Datacenter
Networks", IEEE/ACM Transactions on Networking), §III and Algorithm 1.

Gear shares a datacenter bottleneck between intra-DC flows (RTT ~ IRTT) and cross-DC flows
(RTT ~ CRTT >> IRTT) from INT records (:mod:`uno.net.int`, §III-B). Every ACK gives the path's
utilisation, the most loaded hop's (eqs. 1-2, :func:`uno.cc.int_estimate.path_utilization`):

    u_i = ql_i / (bw_i T) + txRate_i / bw_i,    u = max_i u_i

Like HPCC (which Gear cites for it), each flow keeps a reference window w^c, updated once per
round (an ACK of a packet sent after the round began, Alg. 1 lines 24-26), and sets its window
w(t) per ACK from it. Windows are wire bytes; the sender paces at w / its own base RTT.

**Intra-DC flows** (§III-C; Alg. 1 lines 1-16) alternate two multiplicative steps:

* Step I (eq. 4): ``w = w^c eta / u + W_AI`` when u >= eta or incStage >= maxStage, else the
  additive ``w = w^c + W_AI``; at a round's end w^c = w (and incStage as in HPCC).
* Steps II-III, after a Step I at time t with utilisation u(t): the utilisation one IRTT later,
  averaged over (t + IRTT, t + 1.5 IRTT) (§III-C, after eq. 6), gives the cross-DC share of the
  link, eq. 6 ``w_b = u(t) (u(t+IRTT) - eta) / (u(t) - eta) bw`` and ``w_a = u(t) bw - w_b``,
  and eq. 7 sets ``w^c = w^c eta/u(t) + (eta/u(t) - 1) w_b w^c / w_a + W_AI`` from the window
  w^c had before Step I, so that the intra-DC flows together take eta bw - w_b.

**Cross-DC flows** (§III-D; Alg. 1 lines 17-22, 33) react per ACK with twice the change
(eqs. 8-9): ``Delta = (eta/u - 1) w^c``, ``w = w^c + 2 Delta + (CRTT/IRTT) W_AI``, to make up for
the CRTT during which the intra-DC flows carried the adjustment; once per round (~CRTT) the
utilisation is corrected for the extra load that doubling put on the link (eq. 10,
``u <- u - Delta / bw``) and ``w^c = (eta/u) w^c``. The window is also capped by a WAN window
``w_wan`` (line 33), an AIMD "like CUBIC" (§III-D) that needs nothing from WAN switches.

**Classification** (§III-B): a flow is cross-DC when its handshake RTT is at least ``k`` x the
reference RTT; a cross-DC flow whose later RTT samples fall below the threshold becomes intra-DC
for good (Alg. 1 line 29 tests every ACK; the text describes a one-way correction).

Readings where the paper is ambiguous (each an option where it matters):

* ``k`` = 100 multiplies the intra-DC base RTT (``k_unit: intra_rtt``; IRTT ~ 40 us on Gear's
  topology, so 4 ms against a CRTT of ~50 ms). Alg. 1 line 29 writes ``k x basertt``; a flow's own
  base RTT cannot separate the classes (every flow's RTT is near its own), and an absolute
  100 us (``k_unit: us``) would call intra-DC flows behind a few hundred KB of queue cross-DC.
* There is no handshake: ``classify: first_rtt`` takes the first RTT sample (the first packet
  meets an empty network as a SYN would), ``path`` the flow's base RTT, ``oracle`` the
  topology's answer with no re-classification.
* ``T`` in eq. 1 is the intra-DC base RTT for every flow (``utilization_rtt: intra``): with the
  cross-DC flows' own CRTT, a full 10 MB buffer adds 0.016 to their u, and the two classes would
  read different utilisations of one link, against the premise of eqs. 5-10. ``own`` is the
  other reading.
* Eq. 1's interval: each ACK's records against the previous ACK's, and u an EWMA with weight
  tau / T (HPCC's MeasureInflight, which Gear's "Referenced by HPCC" points to); the paper
  compares with the records current when the packet was sent and names no filter.
* Eq. 8's sign: as printed (Delta < 0 under congestion), which eqs. 9-10 need; the sentence
  after it ("Delta is a positive value" when congested) uses the opposite convention.
* Eq. 10 divides a rate by bw: Delta is taken as the rate change ``Delta / CRTT``, and the Delta
  removed is the one the flow applied in the round whose feedback now arrives (the last per-ACK
  Delta of the previous round). Removing the Delta computed from the same u (line order) would
  amplify every change (a lone flow at u = 0.5 would jump 19x). ``correct_per_ack: true`` also
  removes it from the u of the per-ACK rule (not in Alg. 1).
* Eqs. 5-7 add intra- and cross-DC "windows" of different RTTs and equate them to u bw: they
  are read as aggregate rates; eq. 7 needs only their ratio.
* Alg. 1 runs eq. 7 on the ACKs right after Step I, which still show the old rates (u(t) ~
  u(t_prev) makes every flow look cross-DC), and only when the multiplicative branch is taken
  again. Here the round after Step I holds w^c; the next IRTT / 2 (``sample_irtt``) averages u
  (time-weighted); then eqs. 6-7 apply and the flow is back at Step I's rules.
* The cross-DC additive term (CRTT/IRTT) W_AI is per ACK only (line 21 recomputes w^c without
  it); ``accumulate_cross_ai: true`` adds it to w^c once per round.
* The WAN window (line 33, "AIMD algorithms like CUBIC"): loss-driven, +``wan_ai_mss`` MSS per
  round trip while it is the binding window, times ``wan_md`` (CUBIC's 0.7) of its own size on
  a loss or timeout, at most once per base RTT (cutting it to 0.7 x the current window would pin
  it at the one-MSS floor eq. 9 can reach, from which one MSS per 50-ms round trip never
  recovers). No ECN or INT exists on WAN switches (§IV-A).
* Losses inside the datacenter change nothing else (Gear, like HPCC, assumes PFC).
* W_AI and maxStage: the paper gives neither; HPCC's (``uno.cc.hpcc``): W_AI = W_init
  (1 - eta) / N with W_init the intra-DC BDP and N = 125, maxStage = 5. The eq. 6 EWMA gain is
  not given either (the time-weighted mean of the window is used).

Ablations (Fig. 14): ``intra_logic: hpcc`` drops Steps II-III (Step I's rule alone, i.e.
HPCC's); ``cross_logic: hpcc`` gives cross-DC flows the intra-DC Step I rule instead of
eqs. 8-10 (the WAN window still caps them).

Feedback: INT records (``signals`` "int") and RTT samples (the fluid engine's records:
:mod:`uno.fluid.int_records`).
Units: time in picoseconds, windows in wire bytes, rates in bit/s (float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.int_estimate import path_utilization, store_records
from uno.cc.law import (
    BPS_PS,
    INT_FIELDS,
    P0,
    Law,
    clamp_window,
    init_window,
    params_layout,
    set_cwnd,
    state_layout,
    window_params,
)
from uno.config.fields import choice, num

CLASSIFY = ("first_rtt", "path", "oracle")
K_UNITS = ("intra_rtt", "us")
LOGIC = ("gear", "hpcc")

#: the phases of an intra-DC flow: Step I's rules; the round after a Step I (hold); averaging
#: u over (t + IRTT, t + 1.5 IRTT) for eqs. 6-7
NORMAL, WAIT, SAMPLE = 0.0, 1.0, 2.0


@dataclass
class GearParams:
    """Gear settings (sources and readings: the module docstring)."""

    #: target utilisation eta (§IV-A: 95%)
    eta: float = num(0.95, "(0, 1]")
    #: classification threshold factor k (§III-B: 100)
    k: float = num(100.0, "> 0")
    #: what k multiplies: the intra-DC base RTT, or microseconds
    k_unit: str = choice("intra_rtt", K_UNITS)
    #: the handshake RTT's stand-in: the first RTT sample, the path's base RTT, or the topology
    classify: str = choice("first_rtt", CLASSIFY)
    #: T of eq. 1: the intra-DC base RTT for every flow, or the flow's own base RTT
    utilization_rtt: str = choice("intra", ("intra", "own"))
    #: maxStage (HPCC's: 5)
    max_stage: int = num(5, ">= 0")
    #: W_AI in bytes; null: W_init x (1 - eta) / max_flows, W_init the intra-DC BDP (HPCC's rule)
    w_ai_bytes: float | None = num(None, "> 0")
    #: N of that rule (HPCC's 125)
    max_flows: int = num(125, ">= 1")
    #: the part of an IRTT over which u(t + IRTT) is averaged (§III-C: 0.5)
    sample_irtt: float = num(0.5, "> 0")
    #: eq. 10's correction also in the per-ACK rule of cross-DC flows (not in Alg. 1)
    correct_per_ack: bool = False
    #: add (CRTT/IRTT) W_AI to a cross-DC flow's w^c once per round (Alg. 1: per ACK only)
    accumulate_cross_ai: bool = False
    #: WAN window: additive increase, in MSS per round trip
    wan_ai_mss: float = num(1.0, ">= 0")
    #: WAN window: decrease factor on a loss (CUBIC's 0.7)
    wan_md: float = num(0.7, "(0, 1]")
    #: Fig. 14 ablation: "hpcc" replaces the intra-DC logic (Steps II-III) by HPCC's rule
    intra_logic: str = choice("gear", LOGIC)
    #: Fig. 14 ablation: "hpcc" replaces the cross-DC logic (eqs. 8-10) by HPCC's rule
    cross_logic: str = choice("gear", LOGIC)
    #: initial window, in flow BDPs (§IV: every flow starts at line rate)
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: window cap, in flow BDPs (line rate)
    max_cwnd_bdp: float = num(1.0, "> 0")
    #: pace at w / base RTT
    pacing: bool = True
    #: u before the first measurement (as HPCC)
    init_utilization: float = num(1.0, ">= 0")


#: u (EWMA), the bottleneck hop's rate (bit/s); w^c; incStage; the round; stored INT records
#: (count, tail); the class (1: cross-DC) and whether the first RTT classified it; the intra-DC
#: phase, u and w^c at Step I, the end of the averaging window (ps) and its sums; the cross-DC
#: Delta (bit/s) of this round and of the last; the WAN window (bytes) and its last cut (ps);
#: counters: Step II adjustments, re-classifications, the last cross-DC share estimate
S = state_layout("GearState", (
    "utilization", "bw_bps", "ref_cwnd_bytes", "inc_stage", "round_active", "round_start_ps",
    "prev_n", "is_cross", "classified", "phase", "u_step", "ref_pre_bytes", "sample_until_ps",
    "sample_u_ps", "sample_ps", "delta_bps", "delta_prev_bps", "wan_cwnd_bytes",
    "wan_cut_ps", "step2_events", "reclassified", "cross_share",
))  # fmt: skip
#: eta; W_AI and the cross-DC additive term (bytes); maxStage; U at the start; INT room; the
#: classification threshold (ps) and mode; the topology's class; T of eq. 1 and the EWMA (ps);
#: the averaging window (ps); the options; WAN AIMD constants
P = params_layout("GearConsts", (
    "eta", "w_ai_bytes", "cross_ai_bytes", "max_stage", "init_utilization", "max_records",
    "threshold_ps", "classify", "inter_dc", "u_rtt_ps", "sample_ps", "correct_per_ack",
    "accumulate_cross_ai", "wan_ai_bytes", "wan_md", "intra_gear", "cross_gear",
))  # fmt: skip


def pack(params: GearParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    irtt = float(ctx.intra_rtt_ps)
    p[P.eta] = params.eta
    if params.w_ai_bytes is not None:
        w_ai = float(params.w_ai_bytes)
    else:
        w_ai = ctx.intra_bdp_bytes * (1.0 - params.eta) / params.max_flows
    p[P.w_ai_bytes] = w_ai
    p[P.cross_ai_bytes] = w_ai * ctx.base_rtt_ps / irtt  # (CRTT / IRTT) W_AI
    p[P.max_stage] = params.max_stage
    p[P.init_utilization] = params.init_utilization
    p[P.max_records] = ctx.int_max_records
    p[P.threshold_ps] = params.k * (irtt if params.k_unit == "intra_rtt" else 1e6)
    p[P.classify] = CLASSIFY.index(params.classify)
    p[P.inter_dc] = 1.0 if ctx.is_inter_dc else 0.0
    p[P.u_rtt_ps] = irtt if params.utilization_rtt == "intra" else float(ctx.base_rtt_ps)
    p[P.sample_ps] = params.sample_irtt * irtt
    p[P.correct_per_ack] = 1.0 if params.correct_per_ack else 0.0
    p[P.accumulate_cross_ai] = 1.0 if params.accumulate_cross_ai else 0.0
    p[P.wan_ai_bytes] = params.wan_ai_mss * ctx.mss_bytes
    p[P.wan_md] = params.wan_md
    p[P.intra_gear] = 1.0 if params.intra_logic == "gear" else 0.0
    p[P.cross_gear] = 1.0 if params.cross_logic == "gear" else 0.0
    return p


def state_tail(p: np.ndarray) -> int:
    """Room for the stored INT records: INT_FIELDS columns per record a packet holds."""
    return INT_FIELDS * int(p[P.max_records])


@njit(cache=True)
def init(s, p):
    init_window(s, p)
    s[S.utilization] = p[P.init_utilization]
    s[S.ref_cwnd_bytes] = s[S.cwnd]
    s[S.prev_n] = -1.0
    s[S.wan_cwnd_bytes] = p[P0.max_cwnd]
    s[S.wan_cut_ps] = -p[P0.base_rtt]
    mode = p[P.classify]
    if mode == 2.0:  # oracle
        s[S.is_cross] = p[P.inter_dc]
        s[S.classified] = 1.0
    elif mode == 1.0:  # the path's base RTT as the handshake's
        s[S.is_cross] = 1.0 if p[P0.base_rtt] >= p[P.threshold_ps] else 0.0
        s[S.classified] = 1.0
    else:  # first_rtt: until the first sample, the path's class
        s[S.is_cross] = 1.0 if p[P0.base_rtt] >= p[P.threshold_ps] else 0.0


@njit(cache=True)
def _classify(s, p, rtt_ps):
    """The handshake RTT classifies (§III-B); a cross-DC flow whose RTT falls below the
    threshold becomes intra-DC (not with ``oracle``). Returns whether the class changed."""
    if rtt_ps <= 0.0 or p[P.classify] == 2.0:
        return False
    cross = rtt_ps >= p[P.threshold_ps]
    if s[S.classified] == 0.0:
        s[S.classified] = 1.0
        was = s[S.is_cross]
        s[S.is_cross] = 1.0 if cross else 0.0
        return was != s[S.is_cross]
    if s[S.is_cross] == 1.0 and not cross:
        s[S.is_cross] = 0.0
        s[S.reclassified] += 1.0
        return True
    return False


@njit(cache=True)
def _measure(s, p, rec, n):
    """Eqs. 1-2 against the stored records, folded into the EWMA u (weight tau / T, T the
    utilisation RTT). Returns the raw sample and its interval (-1, 0: none)."""
    t = p[P.u_rtt_ps]
    ok, u, tau, bw = path_utilization(s, S.prev_n, S.size, p[P.max_records], rec, n, t, False)
    if not ok:
        return -1.0, 0.0
    s[S.bw_bps] = bw
    w = tau / t if tau < t else 1.0
    s[S.utilization] = (1.0 - w) * s[S.utilization] + w * u
    return u, tau


@njit(cache=True)
def _step_one(s, p, round_end):
    """Eq. 4 / the additive branch (Alg. 1 lines 2-4, 12-15). Returns whether the
    multiplicative branch was taken."""
    u = s[S.utilization]
    eta = p[P.eta]
    mult = u >= eta or s[S.inc_stage] >= p[P.max_stage]
    if mult:
        w = s[S.ref_cwnd_bytes] * eta / u + p[P.w_ai_bytes] if u > 0.0 else p[P0.max_cwnd]
    else:
        w = s[S.ref_cwnd_bytes] + p[P.w_ai_bytes]
    set_cwnd(s, p, w)
    if round_end:
        s[S.inc_stage] = 0.0 if mult else s[S.inc_stage] + 1.0
    return mult


@njit(cache=True)
def _steps_two_three(s, p):
    """Eqs. 6-7 from u at Step I and the averaged u one IRTT later: the cross-DC share of the
    bottleneck (as fractions of bw) and the flow's new reference window."""
    eta = p[P.eta]
    u0 = s[S.u_step]
    u1 = s[S.sample_u_ps] / s[S.sample_ps] if s[S.sample_ps] > 0.0 else s[S.utilization]
    wb = 0.0
    if abs(u0 - eta) > 1e-9:
        wb = u0 * (u1 - eta) / (u0 - eta)  # eq. 6, in units of bw
    wb = min(max(wb, 0.0), u0)
    wa = u0 - wb
    ref = s[S.ref_pre_bytes]
    if u0 <= 0.0:
        w = p[P0.max_cwnd]
    elif wa <= 1e-9:
        w = ref * eta / u0 + p[P.w_ai_bytes]
    else:
        w = ref * eta / u0 + (eta / u0 - 1.0) * wb * ref / wa + p[P.w_ai_bytes]  # eq. 7
    set_cwnd(s, p, w)
    s[S.ref_cwnd_bytes] = s[S.cwnd]
    s[S.inc_stage] = 0.0
    s[S.cross_share] = wb / u0 if u0 > 0.0 else 0.0
    s[S.step2_events] += 1.0


@njit(cache=True)
def _intra(s, p, now, u_raw, tau, round_end):
    """An intra-DC flow's ACK (Alg. 1 lines 1-16, in the phases of the module docstring)."""
    phase = s[S.phase]
    if phase == NORMAL:
        ref_before = s[S.ref_cwnd_bytes]
        u_before = s[S.utilization]
        mult = _step_one(s, p, round_end)
        if round_end:
            s[S.ref_cwnd_bytes] = s[S.cwnd]
            if mult and p[P.intra_gear] > 0.0:
                s[S.phase] = WAIT
                s[S.u_step] = u_before
                s[S.ref_pre_bytes] = ref_before
    elif phase == WAIT:
        s[S.cwnd] = s[S.ref_cwnd_bytes]
        if round_end:  # ~ t + IRTT: average u over the next sample_irtt x IRTT
            s[S.phase] = SAMPLE
            s[S.sample_until_ps] = now + p[P.sample_ps]
            s[S.sample_u_ps] = 0.0
            s[S.sample_ps] = 0.0
    else:
        if u_raw >= 0.0:
            s[S.sample_u_ps] += u_raw * tau
            s[S.sample_ps] += tau
        if now >= s[S.sample_until_ps]:
            _steps_two_three(s, p)
            s[S.phase] = NORMAL
            return True  # a new round starts here
    return False


@njit(cache=True)
def _cross(s, p, round_end):
    """A cross-DC flow's ACK (Alg. 1 lines 17-22, 33): eqs. 8-9 per ACK, eq. 10 and the
    corrected w^c once per round, the WAN window as a cap."""
    eta = p[P.eta]
    u = s[S.utilization]
    bw = s[S.bw_bps]
    ref = s[S.ref_cwnd_bytes]
    crtt = p[P0.base_rtt]
    u_ack = u
    if p[P.correct_per_ack] > 0.0 and bw > 0.0:
        u_ack = u - s[S.delta_prev_bps] / bw
    if u_ack > 1e-9:
        delta = (eta / u_ack - 1.0) * ref  # eq. 8 (bytes)
        w = ref + 2.0 * delta + p[P.cross_ai_bytes]  # eq. 9 + (CRTT/IRTT) W_AI (line 18)
    else:
        delta = p[P0.max_cwnd] - ref
        w = p[P0.max_cwnd]
    s[S.delta_bps] = delta * BPS_PS / crtt
    set_cwnd(s, p, w)
    if round_end:
        u_c = u - s[S.delta_prev_bps] / bw if bw > 0.0 else u  # eq. 10
        new_ref = ref * eta / u_c if u_c > 1e-9 else p[P0.max_cwnd]
        if p[P.accumulate_cross_ai] > 0.0:
            new_ref += p[P.cross_ai_bytes]
        s[S.ref_cwnd_bytes] = clamp_window(p, new_ref)
        s[S.delta_prev_bps] = s[S.delta_bps]


@njit(cache=True)
def _wan_window(s, p, acked_bytes):
    """Line 33: w = min(w, w_wan); w_wan grows by wan_ai per round trip while it binds."""
    wan = s[S.wan_cwnd_bytes]
    if s[S.cwnd] >= wan:
        if wan < p[P0.max_cwnd]:
            wan += p[P.wan_ai_bytes] * acked_bytes / wan
            s[S.wan_cwnd_bytes] = wan if wan < p[P0.max_cwnd] else p[P0.max_cwnd]
        set_cwnd(s, p, s[S.wan_cwnd_bytes])


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """NewACK (Alg. 1 lines 23-33) for a batch whose newest records are ``rec``."""
    if fb.rtt_ps > 0.0 and _classify(s, p, fb.rtt_ps):
        # another class: the current window becomes the reference of the new class's rules
        s[S.ref_cwnd_bytes] = s[S.cwnd]
        s[S.phase] = NORMAL
        s[S.inc_stage] = 0.0
        s[S.delta_prev_bps] = 0.0
    n = int(fb.n_int)
    now = fb.now_ps
    if s[S.round_active] == 0.0:  # the first ACK: store the records, start the first round
        if n > 0:
            store_records(s, S.prev_n, S.size, p[P.max_records], rec, n)
        s[S.round_start_ps] = now
        s[S.round_active] = 1.0
        return
    round_end = fb.sent_ps >= s[S.round_start_ps]
    u_raw, tau = -1.0, 0.0
    if n > 0:
        u_raw, tau = _measure(s, p, rec, n)
    restart = False
    if s[S.is_cross] > 0.0 and p[P.cross_gear] > 0.0:
        if u_raw >= 0.0:
            _cross(s, p, round_end)
        _wan_window(s, p, fb.acked_bytes)
    elif s[S.is_cross] > 0.0:  # ablation: HPCC's rule for cross-DC flows, under the WAN cap
        if u_raw >= 0.0:
            _step_one(s, p, round_end)
            if round_end:
                s[S.ref_cwnd_bytes] = s[S.cwnd]
        _wan_window(s, p, fb.acked_bytes)
    elif u_raw >= 0.0 or s[S.phase] != NORMAL:
        restart = _intra(s, p, now, u_raw, tau, round_end)
    if round_end or restart:
        s[S.round_start_ps] = now


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A cross-DC flow's WAN window shrinks by ``wan_md`` at most once per base RTT (loss-driven
    AIMD, Alg. 1 line 33), from its own size: while the datacenter rule holds the window lower,
    a loss moves the WAN window towards it without pinning it at the datacenter rule's
    momentary value. The window follows it down. Intra-DC losses change nothing (PFC)."""
    if s[S.is_cross] == 0.0:
        return
    if now_ps - s[S.wan_cut_ps] < p[P0.base_rtt]:
        return
    s[S.wan_cut_ps] = now_ps
    wan = s[S.wan_cwnd_bytes] * p[P.wan_md]
    floor = p[P0.min_cwnd]
    s[S.wan_cwnd_bytes] = wan if wan > floor else floor
    if s[S.cwnd] > s[S.wan_cwnd_bytes]:
        set_cwnd(s, p, s[S.wan_cwnd_bytes])


def period_ps(p: np.ndarray) -> float:
    """T of eq. 1, the span of the utilisation's EWMA (ps)."""
    return float(p[P.u_rtt_ps])


LAW = Law(
    name="gear",
    params=GearParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    state_tail=state_tail,
    signals=("int", "rtt"),
    period_ps=period_ps,
)

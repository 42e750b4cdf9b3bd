"""DCQCN, the sender's reaction point (RP) (Zhu et al., "Congestion Control for Large-Scale RDMA
Deployments", SIGCOMM 2015, §3, the RP algorithm of Fig. 7; cited as [P]).

DCQCN is rate based: the sender transmits at the current rate R_C (``current_rate_bps``, the law's
pacing rate) and has no window (``cwnd`` is infinite unless ``max_cwnd_bdp`` caps it). R_T
(``target_rate_bps``) is the target rate the increase phases move R_C back to. Both start at the
line rate.

Reaction to a CNP ([P] §3; the transport's notification point sends at most one CNP per
``cnp_interval_us`` per flow and delivers it as an ACK with ``ecn=True``)::

    R_T = R_C                      (see clamp_target_rate below)
    R_C = max(min rate, R_C (1 - alpha/2))
    alpha = (1 - g) alpha + g
    timer stage = byte-counter stage = 0; byte counter, rate-increase timer and alpha timer restart

The cut uses alpha from before the CNP, then alpha is updated, in [P]'s order.

Alpha timer ([P] §3): each ``alpha_timer_us`` (K) without a CNP, alpha = (1 - g) alpha.

Rate increase ([P] §3, as QCN): two event sources, a timer firing every
``rate_increase_timer_us`` (T) and a byte counter completing every ``byte_counter_bytes`` (B) of
sent wire bytes; each event first advances its own stage count (T_s or B_s) and then:

* fast recovery while max(T_s, B_s) <= F (``fast_recovery_stages``):  R_C = (R_T + R_C) / 2;
* additive increase once one stage count exceeds F:  R_T += R_AI, then R_C = (R_T + R_C) / 2;
* hyper increase once both exceed F:  R_T += i R_HAI with i = min(T_s, B_s) - F, then
  R_C = (R_T + R_C) / 2 (QCN's i-th hyper cycle; the DCQCN authors' ns-3 code computes the same
  i with its stage counted one lower).

R_T never exceeds the line rate, so neither does R_C. R_C never falls below ``min_rate_mbps``
(or the line rate, if that is lower). The stage counts and the byte counter restart at each CNP;
bytes beyond a completed B carry over to the next cycle.

Timers start at the flow's first CNP (before it R_C = R_T = line rate and there is nothing to
recover; both reference implementations below start them there) and then run for the life of the
flow, each restarted by every CNP.

Lazy timers
-----------
The law has no engine. Every function that hears of an event (``on_send``, ``on_feedback``,
``on_loss``, ``on_timer``) first applies, in time order, every alpha-timer and rate-timer expiry
up to and including its ``now_ps`` (an expiry at exactly ``now_ps`` fires before the event of the
call), then the call's own event (a CNP restarts the timers at its time; a send may complete the
byte counter). This is exact: between two calls nothing restarts a timer or advances the byte
counter (those happen only in calls), so the expiries in between and the state after each are
fully determined and are the ones an event-driven implementation would have produced. The two
timers do not interact (alpha is read only by a CNP's cut; the increase events do not read
alpha), so the alpha expiries are applied in closed form, alpha (1 - g)^n. As long as the
transport reads the pacing rate only when it sends, and calls ``on_send`` before it reads it for
the next send time, it reads exactly the rate an eager implementation would hold at that
instant. What the lazy form does not do is change a pacing gap already computed by itself: the
transport asks for ``next_timer`` after each send (the next rate-timer expiry that can change
the rate: none before the first CNP, nor while R_C and R_T are at the line rate, where an
increase event leaves both there; alpha expiries never change the rate by themselves) and, if it
is due before the next send time, wakes then (``on_timer``) and shortens the gap to the last
packet's size at the new rate (as HPCC's simulator rescales the pending gap); this matters only
when a gap exceeds T, i.e. at rates below about wire size / T (0.6 Gb/s for 4 KB packets and
T = 55 µs). The state keeps both timers' next expiries (``alpha_next_ps``, ``rate_next_ps``;
:data:`uno.cc.law.NEVER_PS` before the first CNP, so that nothing fires).

Feedback batches
----------------
A feedback batch (:mod:`uno.cc.law`) is read for its time and its CNPs only: the timers first
advance to the batch's time, then each whole CNP in it (``mark_events``: the ECN echoes the
notification point let through) is one cut, in turn, at that time; bytes, RTTs and the other
fields play no part. For one ACK, exactly the per-ACK rules above.

Loss
----
DCQCN runs on a lossless (PFC) fabric; loss there means corruption or a failure, not congestion.
Both reference implementations only retransmit on a NACK or timeout (HPCC rdma-hw.cc
``ReceiveAck`` -> ``RecoverQueue``; the DCQCN authors' ns-3 ``Retransmit``) and leave the rate
alone, and so do we by default: a loss (``on_loss``: a NACK or a timeout) only advances the
timers. With ``loss_as_cnp`` a NACK or timeout is treated as one CNP (one cut), the cautious
choice for runs where the fabric may drop packets.

Line rate
---------
The RP starts at and is capped by the NIC's line rate. :class:`FlowContext` carries only
``bottleneck_bps``, the slowest link on the flow's path; on the topologies here host links are
no faster than the fabric, so it equals the NIC rate, and it is what we use.

Defaults and sources
--------------------
Two consistent sets, each from one implementation's published configuration (DCQCN's timers
only make sense together: the paper asks K > the CNP interval):

* The defaults (``cc=dcqcn``) are the DCQCN authors' ns-3 example configuration
  (bobzhuyb/ns3-rdma, ``windows/ns-3-dev/mix/config.txt``), whose NP sends at most one CNP per
  50 µs per flow as [P] §3 asks: ``CNP_INTERVAL 50``, ``ALPHA_RESUME_INTERVAL 55``
  (K), ``RP_TIMER 60`` (T), ``BYTE_COUNTER 300000`` (B, bytes), ``DCTCP_GAIN 0.00390625`` (g),
  ``FAST_RECOVERY_TIMES 5`` (F), ``RATE_AI 40Mb/s``, ``RATE_HAI 200Mb/s``,
  ``CLAMP_TARGET_RATE 1``; minimum rate 100 Mb/s (its ``qbb-net-device.cc`` default). alpha
  starts at 1 ([P]; that code starts at 0.5). [P] §3 gives g = 1/256, K = 55 µs, F = 5,
  R_AI = 40 Mb/s, the CNP interval 50 µs and B = 10 MB (as cited from the paper, whose text is not
  in this repository); the example config's B and T are what its authors ran.
* ``cc=dcqcn_hpcc`` (``conf/cc/dcqcn_hpcc.yaml``) is the DCQCN of the HPCC evaluation, which MLCC
  follows (Zhao et al., §4.1: "We set the parameters for DCQCN following the suggestion in
  [16]", [16] = HPCC): alibaba-edu/High-Precision-Congestion-Control ``simulation/run.py``
  (``--cc dcqcn``, 100 Gb/s NICs) and ``rdma-hw.cc`` (Mellanox ConnectX-4 behaviour):
  ``ALPHA_RESUME_INTERVAL 1`` (K = 1 µs), ``RP_TIMER 300``, ``FAST_RECOVERY_TIMES 1``,
  ``RATE_AI`` 5 Mb/s x 100/25 = 20 Mb/s, ``RATE_HAI`` 50 Mb/s x 100/25 = 200 Mb/s,
  ``MIN_RATE 1000Mb/s``, ``CLAMP_TARGET_RATE 0``, ``EWMA_GAIN`` 1/256, alpha starting at 1
  (``rdma-queue-pair.cc``). That code has no byte counter (B is left very large) and no NP
  interval: every ACK of a marked packet carries the CNP and the RP cuts at most once per
  ``RATE_DECREASE_INTERVAL`` = 4 µs, which the preset approximates with ``cnp_interval_us: 4``.
  Its alpha is a fixed 1-µs grid applying (1 - g) alpha + g if a CNP arrived during the tick,
  else (1 - g) alpha; we keep [P]'s form (update at the CNP, timer restarted by it), which
  differs from the grid by less than one tick. Its hyper increase adds a constant R_HAI per
  event; we use [P]/QCN's i R_HAI.

Other settings: ``rate_on_first_cnp`` = 1 (HPCC's ``RateOnFirstCnp``, Mellanox's
rate_to_set_on_first_cnp: at the flow's first CNP, R_C and R_T are first set to this fraction of
R_C, then the CNP's cut applies; 1 = no effect, as [P]); ``clamp_target_rate``: true sets
R_T = R_C at every CNP ([P]); false only if an increase event happened since the previous CNP
(consecutive cuts keep R_T); ``max_cwnd_bdp`` = 0: no window (HPCC's ``HAS_WIN 0`` for dcqcn).
Not modelled: QCN's halving of T and B during hyper increase (in the DCQCN authors' ns-3 code,
not in [P]'s description nor in HPCC's code).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import NEVER_PS, Law, params_layout, state_layout
from uno.config.fields import num

_PS_PER_US = 1_000_000


@dataclass
class DcqcnParams:
    """DCQCN reaction-point settings (see the module docstring for each default's source)."""

    #: gain of alpha's update at a CNP and of its decay
    g: float = num(1.0 / 256.0, "(0, 1]")
    #: alpha at the flow's start
    alpha_init: float = num(1.0, "[0, 1]")
    #: K: alpha decays by (1 - g) each K without a CNP
    alpha_timer_us: float = num(55.0, "> 0")
    #: T: period of the rate-increase timer
    rate_increase_timer_us: float = num(60.0, "> 0")
    #: B: sent wire bytes per byte-counter increase event
    byte_counter_bytes: int = num(300_000, ">= 1")
    #: F: fast-recovery stages
    fast_recovery_stages: int = num(5, "[0, 1000000]")
    #: R_AI: the target rate's additive increase
    rate_ai_mbps: float = num(40.0, ">= 0")
    #: R_HAI: the target rate's hyper increase
    rate_hai_mbps: float = num(200.0, ">= 0")
    #: floor of the sending rate
    min_rate_mbps: float = num(100.0, "> 0")
    #: fraction of R_C that R_C and R_T are set to at the flow's first CNP, before its cut
    rate_on_first_cnp: float = num(1.0, "(0, 1]")
    #: true: R_T = R_C at every CNP; false: only if an increase event happened since the last
    clamp_target_rate: bool = True
    #: the notification point's minimum gap between CNPs of one flow (read by the transport;
    #: 0: every marked packet's ACK carries a CNP)
    cnp_interval_us: float = num(50.0, ">= 0")
    #: treat a NACK or retransmission timeout as a CNP
    loss_as_cnp: bool = False
    max_cwnd_bdp: float = num(0.0, ">= 0")  # 0: no window


#: R_C and R_T (bit/s); alpha; the stage counts of the rate timer and the byte counter; the wire
#: bytes sent since the byte counter last restarted; the CNPs heard; the next expiries of the
#: alpha timer and of the rate-increase timer (ps; NEVER_PS before the first CNP)
S = state_layout("DcqcnState", (
    "current_rate_bps", "target_rate_bps", "alpha", "timer_stage", "byte_stage", "bytes_counted",
    "cnps", "alpha_next_ps", "rate_next_ps",
))  # fmt: skip
#: g; the line rate and the floor of R_C; R_AI and R_HAI (bit/s); the fraction of R_C at the
#: first CNP; whether R_T = R_C at every CNP and whether a loss counts as a CNP (0 or 1); K and T
#: (ps); B (bytes); F (stages); alpha at the start
P = params_layout("DcqcnConsts", (
    "g", "line_rate_bps", "min_rate_bps", "rate_ai_bps", "rate_hai_bps", "rate_on_first_cnp",
    "clamp_target_rate", "loss_as_cnp", "alpha_period_ps", "rate_period_ps",
    "byte_counter_bytes", "fast_recovery_stages", "alpha_init",
))  # fmt: skip


def pack(params: DcqcnParams, ctx) -> np.ndarray:
    """The flow's constants: rates in bit/s, the timers' periods in whole ps (at least 1), no
    window unless ``max_cwnd_bdp`` caps it (floor 0; DCQCN paces at R_C, not at a window)."""
    p = np.zeros(P.size)
    cap = params.max_cwnd_bdp * ctx.bdp_bytes if params.max_cwnd_bdp > 0 else math.inf
    p[P.min_cwnd] = 0.0
    p[P.max_cwnd] = cap
    p[P.init_cwnd] = cap
    p[P.mss] = ctx.mss_bytes
    p[P.base_rtt] = ctx.base_rtt_ps
    p[P.pacing_rtt] = ctx.base_rtt_ps
    line_bps = float(ctx.bottleneck_bps)
    p[P.g] = params.g
    p[P.line_rate_bps] = line_bps
    p[P.min_rate_bps] = min(params.min_rate_mbps * 1e6, line_bps)
    p[P.rate_ai_bps] = params.rate_ai_mbps * 1e6
    p[P.rate_hai_bps] = params.rate_hai_mbps * 1e6
    p[P.rate_on_first_cnp] = params.rate_on_first_cnp
    p[P.clamp_target_rate] = 1.0 if params.clamp_target_rate else 0.0
    p[P.loss_as_cnp] = 1.0 if params.loss_as_cnp else 0.0
    p[P.alpha_period_ps] = max(1, round(params.alpha_timer_us * _PS_PER_US))
    p[P.rate_period_ps] = max(1, round(params.rate_increase_timer_us * _PS_PER_US))
    p[P.byte_counter_bytes] = params.byte_counter_bytes
    p[P.fast_recovery_stages] = params.fast_recovery_stages
    p[P.alpha_init] = params.alpha_init
    return p


def cnp_interval_ps(params: DcqcnParams) -> int:
    """The notification point's least gap between CNPs of one flow (ps; 0: none)."""
    return round(params.cnp_interval_us * _PS_PER_US)


@njit(cache=True)
def init(s, p):
    """Both rates at the line rate, alpha at its start, the timers not started."""
    s[:] = 0.0
    s[S.cwnd] = p[P.init_cwnd]
    s[S.current_rate_bps] = p[P.line_rate_bps]
    s[S.target_rate_bps] = p[P.line_rate_bps]
    s[S.alpha] = p[P.alpha_init]
    s[S.alpha_next_ps] = NEVER_PS
    s[S.rate_next_ps] = NEVER_PS


@njit(cache=True)
def _increase(s, p):
    """One rate-increase event, its stage count already advanced: additive or hyper increase of
    R_T once a stage count exceeds F, then R_C halfway to R_T."""
    f = p[P.fast_recovery_stages]
    t = s[S.timer_stage]
    b = s[S.byte_stage]
    if t > f or b > f:
        low = t if t < b else b
        if low > f:
            rt = s[S.target_rate_bps] + (low - f) * p[P.rate_hai_bps]  # hyper increase
        else:
            rt = s[S.target_rate_bps] + p[P.rate_ai_bps]  # additive increase
        line = p[P.line_rate_bps]
        s[S.target_rate_bps] = rt if rt < line else line
    # fast recovery (and the second half of the increases): halve the distance to R_T
    s[S.current_rate_bps] = (s[S.target_rate_bps] + s[S.current_rate_bps]) / 2.0


@njit(cache=True)
def _cnp(s, p, now_ps):
    """A CNP: cut R_C by alpha / 2 (alpha from before the CNP), then update alpha."""
    cut_rate(s, p, now_ps, s[S.alpha] / 2.0)
    g = p[P.g]
    s[S.alpha] = (1.0 - g) * s[S.alpha] + g


@njit(cache=True)
def cut_rate(s, p, now_ps, fraction):
    """A congestion notice cuts R_C by ``fraction`` (R_T = R_C first, as the clamp rule says;
    never below the floor) and restarts the stages, the byte counter and both timers: DCQCN's
    CNP with ``fraction`` = alpha / 2, QCN's notice with G_D |F_b| (uno.cc.annulus)."""
    rc = s[S.current_rate_bps]
    first = p[P.rate_on_first_cnp]
    if s[S.cnps] == 0.0 and first != 1.0:
        rc = first * rc
        if not rc > p[P.min_rate_bps]:
            rc = p[P.min_rate_bps]
        s[S.target_rate_bps] = rc
    s[S.cnps] += 1.0
    if p[P.clamp_target_rate] != 0.0 or s[S.timer_stage] != 0.0 or s[S.byte_stage] != 0.0:
        s[S.target_rate_bps] = rc
    cut = rc * (1.0 - fraction)
    s[S.current_rate_bps] = cut if cut > p[P.min_rate_bps] else p[P.min_rate_bps]
    s[S.timer_stage] = 0.0
    s[S.byte_stage] = 0.0
    s[S.bytes_counted] = 0.0
    s[S.alpha_next_ps] = now_ps + p[P.alpha_period_ps]
    s[S.rate_next_ps] = now_ps + p[P.rate_period_ps]


@njit(cache=True)
def on_timer(s, p, now_ps):
    """Apply every timer expiry at or before ``now_ps`` (idempotent): the alpha expiries in
    closed form, the rate expiries one increase event each (at the line rate, all at once)."""
    nxt = s[S.alpha_next_ps]
    if nxt >= NEVER_PS:
        return  # (no CNP yet: the timers have not started)
    if nxt <= now_ps:
        period = p[P.alpha_period_ps]
        n = (now_ps - nxt) // period + 1.0
        s[S.alpha] *= (1.0 - p[P.g]) ** n
        s[S.alpha_next_ps] = nxt + n * period
    period = p[P.rate_period_ps]
    line = p[P.line_rate_bps]
    while s[S.rate_next_ps] <= now_ps:
        if s[S.current_rate_bps] >= line and s[S.target_rate_bps] >= line:
            # at line rate every increase event leaves both rates there: count them at once
            n = (now_ps - s[S.rate_next_ps]) // period + 1.0
            s[S.timer_stage] += n
            s[S.rate_next_ps] += n * period
            break
        s[S.timer_stage] += 1.0
        _increase(s, p)
        s[S.rate_next_ps] += period


@njit(cache=True)
def next_timer(s, p):
    """The next rate-timer expiry that can change the rate (ps): NEVER_PS before the first CNP
    and while R_C and R_T are at the line rate (only a CNP changes them then)."""
    line = p[P.line_rate_bps]
    if s[S.current_rate_bps] >= line and s[S.target_rate_bps] >= line:
        return NEVER_PS
    return s[S.rate_next_ps]


@njit(cache=True)
def on_send(s, p, now_ps, wire_bytes):
    """A data packet of ``wire_bytes`` leaves at ``now_ps`` (before the transport computes the
    next send time from R_C): the byte counter, once the first CNP started it; bytes beyond a
    completed B carry over."""
    on_timer(s, p, now_ps)
    if s[S.rate_next_ps] >= NEVER_PS:
        return  # no CNP yet: nothing to recover, the counter starts at the first CNP
    b = p[P.byte_counter_bytes]
    counted = s[S.bytes_counted] + wire_bytes
    while counted >= b:
        counted -= b
        s[S.byte_stage] += 1.0
        _increase(s, p)
    s[S.bytes_counted] = counted


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """The timers up to the batch's time, then a cut per whole CNP in it."""
    now = fb.now_ps
    on_timer(s, p, now)
    for _ in range(int(fb.mark_events)):
        _cnp(s, p, now)


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A NACK or a retransmission timeout: the timers advance; with ``loss_as_cnp`` it counts
    as a CNP."""
    on_timer(s, p, now_ps)
    if p[P.loss_as_cnp] != 0.0:
        _cnp(s, p, now_ps)


@njit(cache=True)
def pacing_rate(s, p):
    """R_C (bit/s)."""
    return s[S.current_rate_bps]


LAW = Law(
    name="dcqcn",
    params=DcqcnParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    pacing_rate=pacing_rate,
    on_send=on_send,
    next_timer=next_timer,
    on_timer=on_timer,
    signals=("cnp", "timers"),
    cnp_interval_ps=cnp_interval_ps,
)

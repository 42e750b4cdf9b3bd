"""DCQCN, the sender's reaction point (RP) (Zhu et al., "Congestion Control for Large-Scale RDMA
Deployments", SIGCOMM 2015, §3, the RP algorithm of Fig. 7; cited as [P]).

DCQCN is rate based: the sender transmits at the current rate R_C (``pacing_rate_bps``) and has no
window (``cwnd_bytes`` is infinite unless ``max_cwnd_bdp`` caps it). R_T (``target_rate_bps``) is
the target rate the increase phases move R_C back to. Both start at the line rate.

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
The controller has no engine. Every hook (``on_send``, ``on_ack``, ``on_nack``, ``on_timeout``)
first applies, in time order, every alpha-timer and rate-timer expiry up to and including its
``now_ps`` (an expiry at exactly ``now_ps`` fires before the event of the call), then the call's
own event (a CNP restarts the timers at its time; a send may complete the byte counter). This is
exact: between two calls nothing restarts a timer or advances the byte counter (those happen only
in calls), so the expiries in between and the state after each are fully determined and are the
ones an event-driven implementation would have produced. The two timers do not interact (alpha
is read only by a CNP's cut; the increase events do not read alpha), so the alpha expiries are
applied in closed form, alpha (1 - g)^n. As long as the transport reads ``pacing_rate_bps`` only
when it sends, and calls ``on_send`` before it reads it for the next send time, it reads exactly
the rate an eager implementation would hold at that instant. What the lazy form does not do is
change a pacing gap already computed by itself: the transport asks for
:meth:`Dcqcn.next_rate_change_ps` after each send and, if a rate timer is due before the next
send time, wakes then and shortens the gap to the last packet's size at the new rate (as HPCC's
simulator rescales the pending gap); this matters only when a gap exceeds T, i.e. at rates below
about wire size / T (0.6 Gb/s for 4 KB packets and T = 55 µs).
:meth:`Dcqcn.next_timer_ps` gives the next expiry of either timer.

Loss
----
DCQCN runs on a lossless (PFC) fabric; loss there means corruption or a failure, not congestion.
Both reference implementations only retransmit on a NACK or timeout (HPCC rdma-hw.cc
``ReceiveAck`` -> ``RecoverQueue``; the DCQCN authors' ns-3 ``Retransmit``) and leave the rate
alone, and so do we by default: ``on_nack`` and ``on_timeout`` only advance the timers. With
``loss_as_cnp`` a NACK or timeout is treated as one CNP (one cut), the cautious choice for runs
where the fabric may drop packets.

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

from dataclasses import dataclass

from uno.cc.base import CongestionControl, FlowContext
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


class Dcqcn(CongestionControl):
    name = "dcqcn"
    #: the transport calls :meth:`on_send` for every data packet it sends
    wants_send_events = True

    def __init__(self, ctx: FlowContext, params: DcqcnParams):
        super().__init__(ctx)
        p = params
        self.p = p
        self.line_rate_bps = float(ctx.bottleneck_bps)
        self.min_rate_bps = min(p.min_rate_mbps * 1e6, self.line_rate_bps)
        self.rate_ai_bps = p.rate_ai_mbps * 1e6
        self.rate_hai_bps = p.rate_hai_mbps * 1e6
        self.cnp_interval_ps = round(p.cnp_interval_us * _PS_PER_US)  # read by the receiver
        self.alpha_period_ps = max(1, round(p.alpha_timer_us * _PS_PER_US))
        self.rate_period_ps = max(1, round(p.rate_increase_timer_us * _PS_PER_US))
        self.cwnd_bytes = p.max_cwnd_bdp * ctx.bdp_bytes if p.max_cwnd_bdp > 0 else float("inf")
        self.pacing_rate_bps = self.line_rate_bps  # R_C
        self.target_rate_bps = self.line_rate_bps  # R_T
        self.alpha = p.alpha_init
        self.timer_stage = 0
        self.byte_stage = 0
        self.bytes_counted = 0  # wire bytes sent since the byte counter last restarted
        self.cnps = 0
        # next expiries; None until the first CNP starts the timers
        self._alpha_next_ps: int | None = None
        self._rate_next_ps: int | None = None

    # ---- transport hooks -------------------------------------------------------------
    def on_send(self, now_ps: int, wire_bytes: int) -> None:
        """A data packet of ``wire_bytes`` is sent at ``now_ps`` (before the next send time is
        computed from ``pacing_rate_bps``)."""
        self.advance(now_ps)
        if self._rate_next_ps is None:
            return  # no CNP yet: nothing to recover, the counter starts at the first CNP
        b = self.p.byte_counter_bytes
        counted = self.bytes_counted + wire_bytes
        while counted >= b:
            counted -= b
            self.byte_stage += 1
            self._increase()
        self.bytes_counted = counted

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        """``ecn`` = this ACK carries a CNP."""
        self.advance(now_ps)
        if ecn:
            self._cnp(now_ps)

    def on_nack(self, now_ps: int) -> None:
        self.advance(now_ps)
        if self.p.loss_as_cnp:
            self._cnp(now_ps)

    def on_timeout(self, now_ps: int) -> None:
        self.advance(now_ps)
        if self.p.loss_as_cnp:
            self._cnp(now_ps)

    # ---- timers ----------------------------------------------------------------------
    def advance(self, now_ps: int) -> None:
        """Apply every timer expiry at or before ``now_ps`` (idempotent)."""
        nxt = self._alpha_next_ps
        if nxt is None:
            return
        if nxt <= now_ps:
            n = (now_ps - nxt) // self.alpha_period_ps + 1
            self.alpha *= (1.0 - self.p.g) ** n
            self._alpha_next_ps = nxt + n * self.alpha_period_ps
        period = self.rate_period_ps
        line = self.line_rate_bps
        while self._rate_next_ps <= now_ps:
            if self.pacing_rate_bps >= line and self.target_rate_bps >= line:
                # at line rate every increase event leaves both rates there: count them at once
                n = (now_ps - self._rate_next_ps) // period + 1
                self.timer_stage += n
                self._rate_next_ps += n * period
                break
            self.timer_stage += 1
            self._increase()
            self._rate_next_ps += period

    def next_timer_ps(self) -> int | None:
        """Time of the next pending expiry of either timer (None before the first CNP)."""
        if self._alpha_next_ps is None:
            return None
        return min(self._alpha_next_ps, self._rate_next_ps)

    def next_rate_change_ps(self) -> int | None:
        """The transport wakes at the next rate-increase timer (:meth:`next_rate_timer_ps`)."""
        return self.next_rate_timer_ps()

    def next_rate_timer_ps(self) -> int | None:
        """Time of the next rate-increase timer expiry that can change the rate: None before the
        first CNP and while R_C and R_T are at the line rate (only a CNP changes them then).
        Alpha expiries never change the rate by themselves."""
        if self._rate_next_ps is None:
            return None
        line = self.line_rate_bps
        if self.pacing_rate_bps >= line and self.target_rate_bps >= line:
            return None
        return self._rate_next_ps

    # ---- algorithm -------------------------------------------------------------------
    def _cnp(self, now_ps: int) -> None:
        p = self.p
        rc = self.pacing_rate_bps
        if self.cnps == 0 and p.rate_on_first_cnp != 1.0:
            rc = max(self.min_rate_bps, p.rate_on_first_cnp * rc)
            self.target_rate_bps = rc
        self.cnps += 1
        if p.clamp_target_rate or self.timer_stage or self.byte_stage:
            self.target_rate_bps = rc
        self.pacing_rate_bps = max(self.min_rate_bps, rc * (1.0 - self.alpha / 2.0))
        self.alpha = (1.0 - p.g) * self.alpha + p.g
        self.timer_stage = 0
        self.byte_stage = 0
        self.bytes_counted = 0
        self._alpha_next_ps = now_ps + self.alpha_period_ps
        self._rate_next_ps = now_ps + self.rate_period_ps

    def _increase(self) -> None:
        """One rate-increase event (its stage count already advanced)."""
        f = self.p.fast_recovery_stages
        t, b = self.timer_stage, self.byte_stage
        if t > f or b > f:
            low = t if t < b else b
            if low > f:
                rt = self.target_rate_bps + (low - f) * self.rate_hai_bps  # hyper increase
            else:
                rt = self.target_rate_bps + self.rate_ai_bps  # additive increase
            self.target_rate_bps = rt if rt < self.line_rate_bps else self.line_rate_bps
        # fast recovery (and the second half of the increases): halve the distance to R_T
        self.pacing_rate_bps = (self.target_rate_bps + self.pacing_rate_bps) / 2.0

"""HPCC (Li et al., "HPCC: High Precision Congestion Control", SIGCOMM 2019), Algorithm 1.

The sender reads the in-band telemetry (INT) its ACKs echo: for every hop of the data packet's
path, the egress timestamp ``ts``, the queue length ``qlen``, the port's cumulative transmitted
bytes ``txBytes`` and its line rate ``B``. Comparing each hop's record with the one stored from
the previous ACK gives that link's normalised inflight bytes:

    txRate = (txBytes - txBytes_prev) / (ts - ts_prev)                       (Alg. 1 line 4)
    u'_j   = min(qlen, qlen_prev) / (B_j T) + txRate / B_j                   (line 5)

and the most loaded hop sets the flow's sample u = max_j u'_j, with tau = that hop's interval
(lines 6-7). The estimate U is an EWMA over time: tau = min(tau, T),
U <- (1 - tau/T) U + (tau/T) u (lines 8-9). ``T`` is the base RTT (``ctx.base_rtt_ps``).

The window (ComputeWind, lines 11-20) is computed from a reference window W^c:

* U >= eta or incStage >= maxStage: W = W^c / (U / eta) + W_AI (line 13; a multiplicative
  decrease when U > eta, a multiplicative increase once maxStage additive rounds have passed);
  at a round end incStage = 0 and W^c = W (line 15);
* otherwise W = W^c + W_AI (line 17); at a round end incStage += 1 and W^c = W (line 19).

Every ACK sets the window this way (the per-ACK "fast reaction", line 26); only an ACK that ends
a round updates W^c and incStage (NewAck, lines 21-24: ``ack.seq > lastUpdateSeq``, then
``lastUpdateSeq = snd_nxt``). Rounds are delimited by send times here
(:class:`uno.cc.base.SendTimeWindow`): ``lastUpdateSeq = snd_nxt`` at time t makes every packet
sent at or after t, and no other, satisfy ``seq > lastUpdateSeq``, so "the ACK's packet was sent
at or after the round's start" is the same test, robust to reordering. The sender paces at
R = W / T (line 27); the window is clamped to [``min_cwnd_mss`` MSS, ``max_cwnd_bdp`` BDP]
before it becomes W^c (the authors' code clamps the rate to [MinRate, NIC line rate] the same
way before storing it as the reference rate). Line numbers are those of Algorithm 1 as the
HPCC++ Internet-Draft reproduces it (draft-miao-tsv-hpcc-01); the min(qlen, qlen_prev) of line 5
is there and in the authors' ns-3 code (``rdma-hw.cc``, ``UpdateRateHp``).

Where Algorithm 1 is silent:

* The first ACK (no stored records) only stores its records and starts the first round, as
  ``UpdateRateHp`` does for ``m_lastUpdateSeq == 0``.
* An ACK without INT (``hops`` empty, or :meth:`Hpcc.on_ack`, which the transport calls when no
  switch on the path writes INT) changes neither the window nor the stored records; if it ends a
  round, the next round starts (W^c and incStage unchanged), as ``UpdateRateHp`` advances
  ``m_lastUpdateSeq`` whether or not the ACK carried hops.
* A change in the number of hops (another path) makes the stored records incomparable: the new
  records replace them and nothing else changes (round bookkeeping as above). The authors' ns-3
  code has no such case (its per-flow paths are fixed; it would compare against stale records);
  htsim's HPCC model (Broadcom/csg-htsim ``sim/hpcc.cpp``, ``measureInFlight``) resets its stored
  records when the hop count changes. Records that cannot come from the same port (a hop whose
  timestamp did not advance or whose byte counter went back: a same-length path through other
  ports, or a reordered ACK) are treated the same way; the authors' code instead reads such a
  delta as a counter wrap-around (``IntHop::GetTimeDelta``), which uno's unbounded counters never
  need.
* If every hop's u' is 0, tau is the first hop's interval (so U decays toward 0); ``UpdateRateHp``
  then leaves U unchanged (dt = 0).
* U starts at ``init_utilization`` = 1: ``RdmaQueuePair`` sets ``hp.u = 1``
  (``rdma-queue-pair.cc``); htsim's model starts at eta.
* With U = 0 and the multiplicative branch, W^c / (U/eta) is unbounded: the window goes to its
  cap, as the authors' code clamps the resulting rate to the line rate (which is why
  ``max_cwnd_bdp`` must be > 0 here).
* Losses. HPCC assumes a lossless (PFC) fabric; the authors' ns-3 NIC retransmits go-back-N on a
  NACK (``RdmaHw::RecoverQueue``: snd_nxt = snd_una) and leaves the rate to the INT feedback the
  NACK carries (it runs the same ``HandleAckHp``); it has no retransmission timer. Here
  :meth:`Hpcc.on_nack` changes nothing (uno's transport does the retransmission; a NACK carries no
  INT to this controller) and :meth:`Hpcc.on_timeout` changes nothing by default
  (``timeout_cwnd_mss`` = 0). ``timeout_cwnd_mss`` > 0 is a conservative option not in HPCC: a
  timeout then sets W and W^c to that many MSS (within the clamp) and incStage to 0; the next
  rounds' INT feedback regrows it (multiplicatively once maxStage rounds pass, or at once with
  maxStage = 0). htsim's HPCC model sets cwnd to one MSS on a NACK.

Defaults and sources:

* ``eta`` = 0.95: the target utilisation of Algorithm 1 (line 12). The paper evaluates
  eta = 95% (so says the authors' results page, hpcc-group.github.io/results.html, which reruns at
  99%); the authors' code: ``rdma-hw.cc`` attribute ``TargetUtil`` (default 0.95), ``run.py``
  ``--utgt`` (default 95, "eta of HPCC"), ``mix/config.txt`` ``U_TARGET 0.95``.
* ``max_stage`` = 5: the paper's maxStage, and ``rdma-hw.cc`` attribute ``MiThresh`` (default 5).
  Paper and code runs differ: the authors' simulations use maxStage = 0 (``run.py`` ``--mi``
  default 0 -> ``MI_THRESH 0``; ``mix/config.txt`` ``MI_THRESH 0``), and the authors state that
  the paper's maxStage = 5 for the simulations is a typo for 0 (the results page above, quoted
  in alibaba-edu/High-Precision-Congestion-Control issue #24, where the first author adds that
  in theory 0 is best and the testbed's 5 worked around a hardware bug). Chosen: 5, the published
  value; ``max_stage: 0`` reproduces the authors' simulations.
* ``w_ai_bytes`` = null: W_AI from the paper's rule W_AI = W_init (1 - eta) / N, N the expected
  number of concurrent flows on a link (``max_flows``), so that N flows' additive increases
  together fill no more than the (1 - eta) headroom (the paper's setting of W_AI in §3, next to
  Algorithm 1; the section is not re-checked against the PDF here. The same rule is coded in an
  OMNeT++ HPCC model, ``HostEtherQueue``: WAI = Winit (1 - n) / N). W_init = B x T is taken as
  ``ctx.bdp_bytes`` (not scaled by ``init_cwnd_bdp``). A number overrides it, in bytes.
* ``max_flows`` = 125: the authors' code is rate-based and sets the increase as a rate,
  ``run.py`` RATE_AI = 10 Mb/s per 25 Gb/s of NIC rate = B / 2500, i.e. W_AI = W_init / 2500 =
  W_init (1 - 0.95) / 125. N = 125 reproduces that at eta = 0.95 (the paper's N is a deployment
  choice, not a constant).
* ``init_cwnd_bdp`` = 1, ``max_cwnd_bdp`` = 1: flows start at W_init = B x T (the authors' NIC
  starts every flow at line rate, ``RdmaHw::AddQueuePair``) and never exceed it (the rate is
  clamped to the NIC line rate; the window is ``m_win`` x rate / line rate). B x T is
  ``ctx.bdp_bytes``: the flow's path BDP, i.e. its bottleneck rate x base RTT; it is the NIC
  rate x T when the host link is the narrowest link, as in the paper's topologies. The authors
  run with ``GLOBAL_T 1`` (every flow uses the largest base RTT as T and the largest BDP as
  W_init); ``transport.path_facts: class_reference`` gives flows such common path facts here.
* ``min_cwnd_mss`` = 1: uno's usual floor (the authors' ``run.py`` floors the rate at
  ``MIN_RATE 1000Mb/s``).
* ``pacing`` = true: HPCC sends at R = W / T (Alg. 1 line 27), also limited by the window.
* ``init_utilization`` = 1 and ``timeout_cwnd_mss`` = 0: see above.

Config (``HpccParams``): ``eta``, ``max_stage``, ``w_ai_bytes``, ``max_flows``,
``init_cwnd_bdp``, ``min_cwnd_mss``, ``max_cwnd_bdp``, ``pacing``, ``init_utilization``,
``timeout_cwnd_mss``.

Interface: ``wants_int = True`` asks the transport to call :meth:`Hpcc.on_ack_int` instead of
``on_ack`` for every new ACK, with ``hops``: one ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)``
record per hop in path order (egress time of the data packet at that hop's port, the port's
queue in bytes then, its cumulative transmitted bytes, its line rate in bit/s). The controller
keeps a reference to the last non-empty ``hops`` it was given; the caller must not mutate it.

Units: time in integer picoseconds, windows in wire bytes, rates in bit/s.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from uno.cc.base import FlowContext, SendTimeWindow, WindowedControl
from uno.config.fields import num

#: one hop's INT record: (egress ts in ps, queue in bytes, cumulative tx bytes, line rate bit/s)
IntHop = tuple[int, float, int, float]


@dataclass
class HpccParams:
    """HPCC settings (defaults and their sources: the module docstring)."""

    #: target utilisation eta (Alg. 1 line 12; paper and authors' code: 0.95)
    eta: float = num(0.95, "(0, 1]")
    #: maxStage, additive-increase rounds before a multiplicative step (paper: 5; authors'
    #: simulations: 0)
    max_stage: int = num(5, ">= 0")
    #: W_AI in bytes; null: W_init x (1 - eta) / max_flows (the paper's rule)
    w_ai_bytes: float | None = num(None, "> 0")
    #: N of that rule, the expected number of concurrent flows on a link (125: the authors'
    #: run.py increase, line rate / 2500, at eta = 0.95)
    max_flows: int = num(125, ">= 1")
    #: initial window, in flow BDPs (W_init = B x T)
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: window cap, in flow BDPs (the NIC line rate x T; must be finite for the U -> 0 limit)
    max_cwnd_bdp: float = num(1.0, "> 0")
    #: pace at W / T (Alg. 1 line 27)
    pacing: bool = True
    #: U before the first measurement (authors' code: 1)
    init_utilization: float = num(1.0, ">= 0")
    #: window after a retransmission timeout, in MSS; 0 leaves it unchanged (HPCC has none)
    timeout_cwnd_mss: float = num(0.0, ">= 0")


class Hpcc(WindowedControl):
    """HPCC for one flow. See the module docstring for the rules and their sources."""

    name = "hpcc"
    #: the transport calls :meth:`on_ack_int` (with the ACK's INT records) instead of on_ack
    wants_int = True

    def __init__(self, ctx: FlowContext, params: HpccParams):
        p = params
        super().__init__(ctx, p.init_cwnd_bdp, p.min_cwnd_mss, p.max_cwnd_bdp, p.pacing)
        self.p = p
        self.eta = p.eta
        self.max_stage = p.max_stage
        self.t_ps = ctx.base_rtt_ps
        if p.w_ai_bytes is not None:
            self.w_ai_bytes = float(p.w_ai_bytes)
        else:
            self.w_ai_bytes = ctx.bdp_bytes * (1.0 - p.eta) / p.max_flows
        #: U, the EWMA of the path's normalised inflight bytes
        self.utilization = float(p.init_utilization)
        #: W^c, the reference window of the current round
        self.ref_cwnd_bytes = self.cwnd_bytes
        self.inc_stage = 0
        #: the INT records of the last ACK that carried any (None before the first)
        self.prev_hops: Sequence[IntHop] | None = None
        self.round = SendTimeWindow()

    # ---- Algorithm 1 ------------------------------------------------------------------------

    def _measure_inflight(self, hops: Sequence[IntHop]) -> bool:
        """MeasureInflight (Alg. 1 lines 1-10): update U from ``hops`` against the stored
        records and store ``hops``. False (U unchanged) when there is nothing comparable: no
        stored records, another number of hops, or a hop whose records are not from one port."""
        prev = self.prev_hops
        self.prev_hops = hops
        if prev is None or len(prev) != len(hops):
            return False
        t = self.t_ps
        u = -1.0
        tau = 0
        for (ts, qlen, tx, rate), (ts0, qlen0, tx0, _) in zip(hops, prev, strict=True):
            dt = ts - ts0
            dtx = tx - tx0
            if dt <= 0 or dtx < 0:
                return False
            # u' = min(qlen, qlen_prev) / (B T) + txRate / B, with bytes -> bits and ps -> s
            u_hop = 8e12 * ((qlen if qlen < qlen0 else qlen0) / t + dtx / dt) / rate
            if u_hop > u:
                u = u_hop
                tau = dt
        if tau > t:
            tau = t
        w = tau / t
        self.utilization = (1.0 - w) * self.utilization + w * u
        return True

    def _compute_wind(self, update_ref: bool) -> None:
        """ComputeWind (Alg. 1 lines 11-20) from the current U; sets the (clamped) window and,
        with ``update_ref``, W^c and incStage."""
        u = self.utilization
        eta = self.eta
        multiplicative = u >= eta or self.inc_stage >= self.max_stage
        if multiplicative:
            if u > 0.0:
                w = self.ref_cwnd_bytes / (u / eta) + self.w_ai_bytes
            else:
                w = self.max_cwnd  # the limit U -> 0, clamped to the cap
        else:
            w = self.ref_cwnd_bytes + self.w_ai_bytes
        self.set_cwnd(w)
        if update_ref:
            self.ref_cwnd_bytes = self.cwnd_bytes
            self.inc_stage = 0 if multiplicative else self.inc_stage + 1

    def on_ack_int(
        self,
        now_ps: int,
        acked_bytes: int,
        ecn: bool,
        rtt_ps: int,
        sent_ps: int,
        hops: Sequence[IntHop],
    ) -> None:
        """NewAck (Alg. 1 lines 21-27) for an ACK whose data packet was sent at ``sent_ps``
        and collected the INT records ``hops`` (path order; may be empty)."""
        rnd = self.round
        if not rnd.active:  # the first ACK: store the records, start the first round
            if hops:
                self.prev_hops = hops
            rnd.restart(now_ps)
            return
        round_end = rnd.ended_by(sent_ps)
        if hops and self._measure_inflight(hops):
            self._compute_wind(round_end)
        if round_end:
            rnd.restart(now_ps)

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        """An ACK without INT (no INT-writing switch on the path): the window stays; only the
        round bookkeeping runs."""
        self.on_ack_int(now_ps, acked_bytes, ecn, rtt_ps, sent_ps, ())

    def on_nack(self, now_ps: int) -> None:
        """No change: HPCC runs on a lossless fabric and the authors' NIC only goes back N on a
        NACK (``RdmaHw::RecoverQueue``), leaving the rate to the INT feedback; uno's transport
        does the retransmission."""

    def on_timeout(self, now_ps: int) -> None:
        """No change by default (HPCC has no timeout reaction); with ``timeout_cwnd_mss`` > 0,
        W and W^c drop to that many MSS and incStage restarts."""
        if self.p.timeout_cwnd_mss > 0:
            self.set_cwnd(self.p.timeout_cwnd_mss * self.ctx.mss_bytes)
            self.ref_cwnd_bytes = self.cwnd_bytes
            self.inc_stage = 0

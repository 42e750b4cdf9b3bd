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
(a round starts at an ACK's arrival): ``lastUpdateSeq = snd_nxt`` at time t makes every packet
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
* An ACK without INT records (no switch on the path writes INT) changes neither the window nor
  the stored records; if it ends a round, the next round starts (W^c and incStage unchanged), as
  ``UpdateRateHp`` advances ``m_lastUpdateSeq`` whether or not the ACK carried hops.
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
  NACK carries (it runs the same ``HandleAckHp``); it has no retransmission timer. Here a loss
  found before a timeout changes nothing (uno's transport does the retransmission; a NACK carries
  no INT to this law) and a retransmission timeout changes nothing by default
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

Feedback (:mod:`uno.cc.law`): the law reads INT records (``signals`` "int"; the fluid engine
computes them from its links' state on single-path routes, :mod:`uno.fluid.int_records`): a
batch's records ``rec`` are one ``(ts_ps, qlen_bytes, tx_bytes,
rate_bps)`` row per hop of the acknowledged packet's path, in path order (egress time of the
data packet at that hop's port, the port's queue in bytes then, its cumulative transmitted
bytes, its line rate in bit/s). The stored records live in the state's tail, with room for the
most records a packet of the flow holds (``FlowContext.int_max_records``:
``switch.int_telemetry.max_records``).

A feedback batch is read as its newest ACK: its records (those of the latest packet
acknowledged) are compared with the stored ones, and it ends the round when its latest-sent
packet (``sent_ps``) was sent at or after the round's start. For one ACK this is exactly the
per-ACK step of Algorithm 1; for many, one fast reaction from the newest telemetry, which loses
nothing of the interval: the ports' byte counters are cumulative, so the newest records against
the stored ones measure the whole span since them (tau is that span, capped at T).

Units: time in picoseconds, windows in wire bytes, rates in bit/s (all float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.int_estimate import path_utilization, store_records
from uno.cc.law import (
    INT_FIELDS,
    LOSS_TIMEOUT,
    Law,
    init_window,
    params_layout,
    set_cwnd,
    state_layout,
    window_params,
)
from uno.config.fields import num


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


#: U (the EWMA of the path's normalised inflight bytes); W^c (the reference window of the
#: current round, bytes); incStage; the round (whether one is open, its start in ps); how many
#: INT records are stored (-1 before the first), the records themselves in the state's tail
#: (``state_tail``: INT_FIELDS columns per record, in path order)
S = state_layout("HpccState", (
    "utilization", "ref_cwnd_bytes", "inc_stage", "round_active", "round_start_ps", "prev_n",
))  # fmt: skip
#: eta; W_AI (bytes); maxStage; U at the start; the window after a timeout (bytes, 0: none);
#: the most INT records a packet of the flow holds (the tail's room)
P = params_layout("HpccConsts", (
    "eta", "w_ai_bytes", "max_stage", "init_utilization", "timeout_cwnd_bytes", "max_records",
))  # fmt: skip


def pack(params: HpccParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.eta] = params.eta
    if params.w_ai_bytes is not None:
        p[P.w_ai_bytes] = float(params.w_ai_bytes)
    else:  # W_AI = W_init (1 - eta) / N, W_init = B x T (not scaled by init_cwnd_bdp)
        p[P.w_ai_bytes] = ctx.bdp_bytes * (1.0 - params.eta) / params.max_flows
    p[P.max_stage] = params.max_stage
    p[P.init_utilization] = params.init_utilization
    p[P.timeout_cwnd_bytes] = params.timeout_cwnd_mss * ctx.mss_bytes
    p[P.max_records] = ctx.int_max_records
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


@njit(cache=True)
def _store_records(s, p, rec, n):
    """Keep the ``n`` records ``rec``: the next batch's are compared with them."""
    store_records(s, S.prev_n, S.size, p[P.max_records], rec, n)


@njit(cache=True)
def _measure_inflight(s, p, rec, n):
    """MeasureInflight (Alg. 1 lines 1-10): U from the ``n`` records ``rec`` against the stored
    ones, which they then replace (:func:`uno.cc.int_estimate.path_utilization`, with
    min(qlen, qlen_prev)). False (U unchanged) when there is nothing comparable."""
    t = p[P.base_rtt]
    ok, u, tau, _bw = path_utilization(s, S.prev_n, S.size, p[P.max_records], rec, n, t, True)
    if not ok:
        return False
    if tau > t:
        tau = t
    w = tau / t
    s[S.utilization] = (1.0 - w) * s[S.utilization] + w * u
    return True


@njit(cache=True)
def _compute_wind(s, p, update_ref):
    """ComputeWind (Alg. 1 lines 11-20) from the current U: the (clamped) window and, with
    ``update_ref`` (a round's end), W^c and incStage."""
    u = s[S.utilization]
    eta = p[P.eta]
    multiplicative = u >= eta or s[S.inc_stage] >= p[P.max_stage]
    if multiplicative:
        if u > 0.0:
            w = s[S.ref_cwnd_bytes] / (u / eta) + p[P.w_ai_bytes]
        else:
            w = p[P.max_cwnd]  # the limit U -> 0, clamped to the cap
    else:
        w = s[S.ref_cwnd_bytes] + p[P.w_ai_bytes]
    set_cwnd(s, p, w)
    if update_ref:
        s[S.ref_cwnd_bytes] = s[S.cwnd]
        s[S.inc_stage] = 0.0 if multiplicative else s[S.inc_stage] + 1.0


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """NewAck (Alg. 1 lines 21-27) for a batch whose newest records are ``rec`` (``fb.n_int``
    of them; none: the round bookkeeping only)."""
    n = int(fb.n_int)
    if s[S.round_active] == 0.0:  # the first ACK: store the records, start the first round
        if n > 0:
            _store_records(s, p, rec, n)
        s[S.round_start_ps] = fb.now_ps
        s[S.round_active] = 1.0
        return
    round_end = fb.sent_ps >= s[S.round_start_ps]
    if n > 0 and _measure_inflight(s, p, rec, n):
        _compute_wind(s, p, round_end)
    if round_end:
        s[S.round_start_ps] = fb.now_ps


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A loss found before a timeout changes nothing: HPCC runs on a lossless fabric and the
    authors' NIC only goes back N on a NACK (``RdmaHw::RecoverQueue``), leaving the rate to the
    INT feedback. A timeout changes nothing by default; with ``timeout_cwnd_mss`` > 0, W and
    W^c drop to that many MSS and incStage restarts."""
    if loss == LOSS_TIMEOUT and p[P.timeout_cwnd_bytes] > 0.0:
        set_cwnd(s, p, p[P.timeout_cwnd_bytes])
        s[S.ref_cwnd_bytes] = s[S.cwnd]
        s[S.inc_stage] = 0.0


LAW = Law(
    name="hpcc",
    params=HpccParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    state_tail=state_tail,
    signals=("int",),
)

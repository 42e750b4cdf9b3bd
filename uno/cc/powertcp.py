"""PowerTCP (Addanki, Michel, Schmid, "PowerTCP: Pushing the Performance Limits of Datacenter
Networks", USENIX NSDI 2022), the INT-based law of its Algorithm 1.

PowerTCP reacts to the power of the most loaded link of the path: the product of a "current"
(the rate at which bytes arrive at the port: the queue's gradient plus the rate it sends) and a
"voltage" (the bytes the link holds: its queue plus its bandwidth-delay product), normalised by
the power of a full link with no queue. From the in-band telemetry (INT) its ACKs echo — per hop
the egress timestamp ``ts``, the queue ``qlen``, the port's cumulative transmitted bytes
``txBytes`` and its line rate ``b`` — and the records stored from the previous ACK, Algorithm 1's
NORMPOWER computes for every hop i

    dt        = ts - ts_prev
    q_dot     = (qlen - qlen_prev) / dt                        (the queue gradient)
    mu        = (txBytes - txBytes_prev) / dt                  (the transmit rate)
    lambda    = q_dot + mu                                     (current)
    nu        = qlen + b tau                                   (voltage)
    Gamma'_i  = lambda nu / (b^2 tau)                          (normalised power, e = b^2 tau)

keeps the largest, Gamma_norm, with that hop's interval Delta_t, and smooths it over time:
Gamma_smooth = (Gamma_smooth (tau - Delta_t) + Gamma_norm Delta_t) / tau. ``tau`` is the base
RTT (``ctx.base_rtt_ps``); the hop arithmetic is :func:`uno.cc.int_estimate.most_loaded_hop`
with :data:`~uno.cc.int_estimate.HOP_POWER`. UPDATEWINDOW then sets, on every ACK,

    cwnd = gamma (cwnd_old / Gamma_smooth + beta) + (1 - gamma) cwnd

where cwnd_old (GETCWND) is the window of one RTT ago, stored once per RTT (UPDATEOLD), beta
the additive increase and gamma the EWMA weight; NEWACK paces at rate = cwnd / tau. At
equilibrium (no queue gradient, every link at its rate) Gamma = 1 + q / (b tau) and the flows
sharing a bottleneck hold a queue of about the sum of their betas.

Source of the algorithm: Algorithm 1 of the paper (procedures NEWACK, NORMPOWER, UPDATEWINDOW,
with GETCWND and UPDATEOLD), as the authors' group transcribes it in the header comment of the
first versions of its Linux implementation (inet-tub/powertcp-linux, ``tcp_powertcp.c``) and
codes it there (``powertcp.c``: ``ptcp_norm_power``, ``update_window``, ``update_old``). The
paper's prose and its line numbers are not re-checked against the PDF here, so the procedures
are cited by name.
theta-PowerTCP, the paper's delay-based variant without switch support, is not this law.

Rounds (GETCWND / UPDATEOLD). cwnd_old is "the window when the acknowledged packet was sent";
like the authors' Linux code (``update_old``: the stored window is replaced once snd_una passes
the snd_nxt stored with it), it is kept per round here: a round starts at an ACK's arrival, an
ACK whose packet was sent at or after the round's start ends it, and at a round's end cwnd_old
becomes the current window and the next round starts (as :mod:`uno.cc.hpcc` delimits its rounds,
which is the same as ``ack.seq > lastUpdated``, ``lastUpdated = snd_nxt``, and robust to
reordering).

Where Algorithm 1 is silent, and what this law does:

* The first ACK (no stored records) only stores its records and starts the first round; the
  authors' Linux code likewise skips the power for the first ACK.
* An ACK without INT records changes neither Gamma, the window nor the stored records; its round
  bookkeeping still runs (UPDATEOLD runs on every ACK).
* Records that cannot be compared with the stored ones — another number of hops (another path),
  a hop whose timestamp did not advance or whose byte counter went back — give no sample: they
  replace the stored records and the window is left as it is. The Linux code leaves the same case
  open (it reuses the old Gamma_smooth); the authors' ns-3 code (inet-tub/ns3-datacenter,
  ``rdma-hw.cc``, ``UpdateRatePower``) compares with whatever it stored.
* Delta_t is capped at tau (the smoothing weight Delta_t / tau at most 1), as both the Linux and
  the ns-3 code do; the paper's formula would give a negative weight to the old value.
* A hop's current is taken as at least 0 (records whose queue fell by more than the port sent);
  the Linux code clamps it the same way.
* Gamma_smooth starts at ``init_power`` = 1 (a full link without a queue): the ns-3 code starts
  it at 1 (``hp.u``); the Linux code lets the first sample replace it.
* Gamma_smooth = 0 (every hop idle) makes cwnd_old / Gamma unbounded: the window goes to its
  cap, which is why ``max_cwnd_bdp`` must be > 0. The window is clamped to
  [``min_cwnd_mss`` MSS, ``max_cwnd_bdp`` BDP] before it becomes cwnd_old (Linux: [1 packet,
  host BDP]; ns-3: the rate within [MinRate, NIC line rate]).
* Losses. Nothing in Algorithm 1 reacts to a loss: a loss found before a timeout changes nothing
  here, and a retransmission timeout changes nothing by default (``timeout_cwnd_mss`` = 0);
  ``timeout_cwnd_mss`` > 0 (not in PowerTCP) sets cwnd and cwnd_old to that many MSS.

The authors' ns-3 code, which runs PowerTCP as a rate inside HPCC's NIC model, differs from
Algorithm 1 in ways this law does not follow: it divides Gamma by a target utilisation (0.95),
takes the transmit rate alone as the current (no queue gradient), floored at half the line rate,
and uses the reference rate, not the current one, in the (1 - gamma) term.

Defaults and sources:

* ``gamma`` = 0.9: the EWMA weight of UPDATEWINDOW; the Linux code's ``default_gamma`` (921/1024
  ~ 0.9) and the ns-3 code's 0.9 for INT-based PowerTCP (0.7 is its theta-PowerTCP's).
* ``beta_bytes`` = null: beta = HostBw x tau / N, N the expected number of flows sharing the
  host's link (``expected_flows``), as the Linux code sets it (``update_beta``: host_bw x
  base_rtt / expected_flows). HostBw x tau is taken as ``ctx.bdp_bytes`` (the flow's path BDP,
  the NIC rate x tau when the host link is the narrowest). A number overrides it, in bytes.
* ``expected_flows`` = 10: the Linux code's ``default_expected_flows``. (The ns-3 code adds 150
  Mb/s per update to a rate, i.e. beta = HostBw x tau / 167 at its 25 Gb/s hosts.)
* ``init_cwnd_bdp`` = 1, ``max_cwnd_bdp`` = 1: flows start at HostBw x tau and never exceed it
  (Linux: the initial and largest window is the host BDP; ns-3: line rate at start, capped at
  the NIC rate).
* ``min_cwnd_mss`` = 1: one packet, the Linux code's floor.
* ``pacing`` = true: NEWACK sets rate = cwnd / tau.
* ``init_power`` = 1 and ``timeout_cwnd_mss`` = 0: see above.

Config (``PowertcpParams``): ``gamma``, ``beta_bytes``, ``expected_flows``, ``init_cwnd_bdp``,
``min_cwnd_mss``, ``max_cwnd_bdp``, ``pacing``, ``init_power``, ``timeout_cwnd_mss``.

Feedback (:mod:`uno.cc.law`): the law reads INT records (``signals`` "int"; the fluid engine
computes them from its links' state on single-path routes, :mod:`uno.fluid.int_records`): one ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)`` row per hop of the
acknowledged packet's path, in path order. The stored records live in the state's tail, with
room for the most records a packet of the flow holds (``FlowContext.int_max_records``). A
feedback batch is read as its newest ACK: its records against the stored ones measure the whole
span since them (the byte counters are cumulative), and it ends the round when its latest-sent
packet (``sent_ps``) was sent at or after the round's start.

Units: time in picoseconds, windows in wire bytes, rates in bit/s (all float64).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.int_estimate import HOP_POWER, most_loaded_hop, store_records
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
class PowertcpParams:
    """PowerTCP settings (defaults and their sources: the module docstring)."""

    #: gamma, the EWMA weight of the window update (Algorithm 1, UPDATEWINDOW; authors' code:
    #: 0.9)
    gamma: float = num(0.9, "(0, 1]")
    #: beta, the additive increase, in bytes; null: HostBw x base RTT / expected_flows
    beta_bytes: float | None = num(None, "> 0")
    #: N of that rule, the expected number of flows sharing the host's link (authors' Linux
    #: code: 10)
    expected_flows: int = num(10, ">= 1")
    #: initial window, in flow BDPs (HostBw x base RTT)
    init_cwnd_bdp: float = num(1.0, "> 0")
    #: window floor, in MSS
    min_cwnd_mss: float = num(1.0, "> 0")
    #: window cap, in flow BDPs (must be finite: an idle path sends the window to it)
    max_cwnd_bdp: float = num(1.0, "> 0")
    #: pace at cwnd / base RTT (Algorithm 1, NEWACK)
    pacing: bool = True
    #: the smoothed normalised power before the first measurement (authors' ns-3 code: 1)
    init_power: float = num(1.0, ">= 0")
    #: window after a retransmission timeout, in MSS; 0 leaves it unchanged (PowerTCP has none)
    timeout_cwnd_mss: float = num(0.0, ">= 0")


#: Gamma_smooth (the smoothed normalised power of the path); cwnd_old (the window stored once
#: per round, bytes); the round (whether one is open, its start in ps); how many INT records
#: are stored (-1 before the first), the records themselves in the state's tail
#: (``state_tail``: INT_FIELDS columns per record, in path order)
S = state_layout("PowertcpState", (
    "power", "old_cwnd_bytes", "round_active", "round_start_ps", "prev_n",
))  # fmt: skip
#: gamma; beta (bytes); Gamma_smooth at the start; the window after a timeout (bytes, 0: none);
#: the most INT records a packet of the flow holds (the tail's room)
P = params_layout("PowertcpConsts", (
    "gamma", "beta_bytes", "init_power", "timeout_cwnd_bytes", "max_records",
))  # fmt: skip


def pack(params: PowertcpParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    window_params(p, ctx, params.init_cwnd_bdp, params.min_cwnd_mss, params.max_cwnd_bdp,
                  params.pacing)  # fmt: skip
    p[P.gamma] = params.gamma
    if params.beta_bytes is not None:
        p[P.beta_bytes] = float(params.beta_bytes)
    else:  # beta = HostBw x tau / N (not scaled by init_cwnd_bdp)
        p[P.beta_bytes] = ctx.bdp_bytes / params.expected_flows
    p[P.init_power] = params.init_power
    p[P.timeout_cwnd_bytes] = params.timeout_cwnd_mss * ctx.mss_bytes
    p[P.max_records] = ctx.int_max_records
    return p


def state_tail(p: np.ndarray) -> int:
    """Room for the stored INT records: INT_FIELDS columns per record a packet holds."""
    return INT_FIELDS * int(p[P.max_records])


@njit(cache=True)
def init(s, p):
    init_window(s, p)
    s[S.power] = p[P.init_power]
    s[S.old_cwnd_bytes] = s[S.cwnd]
    s[S.prev_n] = -1.0


@njit(cache=True)
def _norm_power(s, p, rec, n):
    """NORMPOWER: Gamma_smooth from the ``n`` records ``rec`` against the stored ones, which
    they then replace. False (Gamma_smooth unchanged) when there is nothing comparable."""
    tau = p[P.base_rtt]
    ok, power, dt, _bw = most_loaded_hop(
        s, S.prev_n, S.size, p[P.max_records], rec, n, tau, HOP_POWER
    )
    if not ok:
        return False
    if dt > tau:
        dt = tau
    w = dt / tau
    s[S.power] = (1.0 - w) * s[S.power] + w * power
    return True


@njit(cache=True)
def _update_window(s, p):
    """UPDATEWINDOW: cwnd = gamma (cwnd_old / Gamma_smooth + beta) + (1 - gamma) cwnd, clamped
    (Gamma_smooth = 0: the limit, the cap)."""
    power = s[S.power]
    if power > 0.0:
        gamma = p[P.gamma]
        target = s[S.old_cwnd_bytes] / power + p[P.beta_bytes]
        set_cwnd(s, p, gamma * target + (1.0 - gamma) * s[S.cwnd])
    else:
        set_cwnd(s, p, p[P.max_cwnd])


@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """NEWACK for a batch whose newest records are ``rec`` (``fb.n_int`` of them; none: the
    round bookkeeping only)."""
    n = int(fb.n_int)
    if s[S.round_active] == 0.0:  # the first ACK: store the records, start the first round
        if n > 0:
            store_records(s, S.prev_n, S.size, p[P.max_records], rec, n)
        s[S.round_start_ps] = fb.now_ps
        s[S.round_active] = 1.0
        return
    if n > 0 and _norm_power(s, p, rec, n):
        _update_window(s, p)
    if fb.sent_ps >= s[S.round_start_ps]:  # UPDATEOLD: a round ends
        s[S.old_cwnd_bytes] = s[S.cwnd]
        s[S.round_start_ps] = fb.now_ps


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A loss found before a timeout changes nothing (Algorithm 1 has no loss reaction). A
    timeout changes nothing by default; with ``timeout_cwnd_mss`` > 0, cwnd and cwnd_old drop
    to that many MSS."""
    if loss == LOSS_TIMEOUT and p[P.timeout_cwnd_bytes] > 0.0:
        set_cwnd(s, p, p[P.timeout_cwnd_bytes])
        s[S.old_cwnd_bytes] = s[S.cwnd]


LAW = Law(
    name="powertcp",
    params=PowertcpParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    state_tail=state_tail,
    signals=("int",),
)

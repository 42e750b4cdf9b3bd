"""BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
Control", ACM Queue 14(5) 2016 / CACM 60(2) 2017; cited below as [Q] with the article's section
titles) as specified by draft-cardwell-iccrg-bbr-congestion-control-00 (July 2017; cited as §x.y).

Model (§4.1, [Q] "Characterizing the Bottleneck"):

* ``BtlBw``: windowed *max* of the delivery-rate samples (a feedback batch's ``rate_bytes`` over
  its ``rate_interval_ps``) over the last ``bw_window_rounds`` = 10 packet-timed round trips
  (§4.1.1.2, §4.1.1.5). The filter is exact (a monotone deque of (round, value) holding at most
  one entry per round, kept in the state's tail with room for ``bw_window_rounds`` + 1 entries)
  rather than Linux's 3-sample approximation; a sample taken in round r counts in rounds r .. r+9
  and is dropped by the first filter update in round r+10 or later. As in the draft, the filter
  only moves when a sample is inserted, so rounds with no admitted sample (see app-limited below)
  do not age it.
* Rounds (§4.1.1.3) are delimited by *send times* (the round's start and whether one is open, in
  the state), not by the draft's ``packet.delivered`` counter: a round that starts at the ACK
  processed at time t ends at the first ACK of a packet sent at or after t. This is the same rule
  (a packet sent after the round-start ACK has ``packet.delivered >= next_round_delivered``),
  expressed in the quantity the transport echoes on every ACK, and it lets tests define rounds
  independently of the rate samples.
* ``RTprop``: windowed *min* RTT over ``min_rtt_window_s`` = 10 s, kept with the draft's combined
  min-filter/ProbeRTT state (§4.1.2.3): a sample replaces RTprop if it is <= RTprop or if RTprop
  is older than the window (``now > stamp + window``, strict). With ``seed_rtprop_base_rtt`` the
  estimate starts at the path's base RTT (``ctx.base_rtt_ps``), stamped at the send time of the
  first acknowledged packet (the flow start), as the artifact uses its computed base RTT;
  otherwise it starts at infinity (§4.3.1: no SRTT yet) and the first sample sets it.

State machine (§4.3, [Q] "Single BBR Flow Startup Behavior", "Steady-State Behavior",
"Multiple BBR Flows Sharing a Bottleneck"):

* STARTUP (§4.3.2.1): pacing and cwnd gain ``high_gain`` = 2/ln 2 ~= 2.885.
* Full pipe (§4.3.2.2): once per round (on the round-start ACK, skipping app-limited samples),
  if BtlBw >= ``full_bw_growth`` (1.25) x the last recorded level, record it; otherwise count a
  round without growth; ``full_bw_rounds`` (3) such rounds set ``filled_pipe``.
* DRAIN (§4.3.3): pacing gain 1/high_gain, cwnd gain high_gain, until the bytes in flight after
  the ACK are <= BtlBw x RTprop (BBRInflight(1)).
* PROBE_BW (§4.3.4): pacing gain cycles through [1.25, 0.75, 1, 1, 1, 1, 1, 1], cwnd gain
  ``cwnd_gain`` (2). The phase entered is ``cycle_start_index`` (the draft draws it at random
  among all phases but the 0.75 one, §4.3.4.2; the artifact always uses 0; we take the
  deterministic parameter). A phase ends (§4.3.4.3 BBRIsNextCyclePhase) when more than RTprop
  has elapsed since it began and, for the 1.25 phase, the bytes in flight before the ACK reached
  1.25 x BDP estimate or a loss was reported since the previous ACK; the 0.75 phase also ends
  early once the in-flight bytes before the ACK fall to <= 1 x BDP estimate. With
  ``phase_inflight_checks = False`` every phase lasts exactly "more than RTprop" (the artifact,
  whose in-flight test is commented out).
* PROBE_RTT (§4.3.5): when RTprop is older than ``min_rtt_window_s`` (the draft's
  RTpropFilterLen = ProbeRTTInterval = 10 s), save cwnd, pacing/cwnd gain 1, cwnd capped at
  ``min_pipe_cwnd_mss`` (4) packets. Once the in-flight bytes are <= that cap, wait
  ``probe_rtt_duration_s`` (200 ms) *and* one round, then restamp RTprop, restore the saved cwnd
  (cwnd = max(cwnd, saved)) and return to PROBE_BW (pipe filled) or STARTUP. Delivery-rate
  samples of packets sent during PROBE_RTT, until the data in flight at its last ACK is
  delivered, are treated as application-limited (the draft sets ``C.app_limited`` there): they
  enter the BtlBw filter only if >= BtlBw and are ignored by the full-pipe check (§4.1.1.4).
  Without this, a 200 ms PROBE_RTT spans far more than 10 rounds on datacenter RTTs and would
  collapse BtlBw to 4 packets per RTT. ``probe_rtt = False`` disables the state (the Uno
  artifact's BBR has no PROBE_RTT); RTprop then still expires and is replaced as above.

Control parameters (§4.2):

* Pacing (§4.2.1): ``pacing_rate_bps = pacing_gain x BtlBw``, updated on every ACK once the pipe
  is filled, and before that only when it raises the rate (BBRSetPacingRate). The initial rate
  is the initial window over the base RTT (``init_cwnd_bdp`` x BDP / base RTT, i.e. line rate for
  1 BDP), as the artifact starts its pacer at line rate. The draft multiplies this nominal rate by
  the STARTUP gain; at an initial window of 1 BDP that is 2.9x the line rate, which the NIC cannot
  exceed anyway, so we leave the gain out.
* Target cwnd (§4.2.3.2): ``cwnd_gain x BtlBw x RTprop``, or the initial window while there is no
  model yet (no RTT or no bandwidth sample). The draft adds 3 send quanta for TSO/GSO
  aggregation (§4.2.2); the simulator sends single packets, so the term is left out.
* cwnd update per ACK (§4.2.3.6 BBRSetCwnd): pipe filled -> cwnd = min(cwnd + acked, target) (so
  a cwnd above the target is cut to it at once); otherwise (STARTUP) cwnd += acked while
  cwnd < target or less than the initial window has been delivered. Then the floor
  max(cwnd, 4 packets) (§4.2.3.3), then the optional cap ``max_cwnd_bdp`` x BDP (0 = none; the
  artifact caps cwnd at 1 BDP), then in PROBE_RTT min(cwnd, 4 packets) (§4.2.3.5). The initial
  window is ``init_cwnd_bdp`` x BDP (the draft leaves it to the transport, §4.2.3.1; the artifact
  starts at 1 BDP).
* Retransmission timeout (§4.2.3.4): cwnd = 1 MSS. It then regrows by the core rule above (the
  4-packet floor applies again from the next ACK, then + acked bytes per ACK, at most to the
  target). The draft additionally restores the pre-loss cwnd when loss recovery ends; our
  transport does not signal the end of recovery, so we take the conservative choice and do not
  jump back (the artifact does the same: cwnd = MSS, then regrowth). A timeout also counts as the
  loss that may end the 1.25 phase. A loss found by the transport's fast retransmit
  (``transport.dupack_threshold``) reaches ``on_loss`` as a :data:`uno.cc.law.LOSS_NACK`, which
  only records a loss for that test and leaves cwnd alone (the draft's fast-recovery packet
  conservation needs per-ACK loss counts the interface does not carry).
* ``cwnd_cut_to_target`` = true (draft). The Uno artifact never cuts the window down to the
  target: below it, +acked per ACK up to the target; above it, unchanged. With its 1-BDP initial
  window and cap, its BBR keeps cwnd = 1 BDP and is limited by the pacing rate alone
  (``cc=mprdma_bbr_artifact`` sets false, with ``min_pipe_cwnd_mss`` = 1, its floor).

BBR ignores ECN: a feedback batch's marked bytes and ACKs are not read. The Uno artifact runs its
BBR with ECN-marking queues (``-interEcn``) and ignores the marks too.

Every feedback batch (:mod:`uno.cc.law`) runs the per-ACK steps once (§3.5.2, in the draft's
order: BtlBw, cycle phase, full pipe, drain, RTprop, ProbeRTT, pacing rate, cwnd), with its
acknowledged bytes, its latest send time, its delivery-rate sample, its RTT sample, the bytes in
flight after it and the flow's delivered count. No sample is marked application-limited by the
transport (flows are bulk transfers); restart from idle (§4.3.4.4) does not arise.

A packet sender's delivery-rate sample (the transport's, both data planes) is the bytes delivered
since the packet was sent over the time from the sender's delivery clock at its send to its ACK:
the clock is the time of the sender's last delivery, restarted at a send when every byte sent so
far is acknowledged (a flow's first packet, a send after an idle period; not a resend after a
timeout), so the samples of a flow's first window run from its first send. This is the ack-elapsed
interval of the delivery-rate estimation draft (Cheng, Cardwell, Hassas Yeganeh, Jacobson,
draft-cheng-iccrg-delivery-rate-estimation-00, July 2017, "Transmitting a data packet", "Upon
receiving an ACK"). The draft also takes the larger of that interval and the send-elapsed one (the
time the flight took to send), a bound against compressed ACKs; that bound is not taken here.

A packet ACK is a batch of one: exactly the per-ACK rules above. A batch of many ACKs (a fluid
step) is read as one ACK that acknowledges all its bytes: its latest send time delimits rounds
(and stamps RTprop's start), its delivery-rate sample is the bytes acknowledged since the
latest of them was sent over the time since (the fluid driver fills it), its RTT sample (the
batch's mean: the bytes of one step meet nearly the same queues) feeds RTprop, the bytes in
flight before it (after it plus its bytes) end a gain phase, and the window grows by all its
bytes at once. The fluid count of bytes in flight is not rounded, unless
``engine.fluid_whole_packets`` asks for whole packets as a packet sender holds them at an ACK
(:func:`uno.fluid.control.in_flight_at_ack`): on an idle path a 1.25 phase's bytes in flight
reach its target exactly as the phase's first ACKs come back, those ACKs' samples raise BtlBw
first, and the fluid count, never ahead of the target, keeps the phase on while BtlBw compounds
(~1.17x a round); a packet sender's whole packets end it there.

The Uno artifact's pacer (``artifact_pacer``, off by default; ``BBRSrc::UpdatePacingRate`` and
``update_bw_model``, ``sim/bbr.cpp``): the gap between packets is a whole number of ns,
``wire bits / (bw x pacing gain)`` with bw = BtlBw (raised only until the pipe is filled, at
least 3 Gb/s); while the pacing gain is above 1, a gap not at least ``step`` = 4,300 x 8 bits
at line rate (344 ns at 100 Gb/s) longer than the previous one becomes the previous one less
2 steps (at least 1 step), so the gap falls to about line rate within a few ACKs; and the
pacer takes the gap only at the first ACK after each base-RTT window (windows counted from time
0), the gap computed up to the ACK before. The artifact keeps that published gap in one static
variable all its BBR flows read (the last flow to publish sets every flow's gap); here each
flow publishes its own.

Parameters (defaults and sources): ``high_gain`` 2/ln 2 (§2 BBRHighGain, §4.3.2.1, [Q];
artifact 2.89); ``cwnd_gain`` 2 (§4.3.4.1, [Q]); ``bw_window_rounds`` 10 (§2 BtlBwFilterLen,
§4.1.1.2, [Q]; artifact: 10 base-RTT slots); ``min_rtt_window_s`` 10 (§2 RTpropFilterLen and
ProbeRTTInterval, §4.1.2.2, §4.3.5, [Q]); ``full_bw_growth`` 1.25 and ``full_bw_rounds`` 3
(§4.3.2.2, [Q]; artifact same); ``cycle_start_index`` 0 (artifact; the draft randomises,
§4.3.4.2); ``phase_inflight_checks`` true (§4.3.4.3; artifact: false); ``probe_rtt`` true
(§4.3.5, [Q]; artifact has none); ``probe_rtt_duration_s`` 0.2 (§2 ProbeRTTDuration, [Q]);
``min_pipe_cwnd_mss`` 4 (§2 BBRMinPipeCwnd, §4.2.3.3, [Q]); ``seed_rtprop_base_rtt`` true
(artifact: RTprop is the computed base RTT; the draft seeds with SRTT when known, §4.3.1);
``init_cwnd_bdp`` 1 (artifact; Uno's datacenter transports start at line rate; the draft defers
to the transport, §4.2.3.1); ``max_cwnd_bdp`` 0 = no cap (draft; the artifact caps at 1 BDP).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from uno.cc.law import BPS_PS, LOSS_TIMEOUT, Law, params_layout, state_layout
from uno.config.fields import num

#: the state machine's modes (state column ``mode``)
STARTUP = 0
DRAIN = 1
PROBE_BW = 2
PROBE_RTT = 3

#: 2/ln 2, the smallest gain that doubles the sending rate every round (§4.3.2.1)
HIGH_GAIN = 2.0 / math.log(2.0)
#: ProbeBW pacing-gain cycle (§4.3.4.1)
PACING_GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)
_CYCLE = np.array(PACING_GAIN_CYCLE)


@dataclass
class BbrParams:
    """BBR v1 settings (see the module docstring for each default's source)."""

    #: pacing and window gain of STARTUP (2/ln 2), inverse pacing gain of DRAIN
    high_gain: float = num(HIGH_GAIN, "> 1")
    #: window gain of PROBE_BW: cwnd target = cwnd_gain x BtlBw x RTprop
    cwnd_gain: float = num(2.0, ">= 1")
    #: BtlBw is the maximum delivery rate of the last this many round trips
    bw_window_rounds: int = num(10, "[1, 1000000]")
    #: RTprop expires after this long (and PROBE_RTT starts)
    min_rtt_window_s: float = num(10.0, "> 0")
    #: STARTUP ends once BtlBw grew less than this factor ...
    full_bw_growth: float = num(1.25, "> 1")
    #: ... in this many rounds in a row
    full_bw_rounds: int = num(3, "[1, 1000000]")
    #: the phase of PROBE_BW's pacing-gain cycle a flow enters first
    cycle_start_index: int = num(0, "[0, 7]")
    #: a PROBE_BW phase also ends on the bytes in flight (false: after RTprop only, the Uno
    #: artifact)
    phase_inflight_checks: bool = True
    #: enter PROBE_RTT when RTprop expires (the Uno artifact has none)
    probe_rtt: bool = True
    #: time spent in PROBE_RTT
    probe_rtt_duration_s: float = num(0.2, ">= 0")
    #: window floor, in MSS (the PROBE_RTT window too)
    min_pipe_cwnd_mss: float = num(4.0, "> 0")
    #: RTprop starts at the path's base RTT (false: at the first RTT sample)
    seed_rtprop_base_rtt: bool = True
    #: initial window, in flow BDPs
    init_cwnd_bdp: float = num(1.0, "> 0")
    max_cwnd_bdp: float = num(0.0, ">= 0")  # 0: no cap
    #: with the pipe filled, cut a window above the target down to it at once (the draft);
    #: false only grows a window below the target and never cuts it (the Uno artifact, whose
    #: BBR therefore stays at its 1-BDP cap and is limited by pacing alone)
    cwnd_cut_to_target: bool = True
    #: pace as the Uno artifact's BBR does: a whole-ns gap from BtlBw (at least 3 Gb/s), cut
    #: by steps while the pacing gain is above 1, taken by the pacer once per base RTT (see
    #: the module docstring; the artifact's gap shared by all flows is per flow here)
    artifact_pacer: bool = False


#: the mode and its gains; the pacing rate (bit/s) and the window's target; the model: BtlBw
#: and its filter's deque (first entry and length; the entries in the tail), RTprop (whether
#: stamped yet, and when); rounds (whether one is open, its start, the count, whether this
#: batch began one); STARTUP's full-pipe check; PROBE_BW's phase and when it began; PROBE_RTT
#: (whether its timer runs and when it is done, whether a round passed since, the window to
#: restore); the app-limited marking (whether on, from which send time, up to which delivered
#: count); a loss reported since the last batch
S = state_layout("BbrState", (
    "mode", "pacing_gain", "cwnd_gain", "pacing_bps", "target_cwnd_bytes",
    "btl_bw_bps", "bw_head", "bw_len", "rtprop_ps", "rtprop_stamped", "rtprop_stamp_ps",
    "round_active", "round_start_ps", "round_count", "round_start",
    "filled_pipe", "full_bw_bps", "full_bw_count", "cycle_index", "cycle_stamp_ps",
    "probe_rtt_armed", "probe_rtt_done_ps", "probe_rtt_round_done", "prior_cwnd_bytes",
    "app_limited_on", "app_limited_from_ps", "app_limited_mark_bytes", "loss",
    "pacer_bw_bps", "pacer_gap_ns", "pacer_window_end_ps",
))  # fmt: skip
#: the parameters, times in ps (the window's floor ``min_cwnd`` is BBRMinPipeCwnd)
P = params_layout("BbrConsts", (
    "high_gain", "probe_bw_cwnd_gain", "bw_window_rounds", "rtprop_window_ps",
    "full_bw_growth", "full_bw_rounds", "cycle_start_index", "phase_inflight_checks",
    "probe_rtt", "probe_rtt_duration_ps", "cwnd_cut_to_target", "seed_rtprop_base_rtt",
    "artifact_pacer", "pacer_step_ns",
))  # fmt: skip


def pack(params: BbrParams, ctx) -> np.ndarray:
    p = np.zeros(P.size)
    min_pipe = params.min_pipe_cwnd_mss * ctx.mss_bytes
    max_cwnd = params.max_cwnd_bdp * ctx.bdp_bytes if params.max_cwnd_bdp > 0 else math.inf
    p[P.min_cwnd] = min_pipe
    p[P.max_cwnd] = max_cwnd
    p[P.init_cwnd] = max(min_pipe, min(max_cwnd, params.init_cwnd_bdp * ctx.bdp_bytes))
    p[P.mss] = ctx.mss_bytes
    p[P.base_rtt] = ctx.base_rtt_ps
    p[P.pacing_rtt] = ctx.base_rtt_ps
    # (P.paced stays 0: BBR paces at a rate of its own, pacing_rate)
    p[P.high_gain] = params.high_gain
    p[P.probe_bw_cwnd_gain] = params.cwnd_gain
    p[P.bw_window_rounds] = params.bw_window_rounds
    p[P.rtprop_window_ps] = round(params.min_rtt_window_s * 1e12)
    p[P.full_bw_growth] = params.full_bw_growth
    p[P.full_bw_rounds] = params.full_bw_rounds
    p[P.cycle_start_index] = params.cycle_start_index
    p[P.phase_inflight_checks] = 1.0 if params.phase_inflight_checks else 0.0
    p[P.probe_rtt] = 1.0 if params.probe_rtt else 0.0
    p[P.probe_rtt_duration_ps] = round(params.probe_rtt_duration_s * 1e12)
    p[P.cwnd_cut_to_target] = 1.0 if params.cwnd_cut_to_target else 0.0
    p[P.seed_rtprop_base_rtt] = 1.0 if params.seed_rtprop_base_rtt else 0.0
    p[P.artifact_pacer] = 1.0 if params.artifact_pacer else 0.0
    # 4,300 B at the host's line rate, in whole ns (the artifact: 4300 * 8 / 100 Gb/s = 344)
    p[P.pacer_step_ns] = (4300 * 8) // max(1, round(ctx.bottleneck_bps / 1e9))
    return p


def state_tail(p: np.ndarray) -> int:
    """The BtlBw filter's deque: room for ``bw_window_rounds`` + 1 (round, value) entries (one
    per round of the window, and the sample being inserted before the oldest expires)."""
    return 2 * (int(p[P.bw_window_rounds]) + 1)


@njit(cache=True)
def init(s, p):
    s[:] = 0.0
    s[S.cwnd] = p[P.init_cwnd]
    s[S.target_cwnd_bytes] = p[P.init_cwnd]
    s[S.pacing_bps] = p[P.init_cwnd] * BPS_PS / p[P.base_rtt]
    s[S.rtprop_ps] = p[P.base_rtt] if p[P.seed_rtprop_base_rtt] > 0.0 else np.inf
    # the artifact's pacer starts at a full packet's time at 100 Gb/s, in whole ns
    s[S.pacer_gap_ns] = math.floor(p[P.mss] * 8.0 / 100.0)
    _enter_startup(s, p)


# ---- model ----------------------------------------------------------------------------------
@njit(cache=True)
def bdp_estimate(s, p, gain):
    """BBRInflight(gain) without the send quanta (§4.2.3.2): gain x BtlBw x RTprop (bytes), or
    the initial window while there is no model yet."""
    if s[S.btl_bw_bps] <= 0 or math.isinf(s[S.rtprop_ps]):
        return p[P.init_cwnd]
    return gain * s[S.btl_bw_bps] * s[S.rtprop_ps] / BPS_PS


@njit(cache=True)
def bw_filter_update(s, p, value, round_count):
    """Insert sample ``value`` of round ``round_count`` into the exact windowed max over rounds
    (r - window, r]; returns the max. The deque of (round, value), values strictly decreasing
    from the front and at most one entry per round, is a ring in the state's tail (rounds, then
    values); entries expire only when a sample is inserted (the draft's
    ``update_windowed_max_filter``)."""
    window = p[P.bw_window_rounds]
    cap = int(window) + 1
    rounds0 = S.size
    values0 = S.size + cap
    head = int(s[S.bw_head])
    n = int(s[S.bw_len])
    while n > 0 and s[values0 + (head + n - 1) % cap] <= value:
        n -= 1
    if n == 0 or s[rounds0 + (head + n - 1) % cap] != round_count:
        at = (head + n) % cap
        s[rounds0 + at] = round_count
        s[values0 + at] = value
        n += 1
    oldest = round_count - window
    while s[rounds0 + head] <= oldest:
        head = (head + 1) % cap
        n -= 1
    s[S.bw_head] = head
    s[S.bw_len] = n
    return s[values0 + head]


@njit(cache=True)
def _update_round(s, now, sent):
    """A round that began at the batch processed at time t ends at the first batch holding a
    packet sent at or after t; the batch that ends one begins the next."""
    if s[S.round_active] == 0.0 or sent >= s[S.round_start_ps]:
        s[S.round_active] = 1.0
        s[S.round_start_ps] = now
        s[S.round_count] += 1.0
        s[S.round_start] = 1.0
    else:
        s[S.round_start] = 0.0


@njit(cache=True)
def _update_rtprop(s, p, now, rtt):
    """RTprop's min filter (§4.1.2.3); returns whether the estimate had expired."""
    expired = now > s[S.rtprop_stamp_ps] + p[P.rtprop_window_ps]
    if rtt >= 0 and (rtt <= s[S.rtprop_ps] or expired):
        s[S.rtprop_ps] = rtt
        s[S.rtprop_stamp_ps] = now
    return expired


# ---- state machine --------------------------------------------------------------------------
@njit(cache=True)
def _enter_startup(s, p):
    s[S.mode] = STARTUP
    s[S.pacing_gain] = p[P.high_gain]
    s[S.cwnd_gain] = p[P.high_gain]


@njit(cache=True)
def _enter_probe_bw(s, p, now):
    s[S.mode] = PROBE_BW
    s[S.cwnd_gain] = p[P.probe_bw_cwnd_gain]
    s[S.cycle_index] = p[P.cycle_start_index]
    s[S.pacing_gain] = _CYCLE[int(p[P.cycle_start_index])]
    s[S.cycle_stamp_ps] = now


@njit(cache=True)
def _is_next_cycle_phase(s, p, now, prior_inflight):
    """BBRIsNextCyclePhase (§4.3.4.3), or "more than RTprop" alone without the in-flight
    checks."""
    full_length = now - s[S.cycle_stamp_ps] > s[S.rtprop_ps]
    gain = s[S.pacing_gain]
    if p[P.phase_inflight_checks] == 0.0 or gain == 1.0:
        return full_length
    if gain > 1.0:
        return full_length and (s[S.loss] > 0.0 or prior_inflight >= bdp_estimate(s, p, gain))
    return full_length or prior_inflight <= bdp_estimate(s, p, 1.0)


@njit(cache=True)
def _check_cycle_phase(s, p, now, prior_inflight):
    if s[S.mode] == PROBE_BW and _is_next_cycle_phase(s, p, now, prior_inflight):
        index = (int(s[S.cycle_index]) + 1) % len(_CYCLE)
        s[S.cycle_index] = index
        s[S.pacing_gain] = _CYCLE[index]
        s[S.cycle_stamp_ps] = now


@njit(cache=True)
def _check_full_pipe(s, p, app_limited):
    """Once per round, skipping app-limited samples (§4.3.2.2)."""
    if s[S.filled_pipe] > 0.0 or s[S.round_start] == 0.0 or app_limited:
        return
    if s[S.btl_bw_bps] >= s[S.full_bw_bps] * p[P.full_bw_growth]:
        s[S.full_bw_bps] = s[S.btl_bw_bps]
        s[S.full_bw_count] = 0.0
        return
    s[S.full_bw_count] += 1.0
    if s[S.full_bw_count] >= p[P.full_bw_rounds]:
        s[S.filled_pipe] = 1.0


@njit(cache=True)
def _check_drain(s, p, now, inflight):
    if s[S.mode] == STARTUP and s[S.filled_pipe] > 0.0:
        s[S.mode] = DRAIN
        s[S.pacing_gain] = 1.0 / p[P.high_gain]
        s[S.cwnd_gain] = p[P.high_gain]
    if s[S.mode] == DRAIN and inflight <= bdp_estimate(s, p, 1.0):
        _enter_probe_bw(s, p, now)


@njit(cache=True)
def _check_probe_rtt(s, p, now, inflight, delivered, expired):
    """PROBE_RTT (§4.3.5): entered when RTprop expired; samples of packets sent from then until
    the data in flight at its last batch is delivered are app-limited."""
    if p[P.probe_rtt] == 0.0:
        return
    if s[S.mode] != PROBE_RTT and expired:
        s[S.mode] = PROBE_RTT
        s[S.pacing_gain] = 1.0
        s[S.cwnd_gain] = 1.0
        s[S.prior_cwnd_bytes] = s[S.cwnd]
        s[S.probe_rtt_armed] = 0.0
        s[S.app_limited_on] = 1.0
        s[S.app_limited_from_ps] = now
    if s[S.mode] != PROBE_RTT:
        return
    s[S.app_limited_mark_bytes] = delivered + inflight
    if s[S.probe_rtt_armed] == 0.0 and inflight <= p[P.min_cwnd]:
        s[S.probe_rtt_armed] = 1.0
        s[S.probe_rtt_done_ps] = now + p[P.probe_rtt_duration_ps]
        s[S.probe_rtt_round_done] = 0.0
        s[S.round_active] = 1.0  # (a round starts now: next_round_delivered = delivered)
        s[S.round_start_ps] = now
    elif s[S.probe_rtt_armed] > 0.0:
        if s[S.round_start] > 0.0:
            s[S.probe_rtt_round_done] = 1.0
        if s[S.probe_rtt_round_done] > 0.0 and now > s[S.probe_rtt_done_ps]:
            s[S.rtprop_stamp_ps] = now
            if s[S.prior_cwnd_bytes] > s[S.cwnd]:
                s[S.cwnd] = s[S.prior_cwnd_bytes]
            s[S.probe_rtt_armed] = 0.0
            if s[S.filled_pipe] > 0.0:
                _enter_probe_bw(s, p, now)
            else:
                _enter_startup(s, p)


# ---- control parameters ---------------------------------------------------------------------
@njit(cache=True)
def _set_pacing_rate(s):
    """BBRSetPacingRate (§4.2.1): raised only until the pipe is filled."""
    rate = s[S.pacing_gain] * s[S.btl_bw_bps]
    if rate > 0 and (s[S.filled_pipe] > 0.0 or rate > s[S.pacing_bps]):
        s[S.pacing_bps] = rate


@njit(cache=True)
def _set_cwnd(s, p, acked, delivered):
    """BBRSetCwnd (§4.2.3.6), then the floor, the cap and PROBE_RTT's window."""
    target = bdp_estimate(s, p, s[S.cwnd_gain])
    s[S.target_cwnd_bytes] = target
    cwnd = s[S.cwnd]
    if s[S.filled_pipe] > 0.0 and p[P.cwnd_cut_to_target] > 0.0:
        cwnd = min(cwnd + acked, target)
    elif s[S.filled_pipe] > 0.0:
        if cwnd < target:
            cwnd = min(cwnd + acked, target)
    elif cwnd < target or delivered < p[P.init_cwnd]:
        cwnd = cwnd + acked
    cwnd = max(p[P.min_cwnd], min(p[P.max_cwnd], cwnd))
    if s[S.mode] == PROBE_RTT:
        cwnd = min(cwnd, p[P.min_cwnd])
    s[S.cwnd] = cwnd


@njit(cache=True)
def _artifact_pacer(s, p, now):
    """The Uno artifact's pacer (see the module docstring): publish the gap computed so far at
    the first batch after a base-RTT window, then compute the gap of this batch."""
    if now > s[S.pacer_window_end_ps] + p[P.base_rtt]:
        s[S.pacer_window_end_ps] += p[P.base_rtt]
        s[S.pacing_bps] = p[P.mss] * 8.0 / (s[S.pacer_gap_ns] * 1e-9)
    bw = s[S.btl_bw_bps]
    if s[S.filled_pipe] > 0.0 or bw > s[S.pacer_bw_bps]:
        s[S.pacer_bw_bps] = bw
    gain = s[S.pacing_gain]
    old = s[S.pacer_gap_ns]
    gap = math.floor(p[P.mss] * 8.0 / (max(s[S.pacer_bw_bps], 3e9) * 1e-9 * gain))
    step = p[P.pacer_step_ns]
    if gap - old < step and gain > 1.0:
        gap = old - 2.0 * step
        if gap < 0.0:
            gap = step
    s[S.pacer_gap_ns] = max(gap, 1.0)


# ---- the law's hooks ------------------------------------------------------------------------
@njit(cache=True)
def on_feedback(s, p, fb, rec):
    """The per-ACK steps in the draft's order (§3.5.2), once for the batch."""
    now = fb.now_ps
    sent = fb.sent_ps
    delivered = fb.delivered_bytes
    inflight = fb.inflight_bytes
    if s[S.rtprop_stamped] == 0.0:  # RTprop's start: the first acknowledged packet's send
        s[S.rtprop_stamped] = 1.0
        s[S.rtprop_stamp_ps] = sent
    _update_round(s, now, sent)  # BBRUpdateBtlBw (§4.1.1.5): rounds, then the max filter
    app_limited = (
        s[S.app_limited_on] > 0.0
        and sent >= s[S.app_limited_from_ps]
        and delivered - fb.rate_bytes <= s[S.app_limited_mark_bytes]
    )  # (delivered - rate_bytes: the delivered count when the packet was sent)
    if fb.rate_bytes > 0 and fb.rate_interval_ps > 0:
        rate = fb.rate_bytes * BPS_PS / fb.rate_interval_ps
        if rate >= s[S.btl_bw_bps] or not app_limited:
            s[S.btl_bw_bps] = bw_filter_update(s, p, rate, s[S.round_count])
    _check_cycle_phase(s, p, now, inflight + fb.acked_bytes)
    _check_full_pipe(s, p, app_limited)
    _check_drain(s, p, now, inflight)
    expired = _update_rtprop(s, p, now, fb.rtt_ps)
    _check_probe_rtt(s, p, now, inflight, delivered, expired)
    if p[P.artifact_pacer] > 0.0:
        _artifact_pacer(s, p, now)
    else:
        _set_pacing_rate(s)
    _set_cwnd(s, p, fb.acked_bytes, delivered)
    s[S.loss] = 0.0


@njit(cache=True)
def on_loss(s, p, now_ps, loss):
    """A timeout: cwnd = 1 MSS (§4.2.3.4). Any loss may end the 1.25 gain phase."""
    if loss == LOSS_TIMEOUT:
        s[S.cwnd] = p[P.mss]
    s[S.loss] = 1.0


@njit(cache=True)
def pacing_rate(s, p):
    return s[S.pacing_bps]


LAW = Law(
    name="bbr",
    params=BbrParams,
    state=S,
    consts=P,
    pack=pack,
    init=init,
    on_feedback=on_feedback,
    on_loss=on_loss,
    pacing_rate=pacing_rate,
    state_tail=state_tail,
    signals=("delivery_rate", "rtt"),
)

"""BBR v1 (Cardwell, Cheng, Gunn, Hassas Yeganeh, Jacobson, "BBR: Congestion-Based Congestion
Control", ACM Queue 14(5) 2016 / CACM 60(2) 2017; cited below as [Q] with the article's section
titles) as specified by draft-cardwell-iccrg-bbr-congestion-control-00 (July 2017; cited as §x.y).

Model (§4.1, [Q] "Characterizing the Bottleneck"):

* ``BtlBw``: windowed *max* of the delivery-rate samples (:meth:`Bbr.on_rate_sample`) over the
  last ``bw_window_rounds`` = 10 packet-timed round trips (§4.1.1.2, §4.1.1.5). The filter is
  exact (a monotone deque holding at most one entry per round) rather than Linux's 3-sample
  approximation; a sample taken in round r counts in rounds r .. r+9 and is dropped by the first
  filter update in round r+10 or later. As in the draft, the filter only moves when a sample is
  inserted, so rounds with no admitted sample (see app-limited below) do not age it.
* Rounds (§4.1.1.3) are delimited by *send times* (:class:`uno.cc.base.SendTimeWindow`), not by
  the draft's ``packet.delivered`` counter: a round that starts at the ACK processed at time t
  ends at the first ACK of a packet sent at or after t. This is the same rule (a packet sent
  after the round-start ACK has ``packet.delivered >= next_round_delivered``), expressed in the
  quantity the transport echoes on every ACK, and it lets tests define rounds independently of
  the rate samples.
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
  (``transport.dupack_threshold``) reaches ``on_nack``, which only records a loss for that test
  and leaves cwnd alone (the draft's fast-recovery packet conservation needs per-ACK loss counts
  the interface does not carry).
* ``cwnd_cut_to_target`` = true (draft). The Uno artifact never cuts the window down to the
  target: below it, +acked per ACK up to the target; above it, unchanged. With its 1-BDP initial
  window and cap, its BBR keeps cwnd = 1 BDP and is limited by the pacing rate alone
  (``cc=mprdma_bbr_artifact`` sets false, with ``min_pipe_cwnd_mss`` = 1, its floor).

BBR ignores ECN: the ``ecn`` flag of :meth:`Bbr.on_ack` is not read. The Uno artifact runs its
BBR with ECN-marking queues (``-interEcn``) and ignores the marks too.

The transport calls :meth:`Bbr.on_ack` and then :meth:`Bbr.on_rate_sample` for each newly
acknowledged packet; ``on_ack`` only records the acknowledged bytes and send time, and all the
per-ACK steps (§3.5.2, in the draft's order: BtlBw, cycle phase, full pipe, drain, RTprop,
ProbeRTT, pacing rate, cwnd) run in ``on_rate_sample``, which carries the sample and the bytes in
flight. No sample is marked application-limited by the transport (flows are bulk transfers);
restart from idle (§4.3.4.4) does not arise.

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
from collections import deque
from dataclasses import dataclass

from uno.cc.base import CongestionControl, FlowContext, SendTimeWindow
from uno.config.fields import num

STARTUP = "startup"
DRAIN = "drain"
PROBE_BW = "probe_bw"
PROBE_RTT = "probe_rtt"

#: 2/ln 2, the smallest gain that doubles the sending rate every round (§4.3.2.1)
HIGH_GAIN = 2.0 / math.log(2.0)
#: ProbeBW pacing-gain cycle (§4.3.4.1)
PACING_GAIN_CYCLE = (1.25, 0.75, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0)

_BPS_PS_PER_BYTE = 8e12  # bytes = bit/s x ps / 8e12


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


class WindowedMax:
    """Exact maximum of the samples taken in the last ``window`` rounds (r - window, r].

    A monotone deque of (round, value), values strictly decreasing from the front, at most one
    entry per round. Entries expire only when a new sample is inserted (as the draft's
    ``update_windowed_max_filter``)."""

    __slots__ = ("window", "_entries")

    def __init__(self, window: int):
        self.window = window
        self._entries: deque = deque()

    def update(self, value: float, round_count: int) -> float:
        entries = self._entries
        while entries and entries[-1][1] <= value:
            entries.pop()
        if not entries or entries[-1][0] != round_count:
            entries.append((round_count, value))
        oldest = round_count - self.window
        while entries[0][0] <= oldest:
            entries.popleft()
        return entries[0][1]

    @property
    def value(self) -> float:
        return self._entries[0][1] if self._entries else 0.0


class Bbr(CongestionControl):
    name = "bbr"
    wants_rate_samples = True

    def __init__(self, ctx: FlowContext, params: BbrParams):
        super().__init__(ctx)
        p = params
        self.p = p
        self.mss = ctx.mss_bytes
        self.min_pipe_cwnd = p.min_pipe_cwnd_mss * ctx.mss_bytes
        self.max_cwnd = p.max_cwnd_bdp * ctx.bdp_bytes if p.max_cwnd_bdp > 0 else math.inf
        self.init_cwnd = max(
            self.min_pipe_cwnd, min(self.max_cwnd, p.init_cwnd_bdp * ctx.bdp_bytes)
        )
        self.cwnd_bytes = self.init_cwnd
        self.target_cwnd_bytes = self.init_cwnd
        self.pacing_rate_bps = self.init_cwnd * _BPS_PS_PER_BYTE / ctx.base_rtt_ps
        self.rtprop_window_ps = round(p.min_rtt_window_s * 1e12)
        self.probe_rtt_duration_ps = round(p.probe_rtt_duration_s * 1e12)
        # model
        self._bw_filter = WindowedMax(p.bw_window_rounds)
        self.btl_bw_bps = 0.0
        self.rtprop_ps: float = float(ctx.base_rtt_ps) if p.seed_rtprop_base_rtt else math.inf
        self.rtprop_stamp_ps: int | None = None  # set at the first ACK (flow start)
        self.delivered = 0  # wire bytes acknowledged so far (== the transport's delivered count)
        # rounds
        self.round = SendTimeWindow()
        self.round_count = 0
        self.round_start = False
        # startup / full pipe
        self.filled_pipe = False
        self.full_bw = 0.0
        self.full_bw_count = 0
        # probe_bw
        self.cycle_index = 0
        self.cycle_stamp_ps = 0
        # probe_rtt
        self.probe_rtt_done_ps: int | None = None
        self.probe_rtt_round_done = False
        self.prior_cwnd = 0.0
        self._app_limited_from_ps: int | None = None  # packets sent at/after this ...
        self._app_limited_mark = 0  # ... while delivered <= this are app-limited samples
        # per-ACK scratch (on_ack -> on_rate_sample)
        self._acked = 0
        self._sent_ps = 0
        self._loss = False
        self._enter_startup()

    # ---- transport hooks -------------------------------------------------------------
    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        # ECN is deliberately ignored
        self.delivered += acked_bytes
        self._acked += acked_bytes
        self._sent_ps = sent_ps

    def on_rate_sample(
        self, now_ps: int, delivered_bytes: int, interval_ps: int, rtt_ps: int, inflight_bytes: int
    ) -> None:
        acked = self._acked
        self._acked = 0
        sent_ps = self._sent_ps
        if self.rtprop_stamp_ps is None:
            self.rtprop_stamp_ps = sent_ps
        # BBRUpdateBtlBw (§4.1.1.5): rounds, then the max filter
        self._update_round(now_ps, sent_ps)
        pkt_delivered = self.delivered - delivered_bytes  # delivered count when it was sent
        app_limited = (
            self._app_limited_from_ps is not None
            and sent_ps >= self._app_limited_from_ps
            and pkt_delivered <= self._app_limited_mark
        )
        if delivered_bytes > 0 and interval_ps > 0:
            rate = delivered_bytes * _BPS_PS_PER_BYTE / interval_ps
            if rate >= self.btl_bw_bps or not app_limited:
                self.btl_bw_bps = self._bw_filter.update(rate, self.round_count)
        self._check_cycle_phase(now_ps, inflight_bytes + acked)
        self._check_full_pipe(app_limited)
        self._check_drain(now_ps, inflight_bytes)
        expired = self._update_rtprop(now_ps, rtt_ps)
        self._check_probe_rtt(now_ps, inflight_bytes, expired)
        self._set_pacing_rate()
        self._set_cwnd(acked)
        self._loss = False

    def on_timeout(self, now_ps: int) -> None:
        self.cwnd_bytes = float(self.mss)
        self._loss = True

    def on_nack(self, now_ps: int) -> None:
        self._loss = True

    # ---- model -----------------------------------------------------------------------
    def bdp_estimate_bytes(self, gain: float = 1.0) -> float:
        """BBRInflight(gain) without the send quanta (§4.2.3.2): gain x BtlBw x RTprop, or the
        initial window while there is no model yet."""
        if self.btl_bw_bps <= 0 or math.isinf(self.rtprop_ps):
            return self.init_cwnd
        return gain * self.btl_bw_bps * self.rtprop_ps / _BPS_PS_PER_BYTE

    def _update_round(self, now_ps: int, sent_ps: int) -> None:
        rnd = self.round
        if not rnd.active or rnd.ended_by(sent_ps):
            rnd.restart(now_ps)
            self.round_count += 1
            self.round_start = True
        else:
            self.round_start = False

    def _update_rtprop(self, now_ps: int, rtt_ps: int) -> bool:
        expired = now_ps > self.rtprop_stamp_ps + self.rtprop_window_ps
        if rtt_ps >= 0 and (rtt_ps <= self.rtprop_ps or expired):
            self.rtprop_ps = rtt_ps
            self.rtprop_stamp_ps = now_ps
        return expired

    # ---- state machine ---------------------------------------------------------------
    def _enter_startup(self) -> None:
        self.state = STARTUP
        self.pacing_gain = self.p.high_gain
        self.cwnd_gain = self.p.high_gain

    def _enter_drain(self) -> None:
        self.state = DRAIN
        self.pacing_gain = 1.0 / self.p.high_gain
        self.cwnd_gain = self.p.high_gain

    def _enter_probe_bw(self, now_ps: int) -> None:
        self.state = PROBE_BW
        self.cwnd_gain = self.p.cwnd_gain
        self.cycle_index = self.p.cycle_start_index
        self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index]
        self.cycle_stamp_ps = now_ps

    def _check_cycle_phase(self, now_ps: int, prior_inflight: int) -> None:
        if self.state == PROBE_BW and self._is_next_cycle_phase(now_ps, prior_inflight):
            self.cycle_index = (self.cycle_index + 1) % len(PACING_GAIN_CYCLE)
            self.pacing_gain = PACING_GAIN_CYCLE[self.cycle_index]
            self.cycle_stamp_ps = now_ps

    def _is_next_cycle_phase(self, now_ps: int, prior_inflight: int) -> bool:
        full_length = now_ps - self.cycle_stamp_ps > self.rtprop_ps
        gain = self.pacing_gain
        if not self.p.phase_inflight_checks or gain == 1.0:
            return full_length
        if gain > 1.0:
            return full_length and (self._loss or prior_inflight >= self.bdp_estimate_bytes(gain))
        return full_length or prior_inflight <= self.bdp_estimate_bytes(1.0)

    def _check_full_pipe(self, app_limited: bool) -> None:
        if self.filled_pipe or not self.round_start or app_limited:
            return
        if self.btl_bw_bps >= self.full_bw * self.p.full_bw_growth:
            self.full_bw = self.btl_bw_bps
            self.full_bw_count = 0
            return
        self.full_bw_count += 1
        if self.full_bw_count >= self.p.full_bw_rounds:
            self.filled_pipe = True

    def _check_drain(self, now_ps: int, inflight_bytes: int) -> None:
        if self.state == STARTUP and self.filled_pipe:
            self._enter_drain()
        if self.state == DRAIN and inflight_bytes <= self.bdp_estimate_bytes(1.0):
            self._enter_probe_bw(now_ps)

    def _check_probe_rtt(self, now_ps: int, inflight_bytes: int, expired: bool) -> None:
        if not self.p.probe_rtt:
            return
        if self.state != PROBE_RTT and expired:
            self.state = PROBE_RTT
            self.pacing_gain = 1.0
            self.cwnd_gain = 1.0
            self.prior_cwnd = self.cwnd_bytes
            self.probe_rtt_done_ps = None
            self._app_limited_from_ps = now_ps
        if self.state == PROBE_RTT:
            self._handle_probe_rtt(now_ps, inflight_bytes)

    def _handle_probe_rtt(self, now_ps: int, inflight_bytes: int) -> None:
        # samples of packets sent from now until this much is delivered are app-limited
        self._app_limited_mark = self.delivered + inflight_bytes
        if self.probe_rtt_done_ps is None and inflight_bytes <= self.min_pipe_cwnd:
            self.probe_rtt_done_ps = now_ps + self.probe_rtt_duration_ps
            self.probe_rtt_round_done = False
            self.round.restart(now_ps)  # next_round_delivered = delivered
        elif self.probe_rtt_done_ps is not None:
            if self.round_start:
                self.probe_rtt_round_done = True
            if self.probe_rtt_round_done and now_ps > self.probe_rtt_done_ps:
                self.rtprop_stamp_ps = now_ps
                self.cwnd_bytes = max(self.cwnd_bytes, self.prior_cwnd)
                self.probe_rtt_done_ps = None
                if self.filled_pipe:
                    self._enter_probe_bw(now_ps)
                else:
                    self._enter_startup()

    # ---- control parameters ----------------------------------------------------------
    def _set_pacing_rate(self) -> None:
        rate = self.pacing_gain * self.btl_bw_bps
        if rate > 0 and (self.filled_pipe or rate > self.pacing_rate_bps):
            self.pacing_rate_bps = rate

    def _set_cwnd(self, acked: int) -> None:
        target = self.bdp_estimate_bytes(self.cwnd_gain)
        self.target_cwnd_bytes = target
        cwnd = self.cwnd_bytes
        if self.filled_pipe and self.p.cwnd_cut_to_target:
            cwnd = min(cwnd + acked, target)
        elif self.filled_pipe:
            if cwnd < target:
                cwnd = min(cwnd + acked, target)
        elif cwnd < target or self.delivered < self.init_cwnd:
            cwnd = cwnd + acked
        cwnd = max(self.min_pipe_cwnd, min(self.max_cwnd, cwnd))
        if self.state == PROBE_RTT:
            cwnd = min(cwnd, self.min_pipe_cwnd)
        self.cwnd_bytes = cwnd

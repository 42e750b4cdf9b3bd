"""The congestion-control interface.

A congestion controller sees numbers, not the simulator. The transport tells it about each ACK
(wire bytes acknowledged, ECN echo, RTT sample, the acknowledged packet's send time, the time
now), about NACKs and retransmission timeouts; it exposes a window in bytes (``cwnd_bytes``,
counted in wire bytes: payload + header) and an optional pacing rate (``pacing_rate_bps``; 0
means no pacing). Its unit tests are plain arithmetic on these calls.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlowContext:
    """What a controller may know about its flow's path, fixed at flow start.

    ``base_rtt_ps`` and ``bdp_bytes`` describe this flow's path as its endpoints know it (its own
    path, or its class's reference path with ``transport.path_facts=class_reference``);
    ``intra_rtt_ps`` and ``intra_bdp_bytes`` the network's intra-DC reference path (the longest
    path inside one datacenter), which some algorithms use as a common time base. ``rto_ps`` is
    the flow's retransmission timeout; ``ecn_k_bytes`` the smallest physical-queue ECN marking
    threshold (RED's Kmin) of the switch ports on its path, None if none of them marks."""

    base_rtt_ps: int
    bdp_bytes: float
    bottleneck_bps: int
    mss_bytes: int  # wire size of a full data packet
    intra_rtt_ps: int
    intra_bdp_bytes: float
    is_inter_dc: bool
    rto_ps: int = 0
    ecn_k_bytes: float | None = None


class CongestionControl:
    """Base class. Subclasses set ``cwnd_bytes`` and ``pacing_rate_bps`` and override hooks."""

    name = "base"
    #: whether the transport should call :meth:`on_rate_sample` after each :meth:`on_ack`
    wants_rate_samples = False
    #: whether the transport should call :meth:`on_duplicate_ack` (set per instance)
    wants_duplicate_acks = False
    #: whether the transport should call :meth:`on_ack_int` (with the ACK's INT records)
    #: instead of :meth:`on_ack`
    wants_int = False
    #: whether the transport should call :meth:`on_send` for every data packet it sends
    wants_send_events = False
    #: the receiver echoes ECN as a CNP at most once per this interval (DCQCN's notification
    #: point); 0: every marked packet's ACK echoes its mark
    cnp_interval_ps = 0

    def __init__(self, ctx: FlowContext):
        self.ctx = ctx
        self.cwnd_bytes: float = float(ctx.bdp_bytes)
        self.pacing_rate_bps: float = 0.0

    def on_ack(self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int) -> None:
        """An ACK for a data packet of ``acked_bytes`` (wire) sent at ``sent_ps`` arrived."""

    def on_ack_int(
        self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int, hops
    ) -> None:
        """:meth:`on_ack` with the acknowledged packet's INT records (uno/net/int.py): a
        sequence of ``(ts_ps, qlen_bytes, tx_bytes, rate_bps)`` per INT hop in path order, empty
        when no switch on the path wrote one. Only called when ``wants_int`` is true."""
        self.on_ack(now_ps, acked_bytes, ecn, rtt_ps, sent_ps)

    def on_send(self, now_ps: int, wire_bytes: int) -> None:
        """A data packet of ``wire_bytes`` left the sender (DCQCN's byte counter). Only called
        when ``wants_send_events`` is true; the transport reads ``pacing_rate_bps`` after it."""

    def next_rate_change_ps(self) -> int | None:
        """When a timer of the controller may next change ``pacing_rate_bps`` by itself (None:
        only feedback changes it). The transport then calls :meth:`advance` at that time."""
        return None

    def advance(self, now_ps: int) -> None:
        """Apply the controller's timers due at or before ``now_ps``."""

    def on_rate_sample(
        self, now_ps: int, delivered_bytes: int, interval_ps: int, rtt_ps: int, inflight_bytes: int
    ) -> None:
        """A delivery-rate sample (Cheng et al., draft-cheng-iccrg-delivery-rate-estimation):
        ``delivered_bytes`` (wire) were acknowledged over ``interval_ps`` between the send of the
        acknowledged packet and now, i.e. rate = delivered_bytes * 8e12 / interval_ps bit/s.
        ``inflight_bytes`` is what remains in flight after this ACK. Only called when
        ``wants_rate_samples`` is true."""

    def on_duplicate_ack(
        self, now_ps: int, acked_bytes: int, ecn: bool, rtt_ps: int, sent_ps: int
    ) -> None:
        """An ACK for a packet already acknowledged arrived (a copy of a retransmitted packet).
        Only called when ``wants_duplicate_acks`` is true."""

    def on_nack(self, now_ps: int) -> None:
        """A loss was detected before its timeout: a NACK from the receiver, or the transport's
        duplicate-ACK rule (fast retransmit). At most once per base RTT."""

    def on_timeout(self, now_ps: int) -> None:
        """The retransmission timer fired and declared packets lost."""


class WindowedControl(CongestionControl):
    """The window limits and pacing the window-based controllers here share (DCTCP, Gemini,
    MPRDMA, UnoCC): the window starts at ``init_cwnd_bdp`` BDPs, stays within
    [``min_cwnd_mss`` MSS, ``max_cwnd_bdp`` BDPs] (0: no cap), and with ``pacing`` the sender
    paces at cwnd / base RTT — the Uno artifact's rule for all its sources; none of the papers
    gives a formula (each module's docstring says which of them paces)."""

    def __init__(
        self,
        ctx: FlowContext,
        init_cwnd_bdp: float,
        min_cwnd_mss: float,
        max_cwnd_bdp: float,
        pacing: bool,
    ):
        super().__init__(ctx)
        self.min_cwnd = min_cwnd_mss * ctx.mss_bytes
        self.max_cwnd = max_cwnd_bdp * ctx.bdp_bytes if max_cwnd_bdp > 0 else float("inf")
        self.paced = pacing
        self._pacing_rtt_ps = ctx.base_rtt_ps
        self.set_cwnd(init_cwnd_bdp * ctx.bdp_bytes)

    def clamp(self, cwnd: float) -> float:
        """``cwnd`` within [min, max]."""
        if cwnd < self.min_cwnd:
            return self.min_cwnd
        return cwnd if cwnd < self.max_cwnd else self.max_cwnd

    def set_cwnd(self, cwnd: float) -> None:
        """Set the window (clamped) and, when pacing, the pacing rate that goes with it."""
        cwnd = self.clamp(cwnd)
        self.cwnd_bytes = cwnd
        if self.paced:
            self.pacing_rate_bps = cwnd * 8e12 / self._pacing_rtt_ps


class SendTimeWindow:
    """A round of data delimited by send times: the round that starts at ``start_ps`` ends at
    the first ACK for a packet sent at or after ``start_ps``. Used for "once per window/RTT"
    rules; robust to reordering because it looks at send times, not sequence numbers."""

    __slots__ = ("start_ps", "active")

    def __init__(self) -> None:
        self.start_ps = 0
        self.active = False

    def ended_by(self, sent_ps: int) -> bool:
        return self.active and sent_ps >= self.start_ps

    def restart(self, now_ps: int) -> None:
        self.start_ps = now_ps
        self.active = True

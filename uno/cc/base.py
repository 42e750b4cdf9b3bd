"""What a controller knows of its flow (:class:`FlowContext`), and the interface the Python data
plane's transport talks to (:class:`CongestionControl`).

Every algorithm of uno is a law (:mod:`uno.cc.law`) that runs in every engine; the Python data
plane reaches it through :class:`uno.cc.adapter.LawControl`, a :class:`CongestionControl`. A
controller written directly as a subclass here runs in the Python data plane only — a quick way
to try an idea, or to observe the transport in a test.

A controller sees numbers, not the simulator. The transport tells it about each ACK
(:meth:`CongestionControl.on_ack_batch`: wire bytes acknowledged, ECN echo, RTT sample, the
acknowledged packet's send time, the time now, bytes in flight and delivered, a delivery-rate
sample, INT records), about losses found before a timeout and about retransmission timeouts;
it exposes a window in wire bytes (``cwnd_bytes``: payload + header) and an optional pacing rate
(``pacing_rate_bps``; 0 means no pacing).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FlowContext:
    """What a controller may know about its flow's path, fixed at flow start.

    ``base_rtt_ps`` and ``bdp_bytes`` describe this flow's path as its endpoints know it (its own
    path, or its class's reference path with ``transport.path_facts=class_reference``);
    ``intra_rtt_ps`` and ``intra_bdp_bytes`` the network's intra-DC reference path (the longest
    path inside one datacenter), which some algorithms use as a common time base, and
    ``inter_bdp_bytes`` the BDP of the inter-DC reference path (None on one datacenter). ``rto_ps`` is
    the flow's retransmission timeout; ``ecn_k_bytes`` the smallest physical-queue ECN marking
    threshold (RED's Kmin) of the switch ports on its path, None if none of them marks.
    ``int_max_records`` is the most INT records a data packet of the flow holds (the INT header's
    room, ``switch.int_telemetry.max_records``, 5 by default: HPCC's header)."""

    base_rtt_ps: int
    bdp_bytes: float
    bottleneck_bps: int
    mss_bytes: int  # wire size of a full data packet
    intra_rtt_ps: int
    intra_bdp_bytes: float
    is_inter_dc: bool
    rto_ps: int = 0
    ecn_k_bytes: float | None = None
    int_max_records: int = 5
    inter_bdp_bytes: float | None = None


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

    def on_ack_batch(
        self,
        now_ps: int,
        acked_bytes: int,
        ecn: bool,
        rtt_ps: int,
        sent_ps: int,
        inflight_bytes: int = 0,
        delivered_bytes: int = 0,
        rate_bytes: int = 0,
        rate_interval_ps: int = 0,
        duplicate: bool = False,
        hops=(),
    ) -> None:
        """Everything the transport knows of one ACK (what it calls). By default: a duplicate
        to :meth:`on_duplicate_ack`, else :meth:`on_ack_int` (with ``wants_int``) or
        :meth:`on_ack`, then with ``wants_rate_samples`` :meth:`on_rate_sample`."""
        if duplicate:
            self.on_duplicate_ack(now_ps, acked_bytes, ecn, rtt_ps, sent_ps)
            return
        if self.wants_int:
            self.on_ack_int(now_ps, acked_bytes, ecn, rtt_ps, sent_ps, hops)
        else:
            self.on_ack(now_ps, acked_bytes, ecn, rtt_ps, sent_ps)
        if self.wants_rate_samples:
            self.on_rate_sample(now_ps, rate_bytes, rate_interval_ps, rtt_ps, inflight_bytes)

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

    def on_notify(self, now_ps: int, level: int) -> None:
        """A switch sent this flow's sender a congestion notice (:mod:`uno.net.qcn`): its
        quantised feedback ``level``, 1..63."""

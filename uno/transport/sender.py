"""Sender side of the reliable transport.

Sends the flow's packets (sequence numbers 0..n-1, each carrying ``mss`` payload bytes but the
last) while the bytes in flight are below the congestion window, optionally paced at the
controller's rate. Every packet is stamped with its send time, which its ACK echoes (RTT
samples, send-time rounds). Loss is detected by a per-flow retransmission timeout: a packet
unacknowledged ``rto_ps`` after its (re)transmission is declared lost and queued for
retransmission ahead of new data. The flow completes when every packet is acknowledged.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from uno.core.errors import InvariantError
from uno.core.packet import ACK, DATA, Packet, flow_hash_key

if TYPE_CHECKING:
    from uno.cc.base import CongestionControl
    from uno.core.engine import Engine
    from uno.lb.base import LoadBalancer
    from uno.net.host import Host
    from uno.transport.flow import Flow


class Sender:
    """Transmitting endpoint of one flow."""

    def __init__(
        self,
        engine: Engine,
        flow: Flow,
        cc: CongestionControl,
        lb: LoadBalancer,
        host: Host,
        mss_bytes: int,
        header_bytes: int,
        on_complete,
        timer_granularity_ps: int = 1_000_000,
    ):
        self._engine = engine
        self.flow = flow
        self.cc = cc
        self.lb = lb
        self._lb_feedback = lb.wants_ack_feedback
        self._host = host
        self.mss_bytes = mss_bytes
        self.header_bytes = header_bytes
        n = flow.n_packets
        self.n_packets = n
        self.last_payload_bytes = flow.size_bytes - (n - 1) * mss_bytes
        self._on_complete = on_complete
        self.acked = bytearray(n)
        self.outstanding: dict[int, int] = {}  # seq -> send time of the copy counted in flight
        self._rto_fifo: deque = deque()  # (send time, seq) in send order; stale entries skipped
        self.retx_queue: deque = deque()
        self.next_seq = 0
        self.inflight_bytes = 0
        self.n_acked = 0
        self.sent_bytes = 0  # wire bytes, including retransmissions
        self.sent_packets = 0
        self.acked_bytes = 0  # wire bytes newly acknowledged (the delivered count)
        self._delivered_ps = 0  # when acked_bytes last advanced (delivery-rate estimation)
        self._rate_samples = cc.wants_rate_samples
        self.retransmits = 0
        self.timeouts = 0
        self.lost_packets = 0
        self.dup_acks = 0
        self.ecn_acks = 0
        self.done = False
        self._next_send_ps = 0
        self._wake_pending = False
        self.nic_waiting = False
        self._timer_armed = False
        self._last_timeout_ps = 0
        self.timer_granularity_ps = timer_granularity_ps
        self._keys: dict[int, int] = {}  # entropy -> ECMP hash key of (src, dst, entropy)

    # ---- sending ----------------------------------------------------------------------
    def start(self, _arg=None) -> None:
        self._try_send()

    def _wake(self, _arg=None) -> None:
        self._wake_pending = False
        if not self.done:
            self._try_send()

    def nic_ready(self) -> None:
        """The host's NIC is free and it is this sender's turn."""
        if not self.done:
            self._try_send()

    def _try_send(self) -> None:
        engine = self._engine
        now = engine._now
        cc = self.cc
        while self.inflight_bytes < cc.cwnd_bytes:
            retx = self.retx_queue
            while retx and self.acked[retx[0]]:
                retx.popleft()
            if not retx and self.next_seq >= self.n_packets:
                break
            rate = cc.pacing_rate_bps
            if rate > 0.0 and now < self._next_send_ps:
                if not self._wake_pending:
                    self._wake_pending = True
                    engine.call_at(self._next_send_ps, self._wake)
                break
            host = self._host
            if host.nic._busy_until_ps > now:
                host.wait_for_nic(self)
                break
            if retx:
                seq = retx.popleft()
                is_retx = True
                self.retransmits += 1
            else:
                seq = self.next_seq
                self.next_seq = seq + 1
                is_retx = False
            payload = self.mss_bytes if seq < self.n_packets - 1 else self.last_payload_bytes
            wire = payload + self.header_bytes
            flow = self.flow
            entropy = self.lb.next_entropy(now)
            key = self._keys.get(entropy)
            if key is None:
                key = self._keys[entropy] = flow_hash_key(flow.src, flow.dst, entropy)
            pkt = Packet(
                DATA, flow, seq, wire, payload, flow.src, flow.dst, entropy, key, now, is_retx
            )
            if self._rate_samples:
                pkt.tx_delivered = self.acked_bytes
                # an idle period restarts the delivery clock (as Linux does when nothing is in flight)
                pkt.tx_delivered_ps = self._delivered_ps if self.inflight_bytes else now
            self.inflight_bytes += wire
            self.outstanding[seq] = now
            self._rto_fifo.append((now, seq))
            self.sent_bytes += wire
            self.sent_packets += 1
            if rate > 0.0:
                self._next_send_ps = now + int(wire * 8e12 / rate)
            if not self._timer_armed:
                self._timer_armed = True
                engine.call_at(now + flow.rto_ps, self._on_timer)
            self._host.send(pkt)

    # ---- feedback ---------------------------------------------------------------------
    def on_control(self, pkt: Packet) -> None:
        """An ACK (or NACK) for this flow arrived at the sender's host."""
        if pkt.kind != ACK:
            raise InvariantError(f"flow {self.flow.flow_id}: unexpected control packet {pkt!r}")
        seq = pkt.seq
        if self.acked[seq]:
            self.dup_acks += 1
            return
        now = self._engine._now
        self.acked[seq] = 1
        self.n_acked += 1
        wire = pkt.payload_bytes + self.header_bytes
        if self.outstanding.pop(seq, None) is not None:
            self.inflight_bytes -= wire
        self.acked_bytes += wire
        ecn = pkt.ecn
        if ecn:
            self.ecn_acks += 1
        rtt = now - pkt.sent_ps
        self.cc.on_ack(now, wire, ecn, rtt, pkt.sent_ps)
        if self._rate_samples:
            self._delivered_ps = now
            self.cc.on_rate_sample(
                now,
                self.acked_bytes - pkt.tx_delivered,
                now - pkt.tx_delivered_ps,
                rtt,
                self.inflight_bytes,
            )
        if self._lb_feedback:
            self.lb.on_ack(now, pkt.entropy, ecn)
        if self.n_acked == self.n_packets:
            self._finish(now)
        else:
            self._try_send()

    def _on_timer(self, _arg=None) -> None:
        """Declare lost every packet unacknowledged ``rto_ps`` after its (re)transmission.

        The timer is checked at most every ``timer_granularity_ps`` (htsim scans its timers
        every microsecond), so a burst of expiries is handled in a few passes, and the
        congestion controller hears of at most one timeout per base RTT: one loss episode."""
        self._timer_armed = False
        if self.done:
            return
        now = self._engine._now
        rto = self.flow.rto_ps
        fifo = self._rto_fifo
        outstanding = self.outstanding
        lost = 0
        while fifo:
            sent_ps, seq = fifo[0]
            if outstanding.get(seq) != sent_ps:
                fifo.popleft()  # acknowledged, or retransmitted since
                continue
            if sent_ps + rto > now:
                break
            fifo.popleft()
            del outstanding[seq]
            payload = self.mss_bytes if seq < self.n_packets - 1 else self.last_payload_bytes
            self.inflight_bytes -= payload + self.header_bytes
            self.retx_queue.append(seq)
            lost += 1
        if lost:
            self.lost_packets += lost
            if now - self._last_timeout_ps >= self.flow.path.base_rtt_ps or self.timeouts == 0:
                self.timeouts += 1
                self._last_timeout_ps = now
                self.cc.on_timeout(now)
                self.lb.on_timeout(now)
        if fifo:
            self._timer_armed = True
            due = fifo[0][0] + rto
            self._engine.call_at(max(due, now + self.timer_granularity_ps), self._on_timer)
        self._try_send()

    def _finish(self, now: int) -> None:
        if self.inflight_bytes != 0 and self.outstanding:
            raise InvariantError(
                f"flow {self.flow.flow_id}: all packets acked but {len(self.outstanding)} outstanding"
            )
        self.done = True
        self.inflight_bytes = 0
        self.flow.finish_ps = now
        self._on_complete(self.flow)

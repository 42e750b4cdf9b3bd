"""Sender side of the reliable transport.

Sends the flow's packets (sequence numbers 0..n-1, each carrying ``mss`` payload bytes but the
last) while the bytes in flight are below the congestion window, optionally paced at the
controller's rate. Every packet is stamped with its send time, which its ACK echoes (RTT
samples, send-time rounds). The flow completes when every packet is acknowledged.

Loss detection:

* Retransmission timeout: a packet unacknowledged ``rto_ps`` after its (re)transmission is
  declared lost and queued for retransmission ahead of new data. Optionally the timeout changes
  after the flow's first retransmission (``rto_after_retransmit_ps``; the Uno artifact's MPRDMA
  widens its margin then).
* Fast retransmit (``dupack_threshold`` N > 0): TCP's duplicate-ACK rule in its SACK form
  (RFC 6675 "IsLost"): a packet is lost once N packets sent after it have been acknowledged.
  ACKs here are per packet, so "sent after" is by send time, which is strictly increasing per
  flow. The controller hears of it through ``on_nack`` (at most once per base RTT: one loss
  episode, as TCP's fast recovery); the timeout still catches what this rule misses.

``pad_last_packet``: every data packet is full size on the wire (htsim sends whole MSS
packets); the last one still carries only the flow's remaining payload bytes.

Erasure coding (``flow.coding``, UnoRC): the sequence space is the block layout's wire packets,
each block's data packets followed by its parity packets (full size); with the real coder each
data packet carries its block's coded symbols. The receiver's ACKs say when a packet's block is
decoded; the sender then stops tracking the block's other packets (no retransmission, out of
flight). A NACK names a block's missing packets: those still counted in flight are declared
lost and retransmitted. The flow completes when every block is known decoded.

Trimming (``switch.trimming``): a NACK naming one packet (``info`` None) says a switch cut the
copy sent at its ``sent_ps`` to its header; that copy leaves the flight and is resent at once.

The load balancer hears of every loss with the entropies of the lost packets (when it asks for
them, ``wants_loss_feedback``).
"""

from __future__ import annotations

from array import array
from bisect import insort
from collections import deque
from typing import TYPE_CHECKING

from uno.core.errors import InvariantError
from uno.core.packet import ACK, CN, DATA, NACK, Packet
from uno.metrics.rtts import rtt_bin_py
from uno.net.hashing import flow_hash_key

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
        rto_after_retransmit_ps: int | None = None,
        dupack_threshold: int = 0,
        pad_last_packet: bool = False,
        scan_timers_while_resending: bool = False,
        report_every_timeout: bool = False,
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
        coding = flow.coding
        self._coding = coding
        if coding is None:
            n_data = n
            self._last_seq = n - 1  # the message's last data packet
        else:
            lay = coding.layout
            n_data = lay.n_data
            last_block = lay.n_blocks - 1
            self._last_seq = lay.wire_seq(last_block, lay.data_packets(last_block) - 1)
        self.last_payload_bytes = flow.size_bytes - (n_data - 1) * mss_bytes
        self.full_wire_bytes = mss_bytes + header_bytes
        self.last_wire_bytes = (mss_bytes if pad_last_packet else self.last_payload_bytes) + (
            header_bytes
        )
        self._on_complete = on_complete
        self.acked = bytearray(n)
        # acknowledged, or in a block known decoded: never (re)sent again
        self.settled = bytearray(n)
        self.block_done = bytearray(coding.layout.n_blocks) if coding is not None else None
        self.n_blocks_done = 0
        self.nacks = 0
        self.trims = 0  # NACKs of trimmed copies
        self.rtt_counts = None  # engine.record_rtts: the run's RTT bins (uno.metrics.rtts)
        self.notices = 0  # congestion notices heard from switches (uno.net.qcn)
        self._symbols: dict[int, object] = {}  # block -> coded symbols (real coder only)
        self._entropy_of = array("H", bytes(2 * n)) if lb.wants_loss_feedback else None
        self.outstanding: dict[int, int] = {}  # seq -> send time of the copy counted in flight
        self._rto_fifo: deque = deque()  # (send time, seq) in send order; stale entries skipped
        self.retx_queue: deque = deque()
        self.next_seq = 0
        self.inflight_bytes = 0
        self.n_acked = 0
        self.sent_bytes = 0  # wire bytes, including retransmissions
        self.sent_packets = 0
        self.acked_bytes = 0  # wire bytes newly acknowledged (the delivered count)
        # the delivery clock: when acked_bytes last advanced, or a send found every byte sent
        # acknowledged (delivery-rate estimation)
        self._delivered_ps = 0
        self._rate_samples = cc.wants_rate_samples
        self.retransmits = 0
        self.timeouts = 0
        self.lost_packets = 0
        self.dup_acks = 0
        self.ecn_acks = 0
        self.done = False
        self._next_send_ps = 0
        # the pacing wake's time (-1: none); a wake at another time, left behind when
        # _rate_changed brought the next send forward, is stale and does nothing
        self._wake_at = -1
        self._nic = host.nic_scheduler  # the host's NIC turn-taking (uno.net.nic)
        self._timer_armed = False
        self._last_timeout_ps = 0
        self.timer_granularity_ps = timer_granularity_ps
        self.rto_ps = flow.rto_ps
        self._rto_after_retransmit_ps = rto_after_retransmit_ps
        self.dupack_threshold = dupack_threshold
        # the Uno artifact's rules (transport.<class>.scan_timers_while_resending,
        # report_every_timeout): see _scan_while_resending and _report_timeouts
        self.scan_timers_while_resending = scan_timers_while_resending
        self.report_every_timeout = report_every_timeout
        self.fast_retransmits = 0
        self._last_fast_loss_ps: int | None = None
        # send times of acknowledged transmissions sent after the oldest entry of _rto_fifo,
        # sorted: its length is how many packets sent after that entry were acknowledged
        self._acked_later: list[int] = []
        self._dup_ack_cc = cc.wants_duplicate_acks
        self._int_cc = cc.wants_int
        self._reports = getattr(cc, "hears_reports", False)
        self._send_events = cc.wants_send_events
        self._keys: dict[int, int] = {}  # entropy -> ECMP hash key of (src, dst, entropy)

    @property
    def last_seq(self) -> int:
        """Sequence number of the message's last data packet (whose size may differ)."""
        return self._last_seq

    @property
    def rto_after_retransmit_ps(self) -> int | None:
        """The retransmission timeout once a packet was retransmitted (None: unchanged)."""
        return self._rto_after_retransmit_ps

    @property
    def on_complete(self):
        """What the sender calls with its flow when the flow completes."""
        return self._on_complete

    def use_nic(self, nic) -> None:
        """Take turns at ``nic`` (a NIC another data plane schedules) instead of the host's."""
        self._nic = nic

    def restore_send_state(self, timer_armed: bool, next_send_ps: int, wake_at_ps: int) -> None:
        """Set the retransmission timer's state, the earliest next send (pacing) and the pending
        wake (-1: none), as a data plane that ran this sender elsewhere left them."""
        self._timer_armed = timer_armed
        self._next_send_ps = next_send_ps
        self._wake_at = wake_at_ps

    # ---- sending ----------------------------------------------------------------------
    def start(self, _arg=None) -> None:
        self._try_send()

    def stop(self, _arg=None) -> None:
        """The flow's stop time (``Flow.stop_ps``): the sender sends nothing more, new or
        resent, and hears nothing more; a flow not finished by then stays unfinished."""
        self.done = True

    def _wake(self, at: int) -> None:
        if at != self._wake_at:
            return  # stale: the wake now due was set for another time
        self._wake_at = -1
        if not self.done:
            if self.scan_timers_while_resending:
                self._scan_while_resending(self._engine._now)
            self._try_send()

    def nic_ready(self) -> None:
        """The host's NIC is free and it is this sender's turn."""
        if not self.done:
            self._try_send(turn=True)

    def _try_send(self, turn: bool = False) -> None:
        """Send while the window, pacing and the NIC allow; ``turn``: called at this sender's
        turn at the NIC (:meth:`nic_ready`), when it may send although others wait."""
        engine = self._engine
        now = engine._now
        cc = self.cc
        while self.inflight_bytes < cc.cwnd_bytes:
            retx = self.retx_queue
            while retx and self.settled[retx[0]]:
                retx.popleft()
            if not retx and self.next_seq >= self.n_packets:
                break
            rate = cc.pacing_rate_bps
            if rate > 0.0 and now < self._next_send_ps:
                if self._wake_at < 0:
                    at = self._wake_at = self._next_send_ps
                    engine.call_at(at, self._wake, at)
                break
            if not self._nic.free(now, turn):
                self._nic.wait(self)
                break
            if retx:
                seq = retx.popleft()
                is_retx = True
                self.retransmits += 1
                if self._rto_after_retransmit_ps is not None:
                    self.rto_ps = self._rto_after_retransmit_ps
            else:
                seq = self.next_seq
                self.next_seq = seq + 1
                is_retx = False
            if seq != self._last_seq:
                payload, wire = self.mss_bytes, self.full_wire_bytes
            else:
                payload, wire = self.last_payload_bytes, self.last_wire_bytes
            flow = self.flow
            entropy = self.lb.next_entropy(now)
            if self._entropy_of is not None:
                self._entropy_of[seq] = entropy
            key = self._keys.get(entropy)
            if key is None:
                key = self._keys[entropy] = flow_hash_key(flow.src, flow.dst, entropy)
            pkt = Packet(
                DATA,
                flow.flow_id,
                seq,
                wire,
                payload,
                flow.src,
                flow.dst,
                entropy,
                key,
                now,
                is_retx,
            )
            if self._coding is not None:
                pkt.info = self._coded_symbols(seq)
            if self._rate_samples:
                pkt.tx_delivered = self.acked_bytes
                if not self.inflight_bytes and not is_retx:
                    # every byte sent so far acknowledged: the delivery clock restarts (the
                    # delivery-rate draft's "Transmitting a data packet"), for the whole flight
                    self._delivered_ps = now
                pkt.tx_delivered_ps = self._delivered_ps
            self.inflight_bytes += wire
            self.outstanding[seq] = now
            self._rto_fifo.append((now, seq))
            self.sent_bytes += wire
            self.sent_packets += 1
            if self._send_events:
                cc.on_send(now, wire)
                rate = cc.pacing_rate_bps
            if rate > 0.0:
                self._next_send_ps = now + int(wire * 8e12 / rate)
                if self._send_events:
                    self._watch_rate(now, wire)
            if not self._timer_armed:
                self._timer_armed = True
                engine.call_at(now + self.rto_ps, self._on_timer)
            self._host.send(pkt)

    def _watch_rate(self, sent_ps: int, wire: int) -> None:
        """A rate-based controller's timer may raise the rate before the next send time the
        last packet's gap set (DCQCN's rate-increase timer): wake then and shorten the gap."""
        due = self.cc.next_rate_change_ps()
        if due is not None and due < self._next_send_ps:
            self._engine.call_at(due, self._rate_changed, (sent_ps, wire))

    def _rate_changed(self, last) -> None:
        """Re-read the rate at a controller timer: the gap after the last packet sent at
        ``sent_ps`` becomes its size at the new rate (as a rate limiter rescales the pending
        gap), never ending before now."""
        if self.done:
            return
        sent_ps, wire = last
        now = self._engine._now
        cc = self.cc
        cc.advance(now)
        rate = cc.pacing_rate_bps
        if rate <= 0.0 or self._next_send_ps <= now:
            return
        nxt = max(now, sent_ps + int(wire * 8e12 / rate))
        if nxt < self._next_send_ps:
            self._next_send_ps = nxt
            self._wake_at = nxt  # (the wake pending for later is stale now)
            self._engine.call_at(nxt, self._wake, nxt)
        self._watch_rate(sent_ps, wire)

    def _wire_of(self, seq: int) -> int:
        return self.full_wire_bytes if seq != self._last_seq else self.last_wire_bytes

    def _coded_symbols(self, seq: int):
        """The coded symbols packet ``seq`` carries (None in count-only mode)."""
        coding = self._coding
        if not coding.coder.payload:
            return None
        block, pos = coding.layout.locate(seq)
        coded = self._symbols.get(block)
        if coded is None:
            coded = self._symbols[block] = coding.coder.encode_block(
                self.flow.flow_id, coding.layout, block
            )
        return coded[pos]

    def _entropies(self, seqs) -> list[int]:
        ent = self._entropy_of
        return [ent[s] for s in seqs] if ent is not None else []

    # ---- feedback ---------------------------------------------------------------------
    def on_control(self, pkt: Packet) -> None:
        """An ACK (or NACK) for this flow arrived at the sender's host."""
        if self.done:  # late feedback (copies still in flight when the flow completed)
            return
        if pkt.kind == CN:  # a switch's congestion notice (uno.net.qcn): its level in seq
            self.notices += 1
            hops = getattr(pkt, "int_hops", None)
            if hops is not None:  # a DCI switch's Switch-INT (uno.net.dci)
                self.cc.on_report(self._engine._now, pkt.sent_ps, 0.0, hops)
            else:
                self.cc.on_notify(self._engine._now, pkt.seq)
            return
        if self._reports and pkt.kind == ACK:  # R-bar_DQM of MLCC's receiver (uno.cc.mlcc)
            rate = getattr(pkt, "dqm_rate_bps", 0.0)
            if rate:
                self.cc.on_report(self._engine._now, pkt.sent_ps, rate)
        if pkt.kind != ACK:
            if pkt.kind == NACK and pkt.info is None:
                self._on_trim_nack(pkt)
                return
            if pkt.kind == NACK and self._coding is not None:
                self._on_nack(pkt)
                return
            raise InvariantError(f"flow {self.flow.flow_id}: unexpected control packet {pkt!r}")
        seq = pkt.seq
        wire = self.full_wire_bytes if seq != self._last_seq else self.last_wire_bytes
        if (
            self._coding is not None
            and pkt.info
            and not self.block_done[self._coding.layout.locate(seq)[0]]
        ):
            self._settle_block(self._coding.layout.locate(seq)[0])
        if self.acked[seq]:
            self.dup_acks += 1
            now = self._engine._now
            if self._dup_ack_cc:
                self.cc.on_ack_batch(
                    now, wire, pkt.ecn, now - pkt.sent_ps, pkt.sent_ps, self.inflight_bytes,
                    self.acked_bytes, duplicate=True,
                )  # fmt: skip
            if self._coding is not None and self.n_blocks_done == len(self.block_done):
                self._finish(now)
            return
        now = self._engine._now
        self.acked[seq] = 1
        self.settled[seq] = 1
        self.n_acked += 1
        if self.outstanding.pop(seq, None) is not None:
            self.inflight_bytes -= wire
        self.acked_bytes += wire
        ecn = pkt.ecn
        if ecn:
            self.ecn_acks += 1
        self._feedback(pkt, now, wire, ecn, now - pkt.sent_ps)
        if self.rtt_counts is not None:
            self.rtt_counts[rtt_bin_py(now - pkt.sent_ps)] += 1
        if self._lb_feedback:
            self.lb.on_ack(now, pkt.entropy, ecn)
        if self._coding is None:
            if self.n_acked == self.n_packets:
                self._finish(now)
                return
        elif self.n_blocks_done == len(self.block_done):
            self._finish(now)
            return
        if self.dupack_threshold:
            self._detect_losses(now, pkt.sent_ps)
        if self.scan_timers_while_resending:
            self._scan_while_resending(now)
        self._try_send()

    def _feedback(self, pkt: Packet, now: int, wire: int, ecn: bool, rtt: int) -> None:
        """The controller hears of the ACK (:meth:`uno.cc.base.CongestionControl.on_ack_batch`):
        with the bytes in flight and delivered after it, its delivery-rate sample when the
        controller reads one, and its INT records when it reads them."""
        rate_bytes = rate_ps = 0
        if self._rate_samples:
            rate_bytes = self.acked_bytes - pkt.tx_delivered
            rate_ps = now - pkt.tx_delivered_ps
            self._delivered_ps = now
        hops = getattr(pkt, "int_hops", None) if self._int_cc else None
        self.cc.on_ack_batch(
            now, wire, ecn, rtt, pkt.sent_ps, self.inflight_bytes, self.acked_bytes, rate_bytes,
            rate_ps, False, hops or (),
        )  # fmt: skip

    def _settle_block(self, block: int) -> None:
        """The receiver decoded ``block``: its other packets need not arrive."""
        self.block_done[block] = 1
        self.n_blocks_done += 1
        self._symbols.pop(block, None)
        outstanding = self.outstanding
        for seq in self._coding.layout.wire_range(block):
            self.settled[seq] = 1
            if outstanding.pop(seq, None) is not None:
                self.inflight_bytes -= self._wire_of(seq)

    def _on_nack(self, pkt: Packet) -> None:
        """The receiver's block timer expired: retransmit the block's missing packets that are
        still counted in flight (the others are acknowledged, queued for retransmission already,
        or not sent yet)."""
        now = self._engine._now
        self.nacks += 1
        outstanding = self.outstanding
        lost = []
        for seq in pkt.info:
            if not self.settled[seq] and outstanding.pop(seq, None) is not None:
                self.inflight_bytes -= self._wire_of(seq)
                self.retx_queue.append(seq)
                lost.append(seq)
        self.lost_packets += len(lost)
        self.lb.on_nack(now, self._entropies(lost))
        last = self._last_fast_loss_ps
        if last is None or now - last >= self.flow.path.base_rtt_ps:
            self._last_fast_loss_ps = now
            self.cc.on_nack(now)
        self._try_send()

    def _on_trim_nack(self, pkt: Packet) -> None:
        """A switch trimmed the copy of ``pkt.seq`` sent at ``pkt.sent_ps``: if that copy is the
        one counted in flight, it leaves the flight and is resent at once, ahead of other
        retransmissions; the balancer hears of it as a NACK, the controller at every trim (a
        trim is congestion news, not a loss episode: SMaRTT's Quick Adapt reads each)."""
        now = self._engine._now
        seq = pkt.seq
        self.trims += 1
        if self.settled[seq] or self.outstanding.get(seq) != pkt.sent_ps:
            return  # acknowledged already, or a newer copy is in flight
        del self.outstanding[seq]
        self.inflight_bytes -= self._wire_of(seq)
        self.retx_queue.appendleft(seq)
        self.lb.on_nack(now, self._entropies((seq,)))
        self.cc.on_nack(now)
        self._try_send()

    def _detect_losses(self, now: int, acked_sent_ps: int) -> None:
        """Fast retransmit: every outstanding packet with ``dupack_threshold`` or more packets
        sent after it acknowledged is lost (oldest first, in send order)."""
        fifo = self._rto_fifo
        outstanding = self.outstanding
        later = self._acked_later
        if fifo and acked_sent_ps > fifo[0][0]:
            insort(later, acked_sent_ps)
        lost = []
        while fifo:
            sent_ps, seq = fifo[0]
            if outstanding.get(seq) == sent_ps:
                if len(later) < self.dupack_threshold:
                    break
                del outstanding[seq]
                self.inflight_bytes -= self._wire_of(seq)
                self.retx_queue.append(seq)
                lost.append(seq)
            fifo.popleft()
            self._drop_acked_before(fifo[0][0] if fifo else None)
        if lost:
            self.lost_packets += len(lost)
            self.fast_retransmits += len(lost)
            self.lb.on_nack(now, self._entropies(lost))
            last = self._last_fast_loss_ps
            if last is None or now - last >= self.flow.path.base_rtt_ps:
                self._last_fast_loss_ps = now
                self.cc.on_nack(now)

    def _drop_acked_before(self, oldest_sent_ps: int | None) -> None:
        """Forget acknowledged send times at or before the new oldest entry of the fifo."""
        later = self._acked_later
        if oldest_sent_ps is None:
            later.clear()
            return
        i = 0
        while i < len(later) and later[i] <= oldest_sent_ps:
            i += 1
        if i:
            del later[:i]

    def _on_timer(self, _arg=None) -> None:
        """Declare lost every packet unacknowledged ``rto_ps`` after its (re)transmission.

        The timer is checked at most every ``timer_granularity_ps`` (htsim scans its timers
        every microsecond), so a burst of expiries is handled in a few passes."""
        self._timer_armed = False
        if self.done:
            return
        now = self._engine._now
        lost = self._expire(now)
        if lost:
            self._report_timeouts(now, lost)
        fifo = self._rto_fifo
        if fifo:
            self._timer_armed = True
            due = fifo[0][0] + self.rto_ps
            self._engine.call_at(max(due, now + self.timer_granularity_ps), self._on_timer)
        self._try_send()

    def _expire(self, now: int) -> list[int]:
        """Every packet unacknowledged ``rto_ps`` after its (re)transmission leaves the bytes in
        flight for the retransmission queue, oldest first; returns their sequence numbers."""
        rto = self.rto_ps
        fifo = self._rto_fifo
        outstanding = self.outstanding
        lost = []
        while fifo:
            sent_ps, seq = fifo[0]
            if outstanding.get(seq) != sent_ps:
                fifo.popleft()  # acknowledged, or retransmitted since
                continue
            if sent_ps + rto > now:
                break
            fifo.popleft()
            del outstanding[seq]
            self.inflight_bytes -= self._wire_of(seq)
            self.retx_queue.append(seq)
            lost.append(seq)
        if self.dupack_threshold:
            self._drop_acked_before(fifo[0][0] if fifo else None)
        return lost

    def _report_timeouts(self, now: int, lost: list[int]) -> None:
        """Packets ``lost`` timed out at ``now``: the load balancer hears of their paths; the
        congestion controller hears of at most one timeout per base RTT (one loss episode), or,
        with ``report_every_timeout``, of each timed-out packet (the Uno artifact's BBR resets
        its window for every one: ``BBRSrc::retransmit_packet`` → ``apply_timeout_penalty``)."""
        self.lost_packets += len(lost)
        self.lb.on_timeout(now, self._entropies(lost))
        if self.report_every_timeout:
            for _ in lost:
                self.timeouts += 1
                self._last_timeout_ps = now
                self.cc.on_timeout(now)
        elif now - self._last_timeout_ps >= self.flow.path.base_rtt_ps or self.timeouts == 0:
            self.timeouts += 1
            self._last_timeout_ps = now
            self.cc.on_timeout(now)

    def _scan_while_resending(self, now: int) -> None:
        """With ``scan_timers_while_resending``: while retransmissions wait (the window or the
        pacer holds them), every ACK and every paced send first tests the retransmission timers,
        not only the periodic scan (the Uno artifact's ``MprdmaSrc::send_packets`` calls
        ``retransmit_packet`` whenever a resend is pending)."""
        if self.retx_queue:
            lost = self._expire(now)
            if lost:
                self._report_timeouts(now, lost)

    def _finish(self, now: int) -> None:
        if self.inflight_bytes != 0 and self.outstanding:
            raise InvariantError(
                f"flow {self.flow.flow_id}: all packets acked but {len(self.outstanding)} outstanding"
            )
        self.done = True
        self.inflight_bytes = 0
        self.flow.finish_ps = now
        self._on_complete(self.flow)

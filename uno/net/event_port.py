"""An output port that decides each departure when the previous one ends: what a port must do
to be paused (PFC), to serve priorities and to write in-band telemetry at departure.

:class:`uno.net.port.Port` computes a packet's departure time when it is enqueued, which is
exact for one FIFO at a constant rate and costs one engine event per packet-hop. A PFC PAUSE
stops a port between two packets at a time no enqueue can foresee, and a strict-priority queue
lets a later control packet overtake queued data; both break that precomputation. This port
keeps the link's state explicitly instead:

* two FIFOs, served by strict priority: control packets (ACKs, NACKs) ahead of data when the
  switch runs ``ack_priority`` (the Uno artifact serves header-only packets from a separate
  high-priority queue; here strictly, not 20:1), otherwise one FIFO for everything;
* at the end of each serialisation (one engine event) the departing packet is settled — its
  bytes leave the queue, RED / the phantom queue decide its ECN mark on the occupancy behind
  it, it releases its PFC ingress share, an INT record is written — and the next packet starts
  unless its priority is paused; a paused port finishes the packet in service (a frame is never
  cut) and resumes where it stopped;
* packets on the wire are a FIFO with at most one pending delivery event, as in ``Port``.

So a busy port costs two events per packet-hop (end of serialisation, arrival) where ``Port``
costs one; ``engine.port_model=auto`` uses this port only when PFC, INT or ``ack_priority`` is
on. With ``ack_priority`` it is what makes an ACK take its time on the link from the data
behind it: a 64-B ACK between data packets shifts their departures by 5 ns at 100 Gb/s, which
keeps flows paced at line rate from meeting a full drop-tail queue at one fixed phase. With neither
and no pause, the departures, marks and deliveries are those of ``Port`` (marking at dequeue on
the occupancy behind the packet, the same per-port random stream in the same order); the tests
run the existing experiments' scenarios with both and compare ``flows.parquet``.

Buffer accounting is ``Port``'s: ``bytes`` counts the data FIFO including the packet in service;
the control FIFO (with ``ack_priority``) is never dropped and counts in neither the buffer, RED
nor the phantom queue.
"""

from __future__ import annotations

from collections import deque
from typing import TYPE_CHECKING

from uno.core.packet import DATA
from uno.net.overflow import ADMIT, verdict
from uno.net.port import PortBase

if TYPE_CHECKING:
    from uno.core.engine import Engine
    from uno.net.network import Network

#: priority classes: control (served first when the port has a control lane) and data
CONTROL = 0
DATA_PRIORITY = 1
#: ``_busy_until_ps`` of a port whose data priority is paused: hosts wait for ``resume``
PAUSED_PS = 1 << 62


class EventPort(PortBase):
    """Output queue + link from its ``owner`` node to ``next_node``, pausable per priority."""

    __slots__ = (
        "name",
        "kind",
        "rate_bps",
        "delay_ps",
        "buffer_bytes",
        "overflow_policy",
        "trim_bytes",
        "trims",
        "_engine",
        "_push",
        "_new_eid",
        "_network",
        "_queues",
        "_ser",
        "_tx_pkt",
        "_tx_queue",
        "_tx_done_cb",
        "_wire",
        "_wire_pending",
        "_deliver_cb",
        "_busy_until_ps",
        "_next_receive",
        "next_node",
        "owner",
        "bytes",
        "red",
        "phantom",
        "_mark_physical",
        "_mark_phantom",
        "_marking",
        "_phantom_acks",
        "_phantom_drops",
        "control_lane",
        "fault",
        "qcn",
        "qcn_message_bytes",
        "paused",
        "pause_log",
        "int_stamper",
        "tx_done_bytes",
        "arrivals",
        "enqueued_bytes",
        "drops",
        "ecn_marks",
        "max_bytes",
    )

    def __init__(
        self,
        engine: Engine,
        network: Network,
        name: str,
        rate_bps: int,
        delay_ps: int,
        buffer_bytes: int,
        kind: str = "",
    ):
        self._init_link(engine, network, name, rate_bps, delay_ps, buffer_bytes, kind)
        self._queues = (deque(), deque())  # by priority: CONTROL, DATA_PRIORITY
        self._tx_pkt = None  # the packet in service
        self._tx_queue = DATA_PRIORITY
        self._tx_done_cb = self._tx_done
        self._wire: deque = deque()  # (arrival time, packet) of the packets started, in order
        self._wire_pending = False
        self._deliver_cb = self._deliver
        self.control_lane = False  # control packets in a strict-priority FIFO of their own
        self.paused = [False, False]
        self.pause_log = None  # uno.net.pfc.PauseLog when PFC can pause this port
        self.int_stamper = None  # uno.net.int.IntStamper when this port writes INT records
        self.tx_done_bytes = 0  # bytes whose serialisation ended (INT's txBytes)

    def enable_control_lane(self) -> None:
        """Serve control packets from a FIFO of their own, strictly ahead of data."""
        self.control_lane = True

    # ---- queueing ---------------------------------------------------------------------
    def receive(self, pkt) -> None:
        now = self._engine._now
        tx = self._tx_pkt
        if tx is not None and tx.dep_ps <= now:
            # the packet in service leaves now: settle it before this arrival, as Port does
            # (its end-of-serialisation event may come after this one at the same time)
            self._tx_done(tx)
        self.arrivals += 1
        if pkt.kind and self.control_lane:
            queue = CONTROL
        else:
            queue = DATA_PRIORITY
            size = pkt.size_bytes
            if (  # (the policy is asked only when the buffer has no room, as in Port)
                self.bytes + size > self.buffer_bytes
                and (outcome := verdict(self.overflow_policy, self.bytes, size, self.buffer_bytes))
                != ADMIT
            ):
                if not self._overflow(pkt, now, outcome):
                    return
                queue = CONTROL  # trimmed: its header goes on in the control lane
            else:
                qbytes = self.bytes + size
                self.bytes = qbytes
                self.enqueued_bytes += size
                if qbytes > self.max_bytes:
                    self.max_bytes = qbytes
                if self.phantom is not None and (self._phantom_acks or pkt.kind == DATA):
                    self.phantom.enqueue(now, size)
                if self.qcn is not None and pkt.kind == DATA:
                    self._notify_source(pkt, now, qbytes)
        self._queues[queue].append(pkt)
        busy = self._busy_until_ps
        if busy != PAUSED_PS:
            self._busy_until_ps = (busy if busy > now else now) + self.serialization_ps(
                pkt.size_bytes
            )
        if self._tx_pkt is None:
            self._start(now)

    def _start(self, now: int) -> None:
        """Put the next unpaused packet, by priority, on the link (the link is idle).

        A started frame is never cut, so its arrival at the next node is known now: it joins
        the wire FIFO at once, and its delivery event is pushed when ``Port`` would push it
        (now if the wire is idle, else at the previous packet's delivery), which keeps the
        order of same-time events, and so the results, those of ``Port``."""
        queues = self._queues
        paused = self.paused
        if queues[CONTROL] and not paused[CONTROL]:
            queue = CONTROL
        elif queues[DATA_PRIORITY] and not paused[DATA_PRIORITY]:
            queue = DATA_PRIORITY
        else:
            return
        pkt = queues[queue].popleft()
        end = now + self.serialization_ps(pkt.size_bytes)
        pkt.dep_ps = end
        self._tx_pkt = pkt
        self._tx_queue = queue
        self._push((end, 1, self._new_eid(), self._tx_done_cb, pkt))
        arrival = end + self.delay_ps
        self._wire.append((arrival, pkt))
        if not self._wire_pending:
            self._wire_pending = True
            self._push((arrival, 1, self._new_eid(), self._deliver_cb, None))

    def _tx_done(self, pkt) -> None:
        """``pkt``'s serialisation ended: settle it (queue bytes, ECN mark on the occupancy
        behind it, PFC ingress share, INT record) and start the next packet. Runs once per
        packet: from its event, or earlier at the same time from ``receive`` / ``_deliver``."""
        if pkt is not self._tx_pkt:
            return  # already settled
        self._tx_pkt = None
        now = pkt.dep_ps
        size = pkt.size_bytes
        remaining = self.bytes
        if self._tx_queue == DATA_PRIORITY:
            remaining -= size
            self.bytes = remaining
            if self._marking and pkt.kind == DATA and not pkt.ecn:
                self._decide_mark(pkt, remaining)
        self.tx_done_bytes += size
        ingress = getattr(pkt, "ingress", None)
        if ingress is not None:
            pkt.ingress = None
            ingress.release(size)
        if self.int_stamper is not None and pkt.kind == DATA:
            self.int_stamper.stamp(pkt, now, remaining, self.tx_done_bytes, self.rate_bps)
        self._start(now)

    def _deliver(self, _arg=None) -> None:
        wire = self._wire
        _, pkt = wire.popleft()
        if pkt is self._tx_pkt:  # zero-delay link: its end of serialisation is now too
            self._tx_done(pkt)
        if wire:
            self._push((wire[0][0], 1, self._new_eid(), self._deliver_cb, None))
        else:
            self._wire_pending = False
        self._next_receive(pkt)

    # ---- PFC ----------------------------------------------------------------------------
    def pause(self, priority: int) -> None:
        """A PAUSE for ``priority`` arrived: start no packet of it until :meth:`resume`."""
        if self.paused[priority]:
            return
        self.paused[priority] = True
        now = self._engine._now
        if self.pause_log is not None:
            self.pause_log.paused(self, priority, now)
        if priority == DATA_PRIORITY:
            self._busy_until_ps = PAUSED_PS

    def resume(self, priority: int) -> None:
        """A RESUME for ``priority`` arrived: carry on where the port stopped."""
        if not self.paused[priority]:
            return
        self.paused[priority] = False
        now = self._engine._now
        if self.pause_log is not None:
            self.pause_log.resumed(self, priority, now)
        if priority == DATA_PRIORITY:
            self._busy_until_ps = self._drain_end(now)
        if self._tx_pkt is None:
            self._start(now)
        resumed = getattr(self.owner, "nic_resumed", None)
        if resumed is not None:
            resumed()

    def _drain_end(self, now: int) -> int:
        """When the packets queued now will have left, if nothing pauses the port again."""
        t = self._tx_pkt.dep_ps if self._tx_pkt is not None else now
        ser = self.serialization_ps
        for queue in self._queues:
            for p in queue:
                t += ser(p.size_bytes)
        return t

    # ---- observation (as Port) ----------------------------------------------------------
    def _waiting(self) -> int:
        return len(self._queues[0]) + len(self._queues[1]) + (self._tx_pkt is not None)

    def packets_held(self) -> int:
        """Packets accepted and not yet handed on (queued or on the wire, in service too)."""
        return len(self._queues[0]) + len(self._queues[1]) + len(self._wire)

    def _left_unsettled(self, now: int):
        """The packet in service if its serialisation has ended by ``now`` but its end event
        (due at the same time) has not run yet, else None."""
        tx = self._tx_pkt
        return tx if tx is not None and tx.dep_ps <= now else None

    @property
    def tx_packets(self) -> int:
        """Packets that entered the queue and are no longer in it (sent or on the wire); as
        :class:`uno.net.port.Port` counts them, a packet whose serialisation ended now has."""
        left = self._left_unsettled(self._engine._now) is not None
        return self.arrivals - self.drops - self._waiting() + left

    def occupancy_bytes(self, now: int) -> int:
        """Data queue occupancy at ``now``: as :meth:`uno.net.port.Port.occupancy_bytes` reads
        it, a data packet whose serialisation ended at ``now`` has left (observing changes
        nothing: its end event still runs in its turn)."""
        left = self._left_unsettled(now)
        if left is not None and self._tx_queue == DATA_PRIORITY:
            return self.bytes - left.size_bytes
        return self.bytes

    def __repr__(self) -> str:
        return f"EventPort({self.name}, {self.rate_bps / 1e9:g} Gb/s, {self.delay_ps} ps)"

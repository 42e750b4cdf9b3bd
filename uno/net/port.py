"""An output port: a FIFO queue with byte-limited tail drop, optional ECN marking (RED on the
physical queue and/or a phantom queue), and the link (rate + propagation) to the next node.

One event per packet per hop, and at most one pending event per port. When a packet is
enqueued its departure time is known exactly (FIFO, constant rate:
``max(now, busy_until) + serialisation``), and so is its arrival at the next node, departure +
propagation delay. The port keeps every packet it accepted and has not yet handed on in one
FIFO list: ``[head, qhead)`` are on the wire, ``[qhead, end)`` still in the queue. Only the
oldest packet on the port has an event in the engine; delivering it schedules the next one.
This keeps the engine's heap as small as the number of busy ports rather than the number of
packets in flight (thousands on a WAN link), which makes every heap operation cheaper.

A packet leaves the queue part ("is settled") at the first moment at or after its departure
when the port is touched: before every enqueue, at its own delivery, or when read.

Why marking at dequeue is exact: a packet p is settled at the first touch at or after its
departure ``dep_p``. Any packet behind p in the queue arrived before ``dep_p`` (an arrival at or
after ``dep_p`` settles p first). So the bytes left in the queue right after settling p are the
queue occupancy at p's departure, which is what RED-at-dequeue looks at (the occupancy behind
the departing packet, as in htsim). The same argument gives the phantom level at ``dep_p``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from uno.config.parts import declare_choices
from uno.core.packet import CN, DATA, TRIM, Packet
from uno.core.units import serialization_ps
from uno.net.hashing import flow_hash_key
from uno.net.overflow import ADMIT, OVERFLOW_DROP, OVERFLOW_TRIM, verdict
from uno.net.phantom import PhantomQueue
from uno.net.red import RedMarker

if TYPE_CHECKING:
    from uno.core.engine import Engine
    from uno.net.network import Network

DROP_BUFFER = "buffer_full"

#: compact the FIFO list once this many delivered packets sit at its front
_COMPACT_AT = 1024

#: ECN decided by the physical queue only, by the phantom queue only, or by either.
MARK_PHYSICAL = "physical"
MARK_PHANTOM = "phantom"
MARK_EITHER = "either"
MARK_SOURCES = (MARK_PHYSICAL, MARK_PHANTOM, MARK_EITHER)
declare_choices("switch.mark_source", (*MARK_SOURCES, "auto"))


class PortBase:
    """What every output port shares: the link's facts and counters, wiring (next node, ECN
    marking, phantom accounting, faults) and the marking decision at dequeue. Subclasses keep
    the slots and the queueing: :class:`Port` (lazy FIFO), :class:`uno.net.event_port.EventPort`
    (pausable, by priority)."""

    __slots__ = ()

    def _init_link(self, engine, network, name, rate_bps, delay_ps, buffer_bytes, kind) -> None:
        """Check and set the link's facts, the wiring and the counters."""
        if rate_bps <= 0:
            raise ValueError(f"port {name}: rate_bps must be > 0")
        if delay_ps < 0:
            raise ValueError(f"port {name}: delay_ps must be >= 0")
        if buffer_bytes <= 0:
            raise ValueError(f"port {name}: buffer_bytes must be > 0")
        self.name = name
        self.kind = kind
        self.rate_bps = rate_bps
        self.delay_ps = delay_ps
        self.buffer_bytes = buffer_bytes
        self._engine = engine
        # the engine's scheduling API for packet events (Engine.push_entry / next_eid)
        self._push = engine.push_entry
        self._new_eid = engine.next_eid
        self._network = network
        self._ser: dict[int, int] = {}
        self._busy_until_ps = 0
        self._next_receive = None
        self.next_node = None
        self.owner = None
        self.bytes = 0
        self.red: RedMarker | None = None
        self.phantom: PhantomQueue | None = None
        self._mark_physical = False
        self._mark_phantom = False
        self._marking = False
        self._phantom_acks = True  # control packets count in the phantom queue
        self._phantom_drops = False  # dropped data packets count in the phantom queue
        self.overflow_policy = OVERFLOW_DROP  # what a packet that does not fit meets
        self.trim_bytes = 0  # a trimmed packet's wire size (OVERFLOW_TRIM)
        self.trims = 0
        self.fault = None  # uno.faults.models.FaultyLink between this port and the next node
        self.qcn = None  # uno.net.qcn.CongestionPoint when this port sends congestion notices
        self.qcn_message_bytes = 0  # the notices' wire size
        # statistics
        self.arrivals = 0
        self.enqueued_bytes = 0
        self.drops = 0
        self.ecn_marks = 0
        self.max_bytes = 0

    # ---- wiring -----------------------------------------------------------------------
    def connect(self, next_node) -> None:
        """Deliver packets leaving this port to ``next_node.receive``."""
        self.next_node = next_node
        self._next_receive = next_node.receive

    def set_marking(
        self,
        red: RedMarker | None,
        phantom: PhantomQueue | None,
        mark_source: str,
    ) -> None:
        """Attach ECN marking. ``mark_source`` picks which queue's RED decides (see MARK_*)."""
        if mark_source not in MARK_SOURCES:
            raise ValueError(f"mark_source must be one of {MARK_SOURCES}, got {mark_source!r}")
        if mark_source in (MARK_PHANTOM, MARK_EITHER) and phantom is None:
            raise ValueError(f"port {self.name}: mark_source={mark_source!r} needs a phantom queue")
        self.red = red
        self.phantom = phantom
        self._mark_physical = red is not None and mark_source in (MARK_PHYSICAL, MARK_EITHER)
        self._mark_phantom = phantom is not None and mark_source in (MARK_PHANTOM, MARK_EITHER)
        self._marking = self._mark_physical or self._mark_phantom

    def set_phantom_accounting(self, count_control: bool, count_drops: bool) -> None:
        """What the phantom queue counts besides accepted data packets: control packets (ACKs)
        and data packets the tail drop refused."""
        self._phantom_acks = count_control
        self._phantom_drops = count_drops

    def set_congestion_point(self, point, message_bytes: int) -> None:
        """Sample the data this port accepts with ``point`` (:mod:`uno.net.qcn`) and send
        each congestion notice, ``message_bytes`` long, to the sampled packet's source."""
        self.qcn = point
        self.qcn_message_bytes = message_bytes

    def _overflow(self, pkt, now: int, outcome: int) -> bool:
        """The data lane has no room for ``pkt`` and the overflow policy said ``outcome``: a
        data packet is trimmed (:func:`trim`; returns True), anything else dropped (counted,
        its PFC share released; returns False)."""
        if outcome == OVERFLOW_TRIM and pkt.kind == DATA:
            trim(self, pkt)
            return True
        if self._phantom_drops and self.phantom is not None and pkt.kind == DATA:
            self.phantom.enqueue(now, pkt.size_bytes)
        self.drops += 1
        ingress = getattr(pkt, "ingress", None)
        if ingress is not None:
            pkt.ingress = None
            ingress.dropped(pkt)
        self._network.drop(pkt, DROP_BUFFER, self)
        return False

    def _notify_source(self, pkt, now: int, queue_bytes: int) -> None:
        """The data packet ``pkt`` joined the queue (``queue_bytes`` now): if the congestion
        point samples it and finds congestion, this port's switch sends a notice of the
        quantised feedback to its source, routed as any packet from now on."""
        level = self.qcn.accepted(pkt.size_bytes, queue_bytes)
        if not level:
            return
        notice = Packet(CN, pkt.flow_id, level, self.qcn_message_bytes, 0, pkt.dst, pkt.src,
                        pkt.entropy, flow_hash_key(pkt.dst, pkt.src, pkt.entropy), now)  # fmt: skip
        net = self._network
        net.injected[CN] += 1
        net.in_flight += 1
        self._push((now, 1, self._new_eid(), self.owner.receive, notice))

    def attach_faults(self, models: list) -> None:
        """Pass every packet leaving this link through fault ``models`` (uno.faults.models);
        a port without faults pays nothing for the option."""
        from uno.faults.models import FaultyLink

        if self.fault is None:
            self.fault = FaultyLink(self, models)
            self._next_receive = self.fault.receive
        else:
            self.fault.models.extend(models)

    @property
    def marks_physical(self) -> bool:
        """Whether RED on the physical queue marks packets leaving this port."""
        return self._mark_physical

    @property
    def marks_phantom(self) -> bool:
        """Whether the phantom queue's RED marks packets leaving this port."""
        return self._mark_phantom

    @property
    def phantom_counts_control(self) -> bool:
        """Whether control packets (ACKs) count in the phantom queue."""
        return self._phantom_acks

    @property
    def phantom_counts_drops(self) -> bool:
        """Whether data packets the tail drop refused count in the phantom queue."""
        return self._phantom_drops

    def serialization_ps(self, size_bytes: int) -> int:
        """Time to serialise ``size_bytes`` on this link, in picoseconds."""
        ser = self._ser.get(size_bytes)
        if ser is None:
            ser = self._ser[size_bytes] = serialization_ps(size_bytes, self.rate_bps)
        return ser

    def _decide_mark(self, p, remaining: int) -> None:
        """ECN decision for data packet ``p`` leaving with ``remaining`` bytes behind it."""
        if (self._mark_phantom and self.phantom.decide_mark(p.dep_ps)) or (
            self._mark_physical and remaining > self.red.kmin_bytes and self.red.decide(remaining)
        ):
            p.ecn = True
            self.ecn_marks += 1

    @property
    def tx_bytes(self) -> int:
        return self.enqueued_bytes - self.bytes

    def phantom_bytes(self, now: int) -> float:
        """Phantom queue occupancy at ``now`` (0 if the port has none)."""
        return self.phantom.level_at(now) if self.phantom is not None else 0.0


def trim(port, pkt) -> None:
    """``port`` cuts data packet ``pkt``, which its buffer has no room for, to its header: a
    ``TRIM`` packet of ``port.trim_bytes``, which the port sends on in its control lane (a
    PFC ingress queue it entered through releases its bytes: headers bypass it, as control
    packets do)."""
    port.trims += 1
    ingress = getattr(pkt, "ingress", None)
    if ingress is not None:
        pkt.ingress = None
        ingress.release(pkt.size_bytes)
    pkt.kind = TRIM
    pkt.size_bytes = port.trim_bytes


class Port(PortBase):
    """Output queue + link from its ``owner`` node to ``next_node``."""

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
        "_fifo",
        "_head",
        "_qhead",
        "_event_pending",
        "_ser",
        "_busy_until_ps",
        "_next_receive",
        "_deliver_cb",
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
        self._fifo: list = []  # accepted, not yet delivered; [_head, _qhead) on the wire
        self._head = 0
        self._qhead = 0
        self._event_pending = False
        self.control_lane: ControlLane | None = None
        self._deliver_cb = self._deliver

    def enable_control_lane(self) -> None:
        """Serve control packets (ACKs, NACKs) in a lane of their own: they neither wait behind
        nor delay data, and count in neither the buffer, RED nor the phantom queue (htsim's
        high-priority queue for header-only packets, as an approximation: see ControlLane)."""
        self.control_lane = ControlLane(self)

    # ---- hot path ---------------------------------------------------------------------
    def receive(self, pkt) -> None:
        """Enqueue ``pkt`` now (tail drop if the buffer would overflow)."""
        if pkt.kind and self.control_lane is not None:  # kind 0 is DATA
            self.arrivals += 1
            self.control_lane.receive(pkt)
            return
        now = self._engine._now
        fifo = self._fifo
        qhead = self._qhead
        n = len(fifo)
        self.arrivals += 1
        if qhead < n and fifo[qhead].dep_ps <= now:
            if qhead + 1 < n and fifo[qhead + 1].dep_ps <= now:
                self._settle(now)
            else:  # usual case, inlined: exactly the oldest queued packet has left
                p = fifo[qhead]
                self._qhead = qhead + 1
                remaining = self.bytes - p.size_bytes
                self.bytes = remaining
                if self._marking and p.kind == DATA and not p.ecn:
                    self._decide_mark(p, remaining)
        size = pkt.size_bytes
        qbytes = self.bytes + size
        # (the overflow policy decides only for a packet the buffer has no room for: a call
        # per packet would cost more than the comparison)
        if (
            qbytes > self.buffer_bytes
            and (outcome := verdict(self.overflow_policy, self.bytes, size, self.buffer_bytes))
            != ADMIT
        ):
            if self._overflow(pkt, now, outcome):  # trimmed: its header goes on
                self.control_lane.receive(pkt)
            return
        self.bytes = qbytes
        self.enqueued_bytes += size
        if qbytes > self.max_bytes:
            self.max_bytes = qbytes
        phantom = self.phantom
        if phantom is not None and (self._phantom_acks or pkt.kind == DATA):
            phantom.enqueue(now, size)
        if self.qcn is not None and pkt.kind == DATA:
            self._notify_source(pkt, now, qbytes)
        ser = self._ser.get(size)
        if ser is None:
            ser = self.serialization_ps(size)
        busy = self._busy_until_ps
        dep = (busy if busy > now else now) + ser
        self._busy_until_ps = dep
        pkt.dep_ps = dep
        fifo.append(pkt)
        if not self._event_pending:
            self._event_pending = True
            self._push((dep + self.delay_ps, 1, self._new_eid(), self._deliver_cb, None))

    def _deliver(self, _arg=None) -> None:
        """Hand the oldest packet on the wire to the next node; schedule the following one."""
        fifo = self._fifo
        head = self._head
        pkt = fifo[head]
        if self._qhead == head:
            # Not settled by a later arrival: settle it now. Everything behind it arrived before
            # it departed (an arrival at or after its departure would have settled it).
            self._qhead = head + 1
            remaining = self.bytes - pkt.size_bytes
            self.bytes = remaining
            if self._marking and pkt.kind == DATA and not pkt.ecn:
                self._decide_mark(pkt, remaining)
        head += 1
        n = len(fifo)
        if head < n:
            self._push(
                (fifo[head].dep_ps + self.delay_ps, 1, self._new_eid(), self._deliver_cb, None)
            )
            if head >= _COMPACT_AT and head * 2 >= n:
                del fifo[:head]
                self._qhead -= head
                head = 0
        else:
            self._event_pending = False
            fifo.clear()
            self._qhead = 0
            head = 0
        self._head = head
        self._next_receive(pkt)

    def _settle(self, now: int) -> None:
        """Settle every queued packet that has left by ``now``, deciding its ECN mark."""
        fifo = self._fifo
        i = self._qhead
        n = len(fifo)
        remaining = self.bytes
        marking = self._marking
        while i < n:
            p = fifo[i]
            if p.dep_ps > now:
                break
            i += 1
            remaining -= p.size_bytes
            if marking and p.kind == DATA and not p.ecn:
                self._decide_mark(p, remaining)
        self._qhead = i
        self.bytes = remaining

    # ---- observation --------------------------------------------------------------------
    @property
    def tx_packets(self) -> int:
        """Packets that entered the queue and are no longer in it (sent or on the wire)."""
        waiting = len(self._fifo) - self._qhead
        if self.control_lane is not None:
            waiting += self.control_lane.waiting(self._engine._now)
        return self.arrivals - self.drops - waiting

    def occupancy_bytes(self, now: int) -> int:
        """Physical queue occupancy at ``now`` (settles departed packets first)."""
        self._settle(now)
        return self.bytes

    def packets_held(self) -> int:
        """Packets accepted and not yet handed on (queued, in service, or on the wire)."""
        held = len(self._fifo) - self._head
        if self.control_lane is not None:
            held += self.control_lane.packets_held()
        return held

    def __repr__(self) -> str:
        return f"Port({self.name}, {self.rate_bps / 1e9:g} Gb/s, {self.delay_ps} ps)"


class ControlLane:
    """The control packets of one port: a FIFO of their own at the port's line rate, never
    dropped and invisible to the data queue's buffer, RED and phantom accounting.

    htsim's CompositeQueue puts header-only packets in a high-priority queue served 20:1 ahead of
    data. Here the two lanes do not take time from each other: an ACK (64 B, 5 ns at 100 Gb/s)
    neither waits for the data packet in service nor delays the data behind it, so each ACK can
    be up to one data serialisation (333 ns) early and data up to 5 ns early per ACK. That keeps
    each lane's departures known at enqueue, the property the lazy data port relies on, but it
    also takes away the jitter ACKs give data: flows paced at line rate meet a full drop-tail
    queue at fixed phases, and some lose nearly their whole first window. ``engine.port_model``
    ``auto`` therefore runs ``ack_priority`` on event ports (one transmitter, control first);
    this lane serves only an explicit ``port_model=lazy``. One pending engine event at most, like
    the data lane.
    """

    __slots__ = ("_port", "_fifo", "_head", "_busy_until_ps", "_event_pending", "_deliver_cb")

    def __init__(self, port: Port):
        self._port = port
        self._fifo: list = []
        self._head = 0
        self._busy_until_ps = 0
        self._event_pending = False
        self._deliver_cb = self._deliver

    def receive(self, pkt) -> None:
        port = self._port
        now = port._engine._now
        busy = self._busy_until_ps
        dep = (busy if busy > now else now) + port.serialization_ps(pkt.size_bytes)
        self._busy_until_ps = dep
        pkt.dep_ps = dep
        self._fifo.append(pkt)
        if not self._event_pending:
            self._event_pending = True
            port._push((dep + port.delay_ps, 1, port._new_eid(), self._deliver_cb, None))

    def _deliver(self, _arg=None) -> None:
        fifo = self._fifo
        head = self._head
        pkt = fifo[head]
        head += 1
        port = self._port
        if head < len(fifo):
            port._push(
                (fifo[head].dep_ps + port.delay_ps, 1, port._new_eid(), self._deliver_cb, None)
            )
            if head >= _COMPACT_AT and head * 2 >= len(fifo):
                del fifo[:head]
                head = 0
        else:
            self._event_pending = False
            fifo.clear()
            head = 0
        self._head = head
        port._next_receive(pkt)

    def packets_held(self) -> int:
        return len(self._fifo) - self._head

    def waiting(self, now: int) -> int:
        """Control packets not yet departed at ``now``."""
        return sum(1 for p in self._fifo[self._head :] if p.dep_ps > now)

"""The lazy port in the kernel (:class:`uno.net.port.Port`, the Python data plane's default):
an arrival projects its packet's departure at once (a busy-until clock), and the packets that
have left by a later arrival or delivery are settled then: their bytes leave the queue and RED /
the phantom queue decide their marks. A port has at most one pending delivery event per lane
(data, and the control lane of ``switch.ack_priority``: its own FIFO at line rate, never
dropped, outside buffer, RED and phantom queue). :func:`port_receive` is every port's entry,
event ports included. Times in ps, sizes in bytes."""

from __future__ import annotations

from numba import njit

from uno.core.packet import DATA
from uno.core.units import serialization_ps_kernel
from uno.net.compiled.event_port import eport_receive
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import (
    BAD_BYTES,
    BAD_HELD,
    BAD_QUEUE_SUM,
    EV,
    EV_BITS,
    FL,
    LANE_DATA,
    PF,
    H,
    K,
    P,
)
from uno.net.compiled.packets import fifo_append
from uno.net.compiled.queue import (
    ADMITTED,
    TRIMMED,
    admit,
    decide_mark,
    int_settled,
    squeezed_by_fluid,
    touch,
)
from uno.net.phantom import phantom_level
from uno.net.shared_link import (
    SHARED_LINK,
    SHARED_NIC,
    SHARED_NONE,
    fluid_on_link,
    nic_fluid_gap_ps,
)


@njit(cache=True)
def settle(ST, F, U, PK, p, pb, now):
    """Settle every queued packet of port ``p`` that has left by ``now``
    (:meth:`uno.net.port.Port._settle`)."""
    slot = ST[pb + P.qhead]
    remaining = ST[pb + P.bytes]
    marking = ST[pb + P.flags] & (FL.mark_phys | FL.mark_phant)
    stamping = ST[pb + P.flags] & FL.int
    while slot >= 0:
        if PK[slot, K.dep] > now:
            break
        remaining -= PK[slot, K.bytes]
        if marking and PK[slot, K.kind] == DATA and PK[slot, K.ecn] == 0:
            decide_mark(ST, F, U, PK, p, pb, slot, remaining)
        if stamping:
            int_settled(ST, F, PK, p, pb, slot, remaining)
        slot = PK[slot, K.next]
    ST[pb + P.qhead] = slot
    ST[pb + P.bytes] = remaining


@njit(cache=True)
def _control_lane(ST, PK, p, pb, slot, size, now):
    """The control packet in ``slot`` joins port ``p``'s control lane."""
    busy = ST[pb + P.c_busy]
    dep = (busy if busy > now else now) + serialization_ps_kernel(size, ST[pb + P.rate])
    ST[pb + P.c_busy] = dep
    PK[slot, K.dep] = dep
    fifo_append(ST, PK, pb + P.c_head, pb + P.c_tail, slot)
    ST[pb + P.held] += 1
    if ST[pb + P.c_pending] == 0:
        ST[pb + P.c_pending] = 1
        heap_push(ST, dep + ST[pb + P.delay], next_eid(ST), (p << EV_BITS) | EV.ctrl)


@njit(cache=True)
def port_receive(ST, F, U, PK, p, slot, now):
    """Port ``p`` receives the packet in ``slot`` at ``now`` (:meth:`uno.net.port.Port.receive`):
    settle, the overflow policy, phantom accounting, FIFO append, the delivery event if none is
    pending; an event port's receive (:func:`uno.net.compiled.event_port.eport_receive`)."""
    pb = ST[H.off_ports] + p * P.size
    flags = ST[pb + P.flags]
    if flags & FL.event:
        eport_receive(ST, F, U, PK, p, pb, slot, now)
        return
    kind = PK[slot, K.kind]
    size = PK[slot, K.bytes]
    ST[pb + P.arrivals] += 1
    ST[H.hops] += 1
    if kind != DATA and flags & FL.ctrl:
        _control_lane(ST, PK, p, pb, slot, size, now)
        return
    shared = ST[pb + P.shared]
    if shared != SHARED_NONE:
        touch(ST, p, pb)
    qhead = ST[pb + P.qhead]
    if qhead >= 0 and PK[qhead, K.dep] <= now:
        settle(ST, F, U, PK, p, pb, now)
    verdict = ADMITTED
    if shared == SHARED_LINK and fluid_on_link(F[p, PF.sh_fluid_q], F[p, PF.sh_rate]):
        verdict = squeezed_by_fluid(ST, F, U, PK, p, pb, flags, kind, size, slot, now)
    if verdict == ADMITTED:
        verdict = admit(ST, F, PK, p, pb, flags, kind, size, slot, now)
    if verdict != ADMITTED:
        if verdict == TRIMMED:  # its header goes on in the control lane
            _control_lane(ST, PK, p, pb, slot, PK[slot, K.bytes], now)
        return
    busy = ST[pb + P.busy]
    dep = (busy if busy > now else now) + serialization_ps_kernel(size, ST[pb + P.rate])
    ST[pb + P.busy] = dep
    PK[slot, K.dep] = dep
    fifo_append(ST, PK, pb + P.head, pb + P.tail, slot)
    if ST[pb + P.qhead] < 0:
        ST[pb + P.qhead] = slot
    ST[pb + P.held] += 1
    if ST[pb + P.pending] == 0:
        ST[pb + P.pending] = 1
        heap_push(ST, dep + ST[pb + P.delay], next_eid(ST), (p << EV_BITS) | EV.data)
    if shared == SHARED_NIC and kind == DATA:  # the host's fluid flows' bytes in between
        ST[pb + P.busy] = dep + nic_fluid_gap_ps(size, F[p, PF.sh_rate], F[p, PF.sh_bytes_per_ps],
                                                 F[p, PF.sh_senders], F[p, PF.sh_ps_per_byte])  # fmt: skip


@njit(cache=True)
def _fifo_length(PK, slot):
    """Rows in the linked FIFO that starts at ``slot``."""
    n = 0
    while slot >= 0:
        n += 1
        slot = PK[slot, K.next]
    return n


@njit(cache=True)
def settle_port(ST, F, U, PK, p, now):
    """Settle port ``p`` at ``now``; returns (queued bytes, data packets queued, control
    packets not yet departed). An event port is only read, as
    :meth:`uno.net.event_port.EventPort.occupancy_bytes` and ``tx_packets`` read it: (data
    bytes queued, packets waiting in both queues or in service, 0), a packet whose
    serialisation ended at ``now`` counting as gone."""
    pb = ST[H.off_ports] + p * P.size
    if ST[pb + P.flags] & FL.event:
        tx = ST[pb + P.tx]
        left = tx >= 0 and PK[tx, K.dep] <= now
        q = ST[pb + P.bytes]
        if left and ST[pb + P.txq] == LANE_DATA:
            q -= PK[tx, K.bytes]
        waiting = 1 if tx >= 0 and not left else 0
        waiting += _fifo_length(PK, ST[pb + P.head]) + _fifo_length(PK, ST[pb + P.c_head])
        return q, waiting, 0
    settle(ST, F, U, PK, p, pb, now)
    queued = _fifo_length(PK, ST[pb + P.qhead])
    waiting = 0
    slot = ST[pb + P.c_head]
    while slot >= 0:
        if PK[slot, K.dep] > now:
            waiting += 1
        slot = PK[slot, K.next]
    return ST[pb + P.bytes], queued, waiting


@njit(cache=True)
def port_levels(ST, F, U, PK, ports, now, phantom, held, queued, levels) -> int:
    """Of ``ports``, those that hold queued bytes or a phantom level above 0 at ``now``, each
    settled then (:func:`settle_port`), as :class:`uno.net.compiled.views.CompiledPort` reads
    them one port a call: their positions in ``ports`` into ``held``, their queued bytes into
    ``queued`` and, where ``phantom`` is 1, their phantom queues' levels into ``levels``
    (bytes); returns how many. Only the ports with queued bytes at their last settle or a
    phantom level above 0 then are settled: neither grows without an arrival, which settles
    the port."""
    n = 0
    for i in range(len(ports)):
        q, level = held_level(ST, F, U, PK, ports[i], now, phantom[i])
        if q != 0 or level != 0.0:
            held[n] = i
            queued[n] = q
            levels[n] = level
            n += 1
    return n


@njit(cache=True)
def held_level(ST, F, U, PK, p, now, phantom):
    """Port ``p``'s queued bytes and (``phantom``: it has a phantom queue) phantom level at
    ``now`` (bytes), settled then, as :func:`port_levels` reads them; (0, 0.0) without a settle
    where neither was above 0 at its last settle."""
    pb = ST[H.off_ports] + p * P.size
    if ST[pb + P.bytes] <= 0 and F[p, PF.ph_level] <= 0.0:
        return 0, 0.0
    q = settle_port(ST, F, U, PK, p, now)[0]
    return q, phantom_at(ST, F, p, now) if phantom else 0.0


@njit(cache=True)
def phantom_at(ST, F, p, now):
    """Port ``p``'s phantom queue level at ``now`` (bytes), drained from its last update."""
    pb = ST[H.off_ports] + p * P.size
    return phantom_level(F[p, PF.ph_level], now - ST[pb + P.ph_last], F[p, PF.ph_drain])


@njit(cache=True)
def check_ports(ST, PK):
    """The ports' invariants on the kernel's own state: every port's queued bytes lie in
    [0, buffer] and equal the sizes of the packets queued (not yet departed at its last
    settle; an event port's data queue and its data packet in service), and its count of
    packets held equals the packets in its FIFOs (queued or on the wire, both lanes). Returns
    (the first port that breaks one, which: ``BAD_*``), or (-1, 0)."""
    for p in range(ST[H.n_ports]):
        pb = ST[H.off_ports] + p * P.size
        queued = ST[pb + P.bytes]
        if queued < 0 or queued > ST[pb + P.buffer]:
            return p, BAD_BYTES
        event = ST[pb + P.flags] & FL.event
        total = 0
        slot = ST[pb + P.head] if event else ST[pb + P.qhead]
        while slot >= 0:
            total += PK[slot, K.bytes]
            slot = PK[slot, K.next]
        tx = ST[pb + P.tx]
        if event and tx >= 0 and ST[pb + P.txq] == LANE_DATA:
            total += PK[tx, K.bytes]
        if total != queued:
            return p, BAD_QUEUE_SUM
        held = _fifo_length(PK, ST[pb + P.head]) + _fifo_length(PK, ST[pb + P.c_head])
        if event:
            held += _fifo_length(PK, ST[pb + P.w_head])
        if held != ST[pb + P.held]:
            return p, BAD_HELD
    return -1, 0

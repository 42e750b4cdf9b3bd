"""The event port in the kernel (:class:`uno.net.event_port.EventPort`, used with PFC and with
INT behind ``switch.ack_priority``): its departures are decided one at a time, at the end of
each serialisation (an ``EV.txdone`` event), from two FIFOs served by strict priority (control,
then data), with the wire a FIFO of its own (``EV.wire`` deliveries). A PAUSE stops its data
lane after the frame in service, its busy-until reading ``PAUSED`` (a host's NIC scheduler then
waits); a RESUME carries on where it stopped.

On a link the hybrid's fluid flows share (``P.shared``: :mod:`uno.net.shared_link`, with PFC)
it keeps the lazy port's rules: a data packet is listed for the fluid model, may be squeezed
out by the fluid bytes, and starts no earlier than behind the link's whole queue as it arrived
(kept in its ``K.dep`` until it starts); at a host's NIC the line then carries the fluid flows'
bytes for a while after each data packet (``P.sh_hold``). A data packet held so waits for an
``EV.hold`` event. Times in ps, sizes in bytes."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.core.packet import DATA
from uno.core.units import serialization_ps_kernel
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import (
    EV,
    EV_BITS,
    EV_SLOT_SHIFT,
    FL,
    LANE_CONTROL,
    LANE_DATA,
    PAUSED,
    PF,
    H,
    K,
    P,
)
from uno.net.compiled.packets import fifo_append
from uno.net.compiled.pfc import ingress_release
from uno.net.compiled.queue import (
    ADMITTED,
    TRIMMED,
    admit,
    decide_mark,
    int_settled,
    squeezed_by_fluid,
    touch,
)
from uno.net.shared_link import (
    SHARED_LINK,
    SHARED_NIC,
    SHARED_NONE,
    fluid_on_link,
    nic_fluid_gap_ps,
)


@njit(cache=True)
def eport_start(ST, F, PK, p, pb, now):
    """Event port ``p`` is idle: put its next unpaused packet, control first, on the link
    (:meth:`uno.net.event_port.EventPort._start`): its end of serialisation is an event, it
    joins the wire FIFO, whose delivery event is pushed now if none is pending."""
    paused = ST[pb + P.paused]
    if ST[pb + P.c_head] >= 0 and not paused & (1 << LANE_CONTROL):
        lane = LANE_CONTROL
        head_col = P.c_head
        tail_col = P.c_tail
    elif ST[pb + P.head] >= 0 and not paused & (1 << LANE_DATA):
        if ST[pb + P.shared] != SHARED_NONE and held(ST, PK, p, pb, now):
            return
        lane = LANE_DATA
        head_col = P.head
        tail_col = P.tail
    else:
        return
    slot = ST[pb + head_col]
    nxt = PK[slot, K.next]
    ST[pb + head_col] = nxt
    if nxt < 0:
        ST[pb + tail_col] = -1
    size = PK[slot, K.bytes]
    end = now + serialization_ps_kernel(size, ST[pb + P.rate])
    if lane == LANE_DATA and ST[pb + P.shared] == SHARED_NIC and PK[slot, K.kind] == DATA:
        # (the fluid flows' bytes the line carries before the next data packet)
        ST[pb + P.sh_hold] = end + nic_fluid_gap_ps(size, F[p, PF.sh_rate], F[p, PF.sh_bytes_per_ps],
                                                    F[p, PF.sh_senders], F[p, PF.sh_ps_per_byte])  # fmt: skip
    PK[slot, K.dep] = end
    ST[pb + P.tx] = slot
    ST[pb + P.txq] = lane
    heap_push(ST, end, next_eid(ST), (slot << EV_SLOT_SHIFT) | (p << EV_BITS) | EV.txdone)
    fifo_append(ST, PK, pb + P.w_head, pb + P.w_tail, slot)
    if ST[pb + P.w_pending] == 0:
        ST[pb + P.w_pending] = 1
        heap_push(ST, end + ST[pb + P.delay], next_eid(ST), (p << EV_BITS) | EV.wire)


@njit(cache=True, inline="always")
def held(ST, PK, p, pb, now):
    """Whether the data packet at the head of shared event port ``p`` may not start at ``now``:
    it waits behind the fluid queue it arrived at, or the NIC's line carries fluid bytes. Then
    an ``EV.hold`` event wakes the port when it may (one per time)."""
    hold = PK[ST[pb + P.head], K.dep]
    if ST[pb + P.sh_hold] > hold:
        hold = ST[pb + P.sh_hold]
    if hold <= now:
        return False
    if ST[pb + P.sh_wake] != hold:
        ST[pb + P.sh_wake] = hold
        heap_push(ST, hold, next_eid(ST), (p << EV_BITS) | EV.hold)
    return True


@njit(cache=True)
def eport_hold_over(ST, F, PK, p, now):
    """An ``EV.hold`` event: event port ``p`` starts its next packet if it is idle."""
    pb = ST[H.off_ports] + p * P.size
    if ST[pb + P.sh_wake] == now:
        ST[pb + P.sh_wake] = 0
    if ST[pb + P.tx] < 0:
        eport_start(ST, F, PK, p, pb, now)


@njit(cache=True)
def eport_tx_done(ST, F, U, PK, p, pb, slot):
    """The serialisation of ``slot`` at event port ``p`` ended
    (:meth:`uno.net.event_port.EventPort._tx_done`): unless it was settled already, its bytes
    leave the data queue, RED / the phantom queue decide its mark on the bytes behind it, it
    releases its PFC ingress share, an INT port writes its record, and the next packet
    starts."""
    if slot != ST[pb + P.tx]:
        return  # already settled (at the same time, by an arrival or its delivery)
    ST[pb + P.tx] = -1
    now = PK[slot, K.dep]
    size = PK[slot, K.bytes]
    flags = ST[pb + P.flags]
    remaining = ST[pb + P.bytes]
    if ST[pb + P.txq] == LANE_DATA:
        remaining -= size
        ST[pb + P.bytes] = remaining
        if (
            flags & (FL.mark_phys | FL.mark_phant)
            and PK[slot, K.kind] == DATA
            and PK[slot, K.ecn] == 0
        ):
            decide_mark(ST, F, U, PK, p, pb, slot, remaining)
    ing = PK[slot, K.ingress]
    if ing >= 0:
        PK[slot, K.ingress] = -1
        ingress_release(ST, ing, size, now)
    if flags & FL.int:
        int_settled(ST, F, PK, p, pb, slot, remaining)
    eport_start(ST, F, PK, p, pb, now)


@njit(cache=True)
def eport_receive(ST, F, U, PK, p, pb, slot, now):
    """Event port ``p`` receives the packet in ``slot`` at ``now``
    (:meth:`uno.net.event_port.EventPort.receive`): the packet in service settles first if its
    serialisation ended now; the overflow policy (a packet that entered through a lossless
    ingress queue and is dropped counts a violation), phantom accounting, the lane's FIFO, the
    projected busy-until (kept while paused) and a start if the link is idle."""
    tx = ST[pb + P.tx]
    if tx >= 0 and PK[tx, K.dep] <= now:
        eport_tx_done(ST, F, U, PK, p, pb, tx)
    kind = PK[slot, K.kind]
    size = PK[slot, K.bytes]
    flags = ST[pb + P.flags]
    ST[pb + P.arrivals] += 1
    ST[H.hops] += 1
    if kind != DATA and flags & FL.ctrl:
        head_col = P.c_head
        tail_col = P.c_tail
    else:
        head_col = P.head
        tail_col = P.tail
        shared = ST[pb + P.shared]
        verdict = ADMITTED
        if shared != SHARED_NONE:
            touch(ST, p, pb)
            PK[slot, K.dep] = 0  # (no wait behind fluid bytes)
            if shared == SHARED_LINK and fluid_on_link(F[p, PF.sh_fluid_q], F[p, PF.sh_rate]):
                # (admitted, it keeps its earliest start behind the link's queue in K.dep)
                verdict = squeezed_by_fluid(ST, F, U, PK, p, pb, flags, kind, size, slot, now)
        if verdict == ADMITTED:
            verdict = admit(ST, F, PK, p, pb, flags, kind, size, slot, now)
        if verdict != ADMITTED:
            if verdict != TRIMMED:
                return
            head_col = P.c_head  # its header goes on in the control lane
            tail_col = P.c_tail
            size = PK[slot, K.bytes]
    fifo_append(ST, PK, pb + head_col, pb + tail_col, slot)
    ST[pb + P.held] += 1
    busy = ST[pb + P.busy]
    if busy != PAUSED:
        start = busy if busy > now else now
        ST[pb + P.busy] = start + serialization_ps_kernel(size, ST[pb + P.rate])
        if ST[pb + P.shared] == SHARED_NIC and kind == DATA and head_col == P.head:
            ST[pb + P.busy] += nic_fluid_gap_ps(size, F[p, PF.sh_rate], F[p, PF.sh_bytes_per_ps],
                                                F[p, PF.sh_senders], F[p, PF.sh_ps_per_byte])  # fmt: skip
    if ST[pb + P.tx] < 0:
        eport_start(ST, F, PK, p, pb, now)


@njit(cache=True)
def eport_drain_end(ST, PK, pb, now):
    """When the packets event port ``pb`` holds at ``now`` will have left if nothing pauses
    it (:meth:`uno.net.event_port.EventPort._drain_end`), in ps."""
    tx = ST[pb + P.tx]
    t = PK[tx, K.dep] if tx >= 0 else now
    rate = ST[pb + P.rate]
    for head_col in (P.c_head, P.head):
        slot = ST[pb + head_col]
        while slot >= 0:
            t += serialization_ps_kernel(PK[slot, K.bytes], rate)
            slot = PK[slot, K.next]
    return t


@njit(cache=True)
def pfc_signal(ST, F, PK, p, resume, now):
    """A PAUSE (``resume`` false) or RESUME for the data lane reaches event port ``p`` at
    ``now`` (:meth:`uno.net.event_port.EventPort.pause` / ``resume``): paused, it finishes the
    frame in service and starts no data packet, its busy-until reads PAUSED; resumed, it
    carries on where it stopped. Returns whether the port's state changed."""
    pb = ST[H.off_ports] + p * P.size
    bit = np.int64(1) << LANE_DATA
    paused = ST[pb + P.paused]
    if not resume:
        if paused & bit:
            return False
        ST[pb + P.paused] = paused | bit
        ST[pb + P.busy] = PAUSED
        return True
    if not paused & bit:
        return False
    ST[pb + P.paused] = paused & ~bit
    ST[pb + P.busy] = eport_drain_end(ST, PK, pb, now)
    if ST[pb + P.tx] < 0:
        eport_start(ST, F, PK, p, pb, now)
    return True

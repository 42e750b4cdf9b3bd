"""What both forms of a port (the lazy port, :mod:`uno.net.compiled.ports`, and the event
port, :mod:`uno.net.compiled.event_port`) do to a packet: admit it or drop it by the port's
overflow policy (:mod:`uno.net.overflow`), count it in the phantom queue
(:mod:`uno.net.phantom`), decide its ECN mark when it leaves (:mod:`uno.net.red`, the draws from
the port's own stream) and write the port's INT record into it (:mod:`uno.net.int`). Sizes in
bytes, times in ps."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.law import INT_FIELDS
from uno.core.packet import CN, DATA, TRIM
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import EV, EV_BITS, EV_SLOT_SHIFT, FL, ING, KI, PF, H, K, P
from uno.net.compiled.packets import free_row, hash_key, new_packet
from uno.net.compiled.pcg import pcg64_next_double
from uno.net.compiled.pfc import ingress_release
from uno.net.int import int_record_slot
from uno.net.overflow import ADMIT, OVERFLOW_TRIM, packet_verdict
from uno.net.phantom import phantom_after_enqueue, phantom_level
from uno.net.qcn import qcn_sample
from uno.net.red import RED_ALWAYS, RED_RAMP, red_ramp_marks, red_zone
from uno.net.shared_link import (
    SHARED_LINK,
    behind_fluid_ps,
    fluid_fills_buffer,
    fluid_on_link,
    fluid_sent_bytes,
    shared_int_record,
    shared_queue_level,
    squeezed_out,
)


@njit(cache=True)
def red_decide(U, rng_base, kmin, kmax, span, occupancy):
    """RED at ``occupancy`` bytes (:meth:`uno.net.red.RedMarker.decide`), the ramp's one draw
    from the stream at ``U[rng_base]``."""
    zone = red_zone(occupancy, kmin, kmax, span)
    if zone != RED_RAMP:
        return zone == RED_ALWAYS
    return red_ramp_marks(pcg64_next_double(U, rng_base), occupancy, kmin, span)


@njit(cache=True)
def phantom_enqueue(ST, F, p, pb, now, size):
    """Phantom queue of port ``p`` (row ``pb`` in ST): ``size`` bytes arrive at ``now``
    (:meth:`uno.net.phantom.PhantomQueue.enqueue`)."""
    F[p, PF.ph_level] = phantom_after_enqueue(
        F[p, PF.ph_level], now - ST[pb + P.ph_last], F[p, PF.ph_drain], size, F[p, PF.ph_size]
    )
    ST[pb + P.ph_last] = now


@njit(cache=True)
def decide_mark(ST, F, U, PK, p, pb, slot, remaining):
    """ECN for the data packet in ``slot`` leaving port ``p`` with ``remaining`` bytes behind
    it: the phantom queue's RED at its departure, then the physical queue's
    (:meth:`uno.net.port.PortBase._decide_mark`: the same draws in the same order). On a link
    the fluid flows share (``P.shared``, the hybrid's ``HybridPort._decide_mark``), the phantom
    level is the larger of the port's and the fluid model's, and the queue the larger of its
    packets plus the fluid bytes and the link's (:func:`uno.net.shared_link.shared_queue_level`)."""
    flags = ST[pb + P.flags]
    rng = ST[pb + P.rng]
    shared = ST[pb + P.shared] == SHARED_LINK and fluid_on_link(F[p, PF.sh_fluid_q],
                                                                 F[p, PF.sh_rate])  # fmt: skip
    marked = False
    if flags & FL.mark_phant:
        level = phantom_level(
            F[p, PF.ph_level], PK[slot, K.dep] - ST[pb + P.ph_last], F[p, PF.ph_drain]
        )
        if shared and F[p, PF.sh_phantom] > level:
            level = F[p, PF.sh_phantom]
        if level > F[p, PF.ph_kmin]:
            marked = red_decide(U, rng, F[p, PF.ph_kmin], F[p, PF.ph_kmax], F[p, PF.ph_span], level)
    occupancy = np.float64(remaining)
    if shared:
        occupancy = shared_queue_level(remaining, F[p, PF.sh_fluid_q], F[p, PF.sh_link_q])
    if not marked and flags & FL.mark_phys and occupancy > F[p, PF.red_kmin]:
        marked = red_decide(
            U, rng, F[p, PF.red_kmin], F[p, PF.red_kmax], F[p, PF.red_span], occupancy
        )
    if marked:
        PK[slot, K.ecn] = 1
        ST[pb + P.marks] += 1


@njit(cache=True)
def int_stamp(PK, slot, max_records, rule, salt, ts, qlen, tx_bytes, rate):
    """Write the INT record (``ts`` ps, ``qlen`` bytes, ``tx_bytes``, ``rate`` bit/s) into the
    packet in ``slot`` where :func:`uno.net.int.int_record_slot` puts it, if anywhere."""
    n = PK[slot, KI.n_records]
    held = PK[slot, KI.size : KI.size + n * INT_FIELDS].reshape((n, INT_FIELDS))
    i = int_record_slot(held, n, max_records, rule, qlen, rate, salt, ts, tx_bytes)
    if i < 0:
        return
    if i == n:
        PK[slot, KI.n_records] = n + 1
    at = KI.size + i * INT_FIELDS
    PK[slot, at] = ts
    PK[slot, at + 1] = qlen
    PK[slot, at + 2] = tx_bytes
    PK[slot, at + 3] = rate


@njit(cache=True)
def int_settled(ST, F, PK, p, pb, slot, remaining):
    """The packet in ``slot`` left INT port ``p`` (row ``pb``; its serialisation ended at its
    departure, ``remaining`` bytes behind it): the port's transmitted bytes grow by its size,
    and a data packet gets the port's record (:meth:`uno.net.event_port.EventPort._tx_done`).
    On a link the hybrid's fluid flows share, the record counts their bytes too
    (:func:`uno.net.shared_link.shared_int_record`)."""
    ST[pb + P.tx_bytes] += PK[slot, K.bytes]
    if PK[slot, K.kind] != DATA:
        return
    ts = PK[slot, K.dep]
    qlen, sent = remaining, ST[pb + P.tx_bytes]
    if ST[pb + P.shared] == SHARED_LINK:
        fluid_sent = fluid_sent_bytes(F[p, PF.sh_txf0], F[p, PF.sh_txf1], F[p, PF.sh_txf_at],
                                      F[p, PF.sh_txf_span], ts)  # fmt: skip
        qlen, sent = shared_int_record(remaining, sent,
                                       fluid_on_link(F[p, PF.sh_fluid_q], F[p, PF.sh_rate]),
                                       F[p, PF.sh_fluid_q], F[p, PF.sh_link_q], fluid_sent)  # fmt: skip
    int_stamp(PK, slot, ST[H.int_max], ST[H.int_rule], ST[H.int_salt], ts, qlen, sent,
              ST[pb + P.rate])  # fmt: skip


@njit(cache=True)
def _tail_drop(ST, F, PK, p, pb, flags, kind, size, slot, now):
    """Port ``p``'s buffer has no room for the packet in ``slot``: a dropped data packet still
    counts in the phantom queue if it is set to, the drop is counted, a packet that entered
    through a PFC ingress queue is a lossless violation and releases its share, the row is
    freed."""
    if flags & FL.ph_drops and flags & FL.phantom and kind == DATA:
        phantom_enqueue(ST, F, p, pb, now, size)
    ST[pb + P.drops] += 1
    ST[H.drops_data + kind] += 1
    ing = PK[slot, K.ingress]
    if ing >= 0:
        PK[slot, K.ingress] = -1
        ST[ST[H.off_ingress] + ing * ING.size + ING.violations] += 1
        ingress_release(ST, ing, size, now)
    free_row(ST, PK, slot)


@njit(cache=True)
def notify_source(ST, F, PK, p, pb, slot, size, queued, now):
    """Congestion point ``p`` accepted the data packet in ``slot`` (``size`` bytes; ``queued``
    bytes in its queue now, on a link the hybrid's fluid flows share the link's level,
    :func:`uno.net.shared_link.shared_queue_level`): at a sample with congestion, a notice of
    its level to the packet's source leaves this port's switch now
    (:meth:`uno.net.port.PortBase._notify_source`)."""
    counted, qold, level = qcn_sample(
        ST[pb + P.qcn_counted], ST[pb + P.qcn_qold], queued, size, np.int64(F[p, PF.qcn_sample]),
        F[p, PF.qcn_qeq], F[p, PF.qcn_w],
    )  # fmt: skip
    ST[pb + P.qcn_counted] = counted
    ST[pb + P.qcn_qold] = qold
    if level == 0:
        return
    src = PK[slot, K.dst]
    dst = PK[slot, K.src]
    entropy = PK[slot, K.entropy]
    notice = new_packet(ST, PK, CN, ST[H.qcn_bytes], src, dst, entropy,
                        hash_key(src, dst, entropy), 0, PK[slot, K.flow], level, 0)  # fmt: skip
    PK[notice, K.sent] = now
    ST[H.tx_cn] += 1
    heap_push(ST, now, next_eid(ST),
              (notice << EV_SLOT_SHIFT) | (ST[pb + P.owner] << EV_BITS) | EV.cn)  # fmt: skip


#: what :func:`admit` (and :func:`squeezed_by_fluid`) did with a data-queue packet
DROPPED, ADMITTED, TRIMMED = 0, 1, 2


@njit(cache=True, inline="always")
def refuse(ST, F, PK, p, pb, flags, policy, kind, size, slot, now):
    """Port ``p`` (row ``pb``) has no room for the data-queue packet in ``slot`` (``size``
    bytes) and its overflow ``policy`` decides (:meth:`uno.net.port.PortBase._overflow` in
    Python): a data packet under trimming becomes a ``TRIM`` header of ``H.trim_bytes``, its PFC
    ingress share released (``TRIMMED``, for the caller's control lane); anything else is
    dropped (:func:`_tail_drop`: ``DROPPED``)."""
    if policy == OVERFLOW_TRIM and kind == DATA:
        ST[pb + P.trims] += 1
        PK[slot, K.kind] = TRIM
        PK[slot, K.bytes] = ST[H.trim_bytes]
        ing = PK[slot, K.ingress]
        if ing >= 0:
            PK[slot, K.ingress] = -1
            ingress_release(ST, ing, size, now)
        return TRIMMED
    _tail_drop(ST, F, PK, p, pb, flags, kind, size, slot, now)
    return DROPPED


@njit(cache=True, inline="always")
def touch(ST, p, pb):
    """Port ``p`` of a link shared with fluid flows takes a packet: listed once per epoch (the
    hybrid folds the bytes of the ports listed into the fluid model at each step)."""
    epoch = ST[H.sh_epoch]
    if ST[pb + P.sh_epoch] != epoch:
        ST[pb + P.sh_epoch] = epoch
        n = ST[H.sh_touched]
        ST[ST[H.off_touched] + n] = p
        ST[H.sh_touched] = n + 1


@njit(cache=True)
def squeezed_by_fluid(ST, F, U, PK, p, pb, flags, kind, size, slot, now):
    """Port ``p``, on a link the fluid flows share and hold or send bytes on, about to take the
    data-queue packet in ``slot`` (``HybridPort.receive``): when its own queue admits it but
    the fluid bytes fill the buffer, it may be squeezed out (:func:`uno.net.shared_link.
    squeezed_out`, a draw from the port's ``P.sh_rng`` stream) as one it has no room for
    (:func:`refuse`: trimmed or dropped). Else (``ADMITTED``) it will leave FIFO behind the
    link's whole queue: the port's busy-until moves there, and the packet keeps that earliest
    start in ``K.dep`` until it is given its departure (an event port's start waits for it;
    :func:`uno.net.shared_link.behind_fluid_ps`; a packet its own queue refuses is left to
    :func:`admit`)."""
    queued = ST[pb + P.bytes]
    if packet_verdict(ST[pb + P.overflow], queued, size, ST[pb + P.buffer]) != ADMIT:
        return ADMITTED
    if fluid_fills_buffer(queued, F[p, PF.sh_fluid_q], size, ST[pb + P.buffer]):
        draw = pcg64_next_double(U, ST[pb + P.sh_rng])
        if squeezed_out(draw, F[p, PF.sh_full_bytes], F[p, PF.sh_loss], size, kind == DATA):
            return refuse(ST, F, PK, p, pb, flags, ST[pb + P.overflow], kind, size, slot, now)
    behind = behind_fluid_ps(now, F[p, PF.sh_link_q], F[p, PF.sh_ps_per_byte])
    PK[slot, K.dep] = behind
    if behind > ST[pb + P.busy]:
        ST[pb + P.busy] = behind
    return ADMITTED


@njit(cache=True, inline="always")
def admit(ST, F, PK, p, pb, flags, kind, size, slot, now):
    """Port ``p`` (row ``pb``, ``flags``) asks its overflow policy about the data-queue packet
    in ``slot`` (``kind``, ``size`` bytes) at ``now``: without room, :func:`refuse` (``DROPPED``
    or ``TRIMMED``); else the packet is accepted: queued bytes, bytes accepted, the peak, the
    phantom queue (data, and control packets unless they do not count): ``ADMITTED``."""
    queued = ST[pb + P.bytes]
    verdict = packet_verdict(ST[pb + P.overflow], queued, size, ST[pb + P.buffer])
    if verdict != ADMIT:
        return refuse(ST, F, PK, p, pb, flags, verdict, kind, size, slot, now)
    qbytes = queued + size
    ST[pb + P.bytes] = qbytes
    ST[pb + P.enq_bytes] += size
    if qbytes > ST[pb + P.max_bytes]:
        ST[pb + P.max_bytes] = qbytes
    if flags & FL.phantom and (flags & FL.ph_acks or kind == DATA):
        phantom_enqueue(ST, F, p, pb, now, size)
    if flags & FL.qcn and kind == DATA:
        level = qbytes  # (on a link the fluid flows share: the link's, as RED reads it)
        if ST[pb + P.shared] == SHARED_LINK and fluid_on_link(
            F[p, PF.sh_fluid_q], F[p, PF.sh_rate]
        ):
            level = np.int64(shared_queue_level(qbytes, F[p, PF.sh_fluid_q], F[p, PF.sh_link_q]))
        notify_source(ST, F, PK, p, pb, slot, size, level, now)
    return ADMITTED

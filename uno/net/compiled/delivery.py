"""Where a packet goes when it leaves a link's wire: through the link's faults
(:mod:`uno.net.compiled.faults`) into a switch, which counts it in the link's PFC ingress queue
if it has one and forwards it at once by destination, hashing among equal-cost ports
(:func:`uno.net.hashing.ecmp_choice` with the switch's salt), or into a host, where the kernel's
receiver of a flow without coding answers a data packet with its ACK (:func:`receive_data`).
Times in ps, sizes in bytes."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.core.packet import ACK, DATA, NACK
from uno.net.compiled.dci import dci_receive
from uno.net.compiled.event_port import eport_tx_done
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.faults import fault_drop
from uno.net.compiled.layout import (
    ERR_BYTES,
    ERR_MISROUTED,
    ERR_SEQ,
    EV,
    EV_BITS,
    EV_PORT_MASK,
    EV_TYPE_MASK,
    FL,
    N_KINDS,
    H,
    K,
    P,
    R,
)
from uno.net.compiled.packets import free_row, hash_key
from uno.net.compiled.pfc import ingress_receive
from uno.net.compiled.ports import port_receive
from uno.net.compiled.queue import decide_mark, int_settled
from uno.net.hashing import ack_path_entropy, ecmp_choice


@njit(cache=True, inline="always")
def _next_delivery(ST, PK, pb, nxt, payload, pending_col):
    """The lane's next packet ``nxt`` gets its delivery event (``payload``); with none, the
    lane has no delivery pending."""
    if nxt >= 0:
        heap_push(ST, PK[nxt, K.dep] + ST[pb + P.delay], next_eid(ST), payload)
    else:
        ST[pb + pending_col] = 0


@njit(cache=True, inline="always")
def _leave_wire(ST, F, U, PK, p, pb, typ, payload):
    """The oldest packet of port ``p``'s lane ``typ`` (``EV.data``, ``EV.ctrl`` or an event
    port's ``EV.wire``) leaves the wire (:meth:`uno.net.port.Port._deliver`,
    :meth:`uno.net.event_port.EventPort._deliver`); a data packet a lazy port had not settled
    yet settles now (everything behind it arrived before it left). Returns its row."""
    if typ == EV.wire:
        slot = ST[pb + P.w_head]
        nxt = PK[slot, K.next]
        ST[pb + P.w_head] = nxt
        if nxt < 0:
            ST[pb + P.w_tail] = -1
        if slot == ST[pb + P.tx]:  # zero-delay link: its end of serialisation is now too
            eport_tx_done(ST, F, U, PK, p, pb, slot)
        # (the next packet it started, if any, joined the wire while this delivery was pending)
        _next_delivery(ST, PK, pb, ST[pb + P.w_head], payload, P.w_pending)
        return slot
    if typ == EV.ctrl:
        slot = ST[pb + P.c_head]
        nxt = PK[slot, K.next]
        ST[pb + P.c_head] = nxt
        _next_delivery(ST, PK, pb, nxt, payload, P.c_pending)
        if nxt < 0:
            ST[pb + P.c_tail] = -1
        return slot
    slot = ST[pb + P.head]
    if ST[pb + P.qhead] == slot:
        ST[pb + P.qhead] = PK[slot, K.next]
        remaining = ST[pb + P.bytes] - PK[slot, K.bytes]
        ST[pb + P.bytes] = remaining
        if (
            ST[pb + P.flags] & (FL.mark_phys | FL.mark_phant)
            and PK[slot, K.kind] == DATA
            and PK[slot, K.ecn] == 0
        ):
            decide_mark(ST, F, U, PK, p, pb, slot, remaining)
        if ST[pb + P.flags] & FL.int:
            int_settled(ST, F, PK, p, pb, slot, remaining)
    nxt = PK[slot, K.next]
    ST[pb + P.head] = nxt
    _next_delivery(ST, PK, pb, nxt, payload, P.pending)
    if nxt < 0:
        ST[pb + P.tail] = -1
        ST[pb + P.qhead] = -1
    return slot


@njit(cache=True, inline="always")
def forward(ST, F, U, PK, node, slot, now):
    """Switch ``node`` forwards the packet in ``slot`` at ``now``: by destination, hashing
    among the equal-cost ports."""
    cell = node * ST[H.n_hosts] + PK[slot, K.dst]
    off = ST[ST[H.off_fib_off] + cell]
    n = ST[ST[H.off_fib_n] + cell]
    ports = ST[H.off_fib_ports]
    if n == 1:
        out = ST[ports + off]
    else:
        salt = U[ST[H.off_node_salt] + node]
        out = ST[ports + off + ecmp_choice(np.uint64(PK[slot, K.hkey]), salt, n)]
    port_receive(ST, F, U, PK, out, slot, now)


@njit(cache=True)
def deliver(ST, F, U, PK, payload, now):
    """The delivery event ``payload`` (port << EV_BITS | its lane's type) at ``now``: the
    lane's oldest packet leaves the wire, passes the link's faults, and enters the next node.
    Returns (host id, slot) for a host, (-1, -1) otherwise."""
    p = (payload >> EV_BITS) & EV_PORT_MASK
    pb = ST[H.off_ports] + p * P.size
    slot = _leave_wire(ST, F, U, PK, p, pb, payload & EV_TYPE_MASK, payload)
    ST[pb + P.held] -= 1
    if ST[pb + P.flags] & FL.fault:
        # the link's faults, between the wire and the next node (uno.faults.models.FaultyLink)
        reason = fault_drop(ST, F, U, pb, now)
        if reason:
            ST[pb + P.flt_drops] += 1
            ST[H.fault_drops_down_data + N_KINDS * (reason - 1) + PK[slot, K.kind]] += 1
            free_row(ST, PK, slot)
            return -1, -1
    node = ST[pb + P.next]
    host = ST[ST[H.off_node_host] + node]
    if host >= 0:
        return host, slot
    ing = ST[pb + P.ingress]
    if ing >= 0:
        ingress_receive(ST, PK, ing, slot, now)
    if ST[pb + P.dci] >= 0:  # a DCI switch's element first (uno.net.dci)
        notice, slot = dci_receive(ST, PK, pb, slot, now)
        if notice >= 0:
            forward(ST, F, U, PK, node, notice, now)
        if slot < 0:  # held in a per-flow queue, or dropped
            return -1, -1
    forward(ST, F, U, PK, node, slot, now)
    return -1, -1


@njit(cache=True)
def receive_data(ST, F, U, PK, host, slot, now):
    """The kernel's receiver of the flow of data packet ``slot``, arrived at ``host`` at
    ``now`` (:meth:`uno.transport.receiver.Receiver.on_data` without coding): count the
    sequence number once, complete the flow, and send the packet back as its ACK at once
    (:meth:`uno.net.host.Host.send`). Returns an ERR_* code, 0 when all is well."""
    if PK[slot, K.dst] != host:
        ST[H.error_arg] = slot
        return ERR_MISROUTED
    fb = ST[H.off_flows] + PK[slot, K.flow] * R.size
    seq = PK[slot, K.seq]
    if seq < 0 or seq >= ST[fb + R.n_packets]:
        ST[H.error_arg] = slot
        return ERR_SEQ
    word = ST[fb + R.got_off] + (seq >> 6)
    bit = np.int64(1) << (seq & 63)
    if ST[word] & bit:
        ST[fb + R.dup] += 1
    else:
        ST[word] |= bit
        ST[fb + R.n_got] += 1
        ST[fb + R.bytes] += PK[slot, K.payload]
        if ST[fb + R.n_got] == ST[fb + R.n_packets]:
            ST[fb + R.complete] = now
            if ST[fb + R.bytes] != ST[fb + R.flow_bytes]:
                ST[H.error_arg] = slot
                return ERR_BYTES
    if PK[slot, K.ecn]:
        ST[fb + R.ecn] += 1
        gap = ST[fb + R.cnp_interval]
        if gap:  # DCQCN's notification point: at most one CNP per gap
            last = ST[fb + R.last_cnp]
            if last < 0 or now - last >= gap:
                ST[fb + R.last_cnp] = now
                ST[fb + R.cnps] += 1
            else:
                PK[slot, K.ecn] = 0  # no CNP: one went to the flow's sender within the gap
    _send_back(ST, F, U, PK, host, slot, fb, ACK, now)
    ST[H.rx_data] += 1
    return 0


@njit(cache=True, inline="always")
def _send_back(ST, F, U, PK, host, slot, fb, kind, now):
    """The packet in ``slot`` becomes the receiver's ``kind`` (ACK or NACK), echoing seq, ECN,
    entropy and send time, along the ACKs' route, into ``host``'s NIC now
    (:meth:`uno.transport.receiver.Receiver.turn_into_ack`)."""
    src = PK[slot, K.dst]
    dst = PK[slot, K.src]
    PK[slot, K.kind] = kind
    PK[slot, K.bytes] = ST[fb + R.ack_bytes]
    PK[slot, K.src] = src
    PK[slot, K.dst] = dst
    route, ST[fb + R.next_ack_path] = ack_path_entropy(
        PK[slot, K.entropy], ST[fb + R.next_ack_path], ST[fb + R.ack_paths]
    )
    PK[slot, K.hkey] = hash_key(src, dst, route)
    port_receive(ST, F, U, PK, ST[ST[H.off_host_nic] + host], slot, now)


@njit(cache=True)
def receive_trimmed(ST, F, U, PK, host, slot, now):
    """A trimmed copy of a packet of a kernel receiver's flow reached ``host`` at ``now``
    (:meth:`uno.transport.receiver.Receiver.on_trimmed`): NACKed at once, nothing delivered.
    Returns an ERR_* code, 0 when all is well."""
    if PK[slot, K.dst] != host:
        ST[H.error_arg] = slot
        return ERR_MISROUTED
    fb = ST[H.off_flows] + PK[slot, K.flow] * R.size
    ST[fb + R.trimmed] += 1
    ST[H.rx_trim] += 1
    _send_back(ST, F, U, PK, host, slot, fb, NACK, now)
    return 0

"""The DCI switches' element in the kernel (:mod:`uno.net.dci`, which says what it does and
why): a packet a port delivers into a DCI switch passes :func:`dci_receive` before the switch
forwards it; a flow's per-flow queue releases its head packet at a ``EV.pfq`` event
(:func:`dci_release`). Times in ps, sizes in bytes, rates in bit/s."""

from __future__ import annotations

from numba import njit

from uno.cc.law import INT_FIELDS
from uno.core.packet import ACK, CN, DATA
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import EV, EV_BITS, KI, D, H, K, P, Q
from uno.net.compiled.packets import free_row, hash_key, new_packet


@njit(cache=True, inline="always")
def pfq_gap_ps(size, rate):
    """:func:`uno.net.dci.pfq_gap_ps`: ``size`` bytes at ``rate`` bit/s, rounded up (ps)."""
    return -(-size * 8 * 1_000_000_000_000 // rate)


@njit(cache=True)
def _near_source(ST, PK, db, qb, pb, slot, now):
    """The sender-side DCI switch takes the data packet's INT records into a Switch-INT notice
    to its source (:meth:`uno.net.dci.DciElement._near_source`); returns the notice's row, or
    -1 for none."""
    if ST[H.int_max] == 0:
        return -1
    n = PK[slot, KI.n_records]
    if n == 0:
        return -1
    PK[slot, KI.n_records] = 0
    gap = ST[db + D.gap]
    if gap:
        last = ST[qb + Q.last_notice]
        if last >= 0 and now - last < gap:
            return -1
        ST[qb + Q.last_notice] = now
    src = PK[slot, K.dst]
    dst = PK[slot, K.src]
    entropy = PK[slot, K.entropy]
    notice = new_packet(ST, PK, CN, ST[db + D.notice_bytes], src, dst, entropy,
                        hash_key(src, dst, entropy), 0, PK[slot, K.flow], 0, 0)  # fmt: skip
    PK[notice, K.sent] = PK[slot, K.sent]
    PK[notice, KI.n_records] = n
    cols = KI.size + INT_FIELDS * n
    PK[notice, KI.size : cols] = PK[slot, KI.size : cols]
    ST[H.tx_cn] += 1
    ST[pb + P.dci_notices] += 1
    return notice


@njit(cache=True)
def _schedule(ST, f, qb, at):
    ST[qb + Q.pending] = 1
    heap_push(ST, at, next_eid(ST), (f << EV_BITS) | EV.pfq)


@njit(cache=True)
def _enqueue(ST, PK, db, qb, pb, f, slot, now):
    """Data packet ``slot`` joins flow ``f``'s per-flow queue (:meth:`DciElement._enqueue`);
    returns the row to release at once (-1: none), or -2 when the shared buffer had no room
    (the packet is freed)."""
    size = PK[slot, K.bytes]
    if ST[db + D.bytes] + size > ST[db + D.buffer]:
        ST[pb + P.pfq_drops] += 1
        ST[H.drops_data] += 1
        free_row(ST, PK, slot)
        return -2
    ST[pb + P.pfq_packets] += 1
    if ST[qb + Q.dci] < 0:  # a new per-flow queue
        ST[qb + Q.dci] = (db - ST[H.off_dci]) // D.size
        rate = ST[db + D.init_rate]
        if rate < 0:
            host_port = ST[ST[H.off_host_nic] + PK[slot, K.dst]]
            rate = ST[ST[H.off_ports] + host_port * P.size + P.rate]
        ST[qb + Q.rate] = rate
    PK[slot, K.next] = -1
    tail = ST[qb + Q.tail]
    if tail >= 0:
        PK[tail, K.next] = slot
    else:
        ST[qb + Q.head] = slot
    ST[qb + Q.tail] = slot
    ST[qb + Q.bytes] += size
    ST[db + D.bytes] += size
    ST[db + D.packets] += 1
    if ST[db + D.bytes] > ST[db + D.max_bytes]:
        ST[db + D.max_bytes] = ST[db + D.bytes]
    if ST[qb + Q.pending] == 0:
        if ST[qb + Q.next] <= now:
            return _pop(ST, PK, db, qb, now)
        _schedule(ST, f, qb, ST[qb + Q.next])
    return -1


@njit(cache=True)
def _pop(ST, PK, db, qb, now):
    """The head packet of a per-flow queue leaves it now, stamped with C_D and the bytes left
    (:meth:`DciElement._release`); the next one is due a serialisation time later."""
    slot = ST[qb + Q.head]
    nxt = PK[slot, K.next]
    ST[qb + Q.head] = nxt
    if nxt < 0:
        ST[qb + Q.tail] = -1
    size = PK[slot, K.bytes]
    ST[qb + Q.bytes] -= size
    ST[db + D.bytes] -= size
    ST[db + D.packets] -= 1
    ST[qb + Q.next] = now + pfq_gap_ps(size, ST[qb + Q.rate])
    PK[slot, K.credit] = ST[qb + Q.credit]
    PK[slot, K.pfq_bytes] = ST[qb + Q.bytes]
    ST[qb + Q.pending] = 0
    return slot


@njit(cache=True)
def dci_receive(ST, PK, pb, slot, now):
    """A packet port ``pb`` delivered into its DCI switch (row ``P.dci``): returns (a
    notice to forward first or -1, the packet to forward now or -1: held or dropped)."""
    db = ST[H.off_dci] + ST[pb + P.dci] * D.size
    kind = PK[slot, K.kind]
    f = PK[slot, K.flow]
    qb = ST[H.off_pfq] + f * Q.size
    dcs = ST[H.off_host_dc]
    here = ST[db + D.dc]
    if kind == DATA:
        src_dc = ST[dcs + PK[slot, K.src]]
        dst_dc = ST[dcs + PK[slot, K.dst]]
        if src_dc != dst_dc:
            if src_dc == here:
                notice = -1
                if ST[db + D.near]:
                    notice = _near_source(ST, PK, db, qb, pb, slot, now)
                return notice, slot
            if dst_dc == here:
                if ST[H.int_max] > 0:
                    PK[slot, KI.n_records] = 0  # the receiver's datacenter writes its own
                if ST[db + D.per_flow]:
                    out = _enqueue(ST, PK, db, qb, pb, f, slot, now)
                    return -1, (out if out >= 0 else -1)
    elif kind == ACK and ST[db + D.per_flow]:
        rate = PK[slot, K.credit_rate]
        if rate > 0 and ST[dcs + PK[slot, K.src]] == here and ST[qb + Q.dci] >= 0:
            ST[qb + Q.credit] = PK[slot, K.credit]
            ST[qb + Q.rate] = rate
    return -1, slot


@njit(cache=True)
def dci_release(ST, PK, f, now):
    """Flow ``f``'s per-flow queue releases its head packet now: returns (the DCI switch's
    node, the packet's row); the next release is scheduled if packets remain."""
    qb = ST[H.off_pfq] + f * Q.size
    db = ST[H.off_dci] + ST[qb + Q.dci] * D.size
    slot = _pop(ST, PK, db, qb, now)
    if ST[qb + Q.head] >= 0:
        _schedule(ST, f, qb, ST[qb + Q.next])
    return ST[db + D.node], slot

"""Kernel senders sending (:class:`uno.transport.sender.Sender` without coding): while its
bytes in flight are below its law's window, a sender hands its host's NIC a data packet at a
time when the NIC is free, retransmissions first, at its law's pacing rate; its path entropy is
the flow's (ECMP) or a fresh one per packet from the flow's stream (spraying). A law that hears
every send (``on_send``) may change its rate, and a law with timers of its own may bring the
next send forward (``EV.rate``). Times in ps, sizes in wire bytes, rates in bit/s."""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.law import BPS_PS
from uno.cc.law import C as LAW
from uno.cc.registry import next_timer as cc_next_timer
from uno.cc.registry import on_send as cc_on_send
from uno.cc.registry import on_timer as cc_on_timer
from uno.core.packet import DATA
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.law_calls import law_rows, on_timeouts, pacing_rate
from uno.net.compiled.layout import EV, EV_BITS, H, K, N, S
from uno.net.compiled.nic import nic_busy_at, wait_for_nic
from uno.net.compiled.packets import hash_key, new_packet
from uno.net.compiled.pcg import pcg64_next_double
from uno.net.compiled.ports import port_receive
from uno.net.compiled.sender_rings import expire, fifo_push, retx_pop


@njit(cache=True)
def _next_seq(ST, sb):
    """The packet to send next: the oldest queued for retransmission (counted; the timeout
    after a retransmission applies), else the next new one."""
    if ST[sb + S.rq_n]:
        seq = retx_pop(ST, sb)
        ST[sb + S.retx] += 1
        if ST[sb + S.rto_after] >= 0:
            ST[sb + S.rto] = ST[sb + S.rto_after]
        return seq
    seq = ST[sb + S.next_seq]
    ST[sb + S.next_seq] = seq + 1
    return seq


@njit(cache=True)
def _data_packet(ST, U, PK, f, sb, seq, now, fresh):
    """A pool row holding packet ``seq`` of flow ``f`` sent at ``now`` (``fresh``: not a
    retransmission); a sender whose law reads delivery-rate samples stamps it with its delivered
    bytes and clock."""
    if seq != ST[sb + S.last_seq]:
        payload = ST[sb + S.mss]
        wire = ST[sb + S.full_wire]
    else:
        payload = ST[sb + S.last_payload]
        wire = ST[sb + S.last_wire]
    if ST[sb + S.spray]:
        # packet spraying (uno.lb.spray.Spray): a fresh entropy per packet, from the flow's
        # lb/<flow> stream
        entropy = np.int64(pcg64_next_double(U, ST[sb + S.spray_rng]) * ST[sb + S.spray_n])
        hkey = hash_key(ST[sb + S.src], ST[sb + S.dst], entropy)
    else:
        entropy = ST[sb + S.entropy]
        hkey = ST[sb + S.hkey]
    # (the run keeps POOL_ROOM rows free before every event)
    slot = new_packet(ST, PK, DATA, wire, ST[sb + S.src], ST[sb + S.dst], entropy, hkey, 0, f,
                      seq, payload)  # fmt: skip
    PK[slot, K.sent] = now
    if ST[sb + S.rate]:
        PK[slot, K.tx_delivered] = ST[sb + S.acked_bytes]
        if fresh and not ST[sb + S.inflight]:
            ST[sb + S.delivered_ps] = now  # every byte sent acknowledged: the clock restarts
        PK[slot, K.tx_delivered_ps] = ST[sb + S.delivered_ps]
    return slot


@njit(cache=True)
def _pace(ST, F, f, sb, fr, now, wire, rate):
    """After a send of ``wire`` bytes at ``now``: a law that hears sends hears it (its rate may
    change), and a paced sender's next send waits the packet's time at its rate (``rate``
    before the send, 0: not paced); a law with timers may shorten that wait. Returns the
    pacing rate after the send."""
    send_cc = ST[sb + S.send_cc]
    if send_cc:
        s, p = law_rows(F, fr, ST)
        cc_on_send(ST[sb + S.law], s, p, float(now), float(wire))
        rate = pacing_rate(F, fr, ST, sb)
    if rate > 0.0:
        ST[sb + S.next_send] = now + np.int64(wire * BPS_PS / rate)
        if send_cc and ST[sb + S.timer_cc]:
            watch_rate(ST, F, f, sb, fr, now, wire)
    return rate


@njit(cache=True)
def try_send(ST, F, U, PK, f, now, turn):
    """Kernel sender ``f`` sends while its bytes in flight are below the window, a packet at a
    time when its host's NIC is free and (unless ``turn``: its turn in a NIC wake) no sender
    waits there, retransmissions first (:meth:`uno.transport.sender.Sender._try_send` without
    coding)."""
    sb = ST[H.off_senders] + f * S.size
    fr = ST[sb + S.frow]
    acked = ST[sb + S.acked_off]
    nb = ST[H.off_nics] + ST[sb + S.host] * N.size
    nic_busy = nic_busy_at(ST, nb)
    rate = pacing_rate(F, fr, ST, sb)  # (only a send changes the law's state in this loop)
    while ST[sb + S.inflight] < F[fr, LAW.cwnd]:
        while ST[sb + S.rq_n] and ST[acked + ST[ST[sb + S.rq_off] + ST[sb + S.rq_head]]]:
            retx_pop(ST, sb)
        if ST[sb + S.rq_n] == 0 and ST[sb + S.next_seq] >= ST[sb + S.n]:
            break
        if rate > 0.0 and now < ST[sb + S.next_send]:
            if not ST[sb + S.wake]:
                ST[sb + S.wake] = ST[sb + S.next_send] + 1
                heap_push(ST, ST[sb + S.next_send], next_eid(ST), (f << EV_BITS) | EV.pace)
            break
        if ST[nic_busy] > now or (not turn and ST[nb + N.head] >= 0):
            wait_for_nic(ST, f, sb, now)
            break
        fresh = ST[sb + S.rq_n] == 0
        seq = _next_seq(ST, sb)
        slot = _data_packet(ST, U, PK, f, sb, seq, now, fresh)
        wire = PK[slot, K.bytes]
        ST[sb + S.inflight] += wire
        ST[ST[sb + S.out_off] + seq] = now + 1
        fifo_push(ST, sb, now, seq)
        ST[sb + S.sent_bytes] += wire
        ST[sb + S.sent_pkts] += 1
        rate = _pace(ST, F, f, sb, fr, now, wire, rate)
        if not ST[sb + S.armed]:
            ST[sb + S.armed] = 1
            heap_push(ST, now + ST[sb + S.rto], next_eid(ST), (f << EV_BITS) | EV.rto)
        ST[H.tx_data] += 1  # (uno.net.host.Host.send)
        port_receive(ST, F, U, PK, ST[nb + N.port], slot, now)


@njit(cache=True)
def watch_rate(ST, F, f, sb, fr, sent, wire):
    """A rate timer due before the next send time may raise the rate first: wake then
    (``EV.rate``) to shorten the gap after the last packet, sent at ``sent`` with ``wire``
    bytes (:meth:`uno.transport.sender.Sender._watch_rate`). A flow has at most one such wake
    pending: it is due before the next send, and only it can bring that send forward."""
    s, p = law_rows(F, fr, ST)
    due = cc_next_timer(ST[sb + S.law], s, p)  # (NEVER_PS: none)
    if due < ST[sb + S.next_send]:
        ST[sb + S.rc_sent] = sent
        ST[sb + S.rc_wire] = wire
        # (+ 0.0: the dispatch's result is typed optional, which np.int64 does not take)
        heap_push(ST, np.int64(due + 0.0), next_eid(ST), (f << EV_BITS) | EV.rate)


@njit(cache=True)
def rate_changed(ST, F, U, PK, f, now):
    """A rate timer came before the next send (:meth:`uno.transport.sender.Sender.
    _rate_changed`): the gap after the last packet becomes its size at the new rate, never
    ending before now; then watch the next timer."""
    sb = ST[H.off_senders] + f * S.size
    if ST[sb + S.done]:
        return
    fr = ST[sb + S.frow]
    s, p = law_rows(F, fr, ST)
    cc_on_timer(ST[sb + S.law], s, p, float(now))
    rate = pacing_rate(F, fr, ST, sb)
    if rate <= 0.0 or ST[sb + S.next_send] <= now:
        return
    sent = ST[sb + S.rc_sent]
    wire = ST[sb + S.rc_wire]
    nxt = sent + np.int64(wire * BPS_PS / rate)
    if nxt < now:
        nxt = now
    if nxt < ST[sb + S.next_send]:
        ST[sb + S.next_send] = nxt
        ST[sb + S.wake] = nxt + 1  # (the wake pending for later is stale now)
        heap_push(ST, nxt, next_eid(ST), (f << EV_BITS) | EV.pace)
    watch_rate(ST, F, f, sb, fr, sent, wire)


@njit(cache=True)
def pace_wake(ST, F, U, PK, f, now):
    """A paced kernel sender's next send time came (:meth:`uno.transport.sender.Sender._wake`)."""
    sb = ST[H.off_senders] + f * S.size
    if ST[sb + S.wake] != now + 1:
        return  # stale: the wake now due was set for another time
    ST[sb + S.wake] = 0
    if not ST[sb + S.done]:
        scan_while_resending(ST, F, sb, now)
        try_send(ST, F, U, PK, f, now, False)


@njit(cache=True)
def scan_while_resending(ST, F, sb, now):
    """A sender that tests its timers while a resend waits (the artifact's MPRDMA) does so at
    ``now`` (:meth:`uno.transport.sender.Sender._scan_while_resending`)."""
    if ST[sb + S.scan_resend] and ST[sb + S.rq_n]:
        lost = expire(ST, sb, now)
        if lost:
            on_timeouts(F, ST[sb + S.frow], ST, sb, now, lost)

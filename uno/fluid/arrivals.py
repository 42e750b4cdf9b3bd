"""What arrives at a flow at the start of a step, from its delay line: the ACKs of the bytes it
sent one RTT before (a feedback batch for its law), their ECN echoes, the bytes leaving its wire
link that reach the next hop now, and the loss reports due (a receiver's NACK, fast
retransmit's evidence, the retransmission timer); a flow whose last byte is acknowledged
finishes and gives its line back (:func:`take_feedback`).

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.balance import (
    PLB_ON,
    REPS_ON,
    on_loss_report,
    plb_acks,
    reps_acks,
    reps_timeout,
)
from uno.fluid.cache_hints import prefetch, prefetch_row
from uno.fluid.columns import (
    ACKS,
    CC_LAW,
    CT,
    EF_CARRY,
    EF_MCARRY,
    FS_ACKED,
    FS_BASE_RTT,
    FS_BATCH_PS,
    FS_CNP_GAP,
    FS_CNPS,
    FS_DCI_HOP0,
    FS_DELIVERED,
    FS_DUPACK_BYTES,
    FS_EC_N,
    FS_FINISH,
    FS_HALT,
    FS_LAST_EARLY,
    FS_LAST_WAIT,
    FS_LEADS,
    FS_LOSS_AT,
    FS_LOSS_PENDING,
    FS_MARK_FRAC,
    FS_MARKED,
    FS_NS_HOPS,
    FS_OPEN_TIMED,
    FS_OPEN_WAIT,
    FS_PBEYOND,
    FS_PENDING,
    FS_PFQ_RATE,
    FS_QBEYOND,
    FS_RESEND_WAIT,
    FS_RTO,
    FS_RX_P,
    FS_SIZE,
    FS_STATE,
    FS_STOP,
    FS_TRIMS,
    FS_VOID_BYTES,
    FS_WAIT,
    FS_WIRE_ACK,
    FS_WIRE_HOP,
    FS_WIRE_NEXT,
    FS_WIRE_PS,
    FX_FIRST,
    FX_NETQ,
    FX_QUIET,
    P_BASE_RTT,
    P_KIND,
    P_MSS,
    R_ACK,
    R_ARRIVE,
    R_DELIV,
    R_FREE,
    R_GOOD,
    R_JITTER,
    R_LATE_NACK,
    R_LOSTQ,
    R_MARK,
    R_NACK,
    R_PBEYOND,
    R_QBEYOND,
    R_RTTW,
    R_SPURIOUS,
    R_SUBWIRE,
    R_TIMEOUT,
    R_WIRE,
    R_WIRE_ACK,
    R_WIRE_M,
    RING_FULL,
)
from uno.fluid.control import (
    hear_duplicates,
    hear_loss_report,
    hear_timeout,
    hear_trims,
    law_batch,
)
from uno.fluid.dci import hear_dqm, hear_near_source, pfq_step
from uno.fluid.forward import RESIDUE_BYTES
from uno.fluid.int_records import INTS, packet_records, take_records
from uno.fluid.losses import (
    cancel_copies,
    fast_retransmit_evidence,
    leave_flight,
    resend,
    resend_copies,
    timer_declares,
)
from uno.fluid.qcn import hear_notices
from uno.fluid.rings import line_row, pour_tail, ring_give
from uno.metrics.rtts import rtt_bin


@njit(cache=True, error_model="numpy", inline="always")
def wire_arrivals(f, slot, fs, fx, ring, ef, lb, base) -> None:
    """The bytes that left flow ``f``'s wire link a propagation ago (delay-line slot ``slot``)
    reach its next hop now (``EF_CARRY``: :func:`uno.fluid.forward.forward` takes them in), with
    the ACK frontier they left with (``FS_WIRE_ACK``); an UnoLB flow's, each subflow's to its
    own next hop (``base``: the first subflow hop entry)."""
    wire = ring[slot, R_WIRE]
    if wire > 0.0:
        e = int(fs[f, FS_WIRE_NEXT])
        ef[e, EF_CARRY] += wire
        ef[e, EF_MCARRY] += ring[slot, R_WIRE_M]
        fx[f, FX_NETQ] += wire
        if e < fx[f, FX_FIRST]:
            fx[f, FX_FIRST] = e
        if ring[slot, R_WIRE_ACK] > fs[f, FS_WIRE_ACK]:
            fs[f, FS_WIRE_ACK] = ring[slot, R_WIRE_ACK]
    elif fs[f, FS_WIRE_HOP] >= 0.0:  # an UnoLB flow's subflows: each to its next hop
        n_sub_max, n_hop_max = lb.links.shape[1], lb.links.shape[2]
        h_next = int(fs[f, FS_WIRE_HOP]) + 1
        e0 = base + f * n_sub_max * n_hop_max + h_next
        for s in range(lb.n[f]):
            wire = ring[slot, R_SUBWIRE + 2 * s]
            if wire > 0.0:
                e = e0 + s * n_hop_max
                ef[e, EF_CARRY] += wire
                ef[e, EF_MCARRY] += ring[slot, R_SUBWIRE + 2 * s + 1]
                fx[f, FX_NETQ] += wire
                if h_next < fx[f, FX_FIRST]:
                    fx[f, FX_FIRST] = h_next
        if ring[slot, R_WIRE_ACK] > fs[f, FS_WIRE_ACK]:
            fs[f, FS_WIRE_ACK] = ring[slot, R_WIRE_ACK]


@njit(cache=True, error_model="numpy", inline="always")
def ack_batch(f, now, dt_ps, slot, wide, fs, cs, cp, ring, rng, hops, rtt_counts) -> None:
    """The ACKs of flow ``f`` arriving now (delay-line slot ``slot``; ``wide``: the ring has the
    columns from ``R_GOOD`` on): they echo the marks of the bytes delivered one return trip ago
    (their marked share: the ACKs' times were foreseen at the send, so the two need not meet in
    one slot; the latest share holds until the next), leave flight, count as delivered (a
    coded flow: its decodable bytes), and make one feedback batch for its law
    (:func:`uno.fluid.control.law_batch`, with the batch's mean RTT and its chance of packet
    queueing, a wire flow's with the queueing beyond its wire link, and the newest packet's
    INT records where its law reads them: :mod:`uno.fluid.int_records`); with fast
    retransmit, they are evidence of the losses before them. With ``engine.record_rtts`` the
    batch's packets count in the RTT bins ``rtt_counts`` at its mean RTT (each packet of a
    batch an RTT sample of the packet sender's: the fluid has one RTT a batch)."""
    acked = ring[slot, R_ACK]
    free = ring[slot, R_FREE] if wide else 0.0
    int_hops = hops.int_set[INTS.hops]
    if int_hops > 0:
        take_records(f, slot, ring, hops)
    deliv = ring[slot, R_DELIV]
    if deliv > 0.0:
        fs[f, FS_MARK_FRAC] = ring[slot, R_MARK] / deliv
        if fs[f, FS_WIRE_PS] > 0.0:  # (so do the queueing beyond the wire link's)
            fs[f, FS_QBEYOND] = ring[slot, R_QBEYOND] / deliv
            fs[f, FS_PBEYOND] = ring[slot, R_PBEYOND] / deliv
    if acked > 0.0 or free > 0.0:
        rtt = ring[slot, R_RTTW] / acked if acked > 0.0 else fs[f, FS_BASE_RTT]
        good = ring[slot, R_GOOD] if wide else acked
        p_queued = ring[slot, R_JITTER] / acked if acked > 0.0 else 0.0
        if fs[f, FS_WIRE_PS] > 0.0 and acked > 0.0:
            rtt += fs[f, FS_QBEYOND]
            p_queued = 1.0 - (1.0 - p_queued) * (1.0 - fs[f, FS_PBEYOND])
        fs[f, FS_PENDING] -= acked
        marked = acked * fs[f, FS_MARK_FRAC]
        leave_flight(fs, f, acked + free)
        fs[f, FS_DELIVERED] += good
        fs[f, FS_ACKED] += acked
        fs[f, FS_MARKED] += marked
        if acked > 0.0 and rtt_counts.size:  # (engine.record_rtts)
            rtt_counts[rtt_bin(rtt)] += acked / cp[f, P_MSS]
        if acked > 0.0:
            kind = int(cp[f, P_KIND]) - CC_LAW
            n_int = 0
            if int_hops > 0:  # (from FS_DCI_HOP0: a DCI switch erased those before)
                n_int = packet_records(f, hops, -1, int(fs[f, FS_DCI_HOP0]))
            pieces = 1
            # (a flow's first ACKs begin within their step: spread back over all of it, they
            # would start its law's periods, which begin at the first ACK, up to a step early)
            first = fs[f, FS_ACKED] <= acked
            if fs[f, FS_BATCH_PS] > 0.0 and dt_ps > fs[f, FS_BATCH_PS] and not first:
                pieces = int(round(dt_ps / fs[f, FS_BATCH_PS]))
            law_batch(cs, cp, fs, ring, slot, f, kind, now, acked, marked, rtt, p_queued, rng,
                      hops.int_pkt, n_int, dt_ps, pieces)  # fmt: skip
    if fs[f, FS_DUPACK_BYTES] > 0.0:  # (RING_RETX or more: R_LOSTQ)
        lostq = ring[slot, R_LOSTQ]
        if acked > 0.0 or lostq > 0.0:
            fast_retransmit_evidence(f, now, acked, lostq, cp[f, P_MSS], fs)


@njit(cache=True, error_model="numpy", inline="always")
def echoed_marks(f, marked, cnps, fs, cp) -> float:
    """Of the ``marked`` bytes a batch of flow ``f``'s ACKs acknowledges, those whose ACKs
    echo the mark, as a packet balancer hears them (uno.transport.receiver.Receiver): all of
    them, or where the receiver coalesces marks into CNPs (DCQCN's notification point,
    ``FS_CNP_GAP``) a packet's worth for each of the batch's ``cnps``."""
    if fs[f, FS_CNP_GAP] <= 0.0:
        return marked
    echoed = cnps * cp[f, P_MSS]
    return echoed if echoed < marked else marked


@njit(cache=True, error_model="numpy")
def hear_timer(f, now, lost, base, flows, ls, lb, hops) -> None:
    """Flow ``f``'s retransmission timer declared ``lost`` bytes lost at ``now``: its controller
    hears of it (:func:`uno.fluid.control.hear_timeout`), a REPS flow's
    buffer freezes (lb.reps.freeze_us) and an UnoLB flow moves the subflows that lost bytes
    (``base``: the first subflow hop entry; their queued bytes move between the links' queues
    in ``ls``), as the packet sender's timer
    (uno.transport.sender.Sender._on_timer), which does not know whether the bytes arrived."""
    cp = flows.cp
    hear_timeout(flows.cs, cp, f, now, flows.fs, lost)
    if lb.reps_p[REPS_ON] > 0.0:
        reps_timeout(f, now, lb)
    if lb.n[f] > 0:
        on_loss_report(f, now, cp[f, P_BASE_RTT], flows.fs[f, FS_RTO], lb, hops, base, ls)


@njit(cache=True, error_model="numpy", inline="always")
def loss_reports(f, k, now, due, nack, late_nack, base, flows, ls, lb, hops) -> None:
    """The loss reports flow ``f`` hears now: a coded flow's NACKs (``nack`` bytes to resend,
    or ``late_nack`` of bytes its timer took already: only heard,
    uno.transport.sender.Sender._on_nack), or a trimmed flow's (``nack`` bytes resent at once,
    :func:`uno.fluid.control.hear_trims`), the losses found before a timeout that are due
    (``FS_LOSS_AT``), and its retransmission timer's entries due at step ``k`` (``due`` bytes:
    the losses no later ACK revealed, each an RTO after its own send,
    uno.transport.sender.Sender._on_timer). What is found lost is resent; an UnoLB flow moves
    the subflows that lost bytes (:func:`uno.fluid.balance.reroute_subflows`; ``base``: the
    first subflow hop entry, ``ls`` the links' state)."""
    fs, cs, cp = flows.fs, flows.cs, flows.cp
    if nack > 0.0 and fs[f, FS_TRIMS] >= 0.0:  # trimmed packets' NACKs: resent at once
        resend(fs, f, nack)
        hear_trims(cs, cp, f, now, nack, fs)
        if lb.n[f] > 0:
            on_loss_report(f, now, cp[f, P_BASE_RTT], fs[f, FS_RTO], lb, hops, base, ls)
    elif nack > 0.0:  # a coded flow's NACKs arriving now (book_losses)
        fs[f, FS_LOSS_PENDING] += nack
        fs[f, FS_LOSS_AT] = now
    elif late_nack > 0.0:
        hear_loss_report(cs, cp, f, now, fs)
    if fs[f, FS_LOSS_AT] >= 0.0 and fs[f, FS_LOSS_AT] <= now:
        lost = fs[f, FS_LOSS_PENDING]
        fs[f, FS_LOSS_PENDING] = 0.0
        fs[f, FS_LOSS_AT] = -1.0
        resend(fs, f, lost)
        hear_loss_report(cs, cp, f, now, fs)
        if lb.n[f] > 0:
            on_loss_report(f, now, cp[f, P_BASE_RTT], fs[f, FS_RTO], lb, hops, base, ls)
    lost = 0.0
    if due > 0.0 and (fs[f, FS_WAIT] > 0.0 or fs[f, FS_VOID_BYTES] > 0.0):
        lost = timer_declares(f, k, due, fs)
    if lost > 0.0:
        # (a coded flow's blocks of which nothing arrived: opened again by their resends)
        opening = min(lost, fs[f, FS_OPEN_TIMED])
        fs[f, FS_OPEN_TIMED] -= opening
        fs[f, FS_OPEN_WAIT] += opening
        resend(fs, f, lost)
        if fs[f, FS_PENDING] < 1.0:
            # no ACK on its way: the marked share echoed so far is of bytes delivered before
            # the timer, and the resent bytes' ACKs would echo it where they arrive a step
            # before their own echoes (a WAN DCTCP flow would cut its resent window on its
            # first window's marks, then grow it a packet a round trip, not in slow start)
            fs[f, FS_MARK_FRAC] = 0.0
        hear_timer(f, now, lost, base, flows, ls, lb, hops)


@njit(cache=True, error_model="numpy", inline="always")
def flow_feedback(f, k, now, dt_ps, base, flows, ls, lines, lb, hops, scratch) -> bool:
    """Everything due for flow ``f`` at step ``k`` (its delay line's slot, then cleared):
    :func:`wire_arrivals`, :func:`ack_batch` (and a PLB or REPS flow's round,
    :func:`uno.fluid.balance.plb_acks`, :func:`uno.fluid.balance.reps_acks`), the switches'
    congestion notices (:func:`uno.fluid.qcn.hear_notices`), :func:`loss_reports`; returns
    whether the flow
    has finished. The last byte's ACK arrives at ``R_ARRIVE``: its batch is counted in the step
    of its mean arrival (or split by arrival time, :func:`uno.fluid.filing.ack_steps`), so up
    to a step after this one's end. A flow less than a byte short
    (the rounding of the shares its bytes were split into, with nothing left to send or in
    flight, which would wait for it forever) has finished too. A flow whose last ACK comes
    after its stop time (``FS_HALT``) never finishes: its packet sender hears nothing after
    it."""
    fs, fx, counters = flows.fs, flows.fx, flows.counters
    ring, pool = lines.ring, lines.pool
    fx[f, FX_QUIET] = 0.0
    slot = pool.ptr[f] + k % pool.length[f]
    pour_tail(ring, pool, lines.calendar, fs, f, k)  # (what its tail holds from this step)
    if fs[f, FS_PFQ_RATE] > 0.0:  # (its bytes wait in the DCI switch's queue: uno.fluid.dci)
        pfq_step(f, k, now, dt_ps, slot, fs, fx, ring, hops.ef, lines.calendar)
    wire_arrivals(f, slot, fs, fx, ring, hops.ef, lb, base)
    wide = pool.wide[0] == RING_FULL  # R_GOOD and after kept
    ring_arrive = ring[slot, R_ARRIVE]
    due = ring[slot, R_TIMEOUT]
    nack = ring[slot, R_NACK] if wide else 0.0
    late_nack = ring[slot, R_LATE_NACK] if wide else 0.0
    acked = ring[slot, R_ACK]
    spurious = ring[slot, R_SPURIOUS]
    dup_col = int(hops.acks[ACKS.dup])
    dup = ring[slot, dup_col] if dup_col >= 0 else 0.0
    copying = counters[CT.late_batches] > 0  # (copies only after a late batch)
    if copying and acked > 0.0 and fs[f, FS_RESEND_WAIT] > 0.0 and fs[f, FS_EC_N] <= 0.0:
        cancel_copies(fs, f, acked)  # (copies not sent yet of bytes acknowledged now)
    cnps_before = fs[f, FS_CNPS]
    ack_batch(f, now, dt_ps, slot, wide, fs, flows.cs, flows.cp, ring, flows.loss_rng, hops,
              scratch.rtt_counts)  # fmt: skip
    if dup > 0.0:  # (at the RTT of the step's other ACKs; the slot is cleared below)
        dup_rtt = ring[slot, R_RTTW] / acked if acked > 0.0 else fs[f, FS_BASE_RTT]
        hear_duplicates(flows.cs, flows.cp, fs, f, now, dup, dup_rtt, hops.int_pkt)
    if fs[f, FS_NS_HOPS] > 0.0:  # a Switch-INT notice (uno.fluid.dci)
        hear_near_source(f, now, dt_ps, slot, fs, flows.cs, flows.cp, ring, hops)
    if fs[f, FS_RX_P] > 0.0:  # the rate its receiver's ACKs carry
        hear_dqm(f, now, slot, fs, flows.cs, flows.cp, ring, hops)
    if hops.acks[ACKS.qcn] >= 0.0:  # the switches' congestion notices (uno.fluid.qcn)
        hear_notices(f, now, slot, ring, fs, flows.cs, flows.cp, hops)
    if (lb.plb_p[PLB_ON] > 0.0 or lb.reps_p[REPS_ON] > 0.0) and acked > 0.0:
        marked = acked * fs[f, FS_MARK_FRAC]
        echoed = echoed_marks(f, marked, fs[f, FS_CNPS] - cnps_before, fs, flows.cp)
        if lb.plb_p[PLB_ON] > 0.0:  # PLB's rounds (the batch's echoed marks)
            plb_acks(f, now, acked, echoed, flows.cp[f, P_BASE_RTT], lb, hops, base, ls)
        else:  # REPS's rounds (the links' ``ls`` marking, of which the ACKs echo ``echoed``)
            reps_acks(f, now, flows.cp[f, P_BASE_RTT], marked, echoed, ls, lb, hops, base)
    for c in range(ring.shape[1]):
        ring[slot, c] = 0.0
    loss_reports(f, k, now, due, nack, late_nack, base, flows, ls, lb, hops)
    if spurious > 0.0:  # (its timer on bytes that arrived, their ACKs not back: copies)
        resend_copies(fs, f, spurious)
        hear_timer(f, now, spurious, base, flows, ls, lb, hops)
    if fs[f, FS_DELIVERED] < fs[f, FS_SIZE] * (1.0 - 1e-9) - RESIDUE_BYTES:
        return False
    # (its last packet's ACK: FS_LAST_EARLY before its last byte's, FS_LAST_WAIT after)
    finish = (
        (ring_arrive if ring_arrive > 0.0 else now) - fs[f, FS_LAST_EARLY] + fs[f, FS_LAST_WAIT]
    )
    if 0.0 < fs[f, FS_HALT] < finish:
        return False  # its sender stopped before the last ACK came: it stays unfinished
    fs[f, FS_FINISH] = finish
    fs[f, FS_STATE] = 2.0
    if copying and fs[f, FS_RESEND_WAIT] > 0.0 and fs[f, FS_EC_N] <= 0.0:
        # (copies its timer took in the step of its last ACKs: done, it sends none of them)
        cancel_copies(fs, f, fs[f, FS_RESEND_WAIT])
    counters[CT.finished] += 1
    if fs[f, FS_STOP] > 0.0:
        counters[CT.waiting] -= 1
    if fs[f, FS_LEADS] > 0.0:
        counters[CT.led] += 1
    ring_give(ring, pool, f, k, fs, lines.calendar)
    return True


#: how many running flows ahead :func:`take_feedback` asks for a due flow's delay-line slot and
#: state row
FEEDBACK_AHEAD = 8


@njit(cache=True, error_model="numpy", _nrt=False)
def take_feedback(k, now, dt_ps, n_active, rt_ptr, flows, ls, lines, lb, hops, scratch) -> int:
    """Step ``k``'s feedback (at ``now``, its start; steps of ``dt_ps``): of the running flows
    ``active[:n_active]``, those whose calendar bit says something is due (:func:`flow_feedback`;
    the others' delay-line slots are empty and they are passed over); the finished ones leave
    the list. A due flow's slot and state row are asked for ``FEEDBACK_AHEAD`` flows before its
    turn (:mod:`uno.fluid.cache_hints`: an inter-DC flow's slot was last touched a wire
    propagation ago). Returns (and counts) the running flows."""
    active = flows.active
    calendar = lines.calendar
    base = rt_ptr[rt_ptr.shape[0] - 1]  # (UnoLB subflow hop entries from here)
    kept = 0
    row = k % calendar.shape[0]
    ring, pool, fs = lines.ring, lines.pool, flows.fs
    for i in range(n_active):
        if i + FEEDBACK_AHEAD < n_active:  # (active[kept] is written only for kept <= i)
            g = active[i + FEEDBACK_AHEAD]
            if (calendar[row, g >> 6] >> np.uint64(g & 63)) & np.uint64(1) != 0:
                prefetch_row(ring, line_row(pool, g, k, 0), ring.shape[1])
                prefetch(fs, g, 0)
                prefetch(fs, g, FS_PFQ_RATE * 8)
        f = active[i]
        if (calendar[row, f >> 6] >> np.uint64(f & 63)) & np.uint64(1) == 0:
            active[kept] = f  # nothing due: its delay line's slot is empty
            kept += 1
            continue
        if not flow_feedback(f, k, now, dt_ps, base, flows, ls, lines, lb, hops, scratch):
            active[kept] = f
            kept += 1
    for w in range(calendar.shape[1]):
        calendar[row, w] = 0
    flows.counters[CT.running] = kept
    return kept

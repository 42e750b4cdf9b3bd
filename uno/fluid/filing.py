"""What happens to a step's bytes, filed in the flows' delay lines to come back one RTT later
(the step's last part, :func:`uno.fluid.kernels.advance`): each sender's batch of ACKs with its
RTT sample (the base RTT, the queueing its bytes meet on the way and its ACKs' on the way back),
the losses drawn in whole packets and when the flow will learn of them, and the ECN echoes of
the bytes delivered. A flow whose feedback comes in blocks of steps (a long RTT) is held and
filed once a block (:func:`hold_for_block`).

Units: time in ps (delays in steps where named so), sizes in bytes.
"""

from __future__ import annotations

import math

from numba import njit

from uno.fluid.balance import name_subflows, subflow_part
from uno.fluid.cache_hints import prefetch_row
from uno.fluid.coding import coded_losses
from uno.fluid.columns import (
    ACKS,
    BL,
    CT,
    FS_ACK_LAST,
    FS_ACKED,
    FS_BASE_RTT,
    FS_BLOCK_BYTES,
    FS_BLOCK_END,
    FS_BLOCK_MIDW,
    FS_BLOCK_RTTMIN,
    FS_BLOCK_SENT,
    FS_COPIES_UNFILED,
    FS_DELIV_NEW,
    FS_DRAWS,
    FS_DROPPED,
    FS_EC_N,
    FS_EXPOSED,
    FS_LAST_EARLY,
    FS_LAST_SEND,
    FS_LAST_WAIT,
    FS_LOSS_DELAY,
    FS_LOST,
    FS_MARK_NEW,
    FS_NIC_LINK,
    FS_NS_HOPS,
    FS_PENDING,
    FS_PFQ_RATE,
    FS_QBEFORE,
    FS_QBEYOND,
    FS_QTHR,
    FS_RATE,
    FS_RDELAY,
    FS_RETX_LOSS_DELAY,
    FS_RTO,
    FS_RTTMIN,
    FS_RX_P,
    FS_SEND_TIME,
    FS_START,
    FS_STATE,
    FS_UNSENT,
    FS_WIRE_HOP,
    FS_WIRE_PS,
    FX_SEND,
    P_BASE_RTT,
    P_DUP_ACKS,
    P_MSS,
    R_ACK,
    R_ARRIVE,
    R_DELIV,
    R_DSENT,
    R_GOOD,
    R_JITTER,
    R_MARK,
    R_PBEYOND,
    R_QBEYOND,
    R_RTTMIN,
    R_RTTW,
    R_SENTMAX,
    RING_FULL,
)
from uno.fluid.dci import credit_loop, stamp_near_source
from uno.fluid.faults import lose_batch_acks, note_fault_share
from uno.fluid.int_records import INTS, stamp_delivered, stamp_sent
from uno.fluid.jitter import (
    ack_path_exceedance,
    entries_exceedance,
    last_packet_wait_ps,
    subflows_exceedance,
    wire_side_exceedance,
)
from uno.fluid.losses import (
    beyond_share,
    book_losses,
    cut_acks,
    far_bytes,
    lose_acks,
    schedule_spurious,
)
from uno.fluid.rings import fit_lag, least_sample, line_row, longest_lag, mark_ring_due
from uno.fluid.signals import (
    delay_beyond_wire,
    path_delay,
    pfq_delay_ps,
    reverse_delay,
    subflow_reverse_delay,
    subflow_rtt_offsets,
    subflow_signals,
)


@njit(cache=True, error_model="numpy")
def hold_for_block(k, now, senders, n_senders, droppers, n_drop, markers, n_mark, block, fs, fx):
    """Feedback in blocks (``engine.fluid_blocks_per_rtt``): the flows of this step's
    ``senders``, ``droppers`` and ``markers`` whose block (``block[BL.steps, f]``) is more than
    a step leave those lists and are held (``block[BL.held]``): their sends add up in
    ``FS_BLOCK_*`` (bytes, the bytes' mean time, the latest send), their drops in
    ``FS_DROPPED`` / ``FS_EXPOSED`` and their deliveries in ``FS_DELIV_NEW`` / ``FS_MARK_NEW``
    (:func:`uno.fluid.forward.forward` adds to what is there).
    At its block's last step (``k + 1`` a multiple of the block) a held flow returns to the
    lists, once, and the step files it as one batch: the block's sends with the RTT sampled
    then, its drops drawn in whole packets, its deliveries' echoes from the block's middle.
    A law that reads a batch's least RTT sample (GEMINI's RTT_min) gets the least of the
    samples of every step the block sent in (:func:`note_block_rtts`), as the ACKs of those
    steps' packets would carry them, not only the last step's. Returns the number of senders
    left.

    The blocks and the step's growth are powers of two, aligned on the step count, so no
    block spans a change of step size; a flow still held when its block becomes a step is
    filed at the end of that step all the same."""
    n_flows = fs.shape[0]
    held, is_held = block[BL.held], block[BL.is_held]
    n_held = held[n_flows]
    kept = 0
    for i in range(n_senders):
        f = senders[i]
        if block[BL.steps, f] == 1 and is_held[f] == 0:
            senders[kept] = f
            kept += 1
            continue
        send = fx[f, FX_SEND]
        sent_at = now if fs[f, FS_START] <= now else fs[f, FS_START]
        fs[f, FS_BLOCK_BYTES] += send
        fs[f, FS_BLOCK_MIDW] += send * (sent_at + 0.5 * fs[f, FS_SEND_TIME])
        fs[f, FS_BLOCK_SENT] = sent_at
        fs[f, FS_BLOCK_END] = sent_at + fs[f, FS_SEND_TIME]
        if is_held[f] == 0:
            is_held[f] = 1
            held[n_held] = f
            n_held += 1
    n_senders = kept
    for lst, n_in in ((droppers, n_drop), (markers, n_mark)):
        kept = 0
        for i in range(n_in[0]):
            f = lst[i]
            if block[BL.steps, f] == 1 and is_held[f] == 0:
                lst[kept] = f
                kept += 1
            elif is_held[f] == 0:
                is_held[f] = 1
                held[n_held] = f
                n_held += 1
        n_in[0] = kept
    # the blocks ending with this step: their flows back in the lists, once each
    kept = 0
    for i in range(n_held):
        f = held[i]
        if (k + 1) % block[BL.steps, f] != 0:
            held[kept] = f
            kept += 1
            continue
        is_held[f] = 0
        if fs[f, FS_STATE] != 1.0:  # finished: nothing waits for them
            for c in (FS_DROPPED, FS_EXPOSED, FS_DELIV_NEW, FS_MARK_NEW, FS_BLOCK_BYTES,
                      FS_BLOCK_MIDW, FS_BLOCK_RTTMIN):  # fmt: skip
                fs[f, c] = 0.0
            continue
        if fs[f, FS_BLOCK_BYTES] > 0.0:
            senders[n_senders] = f
            n_senders += 1
        elif fs[f, FS_DROPPED] > 0.0:
            droppers[n_drop[0]] = f
            n_drop[0] += 1
        if fs[f, FS_DELIV_NEW] > 0.0:
            markers[n_mark[0]] = f
            n_mark[0] += 1
    held[n_flows] = kept
    return n_senders


@njit(cache=True, error_model="numpy", inline="always")
def sample_rtt(f, fs, ls, routes, lb, sub_loss, read_ahead):
    """The RTT sample of flow ``f``'s bytes sent now: its base RTT + the data's queueing on its
    path (an UnoLB flow's, the mean over its subflows, each subflow's loss chance into
    ``sub_loss``) + its ACKs' on the way back: the reverse links' queues now, or with
    ``read_ahead`` (``engine.fluid_ack_read_ahead``) as they will be when the ACKs meet them,
    a propagation to the receiver later (half the base RTT). A wire flow's
    samples take the queueing beyond its wire link as its bytes meet it, a propagation after
    the send (:func:`file_deliveries`), and so does the slack of its gentle test's chance of
    packet-level queueing; its ACKs' times take it now (the ACK clock). Sampled now, a queue
    the bytes never meet made UnoCC's gentle test see physical queueing (a full cut) ~3x as
    often as packets in the long-flow incast. Returns (the RTT, its part beyond the wire
    link); keeps the parts the flow's later drops time their losses by (``FS_RDELAY``,
    ``FS_QBEFORE``)."""
    n_sub = lb.n[f]
    if n_sub > 0:  # (each subflow's loss in sub_loss, for the loss reports)
        qdelay = subflow_signals(f, ls, lb, sub_loss)
    else:
        qdelay = path_delay(f, routes.rt_ptr, routes.rt_link, routes.rt_w, ls)
        qdelay += pfq_delay_ps(f, fs)  # (a DCI switch's per-flow queue: uno.fluid.dci)
    # the ACKs meet the reverse links about a propagation to the receiver after the send: not
    # also the data's queueing, over which a queue's growth rate held overshoots (congestion
    # control turns it meanwhile where queues are long)
    ahead = 0.5 * fs[f, FS_BASE_RTT] if read_ahead != 0.0 else 0.0
    if n_sub > 0 and lb.ack_hops[f] > 0:
        rdelay = subflow_reverse_delay(f, ahead, ls, lb)
    else:
        rdelay = reverse_delay(f, ahead, routes.rv_ptr, routes.rv_link, routes.rv_w, ls)
    rtt = fs[f, FS_BASE_RTT] + qdelay + rdelay
    fs[f, FS_RDELAY] = rdelay
    q_beyond = 0.0
    if fs[f, FS_WIRE_PS] > 0.0:
        subs = (lb.n, lb.hops, lb.links)
        q_beyond = delay_beyond_wire(f, fs, routes.rt_ptr, routes.rt_link, routes.rt_w, ls, subs)
    fs[f, FS_QBEFORE] = qdelay - q_beyond
    return rtt, q_beyond


@njit(cache=True, error_model="numpy")
def note_block_rtts(k, senders, n_senders, block, fs, ls, routes, lb, sub_loss, read_ahead) -> None:
    """Of this step's ``senders``, those :func:`hold_for_block` holds past this step whose law
    reads a batch's least RTT sample (``FS_RTTMIN``): the RTT sample of their sends
    (:func:`sample_rtt`), less the queueing beyond the wire link as ``R_RTTMIN`` takes it,
    into the least of their block so far (``FS_BLOCK_RTTMIN``, ps). The block's last step
    samples as it files (:func:`file_sends`, :func:`file_block_rtt`)."""
    for i in range(n_senders):
        f = senders[i]
        steps = block[BL.steps, f]
        if steps > 1 and (k + 1) % steps != 0 and fs[f, FS_RTTMIN] > 0.0:
            rtt, q_beyond = sample_rtt(f, fs, ls, routes, lb, sub_loss, read_ahead)
            fs[f, FS_BLOCK_RTTMIN] = least_sample(fs[f, FS_BLOCK_RTTMIN], rtt - q_beyond)


@njit(cache=True, error_model="numpy", inline="always")
def file_block_rtt(f, slot, fs, ring) -> None:
    """A block's batch in slot ``slot``: the least RTT sample of the block's earlier sends
    (:func:`note_block_rtts`) into the slot's, if less; the block's least is cleared."""
    if fs[f, FS_BLOCK_RTTMIN] > 0.0:
        ring[slot, R_RTTMIN] = least_sample(ring[slot, R_RTTMIN], fs[f, FS_BLOCK_RTTMIN])
        fs[f, FS_BLOCK_RTTMIN] = 0.0


@njit(cache=True, error_model="numpy", inline="always")
def batch_times(f, now, send, fs):
    """Flow ``f``'s batch of sends to file now: its bytes, when the batch's latest send began,
    the bytes' mean send time, the latest send's end (ps) - this step's ``send``, or the
    block's sends held so far (:func:`hold_for_block`, then cleared)."""
    if fs[f, FS_BLOCK_BYTES] > 0.0:  # the block's sends (hold_for_block)
        ack = fs[f, FS_BLOCK_BYTES]
        sent_at = fs[f, FS_BLOCK_SENT]
        middle = fs[f, FS_BLOCK_MIDW] / ack
        sent_end = fs[f, FS_BLOCK_END]
        fs[f, FS_BLOCK_BYTES] = 0.0
        fs[f, FS_BLOCK_MIDW] = 0.0
    else:
        ack = send
        sent_at = now if fs[f, FS_START] <= now else fs[f, FS_START]
        middle = sent_at + 0.5 * fs[f, FS_SEND_TIME]
        sent_end = sent_at + fs[f, FS_SEND_TIME]
    return ack, sent_at, middle, sent_end


@njit(cache=True, error_model="numpy", inline="always")
def ack_steps(now, dt_ps, sent_at, sent_end, middle, rtt, spread):
    """When a batch's ACKs come back: (the delay in steps of the step they start in, the share
    of them that arrives in the step after). They return over [``sent_at`` + ``rtt``,
    ``sent_end`` + ``rtt``], at the rate they were sent; a batch sent within a step arrives
    within at most two. Each part counts in the step it arrives in and clocks that step's
    sends: filed whole in the step of their mean arrival, the ACKs of a flow whose batches
    arrive near a step boundary fall now in one step and now in the next, which leaves steps
    with no ACKs at all (a law that counts the bytes acknowledged over a few steps, UnoCC's
    Quick Adapt, reads a hole as congestion). Without ``spread`` (``engine.fluid_ack_spread``
    off, a block's sends, or a law that reads the INT record a batch carries), the batch is
    filed whole in the step of its mean arrival. Counting them one step boundary later would
    add half a step to every RTT and cost a window-limited flow dt / (2 RTT) of its rate."""
    if spread and sent_end > sent_at:
        first = int(math.floor((sent_at + rtt - now) / dt_ps))
        late = (sent_end + rtt - (now + (first + 1) * dt_ps)) / (sent_end - sent_at)
        return first, (late if late > 0.0 else 0.0)
    return int(math.floor((middle + rtt - now) / dt_ps)), 0.0


@njit(cache=True, error_model="numpy", inline="always")
def file_acks(f, k, lag, ack, rtt, q_beyond, fs, block, lines) -> int:
    """Flow ``f``'s ``ack`` bytes, acknowledged with an RTT of ``rtt``, go into its delay
    line's slot ``lag`` steps after step ``k`` (returned)."""
    ring, ring_ptr, ring_len = lines.ring, lines.pool.ptr, lines.pool.length
    lag = fit_lag(f, k, lag, ring, lines.pool)
    slot = line_row(lines.pool, f, k, lag)
    ring[slot, R_ACK] += ack
    if lines.pool.wide[0] == RING_FULL:  # (else no coding: what is decodable is what is acked)
        ring[slot, R_GOOD] += ack
    ring[slot, R_RTTW] += ack * (rtt - q_beyond)
    mark_ring_due(lines.calendar, fs, k + lag, f)
    prefetch_row(ring, ring_ptr[f] + (k + block[BL.steps, f] + lag) % ring_len[f], ring.shape[1])
    fs[f, FS_PENDING] += ack
    if k + lag > fs[f, FS_ACK_LAST]:
        fs[f, FS_ACK_LAST] = k + lag
    return slot


@njit(cache=True, error_model="numpy", inline="always")
def queued_chance(f, rtt, q_beyond, fs, cp, ls, routes, lb) -> float:
    """The chance that a packet of flow ``f``'s batch met queueing its mean RTT ``rtt`` does
    not show, before the wire link and on its ACK's way back (the rest with the deliveries);
    0 for a law that does not decide on it."""
    thr = fs[f, FS_QTHR]
    slack = thr - (rtt - q_beyond - cp[f, P_BASE_RTT])
    nic = int(fs[f, FS_NIC_LINK])
    # (the links before the wire link: the rest in file_deliveries)
    subs = (lb.n, lb.hops, lb.links)
    p_queued = wire_side_exceedance(
        f, False, slack, nic, fs, routes.rt_ptr, routes.rt_link, routes.rt_w, ls, subs,
        cp[f, P_MSS],
    )  # fmt: skip
    p_back = ack_path_exceedance(f, slack, routes.rv_ptr, routes.rv_link, routes.rv_w, ls, lb,
                                 cp[f, P_MSS])  # fmt: skip
    return 1.0 - (1.0 - p_queued) * (1.0 - p_back)


@njit(cache=True, error_model="numpy", inline="always")
def subflow_queued_chance(f, s, rtt, q_beyond, fs, cp, ls, routes, lb) -> float:
    """:func:`queued_chance` of UnoLB flow ``f``'s subflow ``s`` alone, whose bytes' RTT is
    ``rtt``: at its own links before the wire link and on its ACKs' way back."""
    slack = fs[f, FS_QTHR] - (rtt - q_beyond - cp[f, P_BASE_RTT])
    if slack <= 0.0:
        return 1.0
    mss = cp[f, P_MSS]
    hop = int(fs[f, FS_WIRE_HOP])
    out_hops = hop + 1 if hop >= 0 else lb.hops[f]
    nic = int(fs[f, FS_NIC_LINK])
    p_out = subflows_exceedance(lb.links, f, s, s + 1, 0, out_hops, slack, nic, ls, mss)
    back = lb.ack_hops[f]
    if back > 0:
        p_back = subflows_exceedance(lb.ack_links, f, s, s + 1, 0, back, slack, -1, ls, mss)
    else:
        p_back = entries_exceedance(routes.rv_ptr[f], routes.rv_ptr[f + 1], slack, -1,
                                    routes.rv_link, routes.rv_w, ls, mss)  # fmt: skip
    return 1.0 - (1.0 - p_out) * (1.0 - p_back)


@njit(cache=True, error_model="numpy", inline="always")
def file_samples(f, slot, ack, p_queued, rtt, q_beyond, sent_at, arrive, fs, ring):
    """What the law of flow ``f`` reads of its ``ack`` bytes in slot ``slot`` besides the bytes:
    their share that met queueing the mean RTT does not show (``p_queued``,
    :func:`queued_chance`), the least RTT sample, the latest send time and the bytes
    acknowledged then, and when their last ACK arrives (``arrive``)."""
    if fs[f, FS_DRAWS] > 0.0 and ack > 0.0:
        ring[slot, R_JITTER] += ack * p_queued
    if fs[f, FS_RTTMIN] > 0.0:
        ring[slot, R_RTTMIN] = least_sample(ring[slot, R_RTTMIN], rtt - q_beyond)
    if sent_at >= ring[slot, R_SENTMAX]:
        ring[slot, R_SENTMAX] = sent_at
        if fs[f, FS_RATE] > 0.0:
            ring[slot, R_DSENT] = fs[f, FS_ACKED]
    if arrive > ring[slot, R_ARRIVE]:
        ring[slot, R_ARRIVE] = arrive


@njit(cache=True, error_model="numpy", inline="always")
def book_coded(f, k, sent_at, rtt, failed, gone, o_failed, o_gone, n_ec, mss, dt_ps, fs, lines):
    """:func:`uno.fluid.losses.book_losses` of the step's ``failed`` bytes (``gone`` of them in
    blocks of which nothing arrived), ``o_failed`` (``o_gone``) of them in blocks a
    retransmission opened, which the receiver's timer NACKs after ``FS_RETX_LOSS_DELAY``
    (``ec.retransmit_timeout``), the others after ``FS_LOSS_DELAY``."""
    ring, pool, calendar = lines.ring, lines.pool, lines.calendar
    if failed - o_failed > 0.5:  # (bytes: what is left is whole packets, or rounding)
        book_losses(f, k, sent_at, rtt, failed - o_failed, max(0.0, gone - o_gone), n_ec, mss,
                    dt_ps, fs, ring, pool, calendar, fs[f, FS_LOSS_DELAY])  # fmt: skip
    if o_failed > 0.0:
        book_losses(f, k, sent_at, rtt, o_failed, o_gone, n_ec, mss, dt_ps, fs, ring, pool,
                    calendar, fs[f, FS_RETX_LOSS_DELAY])  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def book_sides(f, k, now, sent_at, rtt, share, failed, gone, o_failed, o_gone, n_ec, mss, dt_ps,
               fs, lines) -> None:  # fmt: skip
    """:func:`book_coded` of the step's ``failed`` bytes, sent at ``sent_at``: those dropped
    beyond the wire link (``share``, :func:`uno.fluid.losses.far_bytes`) left it a wire
    propagation before the drop at the latest, and their timer runs from then."""
    far = far_bytes(failed, share, mss)
    r = far / failed  # (exactly 0 or 1 when all is on one side: the shares below are exact)
    if far > 0.0:
        book_coded(f, k, min(sent_at, now - fs[f, FS_WIRE_PS]), rtt, far, gone * r, o_failed * r,
                   o_gone * r, n_ec, mss, dt_ps, fs, lines)  # fmt: skip
    if failed > far:
        near = 1.0 - r
        book_coded(f, k, sent_at, rtt, failed - far, gone * near, o_failed * near,
                   o_gone * near, n_ec, mss, dt_ps, fs, lines)  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def sent_pfq(f, k, now, dt_ps, dropped, lost, failed, gone, o_failed, o_gone, share, rtt, flows,
             ls, routes, lines, hops) -> None:  # fmt: skip
    """:func:`file_sends` for flow ``f`` whose bytes wait in a DCI switch's per-flow queue
    (:mod:`uno.fluid.dci`): a wait of milliseconds the send cannot foresee, so its ACKs are
    filed as its bytes are delivered (:func:`file_deliveries`), and its lost bytes, never
    acknowledged, only wait for their timer (``dropped``: the bytes the links dropped, of
    which the draw lost ``lost``: :func:`settle_pfq_draws`); the sender-side DCI switch's
    notice."""
    fs, cp = flows.fs, flows.cp
    if fs[f, FS_NS_HOPS] > 0.0:
        stamp_near_source(f, k, now, dt_ps, fs, ls, routes.rt_ptr, routes.rt_link, routes.rt_w,
                          lines.ring, lines.pool, lines.calendar, hops)  # fmt: skip
    settle_pfq_draws(f, k, dt_ps, dropped, lost, lost - failed, fs, flows.block, lines)
    fs[f, FS_LOST] += lost
    if failed > 0.0:
        sent_at = now if fs[f, FS_START] <= now else fs[f, FS_START]
        book_sides(f, k, now, sent_at, rtt, share, failed, gone, o_failed, o_gone,
                   int(fs[f, FS_EC_N]), cp[f, P_MSS], dt_ps, fs, lines)  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def delivery_lag(f, k, dt_ps, fs, block, lines) -> int:
    """The steps from step ``k`` to the arrival of the ACKs of flow ``f``'s bytes delivered in
    it: its base RTT but for the wire link's propagation (the fluid's bytes meet none on their
    way out but that), its ACKs' queueing on from the middle of it, from a block's middle step
    (its delay line grown for them: :func:`uno.fluid.rings.fit_lag`)."""
    back = (fs[f, FS_BASE_RTT] - fs[f, FS_WIRE_PS] + fs[f, FS_RDELAY]) / dt_ps
    back -= 0.5 * (block[BL.steps, f] - 1)
    return fit_lag(f, k, int(math.floor(0.5 + back)), lines.ring, lines.pool)


@njit(cache=True, error_model="numpy", inline="always")
def settle_pfq_draws(f, k, dt_ps, dropped, lost, freed, fs, block, lines) -> None:
    """Flow ``f`` (ACKs filed as its bytes are delivered: :func:`sent_pfq`) had ``dropped``
    bytes dropped by the links in step ``k``, of which the draw in whole packets lost
    ``lost`` (:func:`uno.fluid.losses.dropped_packets`, the ACKs lost on their way back
    among them; ``freed`` of them absorbed by coding). Its ACKs come from the links'
    deliveries, so the difference is settled now, as a flow whose ACKs were filed at the send
    settles all it lost (:func:`uno.fluid.losses.lose_acks`): bytes the draw counts as
    delivered that the links dropped are acknowledged (as if delivered in this step); bytes it
    counts as lost that the links deliver come off the flow's latest ACKs due, or off what it
    has acknowledged (:func:`uno.fluid.losses.cut_acks`), before their timer takes them out of
    flight. Unsettled, a flow whose draws fell short of its drops would keep the difference in
    flight with no ACK or timer to come for it (and never finish), and one whose draws went
    over would have its timer take out of flight bytes its ACKs had already taken."""
    if lost > dropped:
        cut_acks(f, k, lost - dropped, freed * (lost - dropped) / lost, fs, lines.ring,
                 lines.pool)  # fmt: skip
    elif dropped > lost:
        lag = delivery_lag(f, k, dt_ps, fs, block, lines)
        delivered_acks(f, k, dt_ps, lag, dropped - lost, fs[f, FS_QBEYOND], fs, block, lines)


@njit(cache=True, error_model="numpy", inline="always")
def delivered_acks(f, k, dt_ps, lag, deliv, q_beyond, fs, block, lines) -> None:
    """The ACKs of flow ``f``'s ``deliv`` bytes delivered in step ``k`` (a flow whose bytes
    wait in a DCI switch's per-flow queue, :func:`sent_pfq`), in its delay line's slot ``lag``
    steps on, with their ECN echoes: their RTT the base RTT and the queueing they met, as the
    flow's latest samples saw it before the wire link and on the way back, and beyond it now
    (``q_beyond``: the links' and the per-flow queue's)."""
    rtt = fs[f, FS_BASE_RTT] + fs[f, FS_QBEFORE] + q_beyond + fs[f, FS_RDELAY]
    arrive = (k + lag) * dt_ps
    slot = file_acks(f, k, lag, deliv, rtt, q_beyond, fs, block, lines)
    file_samples(f, slot, deliv, 0.0, rtt, q_beyond, arrive - rtt, arrive, fs, lines.ring)


@njit(cache=True, error_model="numpy", inline="always")
def file_batch(f, k, ack, rtt, q_beyond, p_queued, times, drops, fs, block, lines):
    """Flow ``f``'s ``ack`` bytes of a batch sent at ``times`` (now, the step, when its latest
    send began, the mean send, the latest send's end, whether its ACKs count in the steps they
    arrive in: :func:`ack_steps`), acknowledged with an RTT of ``rtt``, into its delay line,
    with what its law reads of them (:func:`file_samples`); the flow's ``drops`` of this step
    (bytes lost, of them in failed blocks, of them beyond its wire link) come off its latest
    ACKs due (:func:`uno.fluid.losses.lose_acks`). Returns the slot of its first ACKs and the
    RTT filed (a delay beyond what the line holds is heard at the longest)."""
    now, dt_ps, sent_at, middle, sent_end, spread = times
    lost, failed, far = drops
    ring = lines.ring
    lag, late = ack_steps(now, dt_ps, sent_at, sent_end, middle, rtt, spread)
    longest = longest_lag(lines.pool, f)
    if (lag + 1 if late > 0.0 else lag) > longest:
        # a delay beyond what its line holds (a queue behind PFC pauses, whose drain the
        # paused share foresees at its slowest) is heard at the longest, in the middle of
        # its step: its RTT and arrival are that, not later than the run hears them
        rtt = now + (longest + 0.5) * dt_ps - middle
        lag, late = longest, 0.0
    arrive = sent_end + rtt
    early = ack * (1.0 - late)
    # (the line grows for the later ACKs first: a growth moves the slot found before it)
    fit_lag(f, k, lag + 1 if late > 0.0 else lag, ring, lines.pool)
    slot = file_acks(f, k, lag, early, rtt, q_beyond, fs, block, lines)
    later = slot
    if late > 0.0:  # (the batch's ACKs that arrive in the step after)
        later = file_acks(f, k, lag + 1, ack - early, rtt, q_beyond, fs, block, lines)
    if lost > 0.0:
        lose_acks(f, k, lost, lost - failed, far, dt_ps, fs, ring, lines.pool)
    if late > 0.0:
        boundary = now + (lag + 1) * dt_ps
        file_samples(f, slot, early, p_queued, rtt, q_beyond, sent_at, boundary, fs, ring)
        file_samples(f, later, ack - early, p_queued, rtt, q_beyond, sent_at, arrive, fs, ring)
    else:
        file_samples(f, slot, ack, p_queued, rtt, q_beyond, sent_at, arrive, fs, ring)
    return slot, rtt


@njit(cache=True, error_model="numpy", inline="always")
def late_acks(f, k, sent_at, rtt, ack, lost, dt_ps, fs, lines, counters) -> None:
    """A batch of ``ack`` bytes of flow ``f`` sent at ``sent_at`` (step ``k``), ``lost`` of
    them dropped, whose ACKs come back ``rtt`` (ps) after their send, later than the flow's
    retransmission timeout: as a packet sender's timer, the flow's declares the bytes that
    arrived lost one timeout after their send and resends copies of them
    (:func:`uno.fluid.losses.schedule_spurious`: spurious retransmissions, whose ACKs are
    duplicates). Once: a copy's own timer is not run, where a packet sender whose ACKs come
    back later than two timeouts resends a packet again. Counted, batches and bytes
    (``counters``: ``CT.late_batches``, ``CT.late_bytes``; the summary's
    ``fluid.late_ack_bytes``). The wait a wire flow's bytes
    meet beyond its wire link is not known here: only what its RTT sample holds counts. A
    coded flow's late bytes are counted, not resent."""
    if ack > 0.0 and rtt > fs[f, FS_RTO]:
        counters[CT.late_batches] += 1
        counters[CT.late_bytes] += int(ack + 0.5)
        arrived = ack - lost
        if arrived > 0.0 and fs[f, FS_EC_N] <= 0.0:  # (a coded flow's copies: not modelled)
            schedule_spurious(f, k, sent_at, arrived, dt_ps, fs, lines)


@njit(cache=True, error_model="numpy", inline="always")
def split_copies(f, ack, fs) -> float:
    """Of uncoded flow ``f``'s batch of ``ack`` bytes, the copies it resent of bytes that
    arrived (``FS_COPIES_UNFILED``, sent first: :func:`uno.fluid.kernels.make_sends`); their
    ACKs are duplicates. Returns their bytes, taken off what is left to file."""
    copies = fs[f, FS_COPIES_UNFILED]
    if copies <= 0.0 or fs[f, FS_EC_N] > 0.0:
        return 0.0
    dup = copies if copies < ack else ack
    fs[f, FS_COPIES_UNFILED] = copies - dup
    return dup


@njit(cache=True, error_model="numpy", _nrt=False)
def file_sends(k, now, dt_ps, n_senders, flows, ls, routes, lines, lb, hops, scratch) -> None:
    """What happens to the bytes of this step's senders (``scratch.senders[:n_senders]``),
    filed for one RTT later: the RTT sample (:func:`sample_rtt`), the batch's ACKs
    (:func:`file_acks`, :func:`file_samples`), and the bytes of the flow the links dropped in
    this step (its bytes sent earlier and queued on the way, or sent now) in whole packets
    (:func:`uno.fluid.coding.coded_losses`). The batch's ACKs are written whole and the lost
    bytes come off the latest ACKs due (:func:`uno.fluid.losses.lose_acks`): the bytes lost
    are the bytes not acked, however long the bytes wait on the way. Coded flows: of them,
    those in blocks that decode are absorbed, the rest resent. Where a law reads INT, the
    records of the links the bytes crossed (:func:`uno.fluid.int_records.stamp_sent`)."""
    fs, cp, fx, block = flows.fs, flows.cp, flows.fx, flows.block
    ring = lines.ring
    sub_loss, block_dist = scratch.sub_loss, scratch.block_dist
    int_laws = hops.int_set[INTS.hops] > 0  # (a batch carries one INT record: filed whole)
    may_spread = hops.acks[ACKS.spread] != 0.0 and not int_laws
    acks_lost = hops.acks[ACKS.faults] != 0.0 or hops.acks[ACKS.squeeze] > 0.0
    by_subflow = hops.acks[ACKS.by_subflow] != 0.0 and not int_laws
    copying = flows.counters[CT.late_batches] > 0  # (copies only after a late batch)
    for i in range(n_senders):
        f = scratch.senders[i]
        n_sub = lb.n[f]
        rtt, q_beyond = sample_rtt(f, fs, ls, routes, lb, sub_loss, hops.acks[ACKS.ahead])
        n_ec = int(fs[f, FS_EC_N])
        mss = cp[f, P_MSS]
        dropped = fs[f, FS_DROPPED]  # (by the links: their ACKs' losses join it next)
        if acks_lost:  # (its ACKs' way back: uno.fluid.faults)
            lose_batch_acks(f, fs, fx, ls, routes.rv_ptr, routes.rv_link, lb, hops)
        share, lost, failed, gone, o_failed, o_gone = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
        if fs[f, FS_DROPPED] > 0.0:  # (nothing dropped: nothing to draw or reset)
            note_fault_share(f, fs)
            share = beyond_share(f, fs, hops.acks[ACKS.sides])
            lost, failed, gone, o_failed, o_gone = coded_losses(f, n_ec, mss, fs, flows.loss_rng,
                                                                lb, block_dist)  # fmt: skip
        if n_sub > 0 and failed > 0.0:  # the subflows a loss report will name
            name_subflows(f, n_sub, n_ec, sub_loss, block_dist, lb.lost)
        # (its last packet's way; FS_UNSENT, on the row's first line, is read first so that
        # a flow with bytes left does not touch the row's last line)
        if fs[f, FS_UNSENT] <= 0.5 and fs[f, FS_LAST_EARLY] > 0.0:
            fs[f, FS_LAST_WAIT] = last_packet_wait_ps(
                f, int(fs[f, FS_NIC_LINK]), routes.rt_ptr, routes.rt_link, routes.rt_w,
                routes.rv_ptr, routes.rv_link, routes.rv_w, ls, lb, mss,
            )  # fmt: skip
        if fs[f, FS_PFQ_RATE] > 0.0:  # (its ACKs follow its deliveries: file_deliveries)
            sent_pfq(f, k, now, dt_ps, dropped, lost, failed, gone, o_failed, o_gone, share, rtt,
                     flows, ls, routes, lines, hops)  # fmt: skip
            continue
        spread = may_spread and block[BL.steps, f] == 1 and fs[f, FS_BLOCK_BYTES] <= 0.0
        ack, sent_at, middle, sent_end = batch_times(f, now, fx[f, FX_SEND], fs)
        dup = split_copies(f, ack, fs) if copying else 0.0
        ack -= dup
        times = (now, dt_ps, sent_at, middle, sent_end, spread)
        drops = (lost, failed, far_bytes(lost, share, mss))
        if by_subflow and n_sub > 0 and fs[f, FS_NS_HOPS] <= 0.0:
            # each subflow's share at its own RTT: ACKs of the subflows that meet no queue are
            # not held back by the mean of those that do (the losses come off the latest)
            offsets = scratch.sub_rtt
            subflow_rtt_offsets(f, hops.acks[ACKS.ahead] * 0.5 * fs[f, FS_BASE_RTT], ls, lb,
                                offsets)  # fmt: skip
            slot, least = -1, 0.0
            for s in range(n_sub):
                rtt_s = rtt + offsets[s]
                p_queued = 0.0
                if fs[f, FS_DRAWS] > 0.0 and ack > 0.0:
                    p_queued = subflow_queued_chance(f, s, rtt_s, q_beyond, fs, cp, ls, routes,
                                                     lb)  # fmt: skip
                last = s == n_sub - 1
                ack_s = subflow_part(ack, f, s, lb)
                late_acks(f, k, sent_at, rtt_s, ack_s, lost if last else 0.0, dt_ps, fs,
                          lines, flows.counters)  # fmt: skip
                first, _ = file_batch(f, k, ack_s, rtt_s, q_beyond, p_queued, times,
                                      drops if last else (0.0, 0.0, 0.0), fs, block,
                                      lines)  # fmt: skip
                if slot < 0 or offsets[s] < least:
                    slot, least = first, offsets[s]  # (a block's least RTT: the earliest ACKs)
        else:
            p_queued = 0.0
            if fs[f, FS_DRAWS] > 0.0 and ack > 0.0:
                p_queued = queued_chance(f, rtt, q_beyond, fs, cp, ls, routes, lb)
            late_acks(f, k, sent_at, rtt, ack, lost, dt_ps, fs, lines, flows.counters)
            slot, rtt = file_batch(f, k, ack, rtt, q_beyond, p_queued, times, drops, fs, block,
                                   lines)  # fmt: skip
        file_block_rtt(f, slot, fs, ring)
        if dup > 0.0 and cp[f, P_DUP_ACKS] > 0.0:  # (the copies' ACKs, with the batch's)
            ring[slot, int(hops.acks[ACKS.dup])] += dup
        if fs[f, FS_NS_HOPS] > 0.0:  # (the sender-side DCI switch's notice: uno.fluid.dci)
            stamp_near_source(f, k, now, dt_ps, fs, ls, routes.rt_ptr, routes.rt_link,
                              routes.rt_w, ring, lines.pool, lines.calendar, hops)  # fmt: skip
        elif int_laws:
            stamp_sent(f, slot, now + dt_ps, fs, ls, routes.rt_ptr, ring, hops)
        fs[f, FS_LOST] += lost
        if failed > 0.0:
            book_sides(f, k, now, sent_at, rtt, share, failed, gone, o_failed, o_gone, n_ec, mss,
                       dt_ps, fs, lines)  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False)
def file_drops(k, now, dt_ps, flows, ls, lines, lb, scratch, sides) -> None:
    """The bytes the links dropped of flows that sent nothing this step (their earlier bytes,
    queued on the way; ``scratch.droppers``): lost all the same. Their timer runs from their
    send, at the latest the flow's last (the packet sender's runs from a packet's own send):
    from the drop, the bytes of one packet that a FIFO share lets out over many steps and a
    full queue drops step by step would each time out apart, a timeout a sliver, where the
    packet engine's one packet times out once (a one-packet flow of the 40%-load Fig. 10 run
    heard 9). ``sides``: ``engine.fluid_wire_loss_sides``
    (:func:`uno.fluid.losses.beyond_share`)."""
    fs, cp = flows.fs, flows.cp
    ring = lines.ring
    sub_loss, block_dist = scratch.sub_loss, scratch.block_dist
    for i in range(scratch.n_drop[0]):
        f = scratch.droppers[i]
        if fs[f, FS_DROPPED] <= 0.0:
            continue  # a sender: counted in file_sends
        n_ec = int(fs[f, FS_EC_N])
        note_fault_share(f, fs)
        share = beyond_share(f, fs, sides)
        dropped = fs[f, FS_DROPPED]
        lost, failed, gone, o_failed, o_gone = coded_losses(f, n_ec, cp[f, P_MSS], fs,
                                                            flows.loss_rng, lb, block_dist)  # fmt: skip
        if fs[f, FS_PFQ_RATE] > 0.0:  # (acknowledged as delivered: sent_pfq)
            settle_pfq_draws(f, k, dt_ps, dropped, lost, lost - failed, fs, flows.block, lines)
        if lost <= 0.0:
            continue
        if fs[f, FS_PFQ_RATE] <= 0.0:
            lose_acks(f, k, lost, lost - failed, far_bytes(lost, share, cp[f, P_MSS]), dt_ps, fs,
                      ring, lines.pool)  # fmt: skip
        fs[f, FS_LOST] += lost
        if failed <= 0.0:
            continue  # (coding absorbs them all)
        if lb.n[f] > 0:  # the subflows a loss report will name
            if n_ec == 0:
                subflow_signals(f, ls, lb, sub_loss)
            name_subflows(f, lb.n[f], n_ec, sub_loss, block_dist, lb.lost)
        # (the round trip as the flow's latest samples saw it)
        rtt = fs[f, FS_BASE_RTT] + fs[f, FS_QBEFORE] + fs[f, FS_QBEYOND] + fs[f, FS_RDELAY]
        book_sides(f, k, now, fs[f, FS_LAST_SEND], rtt, share, failed, gone, o_failed, o_gone,
                   n_ec, cp[f, P_MSS], dt_ps, fs, lines)  # fmt: skip


@njit(cache=True, error_model="numpy", _nrt=False)
def file_deliveries(k, dt_ps, flows, ls, routes, lines, lb, hops, scratch) -> None:
    """The bytes delivered this step and their marks (``scratch.markers``): their ECN echoes
    return with the ACKs of this step's deliveries, a base RTT (the fluid's bytes meet no
    propagation on their way out but their wire link's: the rest is on the way back) and the
    ACKs' queueing on from the middle of it (a block's deliveries: from its middle step); a
    wire flow's, with the queueing beyond its wire link they met (its RTT samples',
    :func:`sample_rtt`) and the chance of a packet's queueing there, and where a law reads
    INT the records of the links beyond it (:func:`uno.fluid.int_records.stamp_delivered`)."""
    fs, cp, block = flows.fs, flows.cp, flows.block
    ring, ring_ptr, ring_len = lines.ring, lines.pool.ptr, lines.pool.length
    subs = (lb.n, lb.hops, lb.links)
    for i in range(scratch.n_mark[0]):
        f = scratch.markers[i]
        deliv = fs[f, FS_DELIV_NEW]
        marks = fs[f, FS_MARK_NEW]
        fs[f, FS_DELIV_NEW] = 0.0
        fs[f, FS_MARK_NEW] = 0.0
        if fs[f, FS_STATE] != 1.0:
            continue  # (finished: nothing waits for them)
        lag = delivery_lag(f, k, dt_ps, fs, block, lines)
        slot = line_row(lines.pool, f, k, lag)
        ring[slot, R_DELIV] += deliv
        ring[slot, R_MARK] += marks
        prefetch_row(ring, ring_ptr[f] + (k + block[BL.steps, f] + lag) % ring_len[f],
                     ring.shape[1])  # fmt: skip
        if fs[f, FS_WIRE_PS] > 0.0:  # the queueing the bytes met beyond the wire link
            q_beyond = delay_beyond_wire(f, fs, routes.rt_ptr, routes.rt_link, routes.rt_w, ls,
                                         subs)  # fmt: skip
            ring[slot, R_QBEYOND] += deliv * q_beyond
            if fs[f, FS_DRAWS] > 0.0:
                thr = fs[f, FS_QTHR]
                slack = thr - (fs[f, FS_QBEFORE] + q_beyond + fs[f, FS_RDELAY])
                p_beyond = wire_side_exceedance(
                    f, True, slack, int(fs[f, FS_NIC_LINK]), fs, routes.rt_ptr, routes.rt_link,
                    routes.rt_w, ls, subs, cp[f, P_MSS],
                )  # fmt: skip
                ring[slot, R_PBEYOND] += deliv * p_beyond
            if fs[f, FS_PFQ_RATE] > 0.0:  # (past a DCI switch's per-flow queue: sent_pfq)
                delivered_acks(f, k, dt_ps, lag, deliv, q_beyond, fs, block, lines)
            if fs[f, FS_RX_P] > 0.0:  # (its receiver's credit loop: uno.fluid.dci)
                q_links = q_beyond - pfq_delay_ps(f, fs)
                credit_loop(f, k, dt_ps, deliv, q_links, slot, fs, flows.cs, cp, ls,
                            routes.rt_ptr, ring, hops)  # fmt: skip
            elif hops.int_set[INTS.hops] > 0:
                stamp_delivered(f, slot, (k + 1) * dt_ps, fs, ls, routes.rt_ptr, ring, hops)
        mark_ring_due(lines.calendar, fs, k + lag, f)

"""What a flow loses to the links and how it learns of it, as the packet sender does: losses in
whole packets (a binomial draw from the flow's stream), the lost bytes taken off the ACKs its
delay line holds, and their detection by the retransmission timer, by fast retransmit's
evidence (``transport.dupack_threshold``) or, for a coded flow, by its receiver's NACK.

Units: time in ps (steps where named so), sizes in bytes.
"""

from __future__ import annotations

import math

from numba import njit

from uno.fluid.columns import (
    FS_ACK_LAST,
    FS_ACKED,
    FS_DELIVERED,
    FS_DROPPED,
    FS_DUPACK_BYTES,
    FS_EC_M,
    FS_EC_N,
    FS_EVIDENCE,
    FS_EVIDENCE_OLDEST,
    FS_EXPOSED,
    FS_FAST_BYTES,
    FS_FAULT_SHARE,
    FS_INFLIGHT,
    FS_LOSS_AT,
    FS_LOSS_PENDING,
    FS_NIC,
    FS_OPEN_TIMED,
    FS_PENDING,
    FS_RESEND_WAIT,
    FS_RTO,
    FS_RTO_AFTER,
    FS_SIZE,
    FS_TIMED_AHEAD,
    FS_TRIMS,
    FS_UNREVEALED,
    FS_UNSENT,
    FS_VOID_BYTES,
    FS_WAIT,
    FS_WAIT_LAST,
    FS_WIRE_ACK,
    FS_WIRE_DROP,
    R_ACK,
    R_FREE,
    R_GOOD,
    R_JITTER,
    R_LATE_NACK,
    R_LOSTQ,
    R_NACK,
    R_RTTW,
    R_SPURIOUS,
    R_TIMEOUT,
    RING_FULL,
)
from uno.fluid.draws import binomial_draw, next_uniform
from uno.fluid.rings import fit_lag, line_row, mark_ring_due, step_not_before, tail_row_at
from uno.fluid.timers import file_far_timer

#: expected lost packets per step above which a flow's losses are taken as their mean
POISSON_MAX_MEAN = 20.0


@njit(cache=True, error_model="numpy")
def dropped_packets(f, mss, fs, rng_state) -> float:
    """Whole packets flow ``f`` lost to the links in this step (and its drop record cleared),
    in data packets of ``mss`` bytes: its ``FS_EXPOSED`` bytes that reached links that dropped
    some are that many packets (a flow of less than a data packet: its one packet, of its own
    size), each lost with the chance ``FS_DROPPED`` / ``FS_EXPOSED``: a binomial draw, and for
    the slice of a packet beyond the whole ones a packet lost with the chance slice x that
    chance (the mean is the bytes dropped). Beyond ``POISSON_MAX_MEAN`` packets, the mean.
    (A Poisson draw, as before, lost the last packet of a flow crossing a link that drops 60%
    of what reaches it with a chance of 45%, and so shortened the flows' chains of
    retransmissions.) A slice that met a link dropping all of it is a whole packet lost with
    the chance slice / packet too: losing the slice itself would make a packet the upstream
    FIFO share lets out over several steps lose a sliver whenever one of them met a locked-out
    input, and its flow wait for the timer every time (at load 0.6 of the Fig. 10 traffic the
    fluid's timed-out intra-DC flows hear 1.57 timeouts each, the packet engine's 1.54; 1.74
    with slices lost)."""
    dropped = fs[f, FS_DROPPED]
    exposed = fs[f, FS_EXPOSED]
    fs[f, FS_DROPPED] = 0.0
    fs[f, FS_EXPOSED] = 0.0
    if dropped <= 0.0:
        return 0.0
    mean = dropped / mss
    if mean >= POISSON_MAX_MEAN:
        return mean
    # a flow of less than a data packet has one packet, of its size
    unit = fs[f, FS_SIZE] if 0.0 < fs[f, FS_SIZE] < mss else mss
    p = dropped / exposed if exposed > dropped else 1.0
    packets = exposed / unit
    whole = int(packets)
    lost = binomial_draw(whole, p, rng_state, f)
    if next_uniform(rng_state, f) < (packets - whole) * p:
        lost += 1.0
    return lost * unit / mss


@njit(cache=True, error_model="numpy", inline="always")
def leave_flight(fs, f, nbytes) -> None:
    """Flow ``f``'s ``nbytes`` leave its bytes in flight (acknowledged, or declared lost). They
    do not fall below the copies not sent yet of an uncoded flow's bytes its timer declared
    lost though they arrived (:func:`resend_copies`): those left flight before they were sent,
    and their sends take it back. A copy's ACK is a duplicate, so where its original was lost
    after all (its batch's drops are booked after its ACKs are filed), a floor at 0 would leave
    the copy in flight for good, and a flow whose window it fills would wait for an ACK that
    never comes. Otherwise the floor is 0."""
    floor = -fs[f, FS_RESEND_WAIT] if fs[f, FS_EC_N] <= 0.0 else 0.0
    left = fs[f, FS_INFLIGHT] - nbytes
    fs[f, FS_INFLIGHT] = left if left > floor else floor


@njit(cache=True, error_model="numpy")
def resend(fs, f, lost) -> None:
    """Flow ``f``'s ``lost`` bytes leave flight (:func:`leave_flight`) and go back to be sent.
    From then on its timer uses ``FS_RTO_AFTER`` when set
    (``transport.*.rto_base_rtts_after_retransmit``; the packet sender switches ``rto_ps``
    when it sends its first retransmission, uno/transport/sender.py). Timers already running
    keep the timeout they were set with."""
    leave_flight(fs, f, lost)
    fs[f, FS_UNSENT] += lost
    if fs[f, FS_EC_N] > 0.0:  # (sent before new bytes: uno.fluid.kernels.make_sends)
        fs[f, FS_RESEND_WAIT] += lost
    if fs[f, FS_RTO_AFTER] > 0.0:
        fs[f, FS_RTO] = fs[f, FS_RTO_AFTER]


@njit(cache=True, error_model="numpy", inline="always")
def schedule_spurious(f, k, sent_at, late, dt_ps, fs, lines) -> None:
    """Bytes ``late`` of flow ``f``'s batch sent at ``sent_at`` (step ``k``) arrive, but their
    ACKs come back after the retransmission timeout: the timer declares them lost at the first
    step boundary ``FS_RTO`` after their send (``R_SPURIOUS``), before their ACKs come, and
    the flow resends copies of them (:func:`resend_copies`), as a packet sender's timer resends
    a packet still unacknowledged ``rto_ps`` after its send though it arrived. The ACKs come
    later than the timer, so its slot is within the line that holds them."""
    ring, pool = lines.ring, lines.pool
    lag = int(math.ceil((sent_at + fs[f, FS_RTO]) / dt_ps)) - k
    lag = fit_lag(f, k, lag, ring, pool)
    ring[line_row(pool, f, k, lag), R_SPURIOUS] += late
    mark_ring_due(lines.calendar, fs, k + lag, f)


@njit(cache=True, error_model="numpy")
def resend_copies(fs, f, copies) -> None:
    """Flow ``f``'s timer declared ``copies`` bytes lost that arrived (``R_SPURIOUS``): they
    leave flight and copies of them wait to be sent before new bytes (``FS_RESEND_WAIT``),
    as the packet sender moves a timed-out packet from its bytes in flight to its
    retransmission queue, which it serves first; the original's ACK then takes the copy out
    of flight, and the copy's own ACK is a duplicate (``ACKS.dup``). Not floored at 0: where the
    originals' ACKs came in the same step, before the timer is heard, the copies sent next
    take the bytes in flight back to what they were."""
    fs[f, FS_INFLIGHT] -= copies
    fs[f, FS_UNSENT] += copies
    fs[f, FS_RESEND_WAIT] += copies
    if fs[f, FS_RTO_AFTER] > 0.0:
        fs[f, FS_RTO] = fs[f, FS_RTO_AFTER]


@njit(cache=True, error_model="numpy", inline="always")
def cancel_copies(fs, f, acked) -> None:
    """``acked`` bytes of uncoded flow ``f`` were acknowledged while copies of bytes its timer
    declared lost still wait to be sent: a packet sender does not resend a packet acknowledged
    in the meantime, so as many copies leave the queue. Their originals' ACKs, heard next,
    take them out of flight, where they no longer are (:func:`resend_copies`): they go back
    first."""
    wait = fs[f, FS_RESEND_WAIT]
    gone = acked if acked < wait else wait
    fs[f, FS_RESEND_WAIT] = wait - gone
    fs[f, FS_UNSENT] -= gone
    fs[f, FS_INFLIGHT] += gone


@njit(cache=True, error_model="numpy")
def schedule_timeout(f, k, sent_at, lost, dt_ps, fs, ring, pool, calendar) -> None:
    """Bytes ``lost`` from the batch flow ``f`` sent at ``sent_at`` (step ``k``) wait for
    the retransmission timer: they time out at the first step boundary ``FS_RTO`` after their
    send, as a packet the sender's timer declares lost ``rto_ps`` after its own send. A timer
    beyond the end of the flow's line waits apart (:mod:`uno.fluid.timers`), so that a loss
    does not grow the line for the rest of the flow's life."""
    lag = int(math.ceil((sent_at + fs[f, FS_RTO]) / dt_ps)) - k
    lag = min(max(lag, 1), pool.reach[f] - 1)  # (as a line and its tail hold it: fit_lag)
    if not file_far_timer(pool, f, k, lag, lost):
        lag = fit_lag(f, k, lag, ring, pool)
        ring[line_row(pool, f, k, lag), R_TIMEOUT] += lost
        mark_ring_due(calendar, fs, k + lag, f)
    fs[f, FS_WAIT] += lost
    fs[f, FS_WAIT_LAST] = k + lag


@njit(cache=True, error_model="numpy")
def cut_acks(f, k, lost, freed, fs, ring, pool) -> None:
    """Flow ``f``'s ``lost`` bytes (dropped by the links at step ``k``) come off its latest ACKs
    still due, newest first (``FS_ACK_LAST`` down): a tail drop takes the bytes arriving at a
    full queue, the flow's newest there, whose ACKs its delay line holds last. (Taking them
    off the ACKs due first instead, as before, starved the ACK clock after a burst of drops:
    an incast's inter-DC flows heard no ACK for two milliseconds after their first window,
    though the receiver's link delivered at line rate, then a burst of three times it.)

    Lost bytes beyond every ACK still due belonged to batches whose ACKs already came (the
    bytes waited on the way longer than the RTT their send foresaw): they are taken back from
    what was acknowledged and return to flight, which their retransmission takes them out of
    (:func:`resend`).

    Coded flows: ``freed`` of the ``lost`` bytes (those in blocks that decode,
    :func:`uno.fluid.coding.coded_loss_shares`) stay decodable (``R_GOOD``) and leave flight
    with the ACKs that would have carried them (``R_FREE``), as the packet sender stops
    tracking a decoded block's packets; the rest are taken off what is decodable too, until
    resent (uncoded flows: ``freed`` = 0)."""
    step, left = take_acks(f, k, int(fs[f, FS_ACK_LAST]), lost, freed, fs, ring, pool)
    fs[f, FS_ACK_LAST] = step
    if left > 0.0:
        if fs[f, FS_DUPACK_BYTES] > 0.0:  # (their ACKs' time is past: they wait for evidence)
            fs[f, FS_UNREVEALED] += left
        free_share = freed / lost
        fs[f, FS_DELIVERED] -= left * (1.0 - free_share)
        fs[f, FS_ACKED] -= left
        fs[f, FS_INFLIGHT] += left * (1.0 - free_share)


@njit(cache=True, error_model="numpy")
def cut_wire_acks(f, k, newest, lost, freed, fs, ring, pool) -> None:
    """:func:`cut_acks` for bytes a link beyond the flow's wire link dropped: they left the
    wire link a propagation before, and their ACKs are due at step ``newest`` and before
    (:func:`lose_acks`); they come off those ACKs first, newest first, and what is left as
    :func:`cut_acks` takes it."""
    _, left = take_acks(f, k, newest, lost, freed, fs, ring, pool)
    if left > 0.0:
        cut_acks(f, k, left, freed * left / lost, fs, ring, pool)


@njit(cache=True, error_model="numpy")
def beyond_share(f, fs, sides) -> float:
    """The share of the bytes flow ``f`` lost since its losses were last booked that links
    beyond its wire link dropped (``FS_WIRE_DROP``, :func:`uno.fluid.forward.forward`); starts
    the next count. A step's drops fall on both sides of a wire link at once (its own bytes at
    the WAN port, those it sent a propagation before at the ports past it); with ``sides``
    (``engine.fluid_wire_loss_sides``) each side's are booked at their own place
    (:func:`far_bytes`), else all on the side that dropped most of them (1 or 0). A coded
    flow's are booked so either way: its losses are found by its blocks, not by later ACKs (a
    coded flow with fast retransmit is refused)."""
    wire, dropped = fs[f, FS_WIRE_DROP], fs[f, FS_DROPPED]
    fs[f, FS_WIRE_DROP] = 0.0
    if wire <= 0.0:
        return 0.0
    if sides == 0.0 or fs[f, FS_EC_N] > 0.0:
        return 1.0 if wire >= 0.5 * dropped else 0.0
    return wire / dropped if wire < dropped else 1.0


@njit(cache=True, error_model="numpy", inline="always")
def far_bytes(total, share, mss) -> float:
    """Of ``total`` bytes a flow lost in a step (whole packets of ``mss`` bytes, or its one
    smaller packet), those beyond its wire link at ``share`` (:func:`beyond_share`): the
    nearest count of whole packets, at most ``total``."""
    if share <= 0.0 or total <= 0.0:
        return 0.0
    if share >= 1.0:
        return total
    packet = mss if mss < total else total
    far = math.floor(total * share / packet + 0.5) * packet
    return far if far < total else total


@njit(cache=True, error_model="numpy")
def lose_acks(f, k, lost, freed, far, dt_ps, fs, ring, pool) -> None:
    """Flow ``f``'s ``lost`` bytes come off its ACKs due (:func:`cut_acks`); the ``far`` of them
    dropped beyond its wire link (:func:`far_bytes`) first, off those of the newest bytes off the
    wire, due from ``FS_WIRE_ACK`` down (:func:`cut_wire_acks`): a drop there takes the flow's
    newest bytes at that link, which left the wire link a propagation ago, when the flow's
    newest ACKs were due then. (Booked all on one side, a flow that loses its new bytes at the
    WAN port and its older ones past it in the same step has the older bytes' ACKs cut for
    both: it hears none of them, and its timer may find losses that the later ACKs would.)"""
    if far > 0.0:
        newest = int(fs[f, FS_WIRE_ACK] / dt_ps)
        if newest < fs[f, FS_ACK_LAST]:
            far_freed = freed * (far / lost)  # (all of it when far is all: the ratio is 1)
            cut_wire_acks(f, k, newest, far, far_freed, fs, ring, pool)
            lost -= far
            freed -= far_freed
    if lost > 0.0:
        cut_acks(f, k, lost, freed, fs, ring, pool)


@njit(cache=True, error_model="numpy", inline="always")
def cut_slot(ring, row, left, file_lost, evident, wide, coded, free_share) -> float:
    """:func:`take_acks` at one slot (row ``row``): up to ``left`` lost bytes come off its
    ACKs; returns the bytes still left."""
    acked = ring[row, R_ACK]
    if acked <= 0.0:
        return left
    cut = left if left < acked else acked
    kept = (acked - cut) / acked
    ring[row, R_ACK] = acked - cut
    if file_lost:
        ring[row, R_LOSTQ] += cut * evident
    ring[row, R_RTTW] *= kept
    ring[row, R_JITTER] *= kept
    if wide:
        if coded:
            # (the slot's decodable bytes may exceed its ACKs, by bytes absorbed before: only
            # the cut's failed part comes off them)
            ring[row, R_GOOD] -= cut * (1.0 - free_share)
            ring[row, R_FREE] += cut * free_share
        else:
            ring[row, R_GOOD] *= kept
    return left - cut


@njit(cache=True, error_model="numpy")
def take_acks(f, k, newest, lost, freed, fs, ring, pool):
    """The walk of :func:`cut_acks`: ``lost`` bytes (``freed`` of them absorbed by coding)
    come off flow ``f``'s ACKs due from step ``newest`` down to step ``k + 1``. With fast
    retransmit the bytes each slot loses are filed in it (``R_LOSTQ``): what the sender's ACKs
    say of them begins when theirs would have come (:func:`fast_retransmit_evidence`).
    Returns (the step it stopped at: every slot after it, up to ``newest``, emptied; the bytes
    left that no ACK still due carried)."""
    n = pool.length[f]
    start = pool.ptr[f]
    width = pool.tail_width[f] if pool.tail_ptr[f] >= 0 else 0
    wide = pool.wide[0] == RING_FULL
    # (trimmed losses are NACKed, not found by the evidence of later ACKs: of a trimmed flow's,
    # only the share faults took, FS_FAULT_SHARE)
    evident = 1.0 if fs[f, FS_TRIMS] < 0.0 else fs[f, FS_FAULT_SHARE]
    file_lost = fs[f, FS_DUPACK_BYTES] > 0.0 and evident > 0.0
    coded = fs[f, FS_EC_N] > 0.0
    step = newest
    free_share = freed / lost if lost > 0.0 else 0.0
    left = lost
    while left > 0.0 and step > k:
        if step - k >= n and width > 0 and step % width != 0:
            step -= step % width  # (beyond the line only its tail's slots hold any)
            continue
        row = tail_row_at(pool, f, step)
        if row >= 0:
            left = cut_slot(ring, row, left, file_lost, evident, wide, coded, free_share)
            if left <= 0.0:
                break  # (this slot may keep some)
        if step - k < n:
            left = cut_slot(ring, start + step % n, left, file_lost, evident, wide, coded,
                            free_share)  # fmt: skip
            if left <= 0.0:
                break
        step -= 1
    fs[f, FS_PENDING] -= lost - left
    return step, left


@njit(cache=True, error_model="numpy")
def fast_retransmit_evidence(f, now, acked, lostq, mss, fs) -> None:
    """Fast retransmit (SACK "IsLost", uno/transport/sender.py ``_detect_losses``): a packet
    is lost once ``dupack_threshold`` packets sent after it are acknowledged (``FS_DUPACK_BYTES``),
    each lost packet on its own evidence, oldest first.
    One slot of flow ``f``'s delay line arrives now: ``acked`` bytes acknowledged, and ``lostq``
    bytes lost whose ACKs were due in it (:func:`take_acks` files each lost byte where its ACK would
    have been, so the slots come in the order of the sends). The lost bytes whose ACKs' time is past
    wait for evidence (``FS_UNREVEALED``): the bytes acknowledged that were sent after them, for the
    newest of them ``FS_EVIDENCE``, for the oldest ``FS_EVIDENCE_OLDEST``, for the others spread
    evenly in between. Every byte of this slot is evidence for those waiting; the slot's own lost
    packets wait together, on those acknowledged after its last lost packet,
    ``acked / (lost packets + 1)`` (they fall at random among its packets; within a step a full
    queue drops the bytes arriving last, so they are not spread over its evidence: spread, the
    DCTCP inter-DC flows of the 1.5-MB incast found the tail of their first window by fast
    retransmit at half an RTT a step, where the packet sender's timer finds it). The waiting
    packets whose evidence reaches the threshold are revealed now (:func:`reveal_ripe`). So
    under a loss that goes on, the oldest are found while newer ones wait (counted for all from
    the newest, a flow that loses some of every slot with fewer than the threshold acknowledged
    would find none). And the losses among the last packets a flow sends before it pauses (a
    flow's tail, its whole window out) wait for the retransmission timer, as the packet sender's
    do: with the loss of each step filed at the drop and revealed with the oldest, GEMINI's
    inter-DC flows on the 40%-load Fig. 10 traffic heard 758 timeouts against the packet
    engine's 1,361 and finished 29% early. ``FS_TIMED_AHEAD``: bytes the timer took before their
    slot came (:func:`timer_declares`), not waiting any more."""
    ahead = fs[f, FS_TIMED_AHEAD]
    if ahead > 0.0 and lostq > 0.0:
        skip = lostq if lostq < ahead else ahead
        fs[f, FS_TIMED_AHEAD] = ahead - skip
        lostq -= skip
    if fs[f, FS_UNREVEALED] > 0.0:
        fs[f, FS_EVIDENCE] += acked
        fs[f, FS_EVIDENCE_OLDEST] += acked
        reveal_ripe(f, now, fs, mss)
    if lostq > 0.0:
        own = acked / (lostq / mss + 1.0)
        if fs[f, FS_UNREVEALED] <= 0.0:
            fs[f, FS_EVIDENCE_OLDEST] = own
        fs[f, FS_UNREVEALED] += lostq
        fs[f, FS_EVIDENCE] = own
        reveal_ripe(f, now, fs, mss)


@njit(cache=True, error_model="numpy")
def reveal_ripe(f, now, fs, mss) -> None:
    """Fast retransmit finds those of flow ``f``'s waiting bytes (``FS_UNREVEALED``) whose
    evidence reaches the threshold (:func:`fast_retransmit_evidence`) lost now: the whole
    packets (of ``mss`` bytes) of the share of their spread from ``FS_EVIDENCE`` to
    ``FS_EVIDENCE_OLDEST`` at or above it, as the packet sender finds whole packets; the
    oldest left start further up the spread."""
    threshold = fs[f, FS_DUPACK_BYTES]
    oldest = fs[f, FS_EVIDENCE_OLDEST]
    if oldest < threshold:
        return
    newest = fs[f, FS_EVIDENCE]
    waiting = fs[f, FS_UNREVEALED]
    if newest >= threshold or oldest <= newest:
        reveal_losses(f, now, fs, waiting)
        return
    found = math.floor(waiting * (oldest - threshold) / (oldest - newest) / mss) * mss
    if found > 0.0:
        reveal_losses(f, now, fs, found)


@njit(cache=True, error_model="numpy", inline="always")
def take_oldest_waiting(f, fs, taken) -> None:
    """``taken`` of flow ``f``'s bytes waiting for evidence (``FS_UNREVEALED``), the oldest,
    stop waiting: those left start further up the spread of their evidence
    (:func:`fast_retransmit_evidence`); with none left, their evidence is cleared."""
    waiting = fs[f, FS_UNREVEALED]
    left = waiting - taken
    if left > 0.0:
        fs[f, FS_UNREVEALED] = left
        oldest = fs[f, FS_EVIDENCE_OLDEST]
        fs[f, FS_EVIDENCE_OLDEST] = oldest - (oldest - fs[f, FS_EVIDENCE]) * taken / waiting
    else:
        fs[f, FS_UNREVEALED] = 0.0
        fs[f, FS_EVIDENCE] = 0.0
        fs[f, FS_EVIDENCE_OLDEST] = 0.0


@njit(cache=True, error_model="numpy")
def reveal_losses(f, now, fs, found) -> None:
    """Fast retransmit finds ``found`` of flow ``f``'s bytes waiting for evidence
    (``FS_UNREVEALED``), the oldest, lost now: they are reported (``FS_LOSS_PENDING``, at
    ``now``) and their timer entries, still ahead, are void (``FS_VOID_BYTES``)."""
    take_oldest_waiting(f, fs, found)
    if found > fs[f, FS_WAIT]:
        found = fs[f, FS_WAIT]
    if found <= 0.0:
        return
    fs[f, FS_WAIT] -= found
    fs[f, FS_VOID_BYTES] += found
    fs[f, FS_LOSS_PENDING] += found
    fs[f, FS_FAST_BYTES] += found
    if fs[f, FS_LOSS_AT] < 0.0:
        fs[f, FS_LOSS_AT] = now


@njit(cache=True, error_model="numpy")
def timer_declares(f, k, due, fs) -> float:
    """The retransmission timer entries of flow ``f`` due at step ``k`` hold ``due`` bytes
    (lost an RTO ago, :func:`schedule_timeout`): returns the bytes it declares lost now, taken
    from the waiting ones (``FS_WAIT``); at the newest entry (``FS_WAIT_LAST``) all that is
    left. With fast retransmit the timer and the evidence both take the oldest lost bytes:
    entries of bytes evidence revealed are void (``FS_VOID_BYTES``), and the timer takes those
    waiting for evidence first (``FS_UNREVEALED``), then bytes whose ACKs' time is still
    ahead (``FS_TIMED_AHEAD``: they are not waiting when their slot comes)."""
    if fs[f, FS_DUPACK_BYTES] > 0.0:
        void = fs[f, FS_VOID_BYTES]
        if void > 0.0:
            cut = due if due < void else void
            fs[f, FS_VOID_BYTES] = void - cut
            due -= cut
    wait = fs[f, FS_WAIT]
    if due > wait or k >= fs[f, FS_WAIT_LAST]:
        due = wait  # the newest waiting bytes: all that is left
    if due <= 0.0:
        return 0.0
    fs[f, FS_WAIT] = wait - due
    if fs[f, FS_DUPACK_BYTES] > 0.0:
        waiting = fs[f, FS_UNREVEALED]
        taken = due if due < waiting else waiting
        take_oldest_waiting(f, fs, taken)
        fs[f, FS_TIMED_AHEAD] += due - taken
    return due


@njit(cache=True, error_model="numpy")
def book_losses(
    f,
    k,
    sent_at,
    rtt,
    failed,
    gone,
    n_ec,
    mss,
    dt_ps,
    fs,
    ring,
    pool,
    calendar,
    delay,
):
    """How flow ``f`` learns of ``failed`` bytes lost at step ``k`` (``sent_at``: when, for
    its timer; ``rtt``: the round trip, ps, of bytes sent then; ``mss``: a data packet's bytes;
    a coded flow: ``gone`` of the
    failed bytes in blocks of which nothing arrived). Uncoded: the retransmission timer, an
    RTO after the send; with fast retransmit (``FS_DUPACK_BYTES`` > 0) unless enough bytes sent
    after them are acknowledged first (:func:`fast_retransmit_evidence`, from when their ACKs
    would have come: :func:`take_acks` files them there); coded: the receiver's NACK, ``rtt``
    + its timer (``FS_LOSS_DELAY``) after the send (ring column ``R_NACK``: each step's losses
    at their own time; ``delay``: the receiver's block timer, ps, ``FS_RETX_LOSS_DELAY`` for
    blocks a retransmission opened), the sender's timer for blocks it never saw (which their
    resends open again: ``FS_OPEN_TIMED``). Trimmed (``FS_TRIMS`` >= 0,
    ``switch.trimming``): each lost packet's header goes on to the receiver, whose NACK reaches
    the sender ``rtt`` after the send (``R_NACK``; the header skips the queues after the
    trimming port, in their control lane, so this is at most a little late); but the share
    faults took (``FS_FAULT_SHARE``, :mod:`uno.fluid.faults`) is lost, as uncoded."""
    if n_ec == 0 and fs[f, FS_TRIMS] >= 0.0:
        # (what faults took, FS_FAULT_SHARE, is lost, not trimmed: below)
        trimmed = failed * (1.0 - fs[f, FS_FAULT_SHARE])
        if trimmed > 0.0:
            step = step_not_before(sent_at + rtt, dt_ps)
            lag = fit_lag(f, k, step - k, ring, pool)
            ring[line_row(pool, f, k, lag), R_NACK] += trimmed
            mark_ring_due(calendar, fs, k + lag, f)
        if failed > trimmed:
            schedule_timeout(f, k, sent_at, failed - trimmed, dt_ps, fs, ring, pool, calendar)
    elif n_ec == 0:
        schedule_timeout(f, k, sent_at, failed, dt_ps, fs, ring, pool, calendar)
    else:  # coded: the receiver's NACK, or the sender's timer when it expires first
        unseen = gone  # (blocks of which nothing arrived: the receiver has no timer for them)
        if failed > gone:
            # the receiver's timer starts as the block's first packet arrives, a forward trip
            # after the send, and its NACK takes the trip back (uno/transport/receiver.py
            # ``_block_timer``): the sender hears of the loss an RTT and the timer after the
            # send, in the first step whose start is not before then. Timed
            # from the drop, as before, inter-DC flows heard of their first losses ~670 us
            # after their start, a third of their base RTT (the packet engine: never before
            # it), and UnoLB moved their subflows that much early
            # ... a block's first packet, on average half a block of packets at the line rate
            # before a lost one: the NACK comes first where the packets met less queue than
            # that lead (the sender's timer runs from each packet's own send)
            lead = 0.5 * (fs[f, FS_EC_N] + fs[f, FS_EC_M] - 1.0) * mss / fs[f, FS_NIC]
            nack_at = sent_at - lead + rtt + delay
            step = step_not_before(nack_at, dt_ps)
            lag = fit_lag(f, k, step - k, ring, pool)
            if nack_at < sent_at + fs[f, FS_RTO]:
                ring[line_row(pool, f, k, lag), R_NACK] += failed - gone
            else:
                # the sender's timer (an RTO after the packet's send: by default the base RTT
                # and the path's drain, the receiver's timer being that drain) declares them
                # lost first, as the packet sender's does whenever the packets met a queue;
                # the NACK that follows is only heard (R_LATE_NACK). Waiting for the NACK
                # instead, the fluid's inter-DC flows of 16-64 kB on the 40%-load Fig. 10
                # traffic (scheme=uno, seed 2) would hear a timeout in 76 of 308 flows against
                # 268 with packets
                ring[line_row(pool, f, k, lag), R_LATE_NACK] += failed - gone
                gone = failed
            mark_ring_due(calendar, fs, k + lag, f)
        if gone > 0.0:
            schedule_timeout(f, k, sent_at, gone, dt_ps, fs, ring, pool, calendar)
        if unseen > 0.0:
            fs[f, FS_OPEN_TIMED] += unseen

"""The flows' congestion controllers in the fluid kernels: each flow's law (:mod:`uno.cc.law`)
hears of a step's ACKs as one feedback batch, and of its loss reports, through the dispatch
:mod:`uno.cc.registry` generates from the list of laws.

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.cc.law import LOSS_NACK, LOSS_TIMEOUT, Feedback
from uno.cc.registry import init as law_init
from uno.cc.registry import on_feedback as law_feedback
from uno.cc.registry import on_loss as law_loss
from uno.fluid.columns import (
    CC_LAW,
    FS_ACKED,
    FS_BASE_RTT,
    FS_CNP_GAP,
    FS_CNP_NEXT,
    FS_CNPS,
    FS_DRAWS,
    FS_HEARS,
    FS_INFLIGHT,
    FS_LAST_NACK,
    FS_LAST_TIMEOUT,
    FS_LOSS_EVENTS,
    FS_LOSS_NACK,
    FS_MARK_CARRY,
    FS_MARK_FRAC,
    FS_QBEYOND,
    FS_RATE,
    FS_RTTMIN,
    FS_TIMEOUTS,
    FS_TRIMS,
    HEARS_EVERY_TIMEOUT,
    HEARS_WHOLE_PACKETS,
    P_KIND,
    P_MSS,
    R_DSENT,
    R_RTTMIN,
    R_SENTMAX,
)
from uno.fluid.draws import next_uniform


@njit(cache=True, error_model="numpy")
def cc_init(cs: np.ndarray, cp: np.ndarray, f: int) -> None:
    """A flow's controller state at its start: its law's ``init``, as in the packet engines."""
    for c in range(cs.shape[1]):
        cs[f, c] = 0.0
    law_init(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f])


@njit(cache=True, error_model="numpy")
def np_cnps(fs, f, now, span_ps, marked_packets) -> float:
    """The CNPs the receiver's notification point sends flow ``f`` for a batch of
    ``marked_packets`` expected marked packets arriving over the ``span_ps`` before ``now``
    (DCQCN, Zhu et al. 2015 §3; uno.transport.receiver.Receiver.on_data): one at the first
    marked packet that arrives at least ``FS_CNP_GAP`` after the previous CNP. The marks arrive
    evenly over the span, the expected count carried from batch to batch (``FS_MARK_CARRY``):
    the i-th marked packet arrives when the count crosses i. Returns the CNPs (``FS_CNPS``
    counts them; ``FS_CNP_NEXT``: the earliest time of the next).

    The batch is the ACKs arriving at the sender, the marks those its bytes carried at the
    receiver one return trip before: the notification point's rule runs on the ACKs' times,
    which are the receiver's shifted by that return trip, as a CNP sent with the marked
    packet's ACK reaches the sender with it."""
    carry = fs[f, FS_MARK_CARRY]
    total = carry + marked_packets
    whole = math.floor(total)
    fs[f, FS_MARK_CARRY] = total - whole
    if whole < 1.0:
        return 0.0
    gap = fs[f, FS_CNP_GAP]
    t0 = now - span_ps
    per_packet = span_ps / marked_packets  # ps between marked packets
    nxt = fs[f, FS_CNP_NEXT]
    cnps = 0.0
    i = 1.0
    while i <= whole:
        t = t0 + (i - carry) * per_packet  # when the count crosses i
        if t < nxt:
            # the first crossing at or after the next allowed time
            j = math.ceil(carry + (nxt - t0) / per_packet - 1e-9)
            i = j if j > i else i + 1.0
            continue
        cnps += 1.0
        nxt = t + gap
        i += 1.0
    fs[f, FS_CNP_NEXT] = nxt
    fs[f, FS_CNPS] += cnps
    return cnps


#: packets below which a fluid count over a whole number of packets is taken as that number
IN_FLIGHT_ROUNDING = 1e-6


@njit(cache=True, error_model="numpy", inline="always")
def in_flight_at_ack(fluid_bytes: float, mss: float) -> float:
    """The bytes a packet sender holds in flight as an ACK arrives, for ``fluid_bytes`` in
    flight in the fluid (bytes; ``mss``: a full packet's wire bytes): whole packets, the fluid
    count rounded up (a millionth of a packet over a whole number is rounding, not a packet).
    A sender paced at N packets an RTT has sent, between the packet the ACK is for and the
    ACK, the packets of every pacing slot that began in that RTT: ``ceil(N)``, never fewer
    than N. BBR's gain phases end on this count (its 1.25 phase once it reaches 1.25 x BtlBw x
    RTprop); on an idle path the fluid count meets that target exactly as the phase's own ACKs
    begin to raise BtlBw, and without the whole packets the phase would run on while BtlBw
    compounds."""
    return math.ceil(fluid_bytes / mss - IN_FLIGHT_ROUNDING) * mss


@njit(cache=True, error_model="numpy", inline="always")
def whole_marks(fs, f, marked_acks) -> float:
    """The whole ECN-marked ACKs a packet sender would have seen among flow ``f``'s
    ``marked_acks`` (an expected count), the fraction carried over to its next batch
    (``FS_MARK_CARRY``)."""
    carry = fs[f, FS_MARK_CARRY] + marked_acks
    events = math.floor(carry)
    fs[f, FS_MARK_CARRY] = carry - events
    return events


@njit(cache=True, error_model="numpy")
def law_batch(cs, cp, fs, ring, slot, f, kind, now, acked, marked, rtt, p_queued, rng, rec, n_int,
              span_ps, pieces):  # fmt: skip
    """The feedback batch (:data:`uno.cc.law.Feedback`) of flow ``f``'s ACKs arriving in one
    step of ``span_ps`` (delay-line slot ``slot``), to its law: ``acked`` bytes of which
    ``marked`` carried ECN, counted in packets of the MSS; the whole marked ACKs a packet sender
    would have seen (the expected count carried over from batch to batch, ``FS_MARK_CARRY``), or
    for a law whose receiver coalesces them into CNPs (``FS_CNP_GAP``), the CNPs of
    :func:`np_cnps`; the batch's mean RTT ``rtt`` and, for a law that reads it, its least sample
    (``R_RTTMIN``); its latest send time; the bytes in flight after it, and before it (those
    plus its bytes; as whole packets with ``FS_WHOLE_PACKETS``, :func:`in_flight_at_ack`); a
    delivery-rate sample (the bytes acknowledged since the latest of them was sent, over its
    flight time, ``R_DSENT``); a draw from the flow's stream when its law decides on the chance
    ``p_queued`` that the packets met queueing the mean RTT does not show; the newest packet's
    INT records, the first ``n_int`` rows of ``rec``
    (:func:`uno.fluid.int_records.packet_records`; 0: none).

    ``pieces`` > 1 (a step longer than the flow's ``FS_BATCH_PS``): the law hears the batch
    as that many batches in a row, each an equal share of its ACKs over an equal part of the
    span, ending that much apart (their arrival, latest send, bytes in flight and delivered
    stepping along with them). A law with rules per period hears them all: UnoCC ends at most
    one epoch per batch, and an inter-DC flow's epoch lasts about one intra-DC RTT, so one
    batch for a step of 8 intra-DC RTTs would end an eighth of its epochs (on the Uno Fig. 10
    traffic its inter-DC flows would then finish 9-18% early)."""
    mss = cp[f, P_MSS]
    sent_max = ring[slot, R_SENTMAX]
    rtt_min = rtt
    if fs[f, FS_RTTMIN] > 0.0 and ring[slot, R_RTTMIN] > 0.0:
        rtt_min = ring[slot, R_RTTMIN] + fs[f, FS_QBEYOND]
    rate_bytes = 0.0
    rate_ps = 0.0
    if fs[f, FS_RATE] > 0.0 and now > sent_max:
        rate_bytes = fs[f, FS_ACKED] - ring[slot, R_DSENT]
        rate_ps = now - sent_max
    piece_ps = span_ps / pieces
    acked_piece = acked / pieces
    marked_piece = marked / pieces
    for i in range(pieces):
        back = float(pieces - 1 - i)  # pieces after this one
        at = now - back * piece_ps
        if fs[f, FS_CNP_GAP] > 0.0:
            events = np_cnps(fs, f, at, piece_ps, marked_piece / mss) if marked > 0.0 else 0.0
        else:
            events = whole_marks(fs, f, marked_piece / mss)
        draw = 1.0
        if p_queued > 0.0 and fs[f, FS_DRAWS] > 0.0:
            draw = next_uniform(rng, f)
        after = fs[f, FS_INFLIGHT] + back * acked_piece
        if int(fs[f, FS_HEARS]) & HEARS_WHOLE_PACKETS:
            after = in_flight_at_ack(after + acked_piece, mss) - acked_piece
        fb = Feedback(at, acked_piece, marked_piece, acked_piece / mss, marked_piece / mss,
                      events, rtt, rtt_min, sent_max - back * piece_ps, after,
                      fs[f, FS_ACKED] - back * acked_piece, rate_bytes, rate_ps, 0.0, p_queued,
                      draw, 1.0, float(n_int))  # fmt: skip
        law_feedback(kind, cs[f], cp[f], fb, rec)


@njit(cache=True, error_model="numpy")
def hear_duplicates(cs, cp, fs, f, now, dup, rtt, rec) -> None:
    """Flow ``f``'s law hears ``dup`` bytes of duplicate ACKs arriving in the step at ``now``
    (the ACKs of copies it resent of bytes that arrived: ``ACKS.dup``), as one batch marked
    ``duplicate``, with the flow's latest echoed share of marks (``FS_MARK_FRAC``) and the
    RTT ``rtt`` (ps) of the step's other ACKs; they leave nothing in flight and acknowledge
    nothing new. Only a law that asks for them (``P_DUP_ACKS``) hears them, as the packet
    sender calls its controller on a duplicate ACK only then (``MP-RDMA`` with
    ``update_on_duplicate_ack``)."""
    mss = cp[f, P_MSS]
    marked = dup * fs[f, FS_MARK_FRAC]
    events = whole_marks(fs, f, marked / mss)
    fb = Feedback(now, dup, marked, dup / mss, marked / mss, events, rtt, rtt, now - rtt,
                  fs[f, FS_INFLIGHT], fs[f, FS_ACKED], 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0)  # fmt: skip
    law_feedback(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], fb, rec)


@njit(cache=True, error_model="numpy")
def cc_loss(cs, cp, f, now, nack):
    """A loss episode detected (a retransmission timeout, or a NACK for coded flows): the
    flow's law hears of a ``LOSS_TIMEOUT`` or a ``LOSS_NACK``."""
    law_loss(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], now, LOSS_NACK if nack else LOSS_TIMEOUT)


@njit(cache=True, error_model="numpy")
def hear_loss_report(cs, cp, f, now, fs) -> None:
    """Flow ``f`` hears a loss report found before a timeout (fast retransmit's evidence, a
    coded flow's NACK) at ``now``: counted (``FS_LOSS_EVENTS``), and its controller told of at
    most one such report per base RTT, as the packet sender's (uno.transport.sender:
    ``_detect_losses``, ``_on_nack``)."""
    if fs[f, FS_LOSS_EVENTS] == 0.0 or now - fs[f, FS_LAST_NACK] >= fs[f, FS_BASE_RTT]:
        fs[f, FS_LAST_NACK] = now
        cc_loss(cs, cp, f, now, fs[f, FS_LOSS_NACK] > 0.0)
    fs[f, FS_LOSS_EVENTS] += 1.0


@njit(cache=True, error_model="numpy")
def packets_of(nbytes, mss) -> int:
    """The whole packets ``nbytes`` wire bytes stand for (packets of ``mss`` bytes; at least
    one): what a packet sender counts one by one."""
    n = int(math.floor(nbytes / mss + 0.5))
    return n if n >= 1 else 1


@njit(cache=True, error_model="numpy")
def hear_trims(cs, cp, f, now, trimmed, fs) -> None:
    """Flow ``f`` hears the NACKs of ``trimmed`` bytes a switch cut to their headers
    (``switch.trimming``) at ``now``: each whole packet is one NACK, counted (``FS_TRIMS``), and
    its controller hears of every one (``LOSS_NACK``), as the packet sender tells it of each
    trim (uno.transport.sender: ``_on_trim_nack``; SMaRTT's Quick Adapt reads them)."""
    n = packets_of(trimmed, cp[f, P_MSS])
    fs[f, FS_TRIMS] += n
    for _ in range(n):
        cc_loss(cs, cp, f, now, True)


@njit(cache=True, error_model="numpy")
def hear_timeout(cs, cp, f, now, fs, lost) -> None:
    """Flow ``f``'s retransmission timer declared ``lost`` bytes lost at ``now``: its
    controller hears of at most one timeout per base RTT, or with ``HEARS_EVERY_TIMEOUT``
    (``transport.*.report_every_timeout``) of one for every packet of them, all at ``now``
    (``FS_TIMEOUTS`` counts those it heard of), as the packet sender's
    (uno.transport.sender: ``_report_timeouts``)."""
    if int(fs[f, FS_HEARS]) & HEARS_EVERY_TIMEOUT:
        n = packets_of(lost, cp[f, P_MSS])
    elif fs[f, FS_TIMEOUTS] == 0.0 or now - fs[f, FS_LAST_TIMEOUT] >= fs[f, FS_BASE_RTT]:
        n = 1
    else:
        return
    fs[f, FS_TIMEOUTS] += n
    fs[f, FS_LAST_TIMEOUT] = now
    for _ in range(n):
        cc_loss(cs, cp, f, now, False)

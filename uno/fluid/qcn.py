"""QCN congestion points in the fluid engine (``switch.qcn``): Annulus's near-source loop.

The packet engine's model (:mod:`uno.net.qcn`): a congestion point (an egress port of the
switches ``switch.qcn.tiers`` names) samples the data it accepts, one sample every
``sample_bytes``; at a sample it computes F_b = (Q - Q_eq) + w (Q - Q_old) from its queue, Q_old
becomes Q, and a positive F_b goes, quantised to a level of 1..63
(:func:`uno.net.qcn.qcn_level`, the same function here), to the sampled packet's source, whose
law hears it (``on_notify``).

Here the same links count the data bytes the flows' route entries leave in them each step
(:func:`note_accepted`, from :func:`uno.fluid.forward.depart_level`: an entry's arrivals less
what the link dropped). After the step's links (:func:`qcn_step`) each congestion point that
accepted bytes takes its samples where its count crosses each multiple of ``sample_bytes``,
the arrivals spread evenly over the step; the queue at a sample is the link's level at that
point of the step, between its level at the step's start and at its end. A sample's packet
belongs to each flow in its share of the link's accepted bytes in the step, so each flow's
route entry there files that share of the step's notices, and of their levels, in its delay
line (two columns from ``ACKS.qcn``), to reach the flow when the notice would: a fluid byte
reaches a link without the propagation of the links before it (but the wire link's,
:func:`uno.fluid.arrays.route_wire`), so a notice reaches its source twice that propagation
after the step (:func:`return_delays`). The flow hears the whole notices of the expected count
carried from batch to batch (``FS_QCN_CARRY``), each at the batch's mean level
(:func:`hear_notices`).

Not modelled, stated: a notice's own bytes and queueing on its way back (a 64-byte frame;
the packet network routes it as any packet), the data packets' serialisation on the way to the
congestion point (the notice's timing counts propagation only). In the hybrid the packet
ports sample the packets, at the link's level (:func:`uno.net.shared_link.shared_queue_level`),
and the fluid links the fluid flows' bytes. A flow on subflows (UnoLB, PLB, REPS) hears the
notices of the links its subflows' bytes are at now.

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.cc.registry import on_notify as law_notify
from uno.core.layout import layout
from uno.fluid.columns import (
    ACKS,
    CC_LAW,
    EI_FLOW,
    EI_GSTART,
    EI_LAG,
    FS_QCN_CARRY,
    FS_QCN_HEARD,
    LS_CAP,
    LS_Q,
    P_KIND,
)
from uno.fluid.rings import fit_lag, line_row, mark_ring_due
from uno.net.qcn import qcn_level
from uno.net.switch import port_picker
from uno.topo.base import SWITCH

#: a congestion point's row (float64): its link, Q_eq (bytes), w, the sampling interval
#: (bytes), the bytes counted towards the next sample, Q_old (bytes), the link's level at the
#: end of the last step it accepted bytes in and that step's end (ps, -1: none; a time, which a
#: change of the step size leaves in order, where a step's index does not), the bytes it
#: accepted this step, the notices of this step's samples and the sum of their levels, the
#: notices sent
QP = layout("QcnPoint", ("link", "qeq", "w", "sample", "counted", "qold", "q_end", "q_at",
                         "accepted", "notices", "level_sum", "sent"))  # fmt: skip


#: the fields of :data:`uno.fluid.state.Hops` that hold them
QCN_FIELDS = ("qcn", "qcn_row", "qcn_back", "qcn_in", "qcn_log")


def qcn_rows(q, scenario) -> tuple[np.ndarray, np.ndarray]:
    """The congestion points' rows (``QP``; none without ``switch.qcn.enabled``, ``q``, or
    with ``q`` None: the engine runs no congestion control) and each
    link's row among them (-1: none): the egress links of the switches whose tier is in
    ``switch.qcn.tiers``, of those the links whose kind is in ``switch.qcn.port_kinds``
    (empty: all), as :func:`uno.net.qcn.congestion_points` picks the packet ports."""
    routing = scenario.routing
    row_of = np.full(len(routing.edges), -1, dtype=np.int32)
    if q is None or not q.enabled:
        return np.zeros((0, QP.size)), row_of
    nodes = routing.topo.nodes
    known = {n.tier for n in nodes if n.kind == SWITCH}
    picked = port_picker(known, q.tiers, q.port_kinds, "switch.qcn.tiers", ())
    rows = []
    for e in routing.edges:
        node = nodes[e.src]
        if node.kind == SWITCH and picked(node.tier, e.kind):
            row = np.zeros(QP.size)
            row[QP.link] = e.edge_id
            row[QP.qeq] = q.qeq_bytes
            row[QP.w] = q.w
            row[QP.sample] = q.sample_bytes
            row[QP.q_at] = -1.0
            row_of[e.edge_id] = len(rows)
            rows.append(row)
    return np.array(rows).reshape(-1, QP.size), row_of


def return_delays(rt_ptr, rt_link, rt_w, ei, link_delay, wire_hop=None, wire_ps=None):
    """Per route entry, the time (ps) from the step in which its flow's bytes reach its link to
    the arrival at the flow's source of a notice the link sends for them: twice the
    propagation of the route's links before it (a split hop's by its links' shares), less
    the wire link's propagation when that link comes before it (its entries' ``EI_LAG`` -1:
    the fluid's bytes cross that one on their way out). A flow on subflows (UnoLB, PLB, REPS)
    has its first subflow's path as its route, a link a hop, which every subflow's hop of the
    same index matches in propagation: its wire is its hop ``wire_hop[f]`` (-1: none) of
    ``wire_ps[f]``."""
    back = np.zeros(len(rt_link))
    for f in range(len(rt_ptr) - 1):
        before = 0.0  # propagation of the hops before the entry's
        wire = 0.0  # of them, the wire link's
        hop_ps = 0.0
        hop_wired = False
        g_prev = -1
        for j in range(int(rt_ptr[f]), int(rt_ptr[f + 1])):
            g = int(ei[j, EI_GSTART])
            if g != g_prev:
                before += hop_ps
                if hop_wired:
                    wire += hop_ps
                hop_ps = 0.0
                hop_wired = False
                g_prev = g
            hop_ps += rt_w[j] * link_delay[rt_link[j]]
            hop_wired = hop_wired or ei[j, EI_LAG] < 0
            if wire_hop is not None and wire_hop[f] >= 0:
                hop_wired = j - int(rt_ptr[f]) == wire_hop[f]
            back[j] = 2.0 * before - wire
    return back


#: the integers :func:`note_accepted` logs per entry: the entry, its link, the route entry
#: whose return delay its notices take
LOG_FIELDS = 3


@njit(cache=True, error_model="numpy", inline="always")
def note_accepted(j, link, back_entry, accepted, hops) -> None:
    """Route entry ``j`` (a subflow's hop entry too) left ``accepted`` data bytes in ``link``
    this step: counted at the link's congestion point, if it is one, for :func:`qcn_step`,
    whose notices take route entry ``back_entry``'s return delay (``qcn_back``)."""
    row = hops.qcn_row[link]
    if row >= 0 and accepted > 0.0:
        log = hops.qcn_log
        at = 1 + LOG_FIELDS * log[0]
        log[at] = j
        log[at + 1] = link
        log[at + 2] = back_entry
        log[0] += 1
        hops.qcn_in[j] = accepted
        hops.qcn[row, QP.accepted] += accepted


@njit(cache=True, error_model="numpy", inline="always")
def take_samples(qcn, row, start_ps, end_ps, q_now, rate) -> None:
    """Congestion point ``row``'s samples of the step from ``start_ps`` to ``end_ps``, whose end
    left its link's queue at ``q_now`` bytes (``rate``: the link's line rate, bytes/ps): the
    notices they send and the sum of their levels (``QP.notices``, ``QP.level_sum``)."""
    accepted = qcn[row, QP.accepted]
    sample = qcn[row, QP.sample]
    counted = qcn[row, QP.counted]
    # the level at the step's start: where the last step left it, drained at the line rate
    # over the steps since (the link accepted no data meanwhile)
    q_start = 0.0
    if qcn[row, QP.q_at] >= 0.0:
        q_start = qcn[row, QP.q_end] - rate * (start_ps - qcn[row, QP.q_at])
        if q_start < 0.0:
            q_start = 0.0
    notices = 0.0
    level_sum = 0.0
    qold = qcn[row, QP.qold]
    n = math.floor((counted + accepted) / sample)
    for i in range(1, int(n) + 1):
        at = (i * sample - counted) / accepted  # where in the step the count crosses it
        q = q_start + (q_now - q_start) * at
        level = qcn_level(q, qold, qcn[row, QP.qeq], qcn[row, QP.w])
        qold = q
        if level > 0:
            notices += 1.0
            level_sum += level
    qcn[row, QP.qold] = qold
    qcn[row, QP.counted] = counted + accepted - n * sample
    qcn[row, QP.q_end] = q_now
    qcn[row, QP.q_at] = end_ps
    qcn[row, QP.notices] = notices
    qcn[row, QP.level_sum] = level_sum
    qcn[row, QP.sent] += notices


@njit(cache=True, error_model="numpy")
def qcn_step(k, dt_ps, fs, ls, ring, pool, calendar, hops) -> None:
    """After step ``k``'s links: each congestion point that accepted bytes takes its samples
    (:func:`take_samples`), and each route entry that left bytes there files its share of their
    notices in its flow's delay line, to arrive :func:`return_delays` later (see the module
    docstring)."""
    log, qcn, ei = hops.qcn_log, hops.qcn, hops.ei
    n = log[0]
    if n == 0:
        return
    col = int(hops.acks[ACKS.qcn])
    end_ps = (k + 1) * dt_ps
    for i in range(n):
        link = log[2 + LOG_FIELDS * i]
        row = hops.qcn_row[link]
        if qcn[row, QP.q_at] != end_ps:  # (the link's first entry this step)
            take_samples(qcn, row, end_ps - dt_ps, end_ps, ls[link, LS_Q], ls[link, LS_CAP])
    for i in range(n):
        at = 1 + LOG_FIELDS * i
        j = log[at]
        row = hops.qcn_row[log[at + 1]]
        share = hops.qcn_in[j] / qcn[row, QP.accepted]
        hops.qcn_in[j] = 0.0
        notices = qcn[row, QP.notices]
        if notices > 0.0:
            f = ei[j, EI_FLOW]
            lag = fit_lag(f, k, int(round(hops.qcn_back[log[at + 2]] / dt_ps)), ring, pool)
            slot = line_row(pool, f, k, lag)
            ring[slot, col] += share * notices
            ring[slot, col + 1] += share * qcn[row, QP.level_sum]
            mark_ring_due(calendar, fs, k + lag, f)
    for i in range(n):
        qcn[hops.qcn_row[log[2 + LOG_FIELDS * i]], QP.accepted] = 0.0
    log[0] = 0


@njit(cache=True, error_model="numpy", inline="always")
def hear_notices(f, now, slot, ring, fs, cs, cp, hops) -> None:
    """The switches' notices reaching flow ``f`` now (delay-line slot ``slot``): the whole ones
    of the expected count carried from batch to batch (``FS_QCN_CARRY``), each heard by its
    law (``on_notify``) at the batch's mean level."""
    col = int(hops.acks[ACKS.qcn])
    expected = ring[slot, col]
    if expected <= 0.0:
        return
    level = ring[slot, col + 1] / expected
    total = fs[f, FS_QCN_CARRY] + expected
    whole = math.floor(total)
    fs[f, FS_QCN_CARRY] = total - whole
    kind = int(cp[f, P_KIND]) - CC_LAW
    for _ in range(int(whole)):
        law_notify(kind, cs[f], cp[f], now, level)
    fs[f, FS_QCN_HEARD] += whole


def no_qcn_state(n_links: int) -> tuple:
    """The QCN arrays of a run with no congestion point (none kept): ``qcn``, ``qcn_row``,
    ``qcn_back``, ``qcn_in``, ``qcn_log``."""
    return (np.zeros((0, QP.size)), np.full(n_links, -1, dtype=np.int32), np.zeros(0),
            np.zeros(0), np.zeros(1, dtype=np.int64))  # fmt: skip


def qcn_state(qcn, row_of, rt_ptr, rt_link, rt_w, ei, link_delay, wire_hop, wire_ps) -> tuple:
    """The QCN arrays (:data:`uno.fluid.state.Hops`' ``qcn`` .. ``qcn_log``): the congestion
    points' rows and each link's row (:func:`qcn_rows`), each route entry's notices' return
    delay (:func:`return_delays`), the bytes each entry left in its link this step, and the
    step's log of those entries (its count first, then :data:`LOG_FIELDS` a logged entry: at
    most every route entry at a congestion point, and every subflow hop entry, whose links
    move)."""
    n_rt = len(rt_link)
    at_point = int((row_of[rt_link] >= 0).sum()) + (len(ei) - n_rt)
    back = return_delays(rt_ptr, rt_link, rt_w, ei, link_delay, wire_hop, wire_ps)
    log = np.zeros(1 + LOG_FIELDS * at_point, dtype=np.int64)
    return qcn, row_of, back, np.zeros(len(ei)), log

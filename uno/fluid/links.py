"""The fluid links: queues with a continuous level, their phantom queues, tail drop and ECN
marking, the busy list, and the bytes that reach them from outside the flows' sends (the
hybrid's packets, the flows' ACKs).

A link's row (``LS_*``, :mod:`uno.fluid.columns`) advances by one step at a time in
:func:`update_links`: arrivals in, departures at line rate out, what overflows the buffer to the
overflow policy (:mod:`uno.net.overflow`), the phantom queue filled by the same arrivals and
drained at its own rate (:mod:`uno.net.phantom`), and the marking probability of the bytes
leaving from RED's ramp (:mod:`uno.net.red`) on the physical or the phantom level.

Units: time in ps, sizes in bytes, rates in bytes/ps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.balance import subflow_part
from uno.fluid.cache_hints import prefetch_row
from uno.fluid.columns import (
    CT,
    FS_DELIV_NEW,
    LS_ACK_IN,
    LS_ARR,
    LS_BACKLOG,
    LS_BUF,
    LS_CAP,
    LS_DELAY,
    LS_DROP,
    LS_DROPF,
    LS_EXT,
    LS_FOLD,
    LS_GRID,
    LS_IN,
    LS_KMAX,
    LS_KMIN,
    LS_KSPAN,
    LS_LISTED,
    LS_LOSS,
    LS_MARK,
    LS_MAXQ,
    LS_MODE,
    LS_PACKETS,
    LS_PASS,
    LS_PAUSE,
    LS_PH,
    LS_PH_COUNTS,
    LS_PHDRAIN,
    LS_PHKMAX,
    LS_PHKMIN,
    LS_PHSIZE,
    LS_PKT_CLAIM,
    LS_PKT_LOSS,
    LS_Q,
    LS_QF,
    LS_QSLOPE,
    LS_QTREND,
    LS_TX,
    LS_TX_AT,
    LS_TX_BEFORE,
    LS_TX_END,
    LS_TXF,
    LS_TXF_BEFORE,
    LS_UPDATE_END,
    MODE_EITHER,
    MODE_KIND_BITS,
    MODE_PHANTOM,
    MODE_PHYSICAL,
    MODE_STEP_MEAN,
    PH_COUNTS_ACKS,
    PH_COUNTS_DROPS,
)
from uno.net.overflow import OVERFLOW_DROP, fluid_excess_bytes
from uno.net.phantom import phantom_level
from uno.net.red import red_probability as red_ramp_probability

#: a link whose departures reach this close to its line rate sends back to back (LS_BACKLOG)
BACKLOG_TOLERANCE = 1e-9
#: what the bytes beyond a link's buffer meet (uno.net.overflow; the packet ports' default)
LINK_OVERFLOW = OVERFLOW_DROP

#: the weight of a step's queue change in a link's growth rate (``LS_QSLOPE``): about the last
#: eight steps', an intra-DC RTT at the default step. One step's change follows the batches that
#: reached the link in it, which read ahead over a forward trip of tens of steps would overshoot
SLOPE_GAIN = 0.125


@njit(cache=True, error_model="numpy")
def red_probability(level: float, kmin: float, kmax: float) -> float:
    """A phantom queue's marking probability at ``level`` on a ramp from ``kmin`` to ``kmax``
    reaching 1 (as the packet phantom's, :class:`uno.net.phantom.PhantomQueue`):
    :func:`uno.net.red.red_probability` with a span of ``kmax - kmin``."""
    return red_ramp_probability(level, kmin, kmax, kmax - kmin)


@njit(cache=True, error_model="numpy", inline="always")
def ramp_integral(level, kmin, kmax, span) -> float:
    """The integral of the RED marking probability (:func:`red_ramp_probability`, ``span`` =
    (kmax - kmin) / pmax; a step at kmin where it is 0) over the queue levels from 0 to
    ``level`` (bytes x probability; kmin >= 0)."""
    if level <= kmin:
        return 0.0
    if span <= 0.0:
        return level - kmin
    top = level if level < kmax else kmax
    total = (top - kmin) * (top - kmin) / (2.0 * span)
    if level > kmax:
        total += level - kmax
    return total


@njit(cache=True, error_model="numpy", inline="always")
def ramp_mean_over_step(q0, net, buf, kmin, kmax, span) -> float:
    """The mean RED marking probability over a step in which the queue moves steadily from
    ``q0`` by ``net`` bytes (the step's arrivals less a line rate's departures), held within
    [0, ``buf``]: it empties or fills the buffer on the way and stays there for the rest of
    the step."""
    end = q0 + net
    if -1.0 < net < 1.0:  # (a steady level)
        return red_ramp_probability(end if end > 0.0 else 0.0, kmin, kmax, span)
    if end < 0.0:  # empties a share q0 / -net of the way, at 0 (no marks) after
        return ramp_integral(q0, kmin, kmax, span) / -net
    if end > buf:  # full a share (buf - q0) / net of the way, marking at buf after
        full = (buf - q0) / net
        rise = ramp_integral(buf, kmin, kmax, span) - ramp_integral(q0, kmin, kmax, span)
        return rise / net + (1.0 - full) * red_ramp_probability(buf, kmin, kmax, span)
    return (ramp_integral(end, kmin, kmax, span) - ramp_integral(q0, kmin, kmax, span)) / net


@njit(cache=True, error_model="numpy", inline="always")
def mark_probability(ls, link, q, ph, q0, net) -> float:
    """The marking probability of the bytes leaving ``link`` at queue level ``q`` and phantom
    level ``ph`` (bytes): its physical RED (rising to ``switch.ecn.pmax`` at Kmax, 1 above it),
    its phantom's, or either (``LS_MODE``). With ``MODE_STEP_MEAN`` the physical RED's mean
    over the step (:func:`ramp_mean_over_step`: from ``q0``, ``net`` bytes)."""
    mode = int(ls[link, LS_MODE])
    over_step = mode & MODE_STEP_MEAN
    mode &= MODE_KIND_BITS
    mark = 0.0
    if mode == MODE_PHYSICAL or mode == MODE_EITHER:
        kmin, kmax, span = ls[link, LS_KMIN], ls[link, LS_KMAX], ls[link, LS_KSPAN]
        if over_step:
            mark = ramp_mean_over_step(q0, net, ls[link, LS_BUF], kmin, kmax, span)
        else:
            mark = red_ramp_probability(q, kmin, kmax, span)
    if mode == MODE_PHANTOM or mode == MODE_EITHER:
        p_ph = red_probability(ph, ls[link, LS_PHKMIN], ls[link, LS_PHKMAX])
        mark = 1.0 - (1.0 - mark) * (1.0 - p_ph)
    return mark


@njit(cache=True, error_model="numpy", inline="always")
def phantom_step(ls, link, ph, arr, drop, acks, dt_ps) -> float:
    """The phantom level of ``link`` after a step of ``dt_ps`` in which ``arr`` bytes arrived
    (``acks`` of them ACKs) and ``drop`` were dropped, from ``ph``: the step's arrivals it
    counts (the dropped ones and the ACKs where ``LS_PH_COUNTS`` says so), then its drain
    over the step, at least 0 and at most its size. Returns ``ph`` where the link has none."""
    size = ls[link, LS_PHSIZE]
    if size <= 0.0:
        return ph
    counts = int(ls[link, LS_PH_COUNTS])
    counted = arr if counts & PH_COUNTS_DROPS else arr - drop
    if not counts & PH_COUNTS_ACKS:
        counted -= acks
    # (the step's arrivals join before its drain: the fluid's discretisation of the queue the
    # packet phantom drains lazily before each arrival, uno.net.phantom.phantom_after_enqueue)
    ph = phantom_level(ph + counted, dt_ps, ls[link, LS_PHDRAIN])
    if ph > size:
        ph = size
    ls[link, LS_PH] = ph
    return ph


@njit(cache=True, error_model="numpy", inline="always")
def idle(ls, link) -> None:
    """``link`` has nothing queued, arriving or in its phantom queue: it marks, drops and
    delays nothing, lets everything pass, and leaves the busy list without a departure grid."""
    ls[link, LS_MARK] = 0.0
    ls[link, LS_LOSS] = 0.0
    ls[link, LS_DELAY] = 0.0
    ls[link, LS_QSLOPE] = 0.0
    ls[link, LS_QTREND] = 0.0
    ls[link, LS_PASS] = 1.0
    ls[link, LS_LISTED] = 0.0
    ls[link, LS_BACKLOG] = 0.0
    ls[link, LS_GRID] = -1.0


@njit(cache=True, error_model="numpy", inline="always")
def step_link(ls, link, dt_ps, at_ps) -> bool:
    """Advance ``link`` by one step of ``dt_ps`` (:func:`update_links`; ``at_ps`` >= 0: the
    step's start, kept with the bytes sent before it, ``LS_TX_AT``, and the fluid flows' part
    of them); False when it is left empty (:func:`idle`)."""
    arr_fluid = ls[link, LS_ARR] * dt_ps
    acks = ls[link, LS_ACK_IN]
    arr = arr_fluid + ls[link, LS_EXT] + acks
    packets = ls[link, LS_EXT] > 0.0 or ls[link, LS_Q] - ls[link, LS_QF] > 1.0
    ls[link, LS_PACKETS] = 1.0 if packets else 0.0
    ls[link, LS_EXT] = 0.0
    ls[link, LS_ACK_IN] = 0.0
    q = ls[link, LS_Q]
    q_before = q
    ph = ls[link, LS_PH]
    if arr <= 0.0 and q <= 0.0 and ph <= 0.0:
        idle(ls, link)
        return False
    cap = ls[link, LS_CAP] * dt_ps * (1.0 - ls[link, LS_PAUSE])  # (PFC: uno.fluid.pfc)
    total = q + arr
    dep = total if total < cap else cap
    q = total - dep
    # back to back: the grid's phase is kept while it is (forward draws it at the start)
    if dep >= cap * (1.0 - BACKLOG_TOLERANCE):
        ls[link, LS_BACKLOG] = 1.0
    else:
        ls[link, LS_BACKLOG] = 0.0
        ls[link, LS_GRID] = -1.0
    drop = 0.0
    data = arr - acks
    data_drop = 0.0
    excess = fluid_excess_bytes(q, ls[link, LS_BUF])
    if excess > 0.0 and LINK_OVERFLOW == OVERFLOW_DROP:  # tail drop: the excess is lost
        drop = excess
        q = ls[link, LS_BUF]
        # (more than the data: the ACKs alone overfill it, and lose bytes no flow hears of)
        data_drop = drop if drop < data else data
    # FIFO: departures and drops take the fluid and external bytes in proportion
    fluid = ls[link, LS_QF] + arr_fluid + acks
    ls[link, LS_QF] = fluid * (q / total) if total > 0.0 else 0.0
    if at_ps >= 0.0:  # (PFC; the hybrid's INT records)
        ls[link, LS_TX_BEFORE] = ls[link, LS_TX]
        ls[link, LS_TX_AT] = at_ps
        ls[link, LS_TX_END] = at_ps + dt_ps
        ls[link, LS_TXF_BEFORE] = ls[link, LS_TXF]
        if total > 0.0:
            ls[link, LS_TXF] += fluid * (dep / total)
    ls[link, LS_LOSS] = data_drop / data if data > 0.0 else 0.0
    if data_drop > 0.0:  # (phases.share_level_drops may tell a packet's apart)
        ls[link, LS_PKT_LOSS] = ls[link, LS_LOSS]
    # of what the link holds once the drops are gone, the share that leaves
    kept_bytes = total - drop
    ls[link, LS_PASS] = dep / kept_bytes if kept_bytes > 0.0 else 1.0
    ls[link, LS_Q] = q
    ls[link, LS_TX] += dep
    ls[link, LS_DROP] += drop
    if drop > 0.0:
        ls[link, LS_DROPF] += drop * (fluid / total)
    ls[link, LS_IN] += arr
    if q > ls[link, LS_MAXQ]:
        ls[link, LS_MAXQ] = q
    ph = phantom_step(ls, link, ph, arr, drop, acks, dt_ps)
    ls[link, LS_MARK] = mark_probability(ls, link, q, ph, q_before, arr - cap)
    ls[link, LS_DELAY] = q / ls[link, LS_CAP]
    slope_before = ls[link, LS_QSLOPE]
    slope = slope_before + SLOPE_GAIN * ((q - q_before) / dt_ps - slope_before)
    ls[link, LS_QSLOPE] = slope
    if slope * slope_before > 0.0:
        ls[link, LS_QTREND] += dt_ps
    else:
        ls[link, LS_QTREND] = dt_ps if slope != 0.0 else 0.0
    return True


@njit(cache=True, error_model="numpy")
def update_links(ls: np.ndarray, links: np.ndarray, n_links: int, dt_ps: float, at_ps=-1.0) -> int:
    """Advance the links ``links[:n_links]`` (the busy ones) by one step of ``dt_ps``: queue =
    queue + arrivals (the flows' rates, plus ``LS_EXT`` bytes and the ACKs'
    ``LS_ACK_IN``) - departures at line rate (for the share of the step PFC does not pause
    the link, ``LS_PAUSE``), tail drop beyond the buffer, phantom queue filled by the same
    arrivals (the ACKs where ``LS_PH_COUNTS`` says so) and drained at its own rate, and the
    marking probability, loss fraction (drops / data arrivals: a tail drop takes arriving data
    bytes; the ACKs are not dropped, below), queueing delay and pass ratio (departures / (queue
    + arrivals - drops), at most 1: the share of every flow's bytes held at the link, once its
    drops are gone, that leaves this step) that the flows crossing the link see. ``LS_QF``
    keeps the fluid model's part of the queue (the flows' bytes and their ACKs).
    ``LS_BACKLOG``: the link sent at its line rate all step (its packets leave back to back); a
    link that did not loses its departure grid (``LS_GRID`` = -1). Links left empty leave the
    list; returns its new length. ``at_ps`` >= 0 (with PFC, or the hybrid's INT records): the
    step's start, which each link keeps with the bytes it had sent before it (``LS_TX_AT``,
    ``LS_TX_BEFORE``), and the step's end with the fluid flows' part of its departures before
    and after the step (``LS_TX_END``, ``LS_TXF_BEFORE``, ``LS_TXF``).

    The ACKs: a full packet port refuses a packet that does not fit in its free bytes. Once
    the buffer is full of data packets, the bytes a departure frees go to the first data
    packet to arrive, and what is left over (a buffer is no whole number of data packets, and
    the ACKs themselves come and go) takes a 64-byte ACK where a 4,160-byte data packet does
    not fit: at the WAN ports of the 40%-load Fig. 10 run, in the windows where they dropped
    data (54% of its packets), the packet engine dropped 5% of the ACKs. Here the ACKs take
    their room first and the drops fall on the data (on ACKs only beyond all of it, bytes no
    flow hears of)."""
    kept = 0
    for i in range(n_links):
        link = links[i]
        if i + 4 < n_links:  # the rows of the links a few ahead (the busy list is scattered)
            prefetch_row(ls, links[i + 4], LS_UPDATE_END)
        if step_link(ls, link, dt_ps, at_ps):
            links[kept] = link
            kept += 1
    return kept


@njit(cache=True, error_model="numpy")
def fold_packet_bytes(ls, busy, counters, links, nbytes, waiting, nic_links, reached, link_rep,
                      dt_ps) -> None:  # fmt: skip
    """The hybrid's packets of the last step into the fluid links: the ``nbytes[i]`` bytes port
    ``links[i]`` took arrive at its link in the next step (``LS_EXT``; the link joins the busy
    list); at a host's NIC (``waiting[i]`` >= 0; -1: a switch port) the host's packet flows
    claim their share of the NIC's water filling (``LS_PKT_CLAIM``): what they sent, or the
    whole step's line while a sender waits for the NIC (``waiting[i]`` 1). The claims of the
    NICs ``nic_links`` that took nothing are cleared. A link no fluid flow can reach
    (``reached`` 0) is left out: a port reads its link's fluid state only where fluid flows
    hold or send bytes (:func:`uno.net.shared_link.fluid_on_link`), so the steps would change
    nothing its packets see (on the default incast, half the links the packets cross). A
    folded link's group (``link_rep``, :mod:`uno.fluid.folding`) takes its links' packets as an
    even share each: the fluid flows see the group's mean."""
    for i in range(len(nic_links)):
        ls[nic_links[i], LS_PKT_CLAIM] = 0.0
    n_busy = int(counters[CT.busy])
    for i in range(len(links)):
        link = link_rep[links[i]]
        if reached[link] == 0:
            continue
        ls[link, LS_EXT] += nbytes[i] / ls[link, LS_FOLD]
        n_busy = join_busy(ls, busy, n_busy, link)
        if waiting[i] >= 0:
            ls[link, LS_PKT_CLAIM] = dt_ps * ls[link, LS_CAP] if waiting[i] > 0 else nbytes[i]
    counters[CT.busy] = n_busy


@njit(cache=True, error_model="numpy")
def join_busy(ls, busy, n_busy, link) -> int:
    """Link ``link`` joins the busy list ``busy[:n_busy]`` unless it is on it; returns the
    list's length."""
    if ls[link, LS_LISTED] == 0.0:
        ls[link, LS_LISTED] = 1.0
        busy[n_busy] = link
        n_busy += 1
    return n_busy


@njit(cache=True, error_model="numpy")
def acks_out(fs, ls, markers, n_mark, rv_ptr, rv_link, rv_w, lb, busy, n_busy, ack_share) -> int:
    """The ACKs of this step's deliveries (``markers[:n_mark]``, ``FS_DELIV_NEW`` bytes of data
    packets), one of ``ack_share`` of a data packet's bytes per data packet, arrive in the next
    step (``LS_ACK_IN``) at every link of the flow's ACK route where ACKs share the data queue:
    the ``rv_*`` route by its weights (with ``switch.ack_priority`` only the receiver's NIC has
    weight: the switch ports serve ACKs in a lane of their own that delays no data,
    uno.net.port.ControlLane), or a UnoLB flow's subflows' own ACK hops, an equal share each,
    where it has them (``lb.ack_links``, ``lb.ack_hops``), as
    :func:`uno.fluid.signals.reverse_delay` and :func:`uno.fluid.signals.subflow_reverse_delay`
    read those queues. The links join the busy list ``busy[:n_busy]``; returns its new length.
    (The fluid's bytes meet no propagation on their way out, all of it is on the way back: the
    ACKs are at every link of their route in the step after the delivery.)"""
    sub_n, sub_rlinks, sub_rhops = lb.n, lb.ack_links, lb.ack_hops
    for i in range(n_mark):
        f = markers[i]
        nbytes = fs[f, FS_DELIV_NEW] * ack_share
        if nbytes <= 0.0:
            continue
        n_s = sub_n[f]
        if n_s > 0 and sub_rhops[f] > 0:
            for s in range(n_s):
                for h in range(sub_rhops[f]):
                    link = sub_rlinks[f, s, h]
                    ls[link, LS_ACK_IN] += subflow_part(nbytes, f, s, lb)
                    n_busy = join_busy(ls, busy, n_busy, link)
        else:
            for e in range(rv_ptr[f], rv_ptr[f + 1]):
                if rv_w[e] > 0.0:  # (a folded link: each of its group's its share)
                    ls[rv_link[e], LS_ACK_IN] += nbytes * rv_w[e] / ls[rv_link[e], LS_FOLD]
                    n_busy = join_busy(ls, busy, n_busy, rv_link[e])
    return n_busy

"""One step of the links, hop by hop: every active flow's bytes go from link to link of its
route in the order of the links' levels, so a link's arrivals are what the links before it
passed on in this same step (:func:`forward`).

Each route entry ``j`` (flow, link) holds the flow's bytes in that link's queue (``EF_Q``) and
its marked ones (``EF_MQ``). UnoLB subflow hop ``h`` of subflow ``s`` of flow ``f`` is entry
``rt_ptr[-1] + (f S + s) H + h`` (``sub_links`` of shape (n, S, H)). An entry's fields share a
row so that a step touches one or two cache lines per entry.

Units: time in ps, sizes in bytes, rates in bytes/ps.
"""

from __future__ import annotations

from numba import njit

from uno.fluid.balance import REPS_ON, UNO_ACK_AT, UNO_SILENT, reps_shares, subflow_part
from uno.fluid.cache_hints import prefetch_row
from uno.fluid.columns import (
    ACKS,
    EF_CARRY,
    EF_IN,
    EF_LOSS,
    EF_MCARRY,
    EF_MIN,
    EF_MQ,
    EF_Q,
    EF_W,
    EI_FLOW,
    EI_GROUP,
    EI_GSTART,
    EI_LAG,
    EI_LINK,
    EI_NEXT,
    EI_NXT,
    EI_SNXT,
    FIG,
    FS_ACK_LAST,
    FS_BASE_RTT,
    FS_DELIV_NEW,
    FS_DROPPED,
    FS_EC_N,
    FS_EXPOSED,
    FS_FAULT_LOST,
    FS_MARK_NEW,
    FS_RDELAY,
    FS_WIRE_DROP,
    FS_WIRE_HOP,
    FS_WIRE_NEXT,
    FS_WIRE_PS,
    FX_FIRST,
    FX_NETQ,
    FX_SEND,
    GRID,
    LS_ARR,
    LS_ARR2,
    LS_EXT,
    LS_FAULT,
    LS_FDROP,
    LS_FOLD,
    LS_LISTED,
    LS_LOSS,
    LS_MARK,
    LS_MARKS,
    LS_PASS,
    LS_Q,
    LS_QF,
    LS_TX,
    R_SUBWIRE,
    R_WIRE,
    R_WIRE_ACK,
)
from uno.fluid.cycles import TALLY, cycles, tick
from uno.fluid.int_records import INTS
from uno.fluid.links import update_links
from uno.fluid.phases import POOL, group_inputs, note_input, set_grid, subflow_hop
from uno.fluid.qcn import note_accepted
from uno.fluid.rings import fit_lag, line_row, mark_ring_due

#: how many route entries ahead :func:`depart_level` asks for a wire hop's delay-line slot
DEPART_AHEAD = 16

#: ``l_nxt`` of a link in no level's list (:func:`forward`)
NOT_IN_LEVEL = -2

#: a flow's bytes at a link below this many (a byte: the least a link carries) leave with the
#: link's departures of the step (:func:`leave_link`)
RESIDUE_BYTES = 1.0


@njit(cache=True, error_model="numpy", inline="always")
def wire_lag_steps(f, inv_dt, fs) -> int:
    """Flow ``f``'s wire propagation (``FS_WIRE_PS``) in steps of ``1 / inv_dt`` ps, rounded."""
    return int(fs[f, FS_WIRE_PS] * inv_dt + 0.5)


@njit(cache=True, error_model="numpy", inline="always")
def to_wire(f, k, col, out, out_m, inv_dt, dt_ps, fs, ring, pool, calendar) -> None:
    """Bytes ``out`` (``out_m`` of them marked) leave flow ``f``'s wire link at step ``k``: into
    its delay line's columns ``col`` and ``col + 1`` at the step they reach the next hop,
    ``FS_WIRE_PS`` later, with the ACK frontier the flow has now (``R_WIRE_ACK``)."""
    lag = fit_lag(f, k, wire_lag_steps(f, inv_dt, fs), ring, pool)
    slot = line_row(pool, f, k, lag)
    ring[slot, col] += out
    ring[slot, col + 1] += out_m
    due_ps = fs[f, FS_ACK_LAST] * dt_ps
    if due_ps > ring[slot, R_WIRE_ACK]:
        ring[slot, R_WIRE_ACK] = due_ps
    mark_ring_due(calendar, fs, k + lag, f)


@njit(cache=True, error_model="numpy", inline="always")
def prefetch_wire_slot(f, k, inv_dt, fs, ring, pool) -> None:
    """Ask for the delay-line slot :func:`to_wire` writes flow ``f``'s bytes into at step
    ``k`` (a hint only, where its line holds the delay: :func:`uno.fluid.cache_hints.prefetch`).
    The slot was last touched a wire propagation ago, so without the hint its write waits for
    memory."""
    lag = wire_lag_steps(f, inv_dt, fs)
    if 1 <= lag < pool.length[f]:  # (as fit_lag leaves it, without growing the line)
        prefetch_row(ring, line_row(pool, f, k, lag), ring.shape[1])


@njit(cache=True, error_model="numpy", inline="always")
def enlist_entry(j, link, a, ls, ei, ef, hops, inv_dt) -> None:
    """Route entry ``j`` (at ``link``) takes part in the step, receiving ``a`` bytes so far (a
    send or a carry): it joins its level's list of entries (and of split-hop entries), its
    link the level's list of links; a one-link hop's arrival is added to the link's rate now
    (a split hop's in its level's first walk)."""
    e_head, l_nxt, l_head, s_head = hops.e_head, hops.l_nxt, hops.l_head, hops.s_head
    ef[j, EF_IN] = a
    ef[j, EF_MIN] = ef[j, EF_MCARRY]
    ef[j, EF_MCARRY] = 0.0
    lv = hops.link_level[link]
    ei[j, EI_NXT] = e_head[lv]
    e_head[lv] = j
    if l_nxt[link] == NOT_IN_LEVEL:
        ls[link, LS_LISTED] = 1.0
        l_nxt[link] = l_head[lv]
        l_head[lv] = link
    if ef[j, EF_W] < 1.0:
        ei[j, EI_SNXT] = s_head[lv]
        s_head[lv] = j
    elif a > 0.0:
        ls[link, LS_ARR] += a * inv_dt / ls[link, LS_FOLD]
    if a > 0.0:
        hops.l_input[link] = -2  # a send or a carry: not from one link now


@njit(cache=True, error_model="numpy", inline="always")
def hop_is_live(j, j1, feed, ei, ef):
    """Of the hop whose first entry is ``j`` (entries up to ``j1``): whether bytes reach it or
    wait at it this step (``feed``: the hop before passes bytes on in this same step; a carry;
    a queue), and whether what it lets go reaches the next hop in this same step."""
    live = feed
    same_step = False
    jj = j
    while jj < j1 and ei[jj, EI_GSTART] == j:
        if (ef[jj, EF_CARRY] > 0.0 or ef[jj, EF_Q] > 0.0
                or ef[jj, EF_MQ] > 0.0 or ef[jj, EF_MCARRY] > 0.0):  # fmt: skip
            live = True
        if ei[jj, EI_LAG] == 0:
            same_step = True
        jj += 1
    return live, same_step


@njit(cache=True, error_model="numpy", inline="always")
def enlist_flow(f, send, rt_ptr, ls, fx, lb, hops, inv_dt) -> None:
    """Flow ``f``'s route entries (an UnoLB flow's subflow hops) that take part in the step,
    by level (:func:`enlist_entry`), with ``send`` bytes at its first hop. A flow that sends
    nothing is walked from the first hop that holds its bytes (``FX_FIRST``; an UnoLB flow's
    subflows each from the first hop index at which any of them holds bytes), as the hops
    before it receive nothing. Past that, a hop that no bytes reach this step and none wait at
    is left out: nothing would move there (beyond the wire link, or a queue's hop, the hops
    after it until bytes wait or arrive again)."""
    ei, ef = hops.ei, hops.ef
    sub_n, sub_hops, sub_links = lb.n, lb.hops, lb.links
    n_sub_max = sub_links.shape[1]
    n_hop_max = sub_links.shape[2]
    base = rt_ptr[rt_ptr.shape[0] - 1]
    n_s = sub_n[f]
    # the hops before the first that holds bytes get none this step
    first = int(fx[f, FX_FIRST])
    fx[f, FX_FIRST] = sub_hops[f] if n_s > 0 else rt_ptr[f + 1]
    for s in range(n_s if n_s > 0 else 1):
        if n_s > 0:
            j0 = base + (f * n_sub_max + s) * n_hop_max
            j1 = j0 + sub_hops[f]
            j_walk = j0 if send > 0.0 else j0 + first
        else:
            j0 = rt_ptr[f]
            j1 = rt_ptr[f + 1]
            j_walk = j0 if send > 0.0 else first
        # reached: the send (the first hop), what the hop before passes on in this same step,
        # a carry (EF_CARRY: the wire's, a cycle's)
        feed = send > 0.0
        skip = False
        for j in range(j_walk, j1):
            if n_s == 0 and ei[j, EI_GSTART] == j:
                live, same_step = hop_is_live(j, j1, feed, ei, ef)
                skip = not live
                feed = live and same_step
            if skip:
                continue
            link = sub_links[f, s, j - j0] if n_s > 0 else ei[j, EI_LINK]
            a = ef[j, EF_CARRY]
            ef[j, EF_CARRY] = 0.0
            if j == j0:
                a += subflow_part(send, f, s, lb) if n_s > 0 else send
            enlist_entry(j, link, a, ls, ei, ef, hops, inv_dt)


@njit(cache=True, error_model="numpy", inline="always")
def enlist(n_active, flows, ls, busy, n_busy, rt_ptr, lb, hops, inv_dt) -> None:
    """The step's lists: the levels' lists emptied; the busy links' arrivals cleared (they
    join their level's list with the first route entry that reaches them); every active flow
    with bytes to send or bytes in the network enlisted (:func:`enlist_flow`)."""
    fx, active = flows.fx, flows.active
    e_head, l_head, s_head, l_input = hops.e_head, hops.l_head, hops.s_head, hops.l_input
    for lv in range(hops.n_levels[0]):
        e_head[lv] = -1
        l_head[lv] = -1
        s_head[lv] = -1
    # the links already busy (queues draining, outside bytes, ACKs)
    for i in range(n_busy):
        link = busy[i]
        ls[link, LS_ARR] = 0.0
        ls[link, LS_ARR2] = 0.0
        if ls[link, LS_EXT] > 0.0:
            l_input[link] = -2  # the hybrid's packets
    for i in range(n_active):
        f = active[i]
        send = fx[f, FX_SEND]
        if send <= 0.0:
            if fx[f, FX_NETQ] <= 0.0:
                continue
            send = 0.0
        fx[f, FX_NETQ] = 0.0
        if lb.reps_p[REPS_ON] > 0.0 and send > 0.0:
            reps_shares(f, flows.fs[f, FS_BASE_RTT], ls, lb)
        enlist_flow(f, send, rt_ptr, ls, fx, lb, hops, inv_dt)


@njit(cache=True, error_model="numpy", inline="always")
def advance_lone_links(k, ls, busy, n_busy, hops, dt_ps, stamp_ps) -> int:
    """The busy links no route entry reaches this step (ACKs alone, a queue no flow's bytes
    wait in: the hybrid's packets, a moved subflow's): no flow reads them in this step, so they
    advance apart, first, and stay out of the level walk (on the 40%-load Fig. 10 run, about
    half of the busy links of a fine step carry only ACKs). ``stamp_ps``: with PFC the step's
    start, which the links keep with their departures (:func:`uno.fluid.links.update_links`),
    else -1. Returns the busy list's length: those of them still busy."""
    l_nxt, l_input = hops.l_nxt, hops.l_input
    shape_drops = hops.grid[GRID.on] != 0
    n_alone = 0
    for i in range(n_busy):
        link = busy[i]
        if l_nxt[link] == NOT_IN_LEVEL:
            busy[n_alone] = link
            n_alone += 1
    n_busy = update_links(ls, busy, n_alone, dt_ps, stamp_ps)
    for t in range(n_busy):
        if shape_drops:  # (no link fed it: a busy period that starts draws its grid)
            set_grid(ls, busy[t], -1.0, hops.grid[GRID.salt], k)
        l_input[busy[t]] = -1
    return n_busy


@njit(cache=True, error_model="numpy", inline="always")
def entry_arrival(j, ei, ef):
    """The bytes (and marked bytes) route entry ``j`` receives this step: its own, or for a
    split hop's link its weight's share of what reaches the hop."""
    w = ef[j, EF_W]
    if w < 1.0:
        g = ei[j, EI_GSTART]
        return ef[g, EF_IN] * w, ef[g, EF_MIN] * w
    return ef[j, EF_IN], ef[j, EF_MIN]


@njit(cache=True, error_model="numpy", inline="always")
def leave_link(j, link, a, a_m, held, inv_dt, ls, ei, ef, hops):
    """What flow bytes at route entry ``j`` do at ``link`` this step: of the ``held`` = queued
    + ``a`` arriving (``a_m`` of them marked), the drops take a share of the arrivals (tail
    drop: a byte already queued is never dropped; ``LS_LOSS``, or with phase drops the share of
    the entry's input group, kept in ``EF_LOSS``), and of what is left a share ``LS_PASS``
    leaves (the fluid reading of FIFO), the rest stays queued; the link marks its share of the
    unmarked bytes that leave. A flow's last sliver at the link, below ``RESIDUE_BYTES``, leaves
    with the step's departures (the link's count and level with it): a FIFO empties a flow's
    bytes from its queue in finite time, where the proportional share's tail never ends (with
    no floor, a third of the route entries a step walked on the 40%-load Fig. 10 traffic held
    less than a byte, and two fifths of the deliveries were less than one). Returns (bytes
    out, marked bytes out, bytes still queued, bytes dropped); the marked bytes queued are
    written (``EF_MQ``)."""
    # the entry's whole arrival is known now (its hops before are done): one source (at a
    # folded link, each of the group's links receives its share)
    fold = ls[link, LS_FOLD]
    rate_in = a * inv_dt / fold
    ls[link, LS_ARR2] += rate_in * rate_in
    passed = ls[link, LS_PASS]
    loss = ls[link, LS_LOSS]
    l_dense = hops.l_dense
    if loss > 0.0 and l_dense[link] >= 0:  # by its input (input_drop_shares)
        grp = ei[j, EI_GROUP]
        loss = hops.g_val[l_dense[link], FIG.loss, grp if grp >= 0 else POOL]
    dropped = a * loss
    ef[j, EF_LOSS] = loss
    held -= dropped
    out = held * passed
    q = held - out
    # the marked bytes leave, and are dropped, in the same shares; the link marks its share
    # of the unmarked ones that leave
    held_m = ef[j, EF_MQ] + a_m * (1.0 - loss)
    out_m = held_m * passed
    q_m = held_m - out_m
    fresh = (out - out_m) * ls[link, LS_MARK]
    if fresh > 0.0:
        out_m += fresh
        ls[link, LS_MARKS] += fresh / fold
    if q < RESIDUE_BYTES * fold:
        if q > 0.0:
            # the flow's last sliver at the link leaves with this step's departures
            out += q
            out_m += q_m if q_m > 0.0 else 0.0
            rest = ls[link, LS_Q] - q / fold
            ls[link, LS_Q] = rest if rest > 0.0 else 0.0
            rest = ls[link, LS_QF] - q / fold
            ls[link, LS_QF] = rest if rest > 0.0 else 0.0
            ls[link, LS_TX] += q / fold
        q = 0.0  # (below 0: rounding, the link let everything go)
        q_m = 0.0
    ef[j, EF_MQ] = q_m if q_m > 0.0 else 0.0
    return out, out_m, q, dropped


@njit(cache=True, error_model="numpy", inline="always")
def note_drop(j, f, r, s, h, a, dropped, fs, lb, droppers, n_drop) -> None:
    """Flow ``f`` lost ``dropped`` of the ``a`` bytes that reached entry ``j``'s link (an UnoLB
    subflow hop: ``r`` >= 0, subflow ``s``, hop ``h``): added to ``FS_DROPPED`` out of
    ``FS_EXPOSED``, the flow listed in ``droppers[:n_drop[0]]``; beyond its wire link, to
    ``FS_WIRE_DROP`` too (their losses are timed from their send, that long before); a coded
    UnoLB flow's per subflow (``lb.drops``)."""
    if fs[f, FS_DROPPED] == 0.0:
        fs[f, FS_EXPOSED] = 0.0
        droppers[n_drop[0]] = f
        n_drop[0] += 1
    fs[f, FS_DROPPED] += dropped
    fs[f, FS_EXPOSED] += a
    if r < 0 and 0.0 <= fs[f, FS_WIRE_NEXT] <= j:  # beyond the wire link
        fs[f, FS_WIRE_DROP] += dropped
    elif r >= 0 and 0.0 <= fs[f, FS_WIRE_HOP] < h:
        fs[f, FS_WIRE_DROP] += dropped
    if r >= 0 and fs[f, FS_EC_N] > 0.0:  # a coded UnoLB flow: per subflow
        lb.drops[f, s, 0] += dropped
        lb.drops[f, s, 1] += a


@njit(cache=True, error_model="numpy", inline="always")
def deliver(f, out, out_m, fs, markers, n_mark) -> None:
    """Flow ``f``'s last hop delivers ``out`` bytes (``out_m`` marked): their ECN echoes ride
    on their ACKs (``FS_DELIV_NEW``, ``FS_MARK_NEW``; the flow listed in
    ``markers[:n_mark[0]]``)."""
    if fs[f, FS_DELIV_NEW] == 0.0:
        markers[n_mark[0]] = f
        n_mark[0] += 1
    fs[f, FS_DELIV_NEW] += out
    fs[f, FS_MARK_NEW] += out_m


@njit(cache=True, error_model="numpy", inline="always")
def pass_on(j, f, r, s, h, link, out, out_m, k, inv_dt, dt_ps, fs, ls, lb, hops, lines, scratch):
    """The ``out`` bytes (``out_m`` marked) flow ``f`` let go at entry ``j``'s ``link`` go on:
    to the next hop in this same step (its arrival), to the next step when the next hop's level
    is not above this one's (a cycle: ``EF_CARRY``; returned, as they stay at this hop until
    then), onto the wire (the wire link's departures reach the next hop ``FS_WIRE_PS`` later
    through the delay line, :func:`to_wire`), or to the receiver (:func:`deliver`). Returns the
    bytes carried to the next step."""
    ei, ef, l_input, link_lvl = hops.ei, hops.ef, hops.l_input, hops.link_level
    sub_hops, sub_links = lb.hops, lb.links
    ring, calendar = lines.ring, lines.calendar
    carried = 0.0
    if r < 0:
        nxt = ei[j, EI_NEXT]
        if nxt < 0:
            deliver(f, out, out_m, fs, scratch.markers, scratch.n_mark)
        elif ei[j, EI_LAG] < 0:  # on the wire, to the next hop later
            to_wire(f, k, R_WIRE, out, out_m, inv_dt, dt_ps, fs, ring, lines.pool, calendar)
        elif ei[j, EI_LAG] > 0:
            ef[nxt, EF_CARRY] += out
            ef[nxt, EF_MCARRY] += out_m
            carried = out
        else:
            ef[nxt, EF_IN] += out
            ef[nxt, EF_MIN] += out_m
            if ef[nxt, EF_W] >= 1.0:
                nlink = ei[nxt, EI_LINK]
                fold = ls[nlink, LS_FOLD]
                ls[nlink, LS_ARR] += out * inv_dt / fold
                if fold > 1.0 or ls[link, LS_FOLD] > 1.0:
                    l_input[nlink] = -2  # (a folded group: from every link of the hop before)
                else:
                    note_input(l_input, nlink, link)
    elif h == fs[f, FS_WIRE_HOP]:  # on the wire, to the subflow's next hop later
        to_wire(f, k, R_SUBWIRE + 2 * s, out, out_m, inv_dt, dt_ps, fs, ring, lines.pool,
                calendar)  # fmt: skip
    elif h + 1 < sub_hops[f]:
        nlink = sub_links[f, s, h + 1]
        if link_lvl[nlink] <= link_lvl[link]:
            ef[j + 1, EF_CARRY] += out
            ef[j + 1, EF_MCARRY] += out_m
            carried = out
        else:
            ef[j + 1, EF_IN] += out
            ef[j + 1, EF_MIN] += out_m
            ls[nlink, LS_ARR] += out * inv_dt
            note_input(l_input, nlink, link)
    else:
        if lb.uno_p[UNO_SILENT] > 0.0:  # (UnoLB's silent subflows: when its ACK comes back)
            back = fs[f, FS_BASE_RTT] - fs[f, FS_WIRE_PS] + fs[f, FS_RDELAY]
            lb.uno_s[f, s, UNO_ACK_AT] = (k + 1) * dt_ps + back
        deliver(f, out, out_m, fs, scratch.markers, scratch.n_mark)
    return carried


@njit(cache=True, error_model="numpy", inline="always")
def faulty_weight(j, ls, ei, ef) -> float:
    """The share of what reaches split hop entry ``j``'s hop that crosses its links with a
    fault: the bytes a fault drops there count as exposed with the whole hop's, once, as each
    of the flow's packets crosses one of the hop's links (a block of a coded flow spreads over
    them: :func:`uno.fluid.coding.coded_losses` reads the chance per packet)."""
    g = ei[j, EI_GSTART]
    weight = 0.0
    jj = g
    while jj < ei.shape[0] and ei[jj, EI_GSTART] == g:
        if ls[ei[jj, EI_LINK], LS_FAULT] > 0.0:
            weight += ef[jj, EF_W]
        jj += 1
    return weight


@njit(cache=True, error_model="numpy", inline="always")
def depart_level(lv, k, dt_ps, rt_ptr, flows, ls, lb, hops, lines, scratch) -> None:
    """The departures of the links of level ``lv``: each route entry's share of what its link
    let go (:func:`leave_link`), less what the link's faults lose (``LS_FAULT``,
    :mod:`uno.fluid.faults`), on to its next hop (:func:`pass_on`); what stays is the
    flow's bytes in the network (``FX_NETQ``), from the first hop that holds some
    (``FX_FIRST``); a QCN congestion point counts the data it accepted
    (:func:`uno.fluid.qcn.note_accepted`)."""
    fx, fs = flows.fx, flows.fs
    ei, ef = hops.ei, hops.ef
    sub_links = lb.links
    base = rt_ptr[rt_ptr.shape[0] - 1]
    inv_dt = 1.0 / dt_ps
    # (a run with no fault reads no link's LS_FAULT: a cache line of the link's row per entry)
    faults = hops.acks[ACKS.faults] != 0.0
    qcn = hops.acks[ACKS.qcn] >= 0.0  # (some link is a QCN congestion point)
    j = hops.e_head[lv]
    ring, pool = lines.ring, lines.pool
    ahead = j  # (DEPART_AHEAD entries on: a wire hop's slot is asked for before its turn)
    for _ in range(DEPART_AHEAD):
        if ahead >= 0:
            ahead = ei[ahead, EI_NXT]
    n_entries = 0
    while j >= 0:
        if ahead >= 0:
            g = ei[ahead, EI_FLOW]
            if ahead < base:
                wire = ei[ahead, EI_LAG] < 0
            else:  # (a subflow's hop: pass_on's test; its subflows share the slot)
                wire = (ahead - base) % sub_links.shape[2] == fs[g, FS_WIRE_HOP]
            if wire:
                prefetch_wire_slot(g, k, inv_dt, fs, ring, pool)
            ahead = ei[ahead, EI_NXT]
        n_entries += 1
        a, a_m = entry_arrival(j, ei, ef)
        held = ef[j, EF_Q] + a
        if held > 0.0:
            r = j - base  # >= 0: a subflow's hop, whose links change when it moves
            f = ei[j, EI_FLOW]
            s = 0
            h = 0
            if r < 0:
                link = ei[j, EI_LINK]
            else:
                s, h = subflow_hop(r, sub_links)
                link = sub_links[f, s, h]
            out, out_m, q, dropped = leave_link(j, link, a, a_m, held, inv_dt, ls, ei, ef, hops)
            if dropped > 0.0:
                note_drop(j, f, r, s, h, a, dropped, fs, lb, scratch.droppers, scratch.n_drop)
            if qcn:  # (a subflow's hop: its route's entry of that hop times the notices)
                note_accepted(j, link, j if r < 0 else rt_ptr[f] + h, a - dropped, hops)
            fault = ls[link, LS_FAULT] if faults else 0.0
            if fault > 0.0 and out > 0.0:  # (uno.fluid.faults: lost as they leave the link)
                gone = out * fault
                exposed = (
                    out if r >= 0 or ef[j, EF_W] >= 1.0 else out / faulty_weight(j, ls, ei, ef)
                )
                note_drop(j, f, r, s, h, exposed, gone, fs, lb, scratch.droppers, scratch.n_drop)
                fs[f, FS_FAULT_LOST] += gone
                ls[link, LS_FDROP] += gone
                out -= gone
                out_m -= out_m * fault
            ef[j, EF_Q] = q
            if out > 0.0:
                carried = pass_on(j, f, r, s, h, link, out, out_m, k, inv_dt, dt_ps, fs, ls, lb,
                                  hops, lines, scratch)  # fmt: skip
                if carried > 0.0:
                    q += carried
            fx[f, FX_NETQ] += q
            if q > 0.0:
                if r < 0:
                    if ei[j, EI_GSTART] < fx[f, FX_FIRST]:
                        fx[f, FX_FIRST] = ei[j, EI_GSTART]
                elif h < fx[f, FX_FIRST]:
                    fx[f, FX_FIRST] = h
        j = ei[j, EI_NXT]
    scratch.tally[TALLY.entries] += n_entries


@njit(cache=True, error_model="numpy", inline="always")
def advance_level(lv, k, dt_ps, stamp_ps, n_busy, rt_ptr, flows, links, lb, hops, lines,
                  scratch) -> int:  # fmt: skip
    """Level ``lv``'s step: its split hops' arrivals (each link's share of what the hop before
    passed on, at earlier levels), its links advanced (:func:`uno.fluid.links.update_links`)
    and those still busy appended to the busy list (returns its length), their grids and their
    inputs' shares of their drops (:func:`uno.fluid.phases.group_inputs`), then the
    departures (:func:`depart_level`)."""
    ls, busy = links.ls, links.busy
    ei, ef, l_nxt, l_buf, l_input = hops.ei, hops.ef, hops.l_nxt, hops.l_buf, hops.l_input
    inv_dt = 1.0 / dt_ps
    t = cycles()
    j = hops.s_head[lv]
    while j >= 0:
        a = ef[ei[j, EI_GSTART], EF_IN] * ef[j, EF_W]
        ls[ei[j, EI_LINK], LS_ARR] += a * inv_dt
        if a > 0.0:
            l_input[ei[j, EI_LINK]] = -2  # from every link of the hop before
        j = ei[j, EI_SNXT]
    m = 0
    link = hops.l_head[lv]
    while link >= 0:
        l_buf[m] = link
        m += 1
        nxt = l_nxt[link]
        l_nxt[link] = NOT_IN_LEVEL
        link = nxt
    kept = update_links(ls, l_buf, m, dt_ps, stamp_ps)
    for i in range(kept):
        busy[n_busy] = l_buf[i]
        n_busy += 1
    if hops.grid[GRID.on] != 0:
        group_inputs(k, lv, kept, l_buf, ls, ei, ef, hops.e_head, rt_ptr, lb, hops, dt_ps)
    t = tick(scratch.tally, TALLY.links, t)
    depart_level(lv, k, dt_ps, rt_ptr, flows, ls, lb, hops, lines, scratch)
    for i in range(kept):
        hops.l_dense[l_buf[i]] = -1
        l_input[l_buf[i]] = -1
    tick(scratch.tally, TALLY.depart, t)
    return n_busy


@njit(cache=True, error_model="numpy", _nrt=False)
def forward(k, dt_ps, n_active, n_busy, rt_ptr, flows, links, lb, hops, lines, scratch) -> int:
    """One step of the links, hop by hop: every active flow's bytes go from link to link of its
    route and the links are advanced (:func:`uno.fluid.links.update_links`) in the order of
    their level (:func:`advance_level`), so a link's arrivals are what the links before it
    passed on in this same step. ``n_busy``: the busy list's length (``links.busy``); returns
    its new length. The bytes each flow lost at the links this step add to its
    ``fs[f, FS_DROPPED]``, out of ``fs[f, FS_EXPOSED]`` bytes that reached those links; the
    flows that lost any are ``scratch.droppers[:scratch.n_drop[0]]``.

    ECN marks are decided as bytes leave a link, by its marking probability then (a packet is
    marked at dequeue, by the (phantom) queue's level at its departure, uno/net/port.py): each
    entry keeps which of its bytes are marked (``EF_MQ``, ``EF_MIN``, ``EF_MCARRY``, as their
    unmarked twins), and the bytes the last hop delivers add to ``fs[f, FS_DELIV_NEW]``, the
    marked ones among them to ``fs[f, FS_MARK_NEW]``; the flows that delivered any are
    ``scratch.markers[:scratch.n_mark[0]]``.

    So, as with packets, a byte dropped upstream never reaches the next link, and a link
    passes on exactly its departures (never more than it held, never more than its rate but
    for the slivers :func:`leave_link` lets go): summed over the flows at a link, queued plus
    arriving is the link's queue plus its arrivals (bytes from outside the fluid model,
    ``LS_EXT``, apart), and what leaves is its departures. A flow that sends nothing this step
    still moves its queued bytes on (``fx[f, FX_NETQ]`` > 0), walked from the first hop that
    holds them (:func:`enlist_flow`); a hop no bytes reach and none wait at is left out of the
    step, and its link joins the step's lists only if it is busy (a link holding a queue is on
    the busy list). On the 40%-load Fig. 10 run this leaves out most of the entries beyond the
    WAN links, and the fine steps run ~8% faster with the same results.

    The links' levels (``hops.link_level``) put each link after every link before it on a
    route where the links allow it; a hop whose next hop's level is not above its own (a cycle
    of links) hands its bytes on at the next step (``EI_LAG`` = 1), so no byte is lost or
    counted twice. Propagation on the way out (``engine.fluid_wire``): what leaves a flow's
    wire link (``EI_LAG`` = -1: its route's longest link, a WAN link, when its propagation is
    at least the intra-DC base RTT) goes into the flow's delay line (``R_WIRE``) and reaches
    the next hop ``FS_WIRE_PS`` later (:func:`uno.fluid.arrivals.wire_arrivals`), as a packet
    crosses the link's propagation; every other link's propagation stays on the way back. An
    UnoLB flow's subflows put what leaves their WAN link (hop ``FS_WIRE_HOP``) into columns
    ``R_SUBWIRE + 2 s`` of its delay line. The flow's RTT samples take the queueing beyond the
    wire link as its bytes meet it, with their ECN echoes (:mod:`uno.fluid.filing`): a
    packet's RTT holds the queues it crosses when it crosses them."""
    ls, busy = links.ls, links.busy
    tally = scratch.tally
    scratch.n_drop[0] = 0
    scratch.n_mark[0] = 0
    t = cycles()
    enlist(n_active, flows, ls, busy, n_busy, rt_ptr, lb, hops, 1.0 / dt_ps)
    t = tick(tally, TALLY.enlist, t)
    # (PFC: uno.fluid.pfc; the hybrid's INT records: uno.fluid.hybrid_loop)
    keep = links.pfc.shape[0] > 0 or hops.int_set[INTS.keep_sent] != 0
    stamp_ps = k * dt_ps if keep else -1.0
    n_busy = advance_lone_links(k, ls, busy, n_busy, hops, dt_ps, stamp_ps)
    tick(tally, TALLY.lone_links, t)
    for lv in range(hops.n_levels[0]):
        n_busy = advance_level(lv, k, dt_ps, stamp_ps, n_busy, rt_ptr, flows, links, lb, hops,
                               lines, scratch)  # fmt: skip
    return n_busy

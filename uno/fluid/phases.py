"""Drops at a full drop-tail queue by its inputs' packet phases (``engine.fluid_phase_drops``),
and the links' departure grids they are decided on.

A link that sends back to back sends on a fixed grid of one packet time (``LS_GRID``: its
phase in [0, 1) of a packet time, -1: none). A busy period starts on the grid of the one link
that feeds it, or on a phase drawn from the run's seed; a link passes its grid on while it is
fed by one link at its rate, and the ACKs it carries move it (:func:`ack_drift`). A full link's
drops fall on its inputs by the chance that their packets are not first in their packet time
(:func:`input_drop_shares`); :func:`group_inputs` groups a level's route entries by input and
shares each dropping link's drops among them.

Units: bytes, packet times (phases), ps (``dt_ps``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.fluid.columns import (
    ACKS,
    EF_IN,
    EF_W,
    EI_FLOW,
    EI_GROUP,
    EI_GSTART,
    EI_LINK,
    EI_NXT,
    FIG,
    FS_DELIV_NEW,
    GRID,
    LS_BACKLOG,
    LS_CAP,
    LS_FOLD,
    LS_GRID,
    LS_LOSS,
    LS_PKT_LOSS,
)
from uno.fluid.draws import unit_interval
from uno.net.hashing import GOLDEN, mix64

#: inputs of one dropping link told apart (:func:`input_drop_shares`); more join the pool
INPUTS_MAX = 32
#: the pool's place among a dropping link's inputs (``g_val[d, figure, POOL]``)
POOL = INPUTS_MAX
#: what :func:`input_drop_shares` writes over an input's acceptance chance once it loses all
#: it sends (no acceptance chance is negative)
CAPPED = -1.0

#: Gauss-Legendre nodes and weights on [0, 1] (8 points: exact for polynomials of degree 15)
_GL_X, _GL_W = np.polynomial.legendre.leggauss(8)
GL_X = (_GL_X + 1.0) / 2.0
GL_W = _GL_W / 2.0


@njit(cache=True, error_model="numpy", inline="always")
def rejection(accept) -> float:
    """The chance an input's packet is not the first in its packet time (it is rejected), from
    the chance ``accept`` that it is."""
    rej = 1.0 - accept
    return rej if rej > 0.0 else 0.0


@njit(cache=True, error_model="numpy")
def acceptance_chances(n_g, on_grid, u, phase, pool_u, accept, order) -> float:
    """The chance that each input's packet is the first to arrive after a departure of the
    full link (``accept[:n_g]``), and the pool's (returned): see :func:`input_drop_shares`.
    ``order``: scratch of ``n_g`` integers (the grid inputs sorted by phase)."""
    m = 0
    for g in range(n_g):
        if on_grid[g] > 0.0:
            # insertion sort of the grid inputs by phase (a handful)
            t = m
            while t > 0 and phase[order[t - 1]] > phase[g]:
                order[t] = order[t - 1]
                t -= 1
            order[t] = g
            m += 1
    for g in range(n_g):
        accept[g] = 0.0
    accept_pool = 0.0
    c_grid = 1.0
    for i in range(m + 1):
        lo = 0.0 if i == 0 else phase[order[i - 1]]
        hi = 1.0 if i == m else phase[order[i]]
        if i > 0:
            c_grid *= 1.0 - u[order[i - 1]]
        if i < m:  # the grid input at the segment's end: nothing before it in its packet time
            g = order[i]
            f_at = c_grid * math.exp(-pool_u * hi)
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    f_at *= 1.0 - u[r] * hi
            accept[g] = f_at
        if hi <= lo or c_grid <= 0.0:
            continue
        for q in range(GL_X.shape[0]):
            psi = lo + (hi - lo) * GL_X[q]
            f_psi = c_grid * math.exp(-pool_u * psi)
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    f_psi *= 1.0 - u[r] * psi
            w = (hi - lo) * GL_W[q]
            accept_pool += w * f_psi
            for r in range(n_g):
                if on_grid[r] <= 0.0:
                    left = 1.0 - u[r] * psi
                    if left > 0.0:
                        accept[r] += w * f_psi / left
    return accept_pool


@njit(cache=True, error_model="numpy")
def input_drop_shares(n_g, on_grid, u, phase, arr, pool_arr, pool_u, drop, loss, order):
    """How a full drop-tail link's ``drop`` bytes fall on its inputs in a step: the loss
    fraction of each input group ``loss[:n_g]``; returns the pool's, and that of a packet
    arriving at a random phase of the packet time with no stream of its own among the inputs
    (the mean of F, as the pool's, at the same odds: the hybrid's packets, whose phases the
    fluid grids do not set).

    A full packet queue frees one slot per departure, and the first packet to arrive after it
    takes the slot; the others arriving in that packet time are dropped. An input is the link
    before (a queue of its own): it delivers at most one packet per packet time of this link
    (same rate), and it delivers one in a share ``u`` of them (its arrivals over the link's
    capacity in the step). An input whose own departures are back to back (``on_grid``) puts
    its packets at a fixed ``phase`` of this link's departure grid; any other input's
    packets fall at random in the packet time (``u`` clamped to 1), and so do the pool's (the
    bytes of flows whose input is not one link: the first hop, a split hop before; many small
    streams, each arriving with chance ``u_r psi`` before phase ``psi``: exp(-pool_u psi)).
    With F(psi) the chance that nothing arrives before phase psi after a departure
    (prod over grid inputs with phase < psi of (1 - u), times prod over the others of
    (1 - u psi), times exp(-pool_u psi)), a grid input's packet takes the slot with chance
    F(phase) and a random input's with the mean of F(psi) / (1 - u psi) over psi, the pool's
    with the mean of F (Gauss-Legendre on the pieces between grid phases:
    :func:`acceptance_chances`). Floyd & Jacobson (1992) describe the effect: at a drop-tail
    gateway fed by periodic streams, which stream's packets are dropped is decided by the
    streams' phases, not by their rates.

    The link's own total of drops (the fluid queue's) is kept: each group's loss is its
    rejection chance 1 - accept times one factor, capped at 1 (the factor found by water
    filling), so inputs that meet the same odds lose the same share, as before. A packet at a
    random phase meets its rejection chance times that factor; where the capped inputs take
    every drop (two trains at the link's rate: the later loses all it sends, and a little more
    is dropped) the factor left is 0, and it meets its rejection at the least factor that caps
    them instead, as it does when the drops just fill their rejections. ``order`` is
    scratch of ``n_g`` integers, and ``loss`` holds each input's acceptance chance until its
    loss is written (it allocates nothing: kernels run by :func:`uno.fluid.kernels.advance`
    cannot). Units: bytes (``arr``, ``pool_arr``, ``drop``), packet times (``phase``)."""
    accept = loss  # (an input that loses all it sends: CAPPED)
    accept_pool = acceptance_chances(n_g, on_grid, u, phase, pool_u, accept, order)
    # rejection chances, scaled to the link's drops (water filling at a loss of 1)
    reject_pool = 1.0 - accept_pool if pool_arr > 0.0 else 0.0
    weighted = pool_arr * reject_pool
    total = pool_arr
    for g in range(n_g):
        weighted += arr[g] * rejection(accept[g])
        total += arr[g]
    if reject_pool < 0.0:
        reject_pool = 0.0
    if weighted <= 1e-12 * total:  # the same odds everywhere: the same share
        share = drop / total if total > 0.0 else 0.0
        for g in range(n_g):
            loss[g] = share
        return share, share
    left = drop
    floor = 0.0  # the least factor at which every capped input loses all it sends
    for _ in range(n_g + 2):
        factor = left / weighted if weighted > 0.0 else 0.0
        sound = weighted > 1e-12 * total  # (a factor from rounding residue sets no floor)
        capped = False
        if pool_arr > 0.0 and reject_pool > 0.0 and factor * reject_pool > 1.0:
            left -= pool_arr
            weighted -= pool_arr * reject_pool
            reject_pool = -1.0  # capped: loses everything
            capped = True
        for g in range(n_g):
            if accept[g] == CAPPED:
                continue
            rej = rejection(accept[g])
            if arr[g] > 0.0 and rej > 0.0 and factor * rej > 1.0:
                left -= arr[g]
                weighted -= arr[g] * rej
                accept[g] = CAPPED
                capped = True
                if sound and 1.0 / rej > floor:
                    floor = 1.0 / rej
        if not capped:
            break
    factor = left / weighted if weighted > 1e-12 * total else 0.0
    # what the rejections cannot hold (every input that can be rejected loses all it sent)
    # falls evenly on the rest: the link drops what its queue cannot take
    rest = 0.0
    even = 0.0
    if factor == 0.0 and left > 0.0:
        for g in range(n_g):
            if accept[g] != CAPPED:
                rest += arr[g]
        if reject_pool >= 0.0:
            rest += pool_arr
        even = left / rest if rest > 0.0 else 0.0
    for g in range(n_g):
        loss[g] = 1.0 if accept[g] == CAPPED else factor * rejection(accept[g]) + even
    if reject_pool < 0.0:  # (the pool capped: at these odds a random arrival loses all too)
        return 1.0, 1.0
    # (the factor left is 0 where the capped inputs take every drop: the floor keeps the packet's
    # loss continuous there; see the docstring)
    at_random = (factor if factor > floor else floor) * rejection(accept_pool) + even
    return factor * reject_pool + even, at_random if at_random < 1.0 else 1.0


@njit(cache=True, error_model="numpy")
def grid_phase(salt, link, k) -> float:
    """The phase, in [0, 1), of the departure grid that link ``link`` starts at step ``k``: a
    U[0, 1) draw hashed from the run's ``salt`` (where in its packet time a busy period
    begins is set by packet-level timing the fluid does not follow)."""
    return unit_interval(mix64(mix64(salt + np.uint64(link) * GOLDEN) + np.uint64(k)))


@njit(cache=True, error_model="numpy", inline="always")
def set_grid(ls, link, inherit, salt, k) -> None:
    """Link ``link``'s departure grid after its update at step ``k``: a busy period that starts
    takes the grid ``inherit`` (the phase of the one link that fed it, -1: none) or else a
    phase drawn from the run's ``salt`` (:func:`grid_phase`); a busy link keeps its grid; an
    idle link fed on a grid takes it (update_links has cleared the grid of a link that is not
    back to back)."""
    if ls[link, LS_BACKLOG] > 0.0:
        if ls[link, LS_GRID] < 0.0:
            ls[link, LS_GRID] = inherit if inherit >= 0.0 else grid_phase(salt, link, k)
    elif inherit >= 0.0:
        ls[link, LS_GRID] = inherit


@njit(cache=True, error_model="numpy")
def subflow_hop(r, sub_links):
    """Of UnoLB subflow hop entry ``rt_ptr[-1] + r`` (``sub_links`` of shape (n, S, H)): its
    subflow and its hop."""
    return (r // sub_links.shape[2]) % sub_links.shape[1], r % sub_links.shape[2]


@njit(cache=True, error_model="numpy")
def input_link(j, ei, rt_ptr, base, sub_links) -> int:
    """The link before route entry ``j`` on its flow's way (its input at ``j``'s link), or -1
    where that is not one link (the first hop; after a split hop)."""
    f = ei[j, EI_FLOW]
    r = j - base
    if r >= 0:  # a UnoLB subflow's hop
        s, h = subflow_hop(r, sub_links)
        if h == 0:
            return -1
        return sub_links[f, s, h - 1]
    g = ei[j, EI_GSTART]
    if g <= rt_ptr[f] or ei[g - 1, EI_GSTART] != g - 1:
        return -1
    return ei[g - 1, EI_LINK]


@njit(cache=True, error_model="numpy")
def same_rate(ls, a, b) -> bool:
    """Links ``a`` and ``b`` send at one rate: their packet times are one grid's."""
    return abs(ls[a, LS_CAP] - ls[b, LS_CAP]) <= 1e-9 * ls[b, LS_CAP]


@njit(cache=True, error_model="numpy", inline="always")
def note_input(l_input, link, src) -> None:
    """Link ``link`` receives bytes from link ``src`` this step: ``l_input[link]`` is that link
    while it is the only one (-1: none yet, -2: several, a send or a carry)."""
    seen = l_input[link]
    if seen == -1:
        l_input[link] = src
    elif seen != src:
        l_input[link] = -2


@njit(cache=True, error_model="numpy")
def set_level_grids(k, kept, l_buf, ls, salt, l_dense, g_val, g_n, l_input) -> int:
    """The departure grids of the links of a level just advanced (``l_buf[:kept]``): a link fed
    by one link only this step (``l_input``) whose packets come on a grid at the same rate
    passes them on on that grid; a busy period that starts on it keeps it; else a new phase
    (:func:`set_grid`; ``salt``: the run's, ``hops.grid[GRID.salt]``). The links that drop get
    a dense index (``l_dense``) and an empty set of inputs; returns their number. (The arrays
    come one by one, not as :data:`~uno.fluid.state.Hops`: a call that is not inlined passes
    every field of a tuple of arrays, and this one is made at every level of every step.)"""
    nd = 0
    for t in range(kept):
        link = l_buf[t]
        src = l_input[link]
        inherit = -1.0
        if src >= 0 and ls[src, LS_GRID] >= 0.0 and same_rate(ls, src, link):
            inherit = ls[src, LS_GRID]
        set_grid(ls, link, inherit, salt, k)
        if ls[link, LS_LOSS] > 0.0:
            l_dense[link] = nd
            g_n[nd] = 0
            g_val[nd, FIG.arrivals, POOL] = 0.0
            nd += 1
    return nd


@njit(cache=True, error_model="numpy")
def group_entries(lv, ls, ei, ef, e_head, rt_ptr, sub_links, l_dense, g_key, g_val, g_n) -> None:
    """The route entries of level ``lv`` at the links that drop: each grouped by its input
    (``EI_GROUP``; :func:`input_link`; up to ``INPUTS_MAX`` inputs, the rest pooled: -1), the
    bytes it receives added to its group's arrivals."""
    base = rt_ptr[rt_ptr.shape[0] - 1]
    j = e_head[lv]
    while j >= 0:
        r = j - base
        if r >= 0:
            s, h = subflow_hop(r, sub_links)
            link = sub_links[ei[j, EI_FLOW], s, h]
        else:
            link = ei[j, EI_LINK]
        d = l_dense[link]
        if d >= 0:
            w = ef[j, EF_W]
            a = ef[ei[j, EI_GSTART], EF_IN] * w if w < 1.0 else ef[j, EF_IN] / ls[link, LS_FOLD]
            grp = -1
            if a > 0.0:
                src = input_link(j, ei, rt_ptr, base, sub_links)
                if src >= 0 and ls[src, LS_FOLD] > 1.0:  # (a folded group, as a split hop)
                    src = -1
                if src >= 0:
                    n_g = g_n[d]
                    for g in range(n_g):
                        if g_key[d, g] == src:
                            grp = g
                            break
                    if grp < 0 and n_g < INPUTS_MAX:
                        grp = n_g
                        g_key[d, grp] = src
                        g_val[d, FIG.arrivals, grp] = 0.0
                        g_n[d] = n_g + 1
                g_val[d, FIG.arrivals, grp if grp >= 0 else POOL] += a
            ei[j, EI_GROUP] = grp
        j = ei[j, EI_NXT]


@njit(cache=True, error_model="numpy")
def share_level_drops(kept, l_buf, ls, l_dense, g_key, g_val, g_n, g_order, dt_ps) -> None:
    """At each link of ``l_buf[:kept]`` that drops: its inputs' figures (``FIG``) and its
    drops shared among them (:func:`input_drop_shares`, into ``g_val[d, FIG.loss]``), and the
    loss a packet at a random phase meets (``LS_PKT_LOSS``)."""
    for t in range(kept):
        link = l_buf[t]
        d = l_dense[link]
        if d < 0:
            continue
        room = ls[link, LS_CAP] * dt_ps
        n_g = g_n[d]
        fluid = g_val[d, FIG.arrivals, POOL]
        for g in range(n_g):
            src = g_key[d, g]
            arr = g_val[d, FIG.arrivals, g]
            fluid += arr
            g_val[d, FIG.slot_share, g] = arr / room if arr < room else 1.0
            if ls[src, LS_GRID] >= 0.0 and same_rate(ls, src, link):
                g_val[d, FIG.on_grid, g] = 1.0
                ph = ls[src, LS_GRID] - ls[link, LS_GRID]
                g_val[d, FIG.phase, g] = ph - math.floor(ph)
            else:
                g_val[d, FIG.on_grid, g] = 0.0
                g_val[d, FIG.phase, g] = 0.0
        g_val[d, FIG.loss, POOL], ls[link, LS_PKT_LOSS] = input_drop_shares(
            n_g, g_val[d, FIG.on_grid], g_val[d, FIG.slot_share], g_val[d, FIG.phase],
            g_val[d, FIG.arrivals], g_val[d, FIG.arrivals, POOL],
            g_val[d, FIG.arrivals, POOL] / room, ls[link, LS_LOSS] * fluid, g_val[d, FIG.loss],
            g_order,
        )  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def group_inputs(k, lv, kept, l_buf, ls, ei, ef, e_head, rt_ptr, lb, hops, dt_ps) -> None:
    """At the links of level ``lv`` just advanced (``l_buf[:kept]``): their departure grids
    (``LS_GRID``, :func:`set_level_grids`), and at the links that drop, each input's share of
    the drops: the route entries grouped by input (:func:`group_entries`) and the link's drops
    shared among the groups (:func:`share_level_drops`, into ``g_val[d, FIG.loss]`` of the
    link's dense index ``d``, which ``l_dense`` maps the link to for this level)."""
    l_dense, g_key, g_val, g_n = hops.l_dense, hops.g_key, hops.g_val, hops.g_n
    if set_level_grids(k, kept, l_buf, ls, hops.grid[GRID.salt], l_dense, g_val, g_n,
                       hops.l_input) == 0:  # fmt: skip
        return
    group_entries(lv, ls, ei, ef, e_head, rt_ptr, lb.links, l_dense, g_key, g_val, g_n)
    share_level_drops(kept, l_buf, ls, l_dense, g_key, g_val, g_n, hops.g_order, dt_ps)


@njit(cache=True, error_model="numpy")
def ack_drift(fs, ls, markers, n_mark, rv_ptr, rv_link, lb, hops) -> None:
    """The receivers of this step's deliveries (``markers[:n_mark]``, ``FS_DELIV_NEW``) send one
    ACK per data packet back along their ACK routes, and each ACK delays the departures after
    it at every link it crosses by its own transmission time: a back-to-back link's grid
    (``LS_GRID``) moves by ack_bytes / packet_bytes of a packet time per ACK, so the phases of
    two grids drift apart by the difference of the ACKs they carry (input_drop_shares)."""
    ack_share, pkt_bytes = hops.acks[ACKS.share], hops.acks[ACKS.packet_bytes]
    rv_w, sub_rhops = hops.ack_w, hops.ack_hops
    sub_n, sub_rlinks = lb.n, lb.ack_links
    for i in range(n_mark):
        f = markers[i]
        shift = fs[f, FS_DELIV_NEW] / pkt_bytes * ack_share
        n_s = sub_n[f]
        if n_s > 0 and sub_rhops[f] > 0:  # subflows: their packets, so their ACKs, round robin
            shift /= n_s
            for s in range(n_s):
                for h in range(sub_rhops[f]):
                    shift_grid(ls, sub_rlinks[f, s, h], shift)
        else:
            for e in range(rv_ptr[f], rv_ptr[f + 1]):
                link = rv_link[e]
                shift_grid(ls, link, shift * rv_w[e] / ls[link, LS_FOLD])


@njit(cache=True, error_model="numpy")
def shift_grid(ls, link, packet_times) -> None:
    """Move link ``link``'s departure grid, if it has one, later by ``packet_times`` (mod 1)."""
    g = ls[link, LS_GRID]
    if g >= 0.0:
        g += packet_times
        ls[link, LS_GRID] = g - math.floor(g)

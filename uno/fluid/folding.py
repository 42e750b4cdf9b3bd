"""Symmetric links folded into one (``engine.fluid_fold_links``): where every route that
crosses any of a set of links splits evenly over all of them (spraying's hops in a fat tree:
a ToR's uplinks, a pod's uplinks to the cores, the cores' downlinks into a pod), and the links
are alike (rate, buffer, marking, propagation), each of them receives the same bytes at every
step, so their queues, marks and drops are the same: one of them, the group's first, stands
for all. A route's split hop over the group becomes one entry at that link carrying the hop's
whole share; the link's state stays one member's (its rate, its queue), and what an entry
hands the link is divided by the group's size (``LS_FOLD``, read where an entry's bytes meet
its link: :mod:`uno.fluid.forward`, the ACKs' bytes in :func:`uno.fluid.links.acks_out`). The
other members' rows stay empty while the run lasts; the tables report each with its group's
row (``link_rep``).

A split hop the fold leaves alone is any that shares a link with a hop over another set of
links, with a one-link hop (ECMP flows, the ACKs' cycled paths of ``transport.ack_paths``) or
with uneven shares, or whose links differ: there the members' bytes differ.

Beyond float rounding (a share times the group's size against the sum of its links' shares,
which grows in a long run where a loss falls a step apart), two things change. A busy period on a link that starts with no single link feeding it
draws its packet grid's phase per link (:func:`uno.fluid.phases.set_grid`); a group draws one
for all its members (``engine.fluid_phase_drops``; at a full drop-tail queue only). And in the
hybrid, whose packets each take one link of a group (the packet engine's spraying), the fluid
model takes their bytes as an even share of each of the group's links
(:func:`uno.fluid.links.fold_packet_bytes`), and every port of the group reads the group's
state: the fluid flows meet the packets' mean load there, as their own bytes are an even split
already. Each port's own packets queue and meet drops and marks as they do unfolded. With
``engine.hybrid_fold_packet_links`` false the groups a packet may cross stay apart, and the
hybrid is the unfolded one but for the grids.
"""

from __future__ import annotations

import numpy as np

from uno.fluid.routes import route_groups
from uno.fluid.state import Routes

#: a hop's shares sum to 1 within this (the even split's float shares)
SHARE_SUM_TOLERANCE = 1e-9


def _hops(ptr: np.ndarray, w: np.ndarray):
    """Each hop of the CSR routes as (first entry, end entry)."""
    if not len(w):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    gstart, _ = route_groups(ptr, w)
    starts = np.flatnonzero(np.r_[True, gstart[1:] != gstart[:-1]])
    ends = np.r_[starts[1:], len(gstart)]
    return starts, ends


def fold_groups(
    routes: Routes, link_rows: np.ndarray, delay_ps: np.ndarray, apart=()
) -> list[tuple]:
    """The groups of links the routes allow to fold (sorted link ids, at least two each): the
    link sets of split hops with even shares, over alike links (``link_rows``: their initial
    ``LS_*`` rows, ``delay_ps`` their propagation), no link of which any other hop crosses or
    ``apart`` holds."""
    owner: dict[int, tuple] = {}
    bad: set[int] = {int(x) for x in apart}
    for ptr, link, w in ((routes.rt_ptr, routes.rt_link, routes.rt_w),
                         (routes.rv_ptr, routes.rv_link, routes.rv_w)):  # fmt: skip
        starts, ends = _hops(ptr, w)
        seen: set[tuple] = set()
        for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
            hop = tuple(sorted(link[a:b].tolist()))
            if hop in seen:
                continue
            seen.add(hop)
            shares = w[a:b]
            even = (
                b - a > 1
                and len(set(hop)) == b - a
                and (shares == shares[0]).all()
                and abs(shares.sum() - 1.0) <= SHARE_SUM_TOLERANCE
            )
            if not even:
                bad.update(hop)
                continue
            for x in hop:
                if owner.setdefault(x, hop) != hop:
                    bad.update(hop)
                    bad.update(owner[x])
    # (a link belongs to one group at most, so a group with a link that cannot fold is dropped
    # alone)
    groups = {g for g in owner.values() if not bad.intersection(g)}
    alike = []
    for g in sorted(groups):
        idx = np.asarray(g, dtype=np.int64)
        if (link_rows[idx] == link_rows[idx[0]]).all() and (
            delay_ps[idx] == delay_ps[idx[0]]
        ).all():
            alike.append(g)
    return alike


def _fold_csr(ptr, link, w, link_rep: np.ndarray, fold: np.ndarray):
    """The CSR routes with each hop over a folded group (``fold`` of its first link > 1) as
    one entry at that link, share 1."""
    starts, ends = _hops(ptr, w)
    keep = np.ones(len(link), dtype=bool)
    new_w = w.copy()
    for a, b in zip(starts.tolist(), ends.tolist(), strict=True):
        if b - a > 1 and fold[link_rep[link[a]]] > 1:
            keep[a + 1 : b] = False
            new_w[a] = 1.0
    new_link = link_rep[link]
    new_ptr = np.r_[0, np.cumsum(keep)][ptr].astype(np.int64)
    return new_ptr, new_link[keep], new_w[keep]


def fold_links(routes: Routes, link_rows: np.ndarray, delay_ps: np.ndarray, apart=()):
    """The routes with their foldable groups (:func:`fold_groups`) folded, each link's group
    size (1: alone) and the link that stands for it (``link_rep``, itself if alone)."""
    n_links = len(link_rows)
    fold = np.ones(n_links)
    link_rep = np.arange(n_links, dtype=np.int64)
    groups = fold_groups(routes, link_rows, delay_ps, apart)
    for g in groups:
        idx = np.asarray(g, dtype=np.int64)
        link_rep[idx] = idx[0]
        fold[idx[0]] = len(idx)
    if not groups:
        return routes, fold, link_rep
    rt = _fold_csr(routes.rt_ptr, routes.rt_link, routes.rt_w, link_rep, fold)
    rv = _fold_csr(routes.rv_ptr, routes.rv_link, routes.rv_w, link_rep, fold)
    return Routes(*rt, *rv), fold, link_rep


def members(link_rep: np.ndarray):
    """The links each link stands for, as CSR (pointers, links): itself alone, a folded
    group's first link its group, the others none."""
    order = np.argsort(link_rep, kind="stable")
    counts = np.bincount(link_rep, minlength=len(link_rep))
    ptr = np.zeros(len(link_rep) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return ptr, order.astype(np.int64)

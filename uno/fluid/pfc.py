"""PFC in the fluid engine (``switch.pfc.enabled``): pauses as fractions of a step.

The packet engine's model (:mod:`uno.net.pfc`): a switch counts, per ingress queue (one per
incoming link of the lossless data class), the bytes that entered through that link and have
not left the switch; above Xoff it pauses the upstream port, at Xon or below it resumes it.
The same switches get ingress queues here, with the same thresholds
(:func:`uno.net.pfc.lossless_switches`, :func:`uno.net.pfc.switch_thresholds`).

An ingress queue's level is the flows' bytes queued at the switch's egress links that entered
through that link: a route entry's bytes at a link (``EF_Q``) entered its switch through the
link of the route's previous hop (a split hop's links each by its share of the flow's bytes), a
subflow's (UnoLB, PLB, REPS) through the link its previous hop takes at the step.
After each step's links (:func:`pfc_step`), an ingress queue above Xoff starts pausing its
link; while it pauses, the link is paused in the next step for the share of the step its
level takes to drain to Xon at the rate it drained in this step (all of it when it did not
drain), and the pause ends once the level is at Xon or below. A link paused for a share ``x``
of a step serves (1 - x) of its line rate in it (``LS_PAUSE``: :func:`uno.fluid.links.step_link`;
a host's NIC shares (1 - x) of its line among its flows: :func:`uno.fluid.kernels.nic_data_room`);
its queue grows meanwhile and may pause the links into its own switch in turn, so pauses
propagate upstream hop by hop. The decision acts one step after the levels that made it, which
stands for the PAUSE frame's way to the upstream port (a link's propagation, about a step).

A byte that joins a paused link's queue waits for the bytes ahead of it to leave at the line
the link keeps, not at its full line: its queueing delay (``LS_DELAY``, which times the flows'
RTT samples and ACKs, :mod:`uno.fluid.signals`) is its level over its line rate times the
share of the last intra-DC base RTT, and at least of the last four steps, it was not paused (a
moving mean, :data:`MAX_MEAN_WEIGHT`). Timed by the full line,
the ACKs of a sprayed incast's bytes behind links paused three quarters of the time came back
before the bytes had crossed the receiver's link, and its flows finished with 3 MB of their
8 MB still queued.

Only the data class is modelled (PFC's one lossless priority here; the ACKs' bytes are not
counted in the ingress levels, though a paused link holds them with the data).

Units: time in ps, sizes in bytes.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.core.layout import layout
from uno.fluid.columns import (
    EF_Q,
    FX_FIRST,
    FX_NETQ,
    LS_CAP,
    LS_DELAY,
    LS_DROPF,
    LS_PAUSE,
    LS_Q,
    LS_TX,
    LS_TX_AT,
    LS_TX_BEFORE,
)
from uno.net.pfc import lossless_switches, switch_thresholds
from uno.topo.base import SWITCH

#: the columns of an ingress queue's row (float64): its link, Xoff and Xon (bytes), its level
#: now and at the last step (bytes), 1 while it is on the live list (``pf_live``), 1 while it
#: pauses, the pauses it started, the time its link was paused (ps), its largest level
#: (bytes), the share of the time its link was paused lately (a moving mean over ``mean_ps``,
#: ps); in the hybrid, 1 where the packets' kernel decides its pauses, its fluid level counting
#: there with its packets' bytes, the time its link was paused up to the last step by the
#: kernel's signals (ps) and the bytes its packets had brought in then
#: (:mod:`uno.fluid.hybrid_pfc`)
PF = layout("PfcIngress", ("link", "xoff", "xon", "level", "prev_level", "listed", "pausing",
                           "pauses", "paused_ps", "max_level", "paused_mean", "mean_ps",
                           "shared", "signalled_ps", "arrived_seen"))  # fmt: skip
#: a paused link's queueing delay: its queue over the line rate it keeps, at least this share
MIN_SERVED = 1e-3
#: the largest weight of a step in the moving mean of a link's paused share: the mean spans at
#: least four steps, so one step paused whole (a step of an intra-DC RTT, settled) does not time
#: the link's queue as never served (a thousand times its drain: an incast's flows stalled for
#: 9-18 ms at ``engine.fluid_step_settled_rtt=1``)
MAX_MEAN_WEIGHT = 0.25


class _Up:
    """An incoming link as :func:`uno.net.pfc.switch_thresholds` reads it."""

    def __init__(self, edge):
        self.name = edge.edge_id
        self.kind = edge.kind
        self.rate_bps = edge.rate_bps
        self.delay_ps = edge.delay_ps
        self.edge = edge


def pfc_rows(cfg, scenario) -> tuple[np.ndarray, np.ndarray]:
    """The ingress queues' rows (``PF``; none without ``switch.pfc.enabled``) and each link's
    row among them (-1: none). A link's paused share is averaged over the intra-DC base RTT,
    about a pause's cycle (Xoff's headroom is sized by a link's round trip)."""
    routing = scenario.routing
    n_links = len(routing.edges)
    row_of = np.full(n_links, -1, dtype=np.int64)
    if not cfg.switch.pfc.enabled:
        return np.zeros((0, PF.size)), row_of
    nodes = routing.topo.nodes
    incoming: dict[int, list] = {}
    for e in routing.edges:
        if nodes[e.dst].kind == SWITCH:
            incoming.setdefault(e.dst, []).append(_Up(e))
    rows = []
    for node, ups in lossless_switches(incoming, cfg.switch.pfc.port_kinds).items():
        buffer = min(routing.edges[o].buffer_bytes for o in routing.out_edges[node])
        xoff, xon, _rooms = switch_thresholds(nodes[node].name, ups, buffer, cfg.switch.pfc,
                                              scenario.data_bytes)  # fmt: skip
        for up in ups:
            row = np.zeros(PF.size)
            row[PF.link] = up.edge.edge_id
            row[PF.xoff] = xoff
            row[PF.xon] = xon
            row[PF.mean_ps] = scenario.intra_ref.base_rtt_ps
            row_of[up.edge.edge_id] = len(rows)
            rows.append(row)
    return np.array(rows).reshape(-1, PF.size), row_of


def entry_ingress(rt_ptr, rt_link, rt_w, gstart, row_of) -> tuple:
    """Which ingress queues each route entry's queued bytes count in (CSR ``ptr``, ``row``,
    ``w``): the previous hop's links that are PFC ingress links, each by its share of the
    flow's bytes (a one-link hop: all of them)."""
    counts = np.zeros(len(rt_link) + 1, dtype=np.int64)
    rows, weights = [], []
    per_entry: list[list] = [[] for _ in range(len(rt_link))]
    for f in range(len(rt_ptr) - 1):
        lo, hi = int(rt_ptr[f]), int(rt_ptr[f + 1])
        prev: list[int] = []
        j = lo
        while j < hi:
            g = int(gstart[j])
            hop = [e for e in range(j, hi) if int(gstart[e]) == g]
            for e in hop:
                per_entry[e] = [
                    (row_of[rt_link[p]], rt_w[p]) for p in prev if row_of[rt_link[p]] >= 0
                ]
            prev = hop
            j = hop[-1] + 1
    for e, pairs in enumerate(per_entry):
        counts[e + 1] = len(pairs)
        for r, w in pairs:
            rows.append(r)
            weights.append(w)
    return (np.cumsum(counts).astype(np.int64), np.array(rows, dtype=np.int64),
            np.array(weights, dtype=np.float64))  # fmt: skip


def live_list(n_rows: int) -> np.ndarray:
    """The ingress queues :func:`pfc_step` visits (``pf_live``): their count, then their rows
    (none at the start)."""
    return np.zeros(n_rows + 1, dtype=np.int64)


@njit(cache=True, error_model="numpy")
def pfc_step(k, dt_ps, n_active, active, fx, rt_ptr, ef, ls, pfc, pf_ptr, pf_row, pf_w,
             pf_live, pf_of, sub_n, sub_hops, sub_links) -> None:  # fmt: skip
    """After step ``k``'s links: each ingress queue's level from the running flows' queued
    bytes, its pause state (Xoff / Xon), and the share of the next step its link is paused
    (``LS_PAUSE``); see the module docstring. A flow on subflows (UnoLB, PLB, REPS: ``sub_n``
    of them, ``sub_hops`` hops each over ``sub_links``) counts each subflow's bytes queued at a
    hop in the ingress queue of the link its previous hop takes now (``pf_of``: each link's
    row, -1: none), as a balancer that moves the subflow moves its bytes' ingress with it.

    Only the queues on the live list (``pf_live``: its count, then their rows) are visited:
    those that held bytes, paused or were paused lately (a moving mean above 0) at the last
    step, and those the flows' queued bytes reach now. Every other queue is empty, does not
    pause and was not paused lately, so a visit would change nothing of it: the cost of a step
    follows the queues in use, not the fabric's size (on Gear's two-datacenter fabric, 576
    queues, a visit to each took more than half of a step of its three flows). A flow with
    nothing in the network (``FX_NETQ``) holds no queued bytes, and none before its first
    hop that holds some (``FX_FIRST``)."""
    n_live = pf_live[0]
    for i in range(n_live):
        pfc[pf_live[1 + i], PF.level] = 0.0
    base = rt_ptr[rt_ptr.shape[0] - 1]  # (subflow hop entries from here: uno.fluid.forward)
    n_sub_max, n_hop_max = sub_links.shape[1], sub_links.shape[2]
    for a in range(n_active):
        f = active[a]
        if fx[f, FX_NETQ] <= 0.0:
            continue
        first = int(fx[f, FX_FIRST])
        n_s = sub_n[f]
        if n_s > 0:  # (FX_FIRST: the first hop index at which any subflow holds bytes)
            for s in range(n_s):
                j0 = base + (f * n_sub_max + s) * n_hop_max
                for h in range(max(first, 1), sub_hops[f]):
                    q = ef[j0 + h, EF_Q]
                    r = pf_of[sub_links[f, s, h - 1]] if q > 0.0 else -1
                    if r >= 0:
                        n_live = add_level(pfc, pf_live, n_live, r, q)
            continue
        for e in range(max(rt_ptr[f], first), rt_ptr[f + 1]):
            q = ef[e, EF_Q]
            if q > 0.0:
                for j in range(pf_ptr[e], pf_ptr[e + 1]):
                    n_live = add_level(pfc, pf_live, n_live, pf_row[j], q * pf_w[j])
    kept = 0
    for v in range(n_live):
        i = pf_live[1 + v]
        level = pfc[i, PF.level]
        if pfc[i, PF.shared] != 0.0:  # (the hybrid's kernel decided the share of this step)
            mean = pause_link(dt_ps, ls, pfc, i, ls[int(pfc[i, PF.link]), LS_PAUSE])
            if level > 0.0 or mean > 0.0:
                pf_live[1 + kept] = i
                kept += 1
            else:
                pfc[i, PF.listed] = 0.0
            continue
        drained = drained_bytes(k, dt_ps, ls, pfc, i, level)
        if pfc[i, PF.pausing] == 0.0:
            if level > pfc[i, PF.xoff]:
                pfc[i, PF.pausing] = 1.0
                pfc[i, PF.pauses] += 1.0
        elif level <= pfc[i, PF.xon]:
            pfc[i, PF.pausing] = 0.0
        share = 0.0
        if pfc[i, PF.pausing] > 0.0:
            share = drain_share(level - pfc[i, PF.xon], drained)
        mean = pause_link(dt_ps, ls, pfc, i, share)
        if level > 0.0 or pfc[i, PF.pausing] > 0.0 or mean > 0.0:
            pf_live[1 + kept] = i
            kept += 1
        else:
            pfc[i, PF.listed] = 0.0
    pf_live[0] = kept


@njit(cache=True, inline="always")
def add_level(pfc, pf_live, n_live, r, q) -> int:
    """``q`` bytes into ingress queue ``r``'s level, the queue put on the live list if it is
    off it (its level then 0); returns the list's length."""
    if pfc[r, PF.listed] == 0.0:
        pfc[r, PF.listed] = 1.0
        pf_live[1 + n_live] = r
        n_live += 1
    pfc[r, PF.level] += q
    return n_live


@njit(cache=True, inline="always")
def drained_bytes(k, dt_ps, ls, pfc, i, level) -> float:
    """The bytes that left the switch in step ``k`` of those that entered through ingress
    queue ``i``'s link, whose level is ``level`` now (its peak and last level kept): the level
    at the last step plus the bytes the link brought in, less the level now."""
    link = int(pfc[i, PF.link])
    # (the link sent nothing unless it was stepped in this step, which began at k dt_ps)
    stepped = ls[link, LS_TX_AT] == k * dt_ps
    sent = ls[link, LS_TX] - ls[link, LS_TX_BEFORE] if stepped else 0.0
    drained = pfc[i, PF.prev_level] + sent - level
    pfc[i, PF.prev_level] = level
    if level > pfc[i, PF.max_level]:
        pfc[i, PF.max_level] = level
    return drained


@njit(cache=True, inline="always")
def drain_share(over, drained) -> float:
    """The share of the next step a pausing queue ``over`` bytes above Xon takes to reach it,
    draining as in the last step (``drained`` bytes): all of it when it did not drain that
    much."""
    return over / drained if drained > over else 1.0


@njit(cache=True, inline="always")
def pause_link(dt_ps, ls, pfc, i, share) -> float:
    """Ingress queue ``i``'s link paused for ``share`` of the next step (``LS_PAUSE``), its
    paused time and moving mean counted; returns the mean. The bytes queued at a link that
    pauses wait for the line it keeps, not its full line (``LS_DELAY``, the delay the flows'
    RTT samples and ACKs take: uno.fluid.signals)."""
    link = int(pfc[i, PF.link])
    ls[link, LS_PAUSE] = share
    pfc[i, PF.paused_ps] += share * dt_ps
    weight = min(MAX_MEAN_WEIGHT, dt_ps / pfc[i, PF.mean_ps])
    mean = pfc[i, PF.paused_mean] + weight * (share - pfc[i, PF.paused_mean])
    pfc[i, PF.paused_mean] = mean
    if mean > 0.0:
        ls[link, LS_DELAY] = ls[link, LS_Q] / (ls[link, LS_CAP] * max(1.0 - mean, MIN_SERVED))
    return mean


def pfc_summary(sim) -> dict:
    """The run summary's ``pfc`` block, with the packet engine's fields
    (:func:`uno.net.pfc.pfc_summary`): a pause interval is a pause an ingress queue started;
    ``lossless_violations``: the fluid flows' data packets the links out of lossless switches
    dropped (in the hybrid the packets' own are the packet engine's count)."""
    pfc = sim.pfc
    routing = sim.scenario.routing
    lossless = {int(routing.edges[int(link)].dst) for link in pfc[:, PF.link]}
    out = [e.edge_id for e in routing.edges if e.src in lossless]
    dropped = float(sim.ls[out, LS_DROPF].sum()) if out else 0.0
    n_switches = sum(1 for n in routing.topo.nodes if n.kind == SWITCH)
    paused = pfc[:, PF.pauses] > 0
    return {
        "ingress_queues": len(pfc),
        "lossy_switches": n_switches - len(lossless),
        "pause_frames": int(pfc[:, PF.pauses].sum()),
        "pause_intervals": int(pfc[:, PF.pauses].sum()),
        "ports_paused": int(paused.sum()),
        "total_pause_us": float(pfc[:, PF.paused_ps].sum() / 1e6),
        "max_ingress_bytes": float(pfc[:, PF.max_level].max(initial=0.0)),
        "lossless_violations": int(round(dropped / sim.scenario.data_bytes)),
    }

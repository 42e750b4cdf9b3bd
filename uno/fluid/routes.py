"""The routes of the fluid engine's flows, built once in Python from the scenario: each flow's
ECMP path (the packet engine's switches' hash, :func:`uno.fluid.balance.ecmp_routes`), an
even split over its equal-cost paths (spraying), or UnoLB's subflows; the routes as the
kernels' CSR arrays (:data:`uno.fluid.state.Routes`), their hop structure, and the time to
drain their buffers.

Units: time in ps, rates in bytes/ps (``BYTES_PER_PS_PER_BPS`` converts bit/s).
"""

from __future__ import annotations

import numpy as np

from uno.core.errors import ConfigError
from uno.core.rng import RngStreams
from uno.core.units import BITS_PER_BYTE, PS_PER_S, us_to_ps
from uno.fluid.balance import (
    PLB_FRACTION,
    PLB_LOSS_AT,
    PLB_ON,
    PLB_ON_LOSS,
    PLB_ROUNDS,
    PLB_START,
    PLB_STATE,
    REPS_FROZEN,
    REPS_NEXT,
    REPS_START,
    REPS_STATE,
    UNO_SILENT,
    ecmp_routes,
)
from uno.fluid.state import Routes, Subflows
from uno.lb.base import ENTROPY_SPACE
from uno.net.hashing import ecmp_index, flow_hash_key
from uno.scenario import Scenario, is_switch_port
from uno.topo.base import HOST

#: bytes/ps per bit/s
BYTES_PER_PS_PER_BPS = 1.0 / (BITS_PER_BYTE * PS_PER_S)
#: balancers the fluid engine routes: one hashed path, or an even split
SINGLE_PATH_LB = ("ecmp",)
SPLIT_LB = ("spray",)
#: balancers with a fluid law of their own (subflows on hashed paths that move on losses)
SUBFLOW_LB = ("unolb", "plb", "reps")
#: balancers whose packet senders send each packet of a flow its own way (its consecutive
#: packets cross different links between the first hop and the last)
PER_PACKET_LB = ("spray", "unolb", "reps")


def switch_index(routing) -> dict[int, int]:
    """Each switch node's index among the switches (the order of the scenario's ECMP salts)."""
    index: dict[int, int] = {}
    for i, node in enumerate(routing.topo.nodes):
        if node.kind != HOST:
            index[i] = len(index)
    return index


def ecmp_path_edges(
    scenario: Scenario, src: int, dst: int, entropy: int, switch_index
) -> list[int]:
    """Edge ids of the path the packet engine's switches hash (src, dst, entropy) onto, walked
    in Python as the Python data plane's switches choose (the reference the kernels' walk,
    :func:`uno.fluid.balance.ecmp_path`, is tested against)."""
    routing = scenario.routing
    node = routing.host_nodes[src]
    target = routing.host_nodes[dst]
    key = flow_hash_key(src, dst, entropy)
    edges = []
    while node != target:
        hops = routing.next_hops[node][dst]
        if len(hops) == 1:
            e = hops[0]
        else:
            salt = scenario.ecmp_salts[switch_index[node]]
            e = hops[ecmp_index(key, salt, len(hops))]
        edges.append(e)
        node = routing.edges[e].dst
    return edges


def split_path(scenario: Scenario, src: int, dst: int) -> list[tuple[int, float]]:
    """(edge id, share of the flow's bytes) with an even split over equal-cost next hops at
    every node, in hop order."""
    routing = scenario.routing
    level = {routing.host_nodes[src]: 1.0}
    target = routing.host_nodes[dst]
    out: list[tuple[int, float]] = []
    while level and target not in level:
        nxt: dict[int, float] = {}
        for node, w in level.items():
            hops = routing.next_hops[node][dst]
            share = w / len(hops)
            for e in hops:
                out.append((e, share))
                d = routing.edges[e].dst
                nxt[d] = nxt.get(d, 0.0) + share
        level = nxt
    return out


def routes_by_pair(src: np.ndarray, dst: np.ndarray, route_of):
    """Every flow's route as the kernels' CSR (pointers, edge ids, shares), ``route_of(s, d)``
    giving the (edge ids, shares) of the pair (s, d), called once per pair."""
    per_pair: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    links, shares = [], []
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        route = per_pair.get((s, d))
        if route is None:
            route = per_pair[(s, d)] = route_of(s, d)
        links.append(route[0])
        shares.append(route[1])
    rt_ptr = np.zeros(len(links) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in links], out=rt_ptr[1:])
    if not links:
        return rt_ptr, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return rt_ptr, np.concatenate(links), np.concatenate(shares)


def split_routes(scenario: Scenario, src: np.ndarray, dst: np.ndarray):
    """Every flow's even split over its equal-cost paths (:func:`split_path`) as the kernels'
    CSR: pointers, edge ids and shares of the rate."""

    def split(s: int, d: int):
        hops = split_path(scenario, s, d)
        return (np.array([e for e, _ in hops], dtype=np.int64),
                np.array([w for _, w in hops], dtype=np.float64))  # fmt: skip

    return routes_by_pair(src, dst, split)


def cycled_ack_routes(src: np.ndarray, dst: np.ndarray, n_paths: int, max_hops: int, tables):
    """The ACKs' routes back from each flow's receiver ``dst`` to its sender ``src`` when the
    receiver sends its ACKs on entropies 0 .. ``n_paths`` - 1 in turn (``transport.ack_paths``,
    :func:`uno.net.hashing.ack_path_entropy`), each hashed on (receiver, sender, entropy) as the
    switches hash it: hop by hop, the links those paths take, each with the share of the paths
    that take it (a round robin's long-run share), as the kernels' CSR (pointers, edge ids,
    shares). Computed once per (sender, receiver) pair."""
    entropy = np.arange(n_paths, dtype=np.int64)

    def cycled(s: int, d: int):
        links, hops = ecmp_routes(np.full(n_paths, d), np.full(n_paths, s), entropy, max_hops,
                                  *tables)  # fmt: skip
        if (hops != hops[0]).any():
            raise ConfigError(
                "transport.ack_paths",
                f"the fluid engine splits ACKs over paths of one length; host {d}'s ACK "
                f"paths to host {s} take {hops.min()} to {hops.max()} hops",
            )
        used = [np.unique(links[:, h], return_counts=True) for h in range(int(hops[0]))]
        return (np.concatenate([u for u, _ in used]).astype(np.int64),
                np.concatenate([c / n_paths for _, c in used]))  # fmt: skip

    return routes_by_pair(src, dst, cycled)


def routing_arrays(scenario: Scenario, switch_index: dict[int, int], needed: bool):
    """The routing tables as arrays for :func:`uno.fluid.balance.ecmp_path` (host nodes, CSR of
    the next hops per (node, destination host), edge heads, switch salts); empty when not
    ``needed``."""
    routing = scenario.routing
    if not needed:
        empty = np.zeros(1, dtype=np.int64)
        return empty, empty, empty, empty, np.zeros(1, dtype=np.uint64)
    ptr, flat = routing.next_hop_table()
    salt = np.zeros(len(routing.topo.nodes), dtype=np.uint64)
    for node, idx in switch_index.items():
        salt[node] = np.uint64(scenario.ecmp_salts[idx])
    return (
        np.asarray(routing.host_nodes, dtype=np.int64),
        ptr,
        flat,
        np.asarray([e.dst for e in routing.edges], dtype=np.int64),
        salt,
    )


def balancer_draws(rng: RngStreams, specs, count: int) -> np.ndarray:
    """The first ``count`` U[0,1) draws of each flow's balancer stream ``lb/<flow id>`` (the
    packet balancers' stream), one row per flow."""
    names = [f"lb/{s.flow_id}" for s in specs]
    if len(set(names)) == len(names):
        return rng.first_uniforms(names, count)
    # flows with one id share a stream, each drawing after the one before (as packet flows)
    return np.array(
        [[buf.next() for _ in range(count)] for buf in map(rng.buffered, names)]
    ).reshape(len(names), count)


def csr_routes(links: np.ndarray, hops: np.ndarray):
    """Single-path routes (``links[i, :hops[i]]``) as the kernels' CSR: pointers, edge ids
    and weights (1: the flow's whole rate)."""
    rt_ptr = np.zeros(len(hops) + 1, dtype=np.int64)
    np.cumsum(hops, out=rt_ptr[1:])
    rt_link = links[np.arange(links.shape[1]) < hops[:, None]]
    return rt_ptr, rt_link, np.ones(len(rt_link), dtype=np.float64)


def route_drains_ps(
    routing, rt_ptr: np.ndarray, rt_link: np.ndarray, rt_w: np.ndarray
) -> np.ndarray:
    """Per route (CSR, ``rt_w`` its entries' shares), the time in ps to drain a full buffer at
    every switch port of its longest path: hop by hop (:func:`route_groups`), the longest drain
    among the hop's links (a split hop's links are alternatives: a byte crosses one of them),
    added in route order."""
    per_edge = np.array(
        [e.buffer_bytes / (e.rate_bps * BYTES_PER_PS_PER_BPS) if is_switch_port(routing, e) else 0.0
         for e in routing.edges],
        dtype=np.float64,
    )  # fmt: skip
    # (an entry of no share adds nothing: the ACKs' way back with switch.ack_priority, whose
    # ACKs skip the switches' data queues, ack_priority_routes)
    per_entry = np.where(rt_w > 0.0, per_edge[rt_link], 0.0)
    gstart, _ = route_groups(rt_ptr, rt_w)
    # each hop's longest drain, at its first entry; the other entries of a split hop add nothing
    hop_drain = np.zeros(len(per_entry))
    np.maximum.at(hop_drain, gstart, per_entry)
    n = len(rt_ptr) - 1
    counts = np.diff(rt_ptr)
    drain = np.zeros(n)
    # one route position at a time, so that every route's sum is added left to right
    for j in range(int(counts.max(initial=0))):
        has = np.nonzero(counts > j)[0]
        drain[has] = drain[has] + hop_drain[rt_ptr[has] + j]
    return drain


def route_groups(rt_ptr: np.ndarray, rt_w: np.ndarray):
    """Per route entry, the first entry of its hop and the first of the next hop (-1: none):
    a route lists its links hop by hop, the shares of one hop summing to 1 (one link with
    weight 1, or the links of an even split)."""
    gstart = np.arange(len(rt_w), dtype=np.int64)
    nxt = np.full(len(rt_w), -1, dtype=np.int64)
    if len(rt_w) and (rt_w == 1.0).all():  # single paths: every entry is a hop
        nxt[:-1] = gstart[1:]
        nxt[rt_ptr[1:] - 1] = -1
        return gstart, nxt
    for f in range(len(rt_ptr) - 1):
        groups = []
        acc, first = 0.0, int(rt_ptr[f])
        for j in range(int(rt_ptr[f]), int(rt_ptr[f + 1])):
            acc += rt_w[j]
            if acc >= 1.0 - 1e-9:
                groups.append((first, j + 1))
                acc, first = 0.0, j + 1
        for (a, b), nb in zip(groups, groups[1:] + [(-1, -1)], strict=True):
            gstart[a:b] = a
            nxt[a:b] = nb[0]
    return gstart, nxt


def flow_routes(cfg, scenario: Scenario, specs, src, dst, n_sent, max_hops, rng: RngStreams,
                reps_explore=None):  # fmt: skip
    """Every flow's route and its ACKs' route back (:data:`uno.fluid.state.Routes`) and UnoLB's
    subflows (:data:`uno.fluid.state.Subflows`), by ``lb.algo``: the packet engine's ECMP path
    (a receiver's ACK carries its data packet's entropy, hashed on (dst, src, entropy) at every
    switch, uno.transport.receiver.Receiver.on_data); an even split over the equal-cost paths
    (sprayed ACKs too); or UnoLB's subflows on the paths of the packet UnoLB's first entropies
    (packet i rides subflow i mod n, uno.lb.unolb.UnoLb.next_entropy: a flow of fewer packets,
    ``n_sent`` with its parity, than subflows crosses only the first few), each with its own
    ACKs' way back, and then the seed of the reroutes' draws. With ``transport.ack_paths`` every
    flow's ACKs take the receiver's cycled entropies back (:func:`cycled_ack_routes`; a flow on
    subflows too: its ACKs do not follow them, ``lb.ack_hops`` 0). An UnoLB flow's route is its
    first subflow's (for the bounds: the ring's length). A PLB flow is one subflow, on the
    packet PLB's first entropy (``lb.plb.initial_entropy``), which PLB moves
    (:func:`uno.fluid.balance.plb_acks`). A REPS flow has ``engine.fluid_reps_paths`` subflows,
    at most its packets REPS explores first (``reps_explore``, per flow), on entropies 0, 1, ...
    (the first packets' entropies in turn), which REPS moves (:func:`uno.fluid.balance.reps_acks`)."""
    routing = scenario.routing
    n = len(specs)
    plb, reps = cfg.lb.algo == "plb", cfg.lb.algo == "reps"
    subflows = {"plb": 1, "reps": cfg.engine.fluid_reps_paths}.get(
        cfg.lb.algo, cfg.lb.unolb.subflows
    )
    subflows = subflows if cfg.lb.algo in SUBFLOW_LB else 0
    index = switch_index(routing)
    sub_n = np.zeros(n, dtype=np.int64)
    sub_hops = np.zeros(n, dtype=np.int64)
    sub_links = np.zeros((n, max(1, subflows), max_hops), dtype=np.int64)
    sub_ent = np.zeros((n, max(1, subflows)), dtype=np.int64)
    sub_rlinks = np.zeros_like(sub_links)
    sub_rhops = np.zeros(n, dtype=np.int64)
    lb_rng = np.zeros(n, dtype=np.uint64)
    ack_paths = int(cfg.transport.ack_paths)
    tables = routing_arrays(
        scenario, index, cfg.lb.algo in SINGLE_PATH_LB + SUBFLOW_LB or ack_paths > 0
    )
    if subflows:
        draws = balancer_draws(rng, specs, subflows + 1)
        sub_ent[:] = (draws[:, :subflows] * ENTROPY_SPACE).astype(np.int64)
        if plb and cfg.lb.plb.initial_entropy == "zero":
            sub_ent[:] = 0
        if reps:
            sub_ent[:] = np.arange(subflows) % cfg.lb.n_entropies
        for sf in range(subflows):
            links, hops = ecmp_routes(src, dst, sub_ent[:, sf], max_hops, *tables)
            sub_links[:, sf, :] = links
            sub_hops[:] = hops
            links, hops = ecmp_routes(dst, src, sub_ent[:, sf], max_hops, *tables)
            sub_rlinks[:, sf, :] = links
            sub_rhops[:] = hops
        sub_n[:] = np.minimum(subflows, np.maximum(n_sent, 1))
        if reps:
            sub_n[:] = np.minimum(sub_n, reps_explore)
        lb_rng[:] = (draws[:, subflows] * (1 << 53)).astype(np.uint64)
        rt = csr_routes(sub_links[:, 0, :], sub_hops)
        # the ACKs' queueing delay is each subflow's own (sub_rlinks), unless ACKs have
        # switch priority
        rv = csr_routes(sub_rlinks[:, 0, :], sub_rhops)
    elif cfg.lb.algo in SINGLE_PATH_LB:
        entropy = (balancer_draws(rng, specs, 1)[:, 0] * ENTROPY_SPACE).astype(np.int64)
        rt = csr_routes(*ecmp_routes(src, dst, entropy, max_hops, *tables))
        rv = csr_routes(*ecmp_routes(dst, src, entropy, max_hops, *tables))
    else:
        rt = split_routes(scenario, src, dst)
        rv = split_routes(scenario, dst, src)
    if ack_paths:  # the receivers' cycled entropies, whichever subflow the data took
        rv = cycled_ack_routes(src, dst, ack_paths, max_hops, tables)
        sub_rhops[:] = 0  # (no subflow has ACK hops of its own: rv is every flow's way back)
    if not subflows:
        tables = routing_arrays(scenario, index, False)
    ends = np.stack([src, dst], axis=1)
    plb_p = np.zeros(4)
    plb_s = np.zeros((n if plb else 0, PLB_STATE))
    if plb:
        p = cfg.lb.plb
        plb_p[[PLB_ON, PLB_FRACTION, PLB_ROUNDS, PLB_ON_LOSS]] = (
            1.0,
            p.congested_fraction,
            p.congested_rounds,
            float(p.repath_on_loss),
        )
        plb_s[:, [PLB_START, PLB_LOSS_AT]] = -1.0
    reps_p = np.array([1.0 if reps else 0.0, cfg.lb.n_entropies, us_to_ps(cfg.lb.reps.freeze_us)])
    reps_s = np.zeros((n if reps else 0, REPS_STATE))
    if reps:
        reps_s[:, [REPS_START, REPS_FROZEN]] = -1.0
        reps_s[:, REPS_NEXT] = reps_explore % cfg.lb.n_entropies
    # UnoLB's options (uno.fluid.balance.unolb_moving)
    uno = cfg.lb.algo == "unolb"
    uno_p = np.array([float(uno and cfg.lb.unolb.affected == "silent"),
                      float(uno and cfg.lb.unolb.reroute == "random")])  # fmt: skip
    uno_s = np.zeros((n if uno_p[UNO_SILENT] > 0.0 else 0, sub_ent.shape[1], 2))
    share = np.zeros(sub_ent.shape if reps else (0, 0))
    if reps:  # (even until the first send: uno.fluid.balance.reps_shares)
        share[:] = np.where(np.arange(share.shape[1]) < sub_n[:, None], 1.0, 0.0)
        share /= np.maximum(sub_n, 1)[:, None]
    lb = Subflows(sub_n, sub_hops, sub_links, sub_ent, np.zeros(sub_ent.shape), np.full(n, -1.0),
                  lb_rng, ends, *tables, sub_rlinks, sub_rhops,
                  np.zeros((*sub_ent.shape, 2)), plb_p, plb_s, reps_p, reps_s, uno_p,
                  uno_s, share)  # fmt: skip
    return Routes(*rt, *rv), lb


def ack_priority_routes(routes, lb: Subflows, nic_link: np.ndarray):
    """``switch.ack_priority``: the switch ports serve ACKs in a lane of their own
    (uno.net.port.ControlLane), so only the receiver's NIC queue, shared with its own data,
    delays them: the ACK routes keep weight there only, and the subflows' ACKs meet only that
    queue too (their own ACK hops dropped: ``rv_*`` is theirs). Changes ``lb.ack_hops`` in
    place; returns the routes."""
    rv_w = np.where(np.isin(routes.rv_link, nic_link), routes.rv_w, 0.0)
    lb.ack_hops[:] = 0
    return routes._replace(rv_w=rv_w)

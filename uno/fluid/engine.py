"""The fluid engine (``engine.kind=fluid``): flows as rates, queues as continuous levels.

It reads the run's :class:`uno.scenario.Scenario` (the same topology, routes, flows, switch
marking and congestion-control parameters as the packet engine) into struct-of-arrays state and
advances it in fixed steps of ``engine.fluid_step_intra_rtt`` x the intra-DC base RTT inside the
Numba kernel :func:`uno.fluid.kernels.advance`. Once only flows with longer RTTs are left to
run (the short flows of a finite workload done), the step grows with the shortest RTT left, up
to ``engine.fluid_step_max_intra_rtt`` x the intra-DC base RTT
(:meth:`FluidSimulation._grow_step`, :func:`uno.fluid.kernels.coarsen`). A flow whose RTT
spans many steps (an inter-DC flow) files what happened to its sends, drops and deliveries once
a block of steps, at most 1/``engine.fluid_blocks_per_rtt`` of its base RTT, instead of every
step, its bytes still moving every step (:meth:`FluidSimulation._set_blocks`,
:func:`uno.fluid.kernels.hold_for_block`):

- **Senders** are window-based, as the packet transports: in each step a flow sends what its
  window allows, at most at its NIC rate, or at cwnd / base RTT when its controller paces, and
  at most what it has left (new bytes or bytes to resend). The window counts in whole packets
  as the packet sender's (a packet goes while the bytes in flight are below cwnd: cwnd rounded
  up to whole packets may be in flight). The flows of
  one host share its NIC as the packet hosts do (round robin, one packet each: max-min shares
  of the line, by one round of water filling), so a host never queues behind itself.
- **Links** are queues with a continuous level: arrivals minus departures at line rate, tail
  drop beyond the buffer. They advance hop by hop within a step (:func:`uno.fluid.kernels.forward`):
  a link's arrivals are the flows' sends at their first hop and what the links before it let
  go in the same step, each flow's bytes at a link leaving in the link's departures / (queue +
  arrivals) share, so bytes are conserved link by link (a byte dropped upstream never reaches
  the next link). A byte reaches the links of its route in the step it is sent, up to its
  WAN link; what leaves that link (a route's longest, when its propagation is at least the
  intra-DC base RTT) crosses its propagation in the flow's delay line and reaches the next
  hop that much later (``engine.fluid_wire``, on by default;
  :func:`uno.fluid.kernels.forward`): the receiving datacenter's links see an inter-DC flow's
  bytes half its base RTT after the send, as with packets. The rest of the base RTT (every
  other link's propagation, and the way back) is on the ACKs' way back. UnoLB's subflows
  cross their WAN link's propagation the same way, each to its own next hop (two delay-line
  columns a subflow). Phantom queues take the same arrivals
  and drain at their own rate. A byte leaving a link is marked with RED's probability at the
  (phantom) queue level, as the packet ports' ``set_marking`` sources say.
- **Feedback is delayed by each flow's own RTT**: what the network did to a step's bytes
  (acknowledged, marked, lost; the RTT sample = base RTT + queueing delay on the path + that
  of the ACKs on their way back, which wait in the reverse path's data queues) enters a
  per-flow delay line and reaches the controller one RTT later, so an inter-DC flow reacts ~128x
  later than an intra-DC one. A loss is detected a retransmission timeout after it (the packet
  engine's RTO rule; ``transport.dupack_threshold`` > 0: once that many packets sent after it
  are acknowledged), or, for erasure-coded flows, only when its block cannot be decoded: of the
  packets a coded flow loses to the links, those in blocks with more than m of their n + m
  packets lost (each lost with the drop fraction they met) are resent after the receiver's
  block timer, or after the sender's retransmission timeout when none of the block's packets
  arrived (the receiver has nothing to NACK); the others decode with their blocks
  (:func:`uno.fluid.kernels.coded_loss_shares`).
- **A full queue drops by its inputs' packet phases** (``engine.fluid_phase_drops``, on by
  default; :func:`uno.fluid.kernels.input_drop_shares`). A packet port whose buffer is full
  frees one slot per departure, and the first packet to arrive after it takes the slot: a link
  sending back to back at the full queue's own rate delivers its packets at a fixed phase of
  that queue's departure grid, and the input whose phase comes first takes every slot it
  wants while the one behind it loses nearly everything (drop-tail lock-out, Floyd &
  Jacobson 1992). So the fluid link's drops (its total is the fluid queue's) fall on its
  inputs (the link before each route entry) by the chance that their packets are not first
  in their packet time: grid inputs at their phase, others at random phases. A link's grid
  starts at a random phase (the run's seed) when its busy period begins, or on the grid of
  the one link that feeds it, passes on the grid of a single feeding link while not full,
  and drifts by the ACKs it carries (each delays the departures after it by its own
  transmission time; :func:`uno.fluid.kernels.ack_drift`). With it off, every byte arriving at
  a full queue loses the same share.
- **Losses are whole packets.** A link drops the fraction of its arrivals that overflows the
  buffer (by input, above); a flow whose ``n`` packets reached links that dropped a fraction
  ``p`` of them in a step loses a binomial number (``n``, ``p``) of packets (drawn from the flow's own stream;
  the mean from 20 up; :func:`uno.fluid.kernels.dropped_packets`), so a short flow crossing a lossy
  link loses a packet now and then and finishes untouched otherwise, rather than losing a
  sliver of every step and timing out every time (which doubled the short flows' timeouts on
  the Uno Fig. 10 traffic). A slice of a packet that met a link dropping all of it (a FIFO
  share lets a packet out over several steps) is a whole packet lost with the chance slice /
  packet, and a flow of less than a data packet has one packet, of its own size. Fast
  retransmit (``transport.dupack_threshold`` > 0) sees a loss once that many packets sent
  after it are acknowledged; what it misses waits for the retransmission timer, which runs
  from the lost bytes' send (at the latest their flow's last).
- **Controllers**: fluid laws of UnoCC, DCTCP, GEMINI, MP-RDMA and BBR v1 (the law of
  :mod:`uno.cc.bbr`, PROBE_RTT included, given each batch's delivery-rate sample over the
  batch's flight time) in
  :mod:`uno.fluid.kernels`, applied to each step's batch of ACKs with the same parameters as the
  packet controllers (the derived constants are read from the packet controller objects built
  for each flow, so the two can never disagree on a parameter). "Any packet of the epoch/window was marked" becomes "the
  expected number of marked packets, carried over, reached one".
- **Load balancing**: ECMP flows take exactly the path the packet engine's switches hash them
  to (same entropy stream, hash and salts); packet spraying splits a flow evenly over its
  equal-cost next hops at every switch (its long-run share of each path); UnoLB (Uno paper
  §4.2, Alg. 2) keeps ``lb.unolb.subflows`` subflows on the paths of the packet UnoLB's first
  entropies, sends an equal share on each (its round robin), and on every loss report (timeout,
  or NACK of a coded flow), at most once per base RTT, moves the subflows that lost bytes since
  the last report onto the path of a random subflow that did not (``reroute: recent_ack``; a
  fresh random entropy, hashed as the switches do, when every subflow lost). A coded block's
  packets ride subflow j mod n, each lost with its subflow's drop fraction in the step
  (Poisson-binomial: :func:`uno.fluid.kernels.spread_loss_shares`).

Not modelled, and refused with a message naming the setting: link failures and random losses
(``faults``), PLB and REPS (an even split ignores exactly what they do: for UnoLB it lost 2.6x
the packet engine's bytes on the Uno Fig. 10 traffic, hence its own law above), UnoLB's
``affected: silent`` and ``reroute: random`` options.

**ACKs** (``engine.fluid_ack_bytes``, on by default; :func:`uno.fluid.kernels.acks_out`): each
data packet delivered sends one ACK (64 B per 4,160-B data packet) back along the flow's ACK
route, as bytes in the queues where ACKs share the data queue (every port of the reverse route;
with ``switch.ack_priority`` only the receiver's NIC, the switches serving ACKs in a lane of
their own): they take line time and buffer there, and count in the phantom queue as
``switch.phantom.count_acks`` says. The queueing delay they meet on the way back is in the RTT.
Not modelled: ACK drops. A full buffer's leftover bytes take a 64-B ACK where a data packet does
not fit, so the packet ports drop far fewer ACKs than data (5% against 54% at the WAN ports of
the 40%-load Fig. 10 run when they dropped data); the fluid drops none.

Units: times in ps, sizes in bytes, rates in bytes/ps inside the kernels.
"""

from __future__ import annotations

import math
import resource
import time

import numpy as np
import pandas as pd

from uno.cc.adapter import make_cc
from uno.cc.registry import KIND, LAW_BY_NAME
from uno.core.arrays import concat_ranges
from uno.core.budget import WallBudget
from uno.core.errors import ConfigError
from uno.core.packet import flow_hash_key, mix64
from uno.core.rng import RngStreams
from uno.core.units import BITS_PER_BYTE, PS_PER_S, PS_PER_US, ms_to_ps, us_to_ps
from uno.fluid import kernels as K
from uno.fluid.memory import DELAY_LINES, zeros_aligned
from uno.lb.base import ENTROPY_SPACE
from uno.metrics.flows import FLOW_COLUMNS, flows_frame
from uno.metrics.progress import Snapshot
from uno.metrics.result import RunResult
from uno.metrics.summary import class_summary
from uno.scenario import Scenario, is_switch_port, port_names, stop_flags
from uno.topo.base import HOST

#: the signals a law may read (uno.cc.law.Law.signals) that the fluid engine computes
FLUID_SIGNALS = ("ecn", "rtt", "rtt_min", "delivery_rate", "queueing")
#: controllers the fluid engine runs: the laws whose signals it computes
FLUID_CC = {name: K.CC_LAW + KIND[name] for name, law in LAW_BY_NAME.items()
            if set(law.signals) <= set(FLUID_SIGNALS)}  # fmt: skip
#: balancers the fluid engine routes: one hashed path, or an even split
SINGLE_PATH_LB = ("ecmp",)
SPLIT_LB = ("spray",)
#: balancers with a fluid law of their own (subflows on hashed paths that move on losses)
SUBFLOW_LB = ("unolb",)
#: bytes/ps per bit/s
_BPS = 1.0 / (BITS_PER_BYTE * PS_PER_S)


def check_fluid_support(cfg, engine: str = "fluid", with_cc: bool = True) -> None:
    """Refuse, naming the setting, what the flow-level engines cannot model (``with_cc``: the
    engine runs the congestion controllers)."""
    where = f"engine.kind={engine}"
    for cls_field in ("algo", "intra", "inter") if with_cc else ():
        name = getattr(cfg.cc, cls_field)
        if name in LAW_BY_NAME and name not in FLUID_CC:
            lacks = sorted(set(LAW_BY_NAME[name].signals) - set(FLUID_SIGNALS))
            raise ConfigError(
                f"cc.{cls_field}",
                f"{where} cannot run {name!r}: it reads {', '.join(lacks)}, which the fluid "
                "engine does not compute; use engine.kind=packet",
            )
        if name is not None and name not in FLUID_CC:
            raise ConfigError(
                f"cc.{cls_field}",
                f"{where} has fluid laws for {sorted(FLUID_CC)}, not {name!r}; use engine.kind=packet",
            )
    used = {cfg.cc.algo, cfg.cc.intra, cfg.cc.inter} if with_cc else set()
    if "mprdma" in used and cfg.cc.mprdma.update_on_duplicate_ack:
        raise ConfigError(
            "cc.mprdma.update_on_duplicate_ack",
            f"{where} has no duplicate ACKs (no spurious retransmissions) for it to act on",
        )
    routed = SINGLE_PATH_LB + SPLIT_LB + SUBFLOW_LB
    if cfg.lb.algo not in routed:
        raise ConfigError(
            "lb.algo",
            f"{where} routes {list(routed)}, not {cfg.lb.algo!r} "
            "(it moves traffic away from congested or lossy paths; no fluid model of that yet)",
        )
    if cfg.lb.algo == "unolb":
        u = cfg.lb.unolb
        if u.subflows > K.MAX_SUBFLOWS:
            raise ConfigError("lb.unolb.subflows", f"{where} keeps at most {K.MAX_SUBFLOWS}")
        for name, modelled in (("affected", "lost"), ("reroute", "recent_ack")):
            if getattr(u, name) != modelled:
                raise ConfigError(
                    f"lb.unolb.{name}",
                    f"{where} models UnoLB with {name}={modelled!r} only, not {getattr(u, name)!r}",
                )
    if cfg.faults.link_failures:
        raise ConfigError("faults.link_failures", f"{where} does not model link failures")
    if cfg.faults.losses:
        raise ConfigError("faults.losses", f"{where} does not model random packet losses")
    if cfg.switch.ecn.pmax != 1.0:
        raise ConfigError("switch.ecn.pmax", f"{where} models RED ramps up to 1 only")
    if cfg.switch.pfc.enabled:
        raise ConfigError("switch.pfc.enabled", f"{where} does not model PFC pauses")
    if cfg.switch.int_telemetry.enabled:
        raise ConfigError("switch.int_telemetry.enabled", f"{where} does not model INT records")
    if cfg.engine.port_model != "auto":
        raise ConfigError(
            "engine.port_model", f"{where} has no packet ports; leave port_model at 'auto'"
        )


def _ecmp_path(scenario: Scenario, src: int, dst: int, entropy: int, switch_index) -> list[int]:
    """Edge ids of the path the packet engine's switches hash (src, dst, entropy) onto (one
    flow, in Python: the reference of :func:`_ecmp_routes`)."""
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
            e = hops[mix64(key ^ salt) % len(hops)]
        edges.append(e)
        node = routing.edges[e].dst
    return edges


def _split_path(scenario: Scenario, src: int, dst: int) -> list[tuple[int, float]]:
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


def _split_routes(scenario: Scenario, src: np.ndarray, dst: np.ndarray):
    """Every flow's even split over its equal-cost paths (:func:`_split_path`, computed once
    per (src, dst) pair) as the kernels' CSR: pointers, edge ids and shares of the rate."""
    per_pair: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}
    links, shares = [], []
    for s, d in zip(src.tolist(), dst.tolist(), strict=True):
        route = per_pair.get((s, d))
        if route is None:
            split = _split_path(scenario, s, d)
            route = per_pair[(s, d)] = (
                np.array([e for e, _ in split], dtype=np.int64),
                np.array([w for _, w in split], dtype=np.float64),
            )
        links.append(route[0])
        shares.append(route[1])
    rt_ptr = np.zeros(len(links) + 1, dtype=np.int64)
    np.cumsum([len(x) for x in links], out=rt_ptr[1:])
    if not links:
        return rt_ptr, np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.float64)
    return rt_ptr, np.concatenate(links), np.concatenate(shares)


def _routing_arrays(scenario: Scenario, switch_index: dict[int, int], needed: bool):
    """The routing tables as arrays for :func:`uno.fluid.kernels.ecmp_path` (host nodes, CSR of
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


def _balancer_draws(rng: RngStreams, specs, count: int) -> np.ndarray:
    """The first ``count`` U[0,1) draws of each flow's balancer stream ``lb/<flow id>`` (the
    packet balancers' stream), one row per flow."""
    names = [f"lb/{s.flow_id}" for s in specs]
    if len(set(names)) == len(names):
        return rng.first_uniforms(names, count)
    # flows with one id share a stream, each drawing after the one before (as packet flows)
    return np.array(
        [[buf.next() for _ in range(count)] for buf in map(rng.buffered, names)]
    ).reshape(len(names), count)


def _mix64(x: np.ndarray) -> np.ndarray:
    """SplitMix64 finaliser of every uint64 of ``x`` (:func:`uno.core.packet.mix64`)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _ecmp_routes(src, dst, entropy, max_hops, host_node, nh_ptr, nh_edges, edge_dst, node_salt):
    """The path the packet engine's switches hash each flow (src, dst, entropy) onto, as
    :func:`uno.fluid.kernels.ecmp_path` walks it, for all flows at once, hop by hop: edge ids,
    one row per flow padded with 0, and the hop counts."""
    n = len(src)
    n_hosts = len(host_node)
    links = np.zeros((n, max_hops), dtype=np.int64)
    hops = np.zeros(n, dtype=np.int64)
    key = _mix64(
        (src.astype(np.uint64) << np.uint64(40))
        ^ (dst.astype(np.uint64) << np.uint64(20))
        ^ entropy.astype(np.uint64)
    )
    node = host_node[src]
    target = host_node[dst]
    moving = np.nonzero(node != target)[0]
    while len(moving):
        f = moving
        row = node[f] * n_hosts + dst[f]
        first = nh_ptr[row]
        count = nh_ptr[row + 1] - first
        pick = np.zeros(len(f), dtype=np.int64)
        many = count > 1
        if many.any():
            mixed = _mix64(key[f[many]] ^ node_salt[node[f[many]]])
            pick[many] = (mixed % count[many].astype(np.uint64)).astype(np.int64)
        e = nh_edges[first + pick]
        links[f, hops[f]] = e
        hops[f] += 1
        node[f] = edge_dst[e]
        moving = f[node[f] != target[f]]
    return links, hops


def _csr_routes(links: np.ndarray, hops: np.ndarray):
    """Single-path routes (``links[i, :hops[i]]``) as the kernels' CSR: pointers, edge ids
    and weights (1: the flow's whole rate)."""
    rt_ptr = np.zeros(len(hops) + 1, dtype=np.int64)
    np.cumsum(hops, out=rt_ptr[1:])
    rt_link = links[np.arange(links.shape[1]) < hops[:, None]]
    return rt_ptr, rt_link, np.ones(len(rt_link), dtype=np.float64)


def _route_drains_ps(routing, rt_ptr: np.ndarray, rt_link: np.ndarray) -> np.ndarray:
    """Per route (CSR), the time in ps to drain a full buffer at every switch port it
    crosses: the sum of buffer / rate over its switch ports, added in route order."""
    per_edge = np.array(
        [e.buffer_bytes / (e.rate_bps * _BPS) if is_switch_port(routing, e) else 0.0
         for e in routing.edges],
        dtype=np.float64,
    )  # fmt: skip
    n = len(rt_ptr) - 1
    counts = np.diff(rt_ptr)
    drain = np.zeros(n)
    # one route position at a time, so that every route's sum is added left to right
    for j in range(int(counts.max(initial=0))):
        has = np.nonzero(counts > j)[0]
        drain[has] = drain[has] + per_edge[rt_link[rt_ptr[has] + j]]
    return drain


def _route_groups(rt_ptr: np.ndarray, rt_w: np.ndarray):
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


def _hop_state(n_links, rt_ptr, rt_link, rt_w, sub_n, sub_hops, sub_links):
    """The ``hops`` tuple of :func:`uno.fluid.kernels.forward`: the links' levels (longest
    chain of links before it on the routes, so that a link is advanced after every link that
    feeds it in the same step), the routes' hop structure and the per-entry state, and the
    scratch of the phase drops (:func:`uno.fluid.kernels.group_inputs`; the caller fills in
    their salt, the ACKs' sizes and routes and appends ``l_input``)."""
    n = len(rt_ptr) - 1
    gstart, nxt = _route_groups(rt_ptr, rt_w)
    # which link follows which: consecutive hops of the routes (every link of a split hop
    # feeds every link of the next) and of the subflows
    src, dst = [], []
    has = nxt >= 0
    if has.any():
        a = np.nonzero(has)[0]
        if (rt_w == 1.0).all():
            src.append(rt_link[a])
            dst.append(rt_link[nxt[a]])
        else:
            for j in a.tolist():
                b = int(nxt[j])
                e = b + 1
                while e < len(rt_w) and gstart[e] == b:
                    e += 1
                src.append(np.full(e - b, rt_link[j]))
                dst.append(rt_link[b:e])
    if sub_n.any():
        hmax = sub_links.shape[2]
        for h in range(hmax - 1):
            on = np.nonzero((sub_n > 0) & (sub_hops > h + 1))[0]
            src.append(sub_links[on, : sub_n.max(), h].reshape(-1))
            dst.append(sub_links[on, : sub_n.max(), h + 1].reshape(-1))
    level = np.zeros(n_links, dtype=np.int64)
    if src:
        # (unique pairs as one integer each: np.unique over rows sorts far slower)
        key = np.unique(np.concatenate(src).astype(np.int64) * n_links + np.concatenate(dst))
        pairs = np.stack([key // n_links, key % n_links], axis=1)
        pairs = pairs[pairs[:, 0] != pairs[:, 1]]
        # Kahn's order, each link one level past the deepest link feeding it; links on a cycle
        # (none in the Clos and dumbbell topologies) get one level after all the others. One
        # round per level, over the pairs leaving the round's frontier at once
        indeg = np.bincount(pairs[:, 1], minlength=n_links)
        order = np.argsort(pairs[:, 0], kind="stable")
        p_src, p_dst = pairs[order, 0], pairs[order, 1]
        ptr = np.searchsorted(p_src, np.arange(n_links + 1))
        frontier = np.nonzero(indeg == 0)[0]
        done = np.zeros(n_links, dtype=bool)
        while len(frontier):
            done[frontier] = True
            out = concat_ranges(ptr[frontier], ptr[frontier + 1] - ptr[frontier])
            u, v = p_src[out], p_dst[out]
            np.maximum.at(level, v, level[u] + 1)
            np.subtract.at(indeg, v, 1)
            touched = np.unique(v)
            frontier = touched[indeg[touched] == 0]
        level[~done] = level.max(initial=0) + 1
    n_lvl = int(level.max(initial=0)) + 1
    # a hop whose next hop is not on a later level hands its bytes on at the next step
    lag = np.zeros(len(rt_w), dtype=np.int64)
    if has.any():
        a = np.nonzero(has)[0]
        hi = np.zeros(len(rt_w), dtype=np.int64)  # per hop: the highest level of its links
        lo = np.full(len(rt_w), 1 << 30, dtype=np.int64)  # and the lowest
        np.maximum.at(hi, gstart, level[rt_link])
        np.minimum.at(lo, gstart, level[rt_link])
        lag[a] = (lo[nxt[a]] <= hi[gstart[a]]).astype(np.int64)
    n_rt = len(rt_link)
    n_entries = n_rt + sub_links.size
    # (int32, as the links' and levels' lists below: half the cache lines of int64; every
    # value is an index of a link, flow or entry, or a small code)
    ei = zeros_aligned(n_entries, K.N_EI, np.int32)
    ei[:] = -1
    ef = zeros_aligned(n_entries, K.N_EF)
    ei[:n_rt, K.EI_LINK] = rt_link
    ei[:n_rt, K.EI_FLOW] = np.repeat(np.arange(n, dtype=np.int64), np.diff(rt_ptr))
    ei[:n_rt, K.EI_GSTART] = gstart
    ei[:n_rt, K.EI_NEXT] = nxt
    ei[:n_rt, K.EI_LAG] = lag
    ef[:n_rt, K.EF_W] = rt_w
    # UnoLB subflow hops (their links and next hops are read from sub_links as they move)
    sub = np.arange(n_rt, n_entries, dtype=np.int64)
    ei[n_rt:, K.EI_FLOW] = (sub - n_rt) // max(1, sub_links.shape[1] * sub_links.shape[2])
    ei[n_rt:, K.EI_GSTART] = sub
    ef[n_rt:, K.EF_W] = 1.0
    return (
        level.astype(np.int32), np.array([n_lvl], dtype=np.int64), ei, ef,
        np.zeros(n_lvl, dtype=np.int64), np.full(n_links, K.NOT_IN_LEVEL, dtype=np.int32),
        np.zeros(n_lvl, dtype=np.int64), np.zeros(n_links, dtype=np.int64),
        np.zeros(n_lvl, dtype=np.int64),
        # input_drop_shares: [salt of the grid phases, 1: on], each link's dense index while
        # it drops (-1), the inputs' links, their figures, how many, scratch
        np.zeros(2, dtype=np.uint64), np.full(n_links, -1, dtype=np.int32),
        np.zeros((n_links, K.INPUTS_MAX), dtype=np.int32),
        np.zeros((n_links, 5, K.INPUTS_MAX + 1)), np.zeros(n_links, dtype=np.int64),
        np.zeros(K.INPUTS_MAX, dtype=np.int64),
        # an ACK's share of a data packet's bytes (and time: ack_drift), a packet's bytes, 1:
        # the ACKs cross the links as bytes (acks_out)
        np.zeros(3),
    )  # fmt: skip


#: how often (in steps) a run whose step may grow looks at the flows left (FluidSimulation.run)
LOOK_STEPS = 256


class FluidSimulation:
    """One fluid run: the scenario's state as arrays, stepped by the kernels."""

    engine_name = "fluid"
    #: whether the engine runs the flows' congestion controllers
    runs_cc = True

    def __init__(self, cfg, scenario: Scenario, rng: RngStreams, plans=None, engine_name=None):
        """``plans``: the scenario's flows this engine runs (default: all of them);
        ``engine_name``: the ``engine.kind`` refusals name (the hybrid's, when it runs inside
        one)."""
        check_fluid_support(cfg, engine_name or self.engine_name, self.runs_cc)
        self.cfg = cfg
        self.scenario = scenario
        self.meta = scenario.meta()
        self.max_time_ps = ms_to_ps(cfg.engine.max_sim_time_ms)
        self.dt_ps = float(cfg.engine.fluid_step_intra_rtt * scenario.intra_ref.base_rtt_ps)
        self.dt_first_ps = self.dt_ps
        # the step is dt_first_ps x step_factor, a power of two, at most step_factor_max
        # (engine.fluid_step_max_intra_rtt; :meth:`_grow_step`)
        self.step_factor = 1
        self._rtt_after = None  # (_grow_step)
        cap = cfg.engine.fluid_step_max_intra_rtt / cfg.engine.fluid_step_intra_rtt
        self.step_factor_max = 1 << max(0, int(math.floor(math.log2(cap) + 1e-9)))
        #: sizes the kernel calls (uno.core.budget): each returns to Python within about
        #: its aim, for Ctrl-C and the progress watcher
        self.wall_budget = WallBudget()
        self.k_done = 0
        self.n_finished = 0
        self.now_ps = 0
        plans = scenario.flows if plans is None else list(plans)
        for p in plans:
            if p.spec.after:
                raise ConfigError(
                    "workload", f"engine.kind={self.engine_name} does not chain flows ('after')"
                )
        self.flows = plans
        routing = scenario.routing
        self.port_names = port_names(routing)
        n_links = len(routing.edges)
        ls = zeros_aligned(n_links, K.N_LS)
        for e in routing.edges:
            row = ls[e.edge_id]
            row[K.LS_CAP] = e.rate_bps * _BPS
            row[K.LS_BUF] = float(e.buffer_bytes)
            row[K.LS_KMIN] = row[K.LS_KMAX] = -1.0
            row[K.LS_PASS] = 1.0
            row[K.LS_GRID] = -1.0  # idle: no departure grid yet
            m = scenario.marking[e.edge_id]
            if m is None:
                continue
            if m.red_kmin_bytes is not None:
                row[K.LS_KMIN], row[K.LS_KMAX] = m.red_kmin_bytes, m.red_kmax_bytes
            if m.phantom_size_bytes is not None:
                row[K.LS_PHSIZE] = m.phantom_size_bytes
                row[K.LS_PHDRAIN] = m.phantom_drain_bps * _BPS
                row[K.LS_PHKMIN], row[K.LS_PHKMAX] = m.phantom_kmin_bytes, m.phantom_kmax_bytes
                row[K.LS_PHDROPS] = 1.0 if m.phantom_counts_drops else 0.0
                row[K.LS_PH_ACKS] = 1.0 if m.phantom_counts_acks else 0.0
            physical = m.marks_physical
            phantom = m.marks_phantom
            row[K.LS_MODE] = (
                K.MODE_EITHER if physical and phantom
                else K.MODE_PHYSICAL if physical
                else K.MODE_PHANTOM if phantom
                else K.MODE_NONE
            )  # fmt: skip
        self.ls = ls
        self._build_flows(cfg, rng)

    # ---- setup ----------------------------------------------------------------------------
    def _build_flows(self, cfg, rng: RngStreams) -> None:
        """The per-flow arrays: flow state ``fs``, controller parameters ``cp``, routes
        (``rt_*``), delay lines and the balancers' state, built for all flows at once."""
        sc = self.scenario
        routing = sc.routing
        plans = self.flows
        n = len(plans)
        switch_index = {}
        for i, node in enumerate(routing.topo.nodes):
            if node.kind != HOST:
                switch_index[i] = len(switch_index)
        lb = cfg.lb.algo
        ec = cfg.ec
        subflows = cfg.lb.unolb.subflows if lb in SUBFLOW_LB else 0
        max_hops = max((p.path.hops for p in plans), default=1)
        specs = [p.spec for p in plans]
        src = np.fromiter((s.src for s in specs), dtype=np.int64, count=n)
        dst = np.fromiter((s.dst for s in specs), dtype=np.int64, count=n)
        n_packets = np.fromiter((p.n_packets for p in plans), dtype=np.int64, count=n)
        coded = np.fromiter((p.ec_timeout_ps is not None for p in plans), dtype=bool, count=n)
        # the packets each flow sends once: its data and, coded, each block's parity (each
        # block of up to ec.data_packets data packets gets its own)
        n_sent = n_packets.copy()
        n_sent[coded] += -(-n_packets[coded] // ec.data_packets) * ec.parity_packets
        sub_n = np.zeros(n, dtype=np.int64)
        sub_hops = np.zeros(n, dtype=np.int64)
        sub_links = np.zeros((n, max(1, subflows), max_hops), dtype=np.int64)
        sub_ent = np.zeros((n, max(1, subflows)), dtype=np.int64)
        # each subflow's ACKs' way back, hashed on (dst, src, its entropy): moved by reroutes
        sub_rlinks = np.zeros_like(sub_links)
        sub_rhops = np.zeros(n, dtype=np.int64)
        lb_rng = np.zeros(n, dtype=np.uint64)
        ends = np.stack([src, dst], axis=1)
        tables = _routing_arrays(sc, switch_index, lb in SINGLE_PATH_LB + SUBFLOW_LB)
        if subflows:
            # the packet UnoLB's first draws from the flow's stream: the same n paths, then
            # the seed of the reroutes' draws
            draws = _balancer_draws(rng, specs, subflows + 1)
            sub_ent[:] = (draws[:, :subflows] * ENTROPY_SPACE).astype(np.int64)
            for sf in range(subflows):
                links, hops = _ecmp_routes(src, dst, sub_ent[:, sf], max_hops, *tables)
                sub_links[:, sf, :] = links
                sub_hops[:] = hops
                links, hops = _ecmp_routes(dst, src, sub_ent[:, sf], max_hops, *tables)
                sub_rlinks[:, sf, :] = links
                sub_rhops[:] = hops
            # packet i rides subflow i mod n (uno.lb.unolb.UnoLb.next_entropy): a flow of
            # fewer packets (its parity included) than subflows crosses only the first few
            sub_n[:] = np.minimum(subflows, np.maximum(n_sent, 1))
            lb_rng[:] = (draws[:, subflows] * (1 << 53)).astype(np.uint64)
            rt_ptr, rt_link, rt_w = _csr_routes(sub_links[:, 0, :], sub_hops)  # for the bounds
            # the first subflow's way back: the bounds (the ring's length); the ACKs' queueing
            # delay is each subflow's own (sub_rlinks), unless ACKs have switch priority
            rv_ptr, rv_link, rv_w = _csr_routes(sub_rlinks[:, 0, :], sub_rhops)
        elif lb in SINGLE_PATH_LB:
            entropy = (_balancer_draws(rng, specs, 1)[:, 0] * ENTROPY_SPACE).astype(np.int64)
            links, hops = _ecmp_routes(src, dst, entropy, max_hops, *tables)
            rt_ptr, rt_link, rt_w = _csr_routes(links, hops)
            # a receiver's ACK carries its data packet's entropy, hashed on (dst, src, entropy)
            # at every switch (uno.transport.receiver.Receiver.on_data)
            rv_ptr, rv_link, rv_w = _csr_routes(*_ecmp_routes(dst, src, entropy, max_hops, *tables))
        else:
            rt_ptr, rt_link, rt_w = _split_routes(sc, src, dst)
            rv_ptr, rv_link, rv_w = _split_routes(sc, dst, src)  # sprayed ACKs: the even split
        fs = zeros_aligned(n, K.N_FS)
        wire = np.fromiter((p.wire_bytes for p in plans), dtype=np.int64, count=n)
        base_rtt = np.fromiter((p.path.base_rtt_ps for p in plans), dtype=np.int64, count=n)
        rto = np.fromiter((p.facts.rto_ps for p in plans), dtype=np.int64, count=n)
        # the timeout once a flow has resent (0: the same; transport.*.rto_base_rtts_after_retransmit)
        rto_after = np.fromiter((p.facts.rto_after_retransmit_ps or 0 for p in plans),
                                dtype=np.int64, count=n)  # fmt: skip
        dupack = np.fromiter((p.facts.dupack_threshold for p in plans), dtype=np.int64, count=n)
        size = wire.astype(np.float64)
        if coded.any():
            n_data = n_packets[coded]
            size[coded] *= n_sent[coded] / n_data
            fs[coded, K.FS_EC_N] = np.minimum(ec.data_packets, n_data)
            fs[coded, K.FS_EC_M] = ec.parity_packets
            timeouts = [p.ec_timeout_ps for p in plans]
            fs[coded, K.FS_LOSS_DELAY] = [t for t in timeouts if t is not None]
        fast = ~coded & (dupack > 0)
        fs[fast, K.FS_DUPACK_BYTES] = dupack[fast] * sc.data_bytes
        fs[fast | coded, K.FS_LOSS_NACK] = 1.0
        fs[:, K.FS_RTO] = rto
        fs[:, K.FS_RTO_AFTER] = rto_after
        fs[:, K.FS_SIZE] = size
        fs[:, K.FS_UNSENT] = size
        fs[:, K.FS_START] = np.fromiter((s.start_ps for s in specs), dtype=np.int64, count=n)
        fs[:, K.FS_FINISH] = -1.0
        fs[:, K.FS_LOSS_AT] = -1.0
        fs[:, K.FS_BASE_RTT] = base_rtt
        nic_link = np.array([routing.out_edges[h][0] for h in routing.host_nodes], dtype=np.int64)
        nic_rate = np.array([routing.edges[e].rate_bps for e in nic_link.tolist()], dtype=np.int64)
        fs[:, K.FS_NIC] = nic_rate[src] * _BPS
        fs[:, K.FS_NIC_LINK] = nic_link[src]
        # a step's bytes leave the sender within the step, then take one RTT (base +
        # queueing, at most every buffer on the path full); the drain time of the queues is
        # that of the route of the pair's first flow
        # (the data's route and the ACKs' route back: an ACK waits behind the reverse path's
        # queues, see uno.fluid.kernels.reverse_delay)
        # every ACK's way back, for the drift its transmission gives the grids of the links it
        # crosses (kernels.ack_drift), whichever lane it waits in
        ack_routes = (rv_w.copy(), sub_rhops.copy())
        if cfg.switch.ack_priority:
            # switch ports serve ACKs in a lane of their own (uno.net.port.ControlLane): only
            # the receiver's NIC queue, shared with its own data, delays them
            rv_w = np.where(np.isin(rv_link, nic_link), rv_w, 0.0)
            sub_rhops[:] = 0  # so subflows' ACKs meet only that queue too (rv_*)
        drain = _route_drains_ps(routing, rt_ptr, rt_link) + _route_drains_ps(
            routing, rv_ptr, rv_link
        )
        if n:
            _, first, pair_of = np.unique(
                src * len(routing.host_nodes) + dst, return_index=True, return_inverse=True
            )
            drain = drain[first][pair_of.reshape(-1)]
        longest = base_rtt + drain + 2 * self.dt_ps
        # the ring also holds each step's lost bytes until their retransmission timer
        # expires (kernels.R_TIMEOUT), at most ceil(RTO / dt) + 1 steps on
        longest = np.maximum(longest, np.maximum(rto, rto_after) + self.dt_ps)
        # and a coded flow's lost bytes until its receiver's NACK reaches it, an RTT and the
        # receiver's timer after their send (kernels.R_NACK)
        longest = np.maximum(
            longest,
            base_rtt + drain + fs[:, K.FS_LOSS_DELAY] * (fs[:, K.FS_EC_N] > 0) + 2 * self.dt_ps,
        )
        ring_len = np.ceil(longest / self.dt_ps).astype(np.int64) + 2
        # the running flows take their delay lines from a pool (kernels.ring_take); all-zero
        # is every slot's empty state, so rows never reached are not even touched (calloc)
        lengths, ring_class = np.unique(ring_len, return_inverse=True)
        per_class = np.bincount(ring_class, minlength=len(lengths))
        free_base = np.concatenate([[0], np.cumsum(per_class)[:-1]]).astype(np.int64)
        ring_pool = (np.full(n, -1, dtype=np.int64), ring_len,
                     ring_class.reshape(-1).astype(np.int64), np.zeros(n, dtype=np.int64),
                     free_base, np.zeros(len(lengths), dtype=np.int64),
                     np.zeros(1, dtype=np.int64))  # fmt: skip
        self.fs = fs
        self.cp = self._cc_rows(cfg, plans) if self.runs_cc else np.zeros((n, K.N_P))
        state_columns = self._law_columns(plans)
        # the columns for coding, the laws' samples and fast retransmit's lost bytes
        # (kernels.R_LOSTQ) only where a flow needs them
        wide = (
            (fs[:, K.FS_EC_N] > 0).any()
            or (fs[:, K.FS_RTTMIN] > 0).any()
            or (fs[:, K.FS_RATE] > 0).any()
            or (fs[:, K.FS_DUPACK_BYTES] > 0).any()
        )
        # (memory kept from the process's last run, all zero: uno.fluid.memory)
        self._ring_memory, ring = DELAY_LINES.take(
            int(ring_len.sum()), K.N_R if wide else K.N_R_NARROW
        )
        self.cs = np.zeros((n, state_columns))
        self.rt_ptr = rt_ptr
        self.rt_link = rt_link
        self.rt_w = rt_w
        self.rv_ptr, self.rv_link, self.rv_w = rv_ptr, rv_link, rv_w
        self.ring, self.ring_pool, self.ring_len = ring, ring_pool, ring_len
        self.order = np.argsort(fs[:, K.FS_START], kind="stable").astype(np.int64)
        # what each step reads of every running flow, and which flows have something due at
        # which step (a row per step, modulo a span of the longest delay line: the lines hold
        # every timer and loss report)
        self.fx = zeros_aligned(n, K.N_FX)
        span = int(ring_len.max(initial=1))
        self.calendar = np.zeros((span, max(1, (n + 63) // 64)), dtype=np.uint64)
        # [next to start, running, finished, busy links, flows the run waits for not finished
        # yet (engine.stop_when_done; -1: none among this engine's flows)]
        waits = stop_flags(cfg.engine.stop_when_done, (p.spec.tag for p in plans))
        fs[:, K.FS_STOP] = waits
        self.n_waited = int(waits.sum())
        self.counters = np.array([0, 0, 0, 0, self.n_waited or -1], dtype=np.int64)
        # feedback in blocks (engine.fluid_blocks_per_rtt; kernels.hold_for_block)
        self.block = np.zeros((3, n + 1), dtype=np.int64)
        self._set_blocks()
        self.active = np.zeros(n, dtype=np.int64)
        self.busy = np.zeros(len(self.ls), dtype=np.int64)
        # each flow's stream for its whole-packet losses, seeded from the run's seed
        self.loss_rng = rng.stream("fluid/losses").integers(0, 1 << 62, n, dtype=np.uint64)
        if not subflows:
            tables = _routing_arrays(sc, switch_index, False)
        # (last: each coded UnoLB subflow's bytes dropped and reaching dropping links in a
        # step, kernels.coded_losses)
        self.lb = (sub_n, sub_hops, sub_links, sub_ent, np.zeros(sub_ent.shape), np.full(n, -1.0),
                   lb_rng, ends, *tables, sub_rlinks, sub_rhops,
                   np.zeros((*sub_ent.shape, 2)))  # fmt: skip
        self.hops = _hop_state(len(self.ls), rt_ptr, rt_link, rt_w, sub_n, sub_hops, sub_links)
        # full drop-tail queues drop by their inputs' packet phases (kernels.input_drop_shares)
        self.hops[9][0] = rng.stream("fluid/grid_phases").integers(0, 1 << 63, dtype=np.uint64)
        self.hops[9][1] = 1 if cfg.engine.fluid_phase_drops else 0
        pkt = sc.data_bytes  # (a full data packet's wire bytes, its header included)
        self.hops[15][:] = (sc.ack_bytes / pkt, pkt, 1.0 if cfg.engine.fluid_ack_bytes else 0.0)
        self.hops = (*self.hops, *ack_routes, np.full(len(self.ls), -1, dtype=np.int32))
        self._set_wire(cfg.engine.fluid_wire, rt_ptr, rt_link, sub_n)
        # the step loop's working arrays (kernels.advance allocates nothing): each subflow's
        # loss chance, a coded block's loss distribution, the subflows' entropies before a
        # move; the step's NICs, senders, flows that lost bytes and flows that delivered some
        # (with their counts)
        n_sub = sub_links.shape[1]
        n_dist = n_sub + int(fs[:, K.FS_EC_M].max(initial=0)) + 2
        self.scratch = (
            np.zeros(n_sub), np.zeros(n_dist), np.zeros(n_sub, dtype=np.int64),
            np.zeros(len(self.ls), dtype=np.int64), np.zeros(n, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64),
        )  # fmt: skip

    def _set_wire(self, on: bool, rt_ptr, rt_link, sub_n) -> None:
        """Each flow's wire link (``engine.fluid_wire``; :func:`uno.fluid.kernels.forward`):
        its route's longest link when that link's propagation is at least the intra-DC base
        RTT (a WAN link) and a hop follows it. Its entries (every link of the hop, when the hop
        is split) hand their departures on ``FS_WIRE_PS`` later (``EI_LAG`` = -1) to the next
        hop's first entry (``FS_WIRE_NEXT``). An UnoLB flow's subflows: the hop of its first
        subflow's longest link (``FS_WIRE_HOP``), when every subflow's link there has that
        propagation; each subflow's departures there reach its own next hop through the
        delay line's columns ``R_SUBWIRE + 2 s`` (the ring gets two columns a subflow). With
        the option off, ``FS_WIRE_NEXT`` = ``FS_WIRE_HOP`` = -1."""
        fs = self.fs
        fs[:, K.FS_WIRE_NEXT] = -1.0
        fs[:, K.FS_WIRE_HOP] = -1.0
        fs[:, K.FS_WIRE_PS] = 0.0
        fs[:, K.FS_WIRE_DROP] = 0.0
        n = len(self.flows)
        n_rt = len(rt_link)
        if not on or n == 0 or n_rt == 0:
            return
        edges = self.scenario.routing.edges
        link_delay = np.fromiter((e.delay_ps for e in edges), dtype=np.float64, count=len(edges))
        # (a link of a datacenter's fabric is shorter than its base RTT by far; a WAN link is
        # not, whatever the step)
        long_ps = self.scenario.intra_ref.base_rtt_ps
        self._set_subflow_wire(link_delay, long_ps, sub_n)
        ei = self.hops[2]
        delay = link_delay[rt_link]  # (per route entry, its link's propagation, ps)
        starts = rt_ptr[:-1]
        longest = np.maximum.reduceat(delay, starts)
        flow_of = ei[:n_rt, K.EI_FLOW]
        # the first entry of each route with its longest propagation
        where = np.where(delay == longest[flow_of], np.arange(n_rt), n_rt)
        first = np.minimum.reduceat(where, starts)
        nxt = ei[first, K.EI_NEXT]
        wired = (longest >= long_ps) & (nxt >= 0) & (sub_n == 0)
        if not wired.any():
            return
        group = ei[first, K.EI_GSTART]
        on_wire = wired[flow_of] & (ei[:n_rt, K.EI_GSTART] == group[flow_of])
        ei[:n_rt, K.EI_LAG][on_wire] = -1
        fs[wired, K.FS_WIRE_NEXT] = nxt[wired]
        fs[wired, K.FS_WIRE_PS] = longest[wired]

    def _set_subflow_wire(self, link_delay, long_ps: float, sub_n) -> None:
        """:meth:`_set_wire` for the UnoLB flows: ``FS_WIRE_HOP``, and the ring's columns."""
        sub_hops, sub_links = self.lb[1], self.lb[2]
        n_sub = sub_links.shape[1]
        if not sub_n.any():
            return
        hop = np.arange(sub_links.shape[2])
        delay = np.where(hop < sub_hops[:, None, None], link_delay[sub_links], -1.0)
        wire_hop = delay[:, 0, :].argmax(axis=1)
        rows = np.arange(len(sub_n))
        longest = delay[rows, 0, wire_hop]
        at_hop = delay[rows, :, wire_hop]  # (every subflow's link at that hop)
        subflow = np.arange(n_sub)
        same = np.where(subflow < sub_n[:, None], at_hop == longest[:, None], True).all(axis=1)
        wired = (sub_n > 0) & (longest >= long_ps) & (wire_hop + 1 < sub_hops) & same
        if not wired.any():
            return
        self.fs[wired, K.FS_WIRE_HOP] = wire_hop[wired]
        self.fs[wired, K.FS_WIRE_PS] = longest[wired]
        rows = self.ring.shape[0]
        self.free_delay_lines()  # (untouched yet)
        self._ring_memory, self.ring = DELAY_LINES.take(rows, K.R_SUBWIRE + 2 * n_sub)

    def _law_columns(self, plans) -> int:
        """The columns of the controllers' state: the fluid laws' ``C_*``, or a law's own (with
        its tail for the flow's constants). Marks what each law's flow reads (``FS_DRAWS``,
        ``FS_QTHR``, ``FS_RTTMIN``, ``FS_RATE``: :func:`kernels.law_batch`)."""
        width = K.N_C
        if not self.runs_cc:
            return width
        for f, plan in enumerate(plans):
            law = LAW_BY_NAME.get(plan.cc_name)
            if law is not None:
                width = max(width, law.state_size + law.state_tail(self.cp[f]))
                fs = self.fs[f]
                fs[K.FS_DRAWS] = 1.0 if "queueing" in law.signals else 0.0
                if law.queue_threshold is not None:
                    fs[K.FS_QTHR] = law.queue_threshold(self.cp[f])
                fs[K.FS_RTTMIN] = 1.0 if "rtt_min" in law.signals else 0.0
                fs[K.FS_RATE] = 1.0 if "delivery_rate" in law.signals else 0.0
        return width

    def _cc_rows(self, cfg, plans) -> np.ndarray:
        """The ``P_*`` rows of every flow (:meth:`_cc_params`), built once per distinct
        (controller, FlowContext)."""
        rows: list[np.ndarray] = []
        row_of: dict[tuple, int] = {}  # (controller, context) -> row
        by_object: dict[tuple[str, int], int] = {}  # (controller, id of a context) -> row
        index = np.empty(len(plans), dtype=np.int64)
        for i, plan in enumerate(plans):
            key = (plan.cc_name, id(plan.ctx))  # plans share context objects: cheap first
            r = by_object.get(key)
            if r is None:
                vkey = (plan.cc_name, plan.ctx)  # flows with one path share their parameters
                r = row_of.get(vkey)
                if r is None:
                    r = row_of[vkey] = len(rows)
                    rows.append(self._cc_params(cfg, plan))
                by_object[key] = r
            index[i] = r
        if not rows:
            return np.zeros((0, K.N_P))
        width = max(len(r) for r in rows)  # (a law's constants may outnumber the P_* columns)
        return np.stack([np.pad(r, (0, width - len(r))) for r in rows])[index]

    @staticmethod
    def _cc_params(cfg, plan) -> np.ndarray:
        """The ``P_*`` row of ``plan``'s controller: its law's constants (:mod:`uno.cc.law`),
        as the packet engines build them with the same config and FlowContext."""
        obj = make_cc(plan.cc_name, cfg.cc, plan.ctx)
        row = np.zeros(max(K.N_P, len(obj.consts)))
        row[: len(obj.consts)] = obj.consts
        row[K.P_KIND] = K.CC_LAW + obj.kind
        return row

    # ---- running --------------------------------------------------------------------------
    def progress_snapshot(self) -> Snapshot:
        """What the progress watcher shows (:mod:`uno.metrics.progress`); reads only."""
        done, total, started, late = self.required_work(self.now_ps)
        return Snapshot(self.now_ps, done, total, started, late, self.n_finished,
                        len(self.flows), self.k_done, "fluid steps")  # fmt: skip

    def required_work(self, now_ps: float, delivered=None) -> tuple[float, float, bool, bool]:
        """The required flows' (``engine.stop_when_done``) bytes delivered and their bytes;
        whether every one has started by ``now_ps``; whether one starts at or after the stop
        time. ``delivered``: each flow's bytes delivered (default: the steps', a finished
        flow's whole size)."""
        fs = self.fs
        req = fs[:, K.FS_STOP] > 0.0
        size = fs[req, K.FS_SIZE]
        if delivered is None:
            got = np.minimum(fs[req, K.FS_DELIVERED], size)
            got = np.where(fs[req, K.FS_STATE] == 2.0, size, got)
        else:
            got = delivered[req]
        start = fs[req, K.FS_START]
        return (
            float(got.sum()),
            float(size.sum()),
            bool((start <= now_ps).all()),
            bool((start >= self.max_time_ps).any()),
        )

    def _busy_from(self, k: int) -> int:
        """The step from which the kernel has work: ``k``, or with nothing running and no
        link busy, the step of the next flow start (the kernel skips there at once)."""
        counters = self.counters
        nxt = int(counters[0])
        if counters[1] or counters[3] or nxt >= len(self.flows):
            return k
        return max(k, int(self.fs[self.order[nxt], K.FS_START] // self.dt_ps))

    def run(self, measure_memory: bool = False) -> RunResult:
        """Step until every flow finished (or every flow with a tag of ``engine.stop_when_done``)
        or ``engine.max_sim_time_ms``; collect the tables."""
        cfg = self.cfg
        interval_ps = us_to_ps(cfg.engine.sample_interval_us)
        sampler = _Sampler(self, cfg) if interval_ps > 0 else None
        grows = self.step_factor_max > 1
        self.k_done = 0
        t0 = time.perf_counter()
        k = 0
        next_sample_ps = interval_ps
        budget = self.wall_budget
        while True:
            dt = self.dt_ps
            k_stop = int(self.max_time_ps // dt)
            if k >= k_stop:
                break
            # a kernel call takes the steps that fit in the wall budget (uno.core.budget),
            # counted from the end of the idle stretch the kernel skips (skipped steps cost
            # nothing, and would tell nothing of the pace after them); while the step may grow,
            # a look at the flows left every LOOK_STEPS steps (the same steps whether or not
            # the run samples); samples at the multiples of the interval, to the step
            grows = grows and self.step_factor < self.step_factor_max
            k_work = self._busy_from(k)
            k_next = k_work + budget.units()
            if grows:
                k_next = min(k_next, k + LOOK_STEPS - self.k_done % LOOK_STEPS)
            sample_due = False
            if interval_ps > 0:
                k_sample = int(round(next_sample_ps / dt))
                while k_sample <= k:
                    next_sample_ps += interval_ps
                    k_sample = int(round(next_sample_ps / dt))
                if k_sample <= k_next:
                    k_next, sample_due = k_sample, True
            k = self._advance_to(k, min(k_next, k_stop))
            budget.spent(k - k_work)
            if grows and not self._done() and self.k_done % LOOK_STEPS == 0:
                k = self._grow_step(k)
            done = self._done()
            ending = done or k >= int(self.max_time_ps // self.dt_ps)
            if sampler is not None and (sample_due or ending or self.now_ps >= next_sample_ps):
                sampler.sample(self.now_ps)
                next_sample_ps += interval_ps
            if done:
                break
        wall = time.perf_counter() - t0
        result = self._collect(wall, sampler)
        self.free_delay_lines()
        return result

    def free_delay_lines(self) -> None:
        """The run is over: its delay-line memory goes back to the process's cache, the rows
        it handed out zeroed (:mod:`uno.fluid.memory`); ``self.ring`` is None after it. (Not on
        a failed run: its memory is freed with it.)"""
        buf, self._ring_memory = self._ring_memory, None
        if buf is None:
            return
        ring, self.ring = self.ring, None
        # only rows below the pool's top were ever handed out (kernels.ring_take); none if
        # the ring is not the buffer's (a test may put another in its place)
        mine = ring is not None and np.may_share_memory(ring, buf)
        used = int(self.ring_pool[6][0]) * ring.shape[1] if mine else 0
        DELAY_LINES.give(buf, used)

    def _done(self) -> bool:
        """Every flow finished, or every one the run waits for (``engine.stop_when_done``)."""
        return self.n_finished == len(self.flows) or self.counters[4] == 0

    def _advance_to(self, k: int, k_stop: int) -> int:
        """:meth:`advance` from step ``k`` to ``k_stop`` (earlier if every flow finished), and
        the run's counts after it: steps done, time, flows finished. Returns the step reached."""
        k_reached = self.advance(k, k_stop)
        self.k_done += k_reached - k
        self.now_ps = int(k_reached * self.dt_ps)
        self.n_finished = int(self.counters[2])
        return k_reached

    def _grow_step(self, k: int) -> int:
        """The step follows the shortest base RTT among the flows left to run (running or not
        started yet): ``engine.fluid_step_intra_rtt`` of it, in powers of two of the first
        step, up to ``engine.fluid_step_max_intra_rtt`` of the intra-DC base RTT. A short
        flow's feedback loop sets the step while one may still run; once only long-RTT flows
        are left, their loops are slower, and what bounds the step is the links' own time
        scale (a line-rate burst filling a buffer), which the cap keeps resolved. Returns the
        current step's index at the step size now in force (:func:`kernels.coarsen`)."""
        # the flows left: those running, and those of ``order`` not started yet (the
        # shortest RTT among them, a suffix minimum taken once)
        if self._rtt_after is None:
            rtt = self.fs[:, K.FS_BASE_RTT][self.order]
            self._rtt_after = np.append(np.minimum.accumulate(rtt[::-1])[::-1], np.inf)
            self._base_rtt = np.ascontiguousarray(self.fs[:, K.FS_BASE_RTT])
        n_active = int(self.counters[1])
        shortest = float(self._rtt_after[int(self.counters[0])])
        if n_active:
            shortest = min(shortest, float(self._base_rtt[self.active[:n_active]].min()))
        if shortest == np.inf:
            return k
        want = 1
        while want * 2 <= self.step_factor_max and self.dt_first_ps * want * 2 <= (
            self.cfg.engine.fluid_step_intra_rtt * shortest
        ):
            want *= 2
        factor = want // self.step_factor
        if factor <= 1:
            return k
        # the fine steps up to the next multiple of the factor first
        k_aligned = -(-k // factor) * factor
        if k_aligned > k:
            if k_aligned > self.max_time_ps // self.dt_ps:
                return k
            k = self._advance_to(k, k_aligned)
            if k < k_aligned:  # every flow finished
                return k
        self.step_factor = want
        self.dt_ps = self.dt_first_ps * want
        self._set_blocks()
        n_active = int(self.counters[1])
        return K.coarsen(factor, k, self.dt_ps, self.fs, self.cp, self.ring, self.ring_pool,
                         self.active, n_active, self.calendar, self.fx)  # fmt: skip

    def _set_blocks(self) -> None:
        """Each flow's block at the current step (``engine.fluid_blocks_per_rtt``): the
        largest power of two of steps within 1/``fluid_blocks_per_rtt`` of its base RTT, at
        least a step; and the largest block (:func:`kernels.hold_for_block`). A flow held for
        its block when the step grows files it at its new block's end (its sends' times are
        kept in ps).

        Only the laws whose response to a batch of ACKs is its sum (UnoCC, DCTCP, MP-RDMA)
        take blocks. GEMINI's window minimum of the RTT and BBR's windowed maximum of the
        delivery rate depend on how many samples a window holds: with one sample a block
        instead of one a step their inter-DC flows ran steadily slower as the block grew
        (``mixed40`` inter-DC mean FCT +4% / +6% / +8% for GEMINI, +2% / +4% / +7% for BBR at
        256 / 128 / 64 blocks per RTT), so they keep a step."""
        n = len(self.flows)
        per_rtt = self.cfg.engine.fluid_blocks_per_rtt
        steps = np.ones(n, dtype=np.int64)
        if per_rtt > 0 and n:
            span = self.fs[:, K.FS_BASE_RTT] / (per_rtt * self.dt_ps)
            exp = np.floor(np.log2(np.maximum(span, 1.0)) + 1e-9).astype(np.int64)
            steps = np.left_shift(np.int64(1), exp)
            samples = (self.fs[:, K.FS_RTTMIN] > 0) | (self.fs[:, K.FS_RATE] > 0)
            steps[samples] = 1
        self.block[0, :n] = steps
        self.block[0, n] = int(steps.max(initial=1))

    def advance(self, k_start: int, k_stop: int) -> int:
        """Run steps ``k_start`` .. ``k_stop - 1``; returns the step reached
        (:func:`uno.fluid.kernels.advance`)."""
        return K.advance(k_start, k_stop, *self.kernel_args())

    #: the state :func:`uno.fluid.kernels.advance` changes (the rest of its arguments it reads)
    STEPPED_STATE = ("fs", "cs", "ls", "ring", "ring_pool", "counters", "active", "busy", "lb",
                     "loss_rng", "hops", "fx", "calendar", "block")  # fmt: skip

    def kernel_args(self, state: dict | None = None) -> tuple:
        """:func:`uno.fluid.kernels.advance`'s arguments after the two steps, in its order;
        ``state`` (names of :attr:`STEPPED_STATE` to arrays) stands in for the engine's own,
        for a twin run on copies."""
        s = {n: getattr(self, n) for n in self.STEPPED_STATE} if state is None else state
        return (
            self.dt_ps, s["fs"], s["cs"], self.cp, s["ls"], self.rt_ptr, self.rt_link, self.rt_w,
            self.rv_ptr, self.rv_link, self.rv_w, s["ring"], s["ring_pool"], self.order,
            s["counters"], s["active"], s["busy"], s["lb"], s["loss_rng"], s["hops"], s["fx"],
            s["calendar"], s["block"], self.scratch,
        )  # fmt: skip

    # ---- results --------------------------------------------------------------------------
    def flows_table(self) -> pd.DataFrame:
        fs = self.fs
        plans = self.flows
        n = len(plans)
        mss = self.scenario.data_bytes
        specs = [p.spec for p in plans]
        paths = [p.path for p in plans]
        finished = fs[:, K.FS_STATE] == 2.0
        finish = np.where(finished, np.round(fs[:, K.FS_FINISH]), np.nan)
        start = np.fromiter((s.start_ps for s in specs), dtype=np.int64, count=n)
        fct = finish - start
        ideal = np.fromiter((p.ideal_fct_ps for p in plans), dtype=np.int64, count=n)
        size = np.fromiter((s.size_bytes for s in specs), dtype=np.int64, count=n)
        wire = np.fromiter((p.wire_bytes for p in plans), dtype=np.int64, count=n)
        packets = np.fromiter((p.n_packets for p in plans), dtype=np.int64, count=n)
        # the packets of the sent size (parity included), at the flow's mean packet size
        n_packets = np.round(fs[:, K.FS_SIZE] / np.maximum(1.0, wire / packets)).astype(np.int64)
        # paths are shared objects: each distinct one's BDP once
        bdp_of = {key: path.bdp_bytes() for key, path in {id(p): p for p in paths}.items()}
        retrans = np.round(np.maximum(0.0, fs[:, K.FS_SENT] - fs[:, K.FS_SIZE]) / mss)
        loss_events = fs[:, K.FS_LOSS_EVENTS].astype(np.int64)
        coded = fs[:, K.FS_EC_N] > 0
        frac = np.minimum(1.0, fs[:, K.FS_DELIVERED] / fs[:, K.FS_SIZE])
        cols = {
            "flow_id": [s.flow_id for s in specs],
            "src": [s.src for s in specs],
            "dst": [s.dst for s in specs],
            "cls": [p.cls for p in plans],
            "tag": [s.tag for s in specs],
            "size_bytes": size,
            "start_ps": start,
            "finish_ps": finish,
            "fct_ps": fct,
            "ideal_fct_ps": ideal,
            "slowdown": fct / ideal,
            "mean_rate_gbps": size * 8e3 / fct,
            "base_rtt_ps": [path.base_rtt_ps for path in paths],
            "bdp_bytes": [bdp_of[id(path)] for path in paths],
            "hops": [path.hops for path in paths],
            "packets": n_packets,
            "sent_packets": np.round(fs[:, K.FS_SENT] / mss).astype(np.int64),
            "retransmits": retrans.astype(np.int64),
            "timeouts": fs[:, K.FS_TIMEOUTS].astype(np.int64),
            "fast_retransmits": np.round(fs[:, K.FS_FAST_BYTES] / mss).astype(np.int64),
            "coded": coded,
            "nacks": np.where(coded, loss_events, 0),
            "sent_bytes": np.round(fs[:, K.FS_SENT]).astype(np.int64),
            "ecn_acks": np.round(fs[:, K.FS_MARKED] / mss).astype(np.int64),
            "bytes_delivered": np.where(finished, size, np.floor(frac * size)).astype(np.int64),
            "cc": [p.cc_name for p in plans],
            "lb": [self.cfg.lb.algo] * n,
            "seed": [self.cfg.seed] * n,
        }
        assert set(cols) == set(FLOW_COLUMNS)
        return flows_frame(cols)

    def ports_table(self) -> pd.DataFrame:
        ls = self.ls
        busy = np.nonzero(ls[:, K.LS_IN] > 0)[0]
        edges = self.scenario.routing.edges
        mss = self.scenario.data_bytes
        return pd.DataFrame(
            {
                "port": [self.port_names[i] for i in busy],
                "kind": [edges[i].kind for i in busy],
                "rate_gbps": [edges[i].rate_bps / 1e9 for i in busy],
                "buffer_bytes": [edges[i].buffer_bytes for i in busy],
                "arrivals": np.round(ls[busy, K.LS_IN] / mss).astype(np.int64),
                "tx_packets": np.round(ls[busy, K.LS_TX] / mss).astype(np.int64),
                "tx_bytes": np.round(ls[busy, K.LS_TX]).astype(np.int64),
                "drops": np.round(ls[busy, K.LS_DROP] / mss).astype(np.int64),
                "fault_drops": np.zeros(len(busy), dtype=np.int64),
                "ecn_marks": np.round(ls[busy, K.LS_MARKS] / mss).astype(np.int64),
                "max_queue_bytes": ls[busy, K.LS_MAXQ],
                "queue_bytes_at_end": ls[busy, K.LS_Q],
            }
        )

    def _collect(self, wall_s: float, sampler) -> RunResult:
        flows = self.flows_table()
        fs = self.fs
        delivered_ok = np.all(fs[:, K.FS_DELIVERED] <= fs[:, K.FS_SENT] * (1 + 1e-9) + 1e-6)
        if not delivered_ok:
            from uno.core.errors import InvariantError

            raise InvariantError("fluid engine: a flow delivered more bytes than it sent")
        summary = {
            "run": dict(
                self.meta,
                sim_time_us=self.now_ps / PS_PER_US,
                wall_s=wall_s,
                events=0,
                packet_hops=0,
                packet_hops_per_s=0.0,
                fluid_steps=int(self.k_done),
                fluid_step_us=self.dt_first_ps / PS_PER_US,
                fluid_step_last_us=self.dt_ps / PS_PER_US,
                all_flows_finished=bool(flows["finish_ps"].notna().all()),
                peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                lb_model=(
                    "the packet engine's ECMP path"
                    if self.cfg.lb.algo in SINGLE_PATH_LB
                    else "UnoLB subflows on hashed paths, moved on losses"
                    if self.cfg.lb.algo in SUBFLOW_LB
                    else "even split over equal-cost paths"
                ),  # fmt: skip
            ),
            "classes": class_summary(flows),
            "packets": {},
            "retransmits": int(flows["retransmits"].sum()),
            "timeouts": int(flows["timeouts"].sum()),
            "fluid": {
                "lost_bytes": float(fs[:, K.FS_LOST].sum()),
                "sent_bytes": float(fs[:, K.FS_SENT].sum()),
                "delivered_bytes": float(fs[:, K.FS_DELIVERED].sum()),
            },
        }
        tables = {"flows": flows}
        if sampler is not None:
            tables.update(sampler.tables())
        tables["ports"] = self.ports_table()
        return RunResult(flows=flows, tables=tables, summary=summary)


class _Sampler:
    """The rates / cwnd / queues tables of the packet engine's recorder, sampled between
    chunks of steps (every ``engine.sample_interval_us``)."""

    def __init__(self, sim: FluidSimulation, cfg):
        import fnmatch

        en = cfg.engine
        self.sim = sim
        self.en = en
        names = sim.port_names
        routing = sim.scenario.routing
        dsts = {p.spec.dst for p in sim.flows}
        chosen: list[int] = []
        busy = False
        for sel in en.queue_ports:
            if sel == "receivers":
                chosen += [
                    e.edge_id
                    for e in routing.edges
                    if is_switch_port(routing, e)
                    and routing.topo.nodes[e.dst].kind == HOST
                    and routing.host_id_of_node[e.dst] in dsts
                ]
            elif sel == "all":
                chosen += list(range(len(names)))
            elif sel == "busy":
                busy = True
            else:
                chosen += [i for i, nm in enumerate(names) if fnmatch.fnmatchcase(nm, sel)]
        self.ports = np.array(sorted(set(chosen)), dtype=np.int64)
        self.busy = busy
        self.last_sent = np.zeros(len(sim.flows))
        self.last_acked = np.zeros(len(sim.flows))
        self.last_t = 0
        # per sample: (time, flow or port indices, two value arrays)
        self.rates: list[tuple] = []
        self.cwnd: list[tuple] = []
        self.queues: list[tuple] = []

    def sample(self, now_ps: int) -> None:
        sim = self.sim
        fs, cs, ls = sim.fs, sim.cs, sim.ls
        span = now_ps - self.last_t
        self.last_t = now_ps
        running = np.nonzero(fs[:, K.FS_STATE] == 1.0)[0]
        if self.en.sample_rates and span > 0 and len(running):
            scale = 8e3 / span  # bytes per ps -> Gb/s
            sent = fs[running, K.FS_SENT]
            acked = fs[running, K.FS_ACKED]
            self.rates.append(
                (now_ps, running, (sent - self.last_sent[running]) * scale,
                 (acked - self.last_acked[running]) * scale)
            )  # fmt: skip
            self.last_sent[running] = sent
            self.last_acked[running] = acked
        if self.en.sample_cwnd and len(running):
            self.cwnd.append(
                (now_ps, running, cs[running, K.C_CWND], fs[running, K.FS_INFLIGHT].copy())
            )
        if self.en.sample_queues:
            ports = self.ports
            if self.busy:
                ports = np.union1d(ports, np.nonzero(ls[:, K.LS_Q] > 0)[0])
            if len(ports):
                self.queues.append((now_ps, ports, ls[ports, K.LS_Q], ls[ports, K.LS_PH]))

    def tables(self) -> dict[str, pd.DataFrame]:
        flow_ids = np.array([p.spec.flow_id for p in self.sim.flows], dtype=np.int64)
        names = np.array(self.sim.port_names, dtype=object)
        out = {}
        for name, rows, cols, key_map in (
            ("rates", self.rates, ["flow_id", "sent_gbps", "acked_gbps"], flow_ids),
            ("cwnd", self.cwnd, ["flow_id", "cwnd_bytes", "inflight_bytes"], flow_ids),
            ("queues", self.queues, ["port", "queue_bytes", "phantom_bytes"], names),
        ):
            if not rows:
                out[name] = pd.DataFrame({c: [] for c in ["time_ps", *cols]})
                continue
            lengths = [len(r[1]) for r in rows]
            data = {"time_ps": np.repeat([r[0] for r in rows], lengths).astype(np.int64)}
            data[cols[0]] = key_map[np.concatenate([r[1] for r in rows])]
            data[cols[1]] = np.concatenate([r[2] for r in rows])
            data[cols[2]] = np.concatenate([r[3] for r in rows])
            out[name] = pd.DataFrame(data)
        return out

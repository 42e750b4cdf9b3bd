"""The fluid kernels' arrays, built in Python from the scenario: the links' rows, the flows' rows,
the delay lines' lengths and pool, the route entries by level (:data:`uno.fluid.state.Hops`),
each flow's wire link, and the congestion controllers' rows. Rows of the hot tables start on
cache lines (:func:`uno.fluid.memory.zeros_aligned`).

Units: time in ps, sizes in bytes, rates in bytes/ps.
"""

from __future__ import annotations

import numpy as np

from uno.cc.adapter import make_cc
from uno.cc.law import window_pacing
from uno.cc.registry import LAW_BY_NAME
from uno.core.arrays import concat_ranges
from uno.fluid import columns as C
from uno.fluid.cycles import TALLY
from uno.fluid.forward import NOT_IN_LEVEL
from uno.fluid.int_records import no_int_state
from uno.fluid.memory import zeros_aligned
from uno.fluid.phases import INPUTS_MAX
from uno.fluid.qcn import no_qcn_state
from uno.fluid.routes import (
    BYTES_PER_PS_PER_BPS,
    PER_PACKET_LB,
    route_drains_ps,
    route_groups,
)
from uno.fluid.state import Hops, RingPool, StepScratch
from uno.fluid.timers import far_timer_arrays
from uno.scenario import Scenario


def link_rows(scenario: Scenario, mark_step_mean: bool = False) -> np.ndarray:
    """Each link's row (``LS_*``): its rate, buffer, RED thresholds (-1: none) and span,
    phantom queue and which queue marks (``LS_MODE``; ``mark_step_mean``: the physical queue
    at its mean over the step, ``MODE_STEP_MEAN``), idle (everything passes, no departure
    grid)."""
    edges = scenario.routing.edges
    ls = zeros_aligned(len(edges), C.N_LS)
    for e in edges:
        row = ls[e.edge_id]
        row[C.LS_CAP] = e.rate_bps * BYTES_PER_PS_PER_BPS
        row[C.LS_BUF] = float(e.buffer_bytes)
        row[C.LS_KMIN] = row[C.LS_KMAX] = -1.0
        row[C.LS_PASS] = 1.0
        row[C.LS_GRID] = -1.0  # idle: no departure grid yet
        row[C.LS_FOLD] = 1.0
        m = scenario.marking[e.edge_id]
        if m is None:
            continue
        if m.red_kmin_bytes is not None:
            row[C.LS_KMIN], row[C.LS_KMAX] = m.red_kmin_bytes, m.red_kmax_bytes
            row[C.LS_KSPAN] = (m.red_kmax_bytes - m.red_kmin_bytes) / m.red_pmax
        if m.phantom_size_bytes is not None:
            row[C.LS_PHSIZE] = m.phantom_size_bytes
            row[C.LS_PHDRAIN] = m.phantom_drain_bps * BYTES_PER_PS_PER_BPS
            row[C.LS_PHKMIN], row[C.LS_PHKMAX] = m.phantom_kmin_bytes, m.phantom_kmax_bytes
            row[C.LS_PH_COUNTS] = (C.PH_COUNTS_DROPS if m.phantom_counts_drops else 0) + (
                C.PH_COUNTS_ACKS if m.phantom_counts_acks else 0
            )
        physical = m.marks_physical
        phantom = m.marks_phantom
        row[C.LS_MODE] = (
            C.MODE_EITHER if physical and phantom
            else C.MODE_PHYSICAL if physical
            else C.MODE_PHANTOM if phantom
            else C.MODE_NONE
        )  # fmt: skip
        if physical and mark_step_mean:
            row[C.LS_MODE] += C.MODE_STEP_MEAN
    return ls


def flow_rows(cfg, scenario: Scenario, plans, src, n_packets, coded, n_sent, nic_link):
    """Each flow's row (``FS_*``) at the start: the wire bytes it must deliver (a coded flow's
    with its parity: ``n_sent`` packets of ``n_packets``), its blocks and receiver's timer
    (coded), fast retransmit's threshold in bytes, its timeouts, start, base RTT and its host's
    NIC (``nic_link``: each host's)."""
    n = len(plans)
    ec = cfg.ec
    routing = scenario.routing
    fs = zeros_aligned(n, C.N_FS)
    wire = np.fromiter((p.wire_bytes for p in plans), dtype=np.int64, count=n)
    size = wire.astype(np.float64)
    dupack = np.fromiter((p.facts.dupack_threshold for p in plans), dtype=np.int64, count=n)
    if coded.any():
        n_data = n_packets[coded]
        size[coded] *= n_sent[coded] / n_data
        fs[coded, C.FS_EC_N] = np.minimum(ec.data_packets, n_data)
        fs[coded, C.FS_EC_M] = ec.parity_packets
        timeouts = [p.ec_timeout_ps for p in plans]
        fs[coded, C.FS_LOSS_DELAY] = [t for t in timeouts if t is not None]
        # (ec.retransmit_timeout: a block opened by a retransmission; "same" has none)
        fs[coded, C.FS_RETX_LOSS_DELAY] = [
            p.ec_timeout_ps if p.ec_retransmit_timeout_ps is None else p.ec_retransmit_timeout_ps
            for p in plans
            if p.ec_timeout_ps is not None
        ]
    fast = ~coded & (dupack > 0)  # (coded flows: refused, check_coded_loss_detection)
    fs[fast, C.FS_DUPACK_BYTES] = dupack[fast] * scenario.data_bytes
    fs[fast | coded, C.FS_LOSS_NACK] = 1.0
    # (switch.trimming: a switch port cuts a packet it cannot queue to its header, which the
    # receiver NACKs; the fluid's drops are all at switch ports: a host's NIC sends what its line takes)
    fs[:, C.FS_TRIMS] = 0.0 if cfg.switch.trimming.enabled else -1.0
    fs[:, C.FS_RTO] = np.fromiter((p.facts.rto_ps for p in plans), dtype=np.int64, count=n)
    # the timeout once a flow has resent (0: the same; transport.*.rto_base_rtts_after_retransmit)
    fs[:, C.FS_RTO_AFTER] = np.fromiter(
        (p.facts.rto_after_retransmit_ps or 0 for p in plans), dtype=np.int64, count=n
    )
    fs[:, C.FS_SIZE] = size
    fs[:, C.FS_UNSENT] = size
    fs[:, C.FS_START] = np.fromiter((p.spec.start_ps for p in plans), dtype=np.int64, count=n)
    fs[:, C.FS_HALT] = [p.spec.stop_ps or 0 for p in plans]
    fs[:, C.FS_FINISH] = -1.0
    fs[:, C.FS_LOSS_AT] = -1.0
    # a flow of less than one data packet: its one packet's base RTT, as the packet engine's
    fs[:, C.FS_BASE_RTT] = np.fromiter(
        (p.path.base_rtt_ps if p.ideal_base_rtt_ps is None else p.ideal_base_rtt_ps for p in plans),
        dtype=np.int64,
        count=n,
    )
    nic_rate = np.array([routing.edges[e].rate_bps for e in nic_link.tolist()], dtype=np.int64)
    fs[:, C.FS_NIC] = nic_rate[src] * BYTES_PER_PS_PER_BPS
    fs[:, C.FS_NIC_LINK] = nic_link[src]
    if cfg.engine.fluid_last_packet:
        fs[:, C.FS_LAST_EARLY] = last_ack_early_ps(cfg, scenario, plans, src, n_packets)
    return fs


def last_ack_early_ps(cfg, scenario: Scenario, plans, src, n_packets):
    """Per flow, how much earlier (ps) a packet sender hears its last packet's ACK than the
    fluid hears its last byte's, their bytes leaving the NIC alike. A fluid byte's ACK comes
    a base RTT (``FS_BASE_RTT``) after the byte left the NIC: the flow's last byte's at the end
    of the message's serialisation there. A packet's comes a base RTT of its own size after
    its serialisation began, and the last packet (the flow's last payload bytes and a header,
    or a full packet with ``transport.pad_last_packet``) crosses each hop at its own size. A
    lone flow then finishes in both engines alike, before its ideal FCT (the base RTT and the
    whole message's serialisation).

    One packet of L bytes: L's NIC time (its base RTT is L's already, ``ideal_base_rtt_ps``).
    Several, the last of L bytes behind full ones of M: what the last ACK gains is M's and L's
    NIC times and M's serialisation at every hop, less when the last packet and the one before
    it have both crossed the last hop (:func:`last_two_packets_ps`; on one path of equal rates,
    M's NIC time). Where the balancer sends each packet its own way (:data:`PER_PACKET_LB`)
    the two cross the same links with the chance that two packets hash alike at every switch
    of the path, and otherwise meet only at its first and last hop: the mean of the two."""
    routing, mtu = scenario.routing, cfg.transport.mtu_bytes
    n = len(plans)
    size = np.fromiter((p.spec.size_bytes for p in plans), dtype=np.int64, count=n)
    dst = np.fromiter((p.spec.dst for p in plans), dtype=np.int64, count=n)
    full = scenario.data_bytes
    last = np.full(n, full, dtype=np.int64)
    if not cfg.transport.pad_last_packet:
        last = np.where(n_packets > 0, size - (n_packets - 1) * mtu + scenario.header_bytes, 0)
    early = np.zeros(n, dtype=np.float64)
    sent = np.flatnonzero(n_packets > 0)
    if len(sent) == 0:
        return early
    fwd = routing.path_edge_matrix(src[sent], dst[sent])
    rate = np.array([e.rate_bps for e in routing.edges] + [1], dtype=np.int64)[fwd]
    on = fwd >= 0
    bits_ps = 8 * 10**12
    full_ps = np.where(on, -(-(full * bits_ps) // rate), 0)
    last_ps = np.where(on, -(-(last[sent, None] * bits_ps) // rate), 0)
    stream_ps = (n_packets[sent] - 2).clip(0) * full_ps[:, 0]
    both = last_two_packets_ps(full_ps, last_ps, on, on, stream_ps)
    if cfg.lb.algo in PER_PACKET_LB:
        final = on.sum(axis=1) - 1
        hop = np.arange(fwd.shape[1])
        ends = on & ((hop == 0) | (hop == final[:, None]))
        apart = last_two_packets_ps(full_ps, last_ps, on, ends, stream_ps)
        same = alike_path_chance(routing, fwd, dst[sent])
        both = same * both + (1.0 - same) * apart
    several = n_packets[sent] > 1
    early[sent] = np.where(
        several, full_ps[:, 0] + last_ps[:, 0] + full_ps.sum(axis=1) - both, last_ps[:, 0]
    )
    return early


def last_two_packets_ps(full_ps, last_ps, on, shared, stream_ps) -> np.ndarray:
    """Per flow (rows: hops in path order, ``on`` where the path has one), when its last
    packet and the full one before it have both crossed the last hop, in ps from the full
    one's start at the NIC. Each hop serialises them in ``full_ps`` and ``last_ps``; the full
    one meets no wait (the flow's packets leave each hop as they came: no hop slower than
    the NIC), the last one waits for it where they cross the same link (``shared``), and
    where it has overtaken it there it goes into the stream of the flow's full packets (the
    ``stream_ps`` of them before, back to back), which it delays by its own serialisation
    once the stream has begun."""
    at_full = np.zeros(len(full_ps), dtype=np.int64)
    at_last = np.zeros(len(full_ps), dtype=np.int64)
    for h in range(full_ps.shape[1]):
        behind = at_last >= at_full
        done_full = at_full + full_ps[:, h]
        into = (at_last + last_ps[:, h] - (at_full - stream_ps)).clip(0, last_ps[:, h])
        share = shared[:, h]
        done_last = np.where(
            share & behind, np.maximum(at_last, done_full) + last_ps[:, h],
            np.where(share, done_full + into, at_last + last_ps[:, h]),
        )  # fmt: skip
        done_full = np.where(share & ~behind, done_full + into, done_full)
        at_full = np.where(on[:, h], done_full, at_full)
        at_last = np.where(on[:, h], done_last, at_last)
    return np.maximum(at_full, at_last)


def alike_path_chance(routing, fwd, dst) -> np.ndarray:
    """Per flow, the chance that two of its packets of random entropies cross the same links
    all along its path (``fwd``: its first path's edges, -1 padded; every path of the pair
    alike): one over the equal-cost next hops at each node of it, towards ``dst``."""
    ptr, _ = routing.next_hop_table()
    edge_src = np.array([e.src for e in routing.edges] + [0], dtype=np.int64)
    row = edge_src[fwd] * len(routing.host_nodes) + dst[:, None]
    fanout = np.where(fwd >= 0, ptr[row + 1] - ptr[row], 1)
    return 1.0 / np.prod(np.maximum(fanout, 1), axis=1)


def ring_lengths(routing, routes, src, dst, fs, dt_ps: float) -> np.ndarray:
    """Each flow's delay line, in steps of ``dt_ps``: a step's bytes leave the sender within
    the step, then take one RTT (base + queueing, at most every buffer on the path full: the
    drain time of the queues is that of the route of the pair's first flow, the data's route
    and the ACKs' route back, as an ACK waits behind the reverse path's queues); the line also
    holds each step's lost bytes until their retransmission timer expires (``R_TIMEOUT``, at
    most ceil(RTO / dt) + 1 steps on), and a coded flow's until its receiver's NACK reaches it,
    an RTT and the receiver's timer after their send (``R_NACK``)."""
    base_rtt = fs[:, C.FS_BASE_RTT].astype(np.int64)
    rto = fs[:, C.FS_RTO].astype(np.int64)
    rto_after = fs[:, C.FS_RTO_AFTER].astype(np.int64)
    drain = route_drains_ps(routing, routes.rt_ptr, routes.rt_link, routes.rt_w) + route_drains_ps(
        routing, routes.rv_ptr, routes.rv_link, routes.rv_w
    )
    if len(src):
        _, first, pair_of = np.unique(
            src * len(routing.host_nodes) + dst, return_index=True, return_inverse=True
        )
        drain = drain[first][pair_of.reshape(-1)]
    longest = base_rtt + drain + 2 * dt_ps
    longest = np.maximum(longest, np.maximum(rto, rto_after) + dt_ps)
    longest = np.maximum(
        longest,
        base_rtt + drain + fs[:, C.FS_LOSS_DELAY] * (fs[:, C.FS_EC_N] > 0) + 2 * dt_ps,
    )
    return np.ceil(longest / dt_ps).astype(np.int64) + 2


def first_line_lengths(ring_len: np.ndarray, fs: np.ndarray, dt_ps: float) -> np.ndarray:
    """Each flow's delay line as it starts, in steps of ``dt_ps``: the lesser of the least
    power of two that holds two base RTTs and a few steps, and its base RTT, a quarter more and
    :data:`LINE_QUEUE_STEPS` rounded up to three significant bits (a long RTT's queueing is a
    small part of it, and its slots are the run's memory: a cross-DC flow of a 50 ms RTT at the
    intra-DC step takes a line of 12,288 slots, not 32,768); at most its longest
    (``ring_len``, :func:`ring_lengths`). A line grows to the next power of two that holds a
    delay that does not fit (queues: :func:`uno.fluid.rings.grown_length`), so no line is ever
    longer than it would be from a start of two base RTTs; a run reads the same feedback at
    the same steps whatever the lines' lengths."""
    base_steps = np.ceil(fs[:, C.FS_BASE_RTT] / dt_ps).astype(np.int64)
    want = 2 * base_steps + 4
    first = np.left_shift(1, np.ceil(np.log2(np.maximum(want, 1))).astype(np.int64))
    first = np.minimum(first, _round_up_coarsely(base_steps + base_steps // 4 + LINE_QUEUE_STEPS))
    return np.minimum(first, ring_len).astype(np.int64)


def _round_up_coarsely(n: np.ndarray) -> np.ndarray:
    """``n`` rounded up to three significant bits (at most 1/8 more): lines of nearby lengths
    share a class of the pool, so a line one flow gives back fits the next."""
    grain = np.left_shift(1, np.maximum(np.ceil(np.log2(np.maximum(n, 1))).astype(np.int64) - 3, 0))
    return (n + grain - 1) // grain * grain


#: the queueing (in steps) a long-RTT flow's first delay line holds beyond 5/4 of its base RTT:
#: eight intra-DC base RTTs at the default step (``engine.fluid_step_intra_rtt`` = 1/8)
LINE_QUEUE_STEPS = 64


def ring_level(fs: np.ndarray) -> int:
    """The columns the delay lines keep (:mod:`uno.fluid.columns`): all of them
    (``RING_FULL``) only where a flow is coded or trimmed; up to the fast-retransmit column
    (``RING_RETX``) where a flow retransmits fast; the samples (``RING_SAMPLES``) where a
    flow's law reads a batch's least RTT sample or its delivery-rate sample; else the narrow
    row. QCN's and INT's columns follow any level: the ring is a run's largest array."""
    if (fs[:, C.FS_EC_N] > 0).any() or (fs[:, C.FS_TRIMS] >= 0).any():
        return C.RING_FULL
    if (fs[:, C.FS_DUPACK_BYTES] > 0).any():
        return C.RING_RETX
    if (fs[:, C.FS_RTTMIN] > 0).any() or (fs[:, C.FS_RATE] > 0).any():
        return C.RING_SAMPLES
    return C.RING_NARROW


def growth_ladders(ring_len: np.ndarray, first: np.ndarray):
    """Per distinct (first length, longest) pair of the flows' lines, the lengths its line can
    take (``first``, the powers of two above it, its longest: :func:`uno.fluid.rings.grown_length`
    picks among them) and the number of flows with that pair."""
    pairs, counts = np.unique(np.stack([first, ring_len], axis=1), axis=0, return_counts=True)
    for (start, longest), count in zip(pairs.tolist(), counts.tolist(), strict=True):
        lengths, length = [start], start
        while length < longest:
            length = min(1 << int(length).bit_length(), longest)  # (the next power of two)
            lengths.append(length)
        yield lengths, count


def ring_pool(ring_len: np.ndarray, first: np.ndarray, level: int = C.RING_FULL,
              line_slots: int | None = None, int_col: int = -1) -> RingPool:  # fmt: skip
    """The pool the running flows take their delay lines from (:func:`uno.fluid.rings.ring_take`):
    each flow's line starts ``first`` long and may grow, onto the powers of two above it, to
    ``ring_len`` or ``line_slots`` (``engine.fluid_line_slots``; None: no bound), whichever is
    less (:func:`growth_ladders`); a flow whose ``ring_len`` (its reach) is beyond that files
    the rest in a tail (:func:`tail_geometry`). The lines of one length are one class, whose
    stack of free lines has room for every flow that may hold one; none handed out yet
    (all-zero is every slot's empty state, so rows never reached are not even touched).
    ``level``: the columns the ring keeps (:func:`ring_level`); ``int_col``: its first INT
    column (-1: none)."""
    n = len(ring_len)
    reach = ring_len.astype(np.int64)
    cap = reach if line_slots is None else np.minimum(reach, line_slots)
    first = np.minimum(first, cap)
    tail_width, tail_slots = tail_geometry(reach, cap, line_slots)
    ladders = list(growth_ladders(cap, first))
    n_tails = int((tail_width > 0).sum())
    if n_tails:
        ladders.append(([tail_slots], n_tails))
    class_len = np.unique(np.concatenate([[1], *(lengths for lengths, _ in ladders)]))
    per_class = np.zeros(len(class_len), dtype=np.int64)
    for lengths, count in ladders:
        per_class[np.searchsorted(class_len, lengths)] += count
    free_base = np.concatenate([[0], np.cumsum(per_class)[:-1]]).astype(np.int64)
    return RingPool(np.full(n, -1, dtype=np.int64), first.astype(np.int64).copy(),
                    cap.astype(np.int64), class_len.astype(np.int64),
                    np.zeros(int(per_class.sum()), dtype=np.int64), free_base,
                    np.zeros(len(class_len), dtype=np.int64), np.zeros(1, dtype=np.int64),
                    np.full(1, level, dtype=np.int64), *far_timer_arrays(n), reach,
                    np.full(n, -1, dtype=np.int64), tail_width,
                    np.array([tail_slots, int_col], dtype=np.int64))  # fmt: skip


def no_tails(reach: np.ndarray, int_col: int = -1) -> tuple:
    """A pool's tail fields (:data:`RingPool`'s last four) where every flow's reach
    (``reach``, steps) fits its line: no tails."""
    n = len(reach)
    return (np.asarray(reach, dtype=np.int64), np.full(n, -1, dtype=np.int64),
            np.zeros(n, dtype=np.int64), np.array([0, int_col], dtype=np.int64))  # fmt: skip


def tail_geometry(reach: np.ndarray, cap: np.ndarray, line_slots: int | None):
    """Each flow's tail slot width in steps (0: its reach fits its line) and the slots of a
    tail: half ``line_slots``, or more where a flow's reach needs them. A width is the least
    power of two with which half ``line_slots`` slots (two kept spare: the tail wraps) span
    the flow's reach, at most a quarter of its line (a slot spreads over the line's slots of
    its steps, :func:`uno.fluid.rings.pour_tail`), so feedback filed in the tail comes back
    less than ``2 reach / (line_slots / 2 - 2)`` steps early or late."""
    width = np.zeros(len(reach), dtype=np.int64)
    if line_slots is None:
        return width, 0
    half = max(line_slots // 2, 8)
    tails = reach > cap
    if not tails.any():
        return width, half
    want = np.ceil(reach[tails] / (half - 2)).astype(np.int64)
    pow2 = np.left_shift(1, np.ceil(np.log2(np.maximum(want, 1))).astype(np.int64))
    quarter = np.left_shift(1, np.floor(np.log2(np.maximum(cap[tails] // 4, 1))).astype(np.int64))
    width[tails] = np.minimum(pow2, quarter)
    slots = int(max(half, (np.ceil(reach[tails] / width[tails]) + 2).max()))
    return width, slots


def ring_rows_bound(pool: RingPool) -> int:
    """The most rows ``pool`` can hand out (:func:`uno.fluid.rings.take_block`): a flow takes
    each length of its growth ladder (:func:`growth_ladders`) at most once, and its lines are
    only ever taken again by others once given back, so the rows never used before are at
    most the sum of every flow's ladder: each class's length times the room of its stack."""
    room = np.diff(np.append(pool.free_base, len(pool.free_rows)))
    return int((pool.class_len * room).sum())


def step_scratch(n_flows: int, n_links: int, n_sub: int, max_parity: int,
                 rtt_bins: int = 0) -> StepScratch:  # fmt: skip
    """The step loop's working arrays (:func:`uno.fluid.kernels.advance` allocates nothing):
    each of the ``n_sub`` subflows' loss chance, a coded block's loss figures (the subflows'
    chances, then the distribution of up to ``max_parity`` + 1 lost packets); the step's NICs, senders, flows that lost bytes and flows that
    delivered some, with their counts; the tally of where the steps' time went
    (:data:`uno.fluid.cycles.TALLY`); ``rtt_bins`` RTT bins (0: RTTs not recorded); each
    subflow's RTT offset."""
    return StepScratch(
        np.zeros(n_sub), np.zeros(n_sub + max_parity + 2), np.zeros(n_links, dtype=np.int64), np.zeros(n_flows, dtype=np.int64),
        np.zeros(n_flows, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.zeros(n_flows, dtype=np.int64), np.zeros(1, dtype=np.int64),
        np.zeros(TALLY.size, dtype=np.int64), np.zeros(rtt_bins), np.zeros(n_sub),
    )  # fmt: skip


def link_pairs(rt_link, rt_w, gstart, nxt, sub_n, sub_hops, sub_links):
    """Which link follows which: consecutive hops of the routes (every link of a split hop
    feeds every link of the next) and of the subflows, as lists of (src, dst) link arrays."""
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
    return src, dst


def link_levels(n_links: int, src: list, dst: list) -> np.ndarray:
    """Each link's level: one past the deepest link feeding it (Kahn's order, one round per
    level over the pairs leaving the round's frontier at once); links on a cycle (none in the
    Clos and dumbbell topologies) get one level after all the others."""
    level = np.zeros(n_links, dtype=np.int64)
    if not src:
        return level
    # (unique pairs as one integer each: np.unique over rows sorts far slower)
    key = np.unique(np.concatenate(src).astype(np.int64) * n_links + np.concatenate(dst))
    pairs = np.stack([key // n_links, key % n_links], axis=1)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
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
    return level


def route_entries(rt_ptr, rt_link, rt_w, gstart, nxt, level, sub_links):
    """The route entries' integer and float rows (``EI_*``, ``EF_*``): the routes' entries,
    then UnoLB's subflow hops (their links and next hops are read from ``sub_links`` as they
    move). A hop whose next hop is not on a later level hands its bytes on at the next step
    (``EI_LAG`` = 1)."""
    n = len(rt_ptr) - 1
    lag = np.zeros(len(rt_w), dtype=np.int64)
    has = nxt >= 0
    if has.any():
        a = np.nonzero(has)[0]
        hi = np.zeros(len(rt_w), dtype=np.int64)  # per hop: the highest level of its links
        lo = np.full(len(rt_w), 1 << 30, dtype=np.int64)  # and the lowest
        np.maximum.at(hi, gstart, level[rt_link])
        np.minimum.at(lo, gstart, level[rt_link])
        lag[a] = (lo[nxt[a]] <= hi[gstart[a]]).astype(np.int64)
    n_rt = len(rt_link)
    n_entries = n_rt + sub_links.size
    # (int32, as the links' and levels' lists: half the cache lines of int64; every value is
    # an index of a link, flow or entry, or a small code)
    ei = zeros_aligned(n_entries, C.N_EI, np.int32)
    ei[:] = -1
    ef = zeros_aligned(n_entries, C.N_EF)
    ei[:n_rt, C.EI_LINK] = rt_link
    ei[:n_rt, C.EI_FLOW] = np.repeat(np.arange(n, dtype=np.int64), np.diff(rt_ptr))
    ei[:n_rt, C.EI_GSTART] = gstart
    ei[:n_rt, C.EI_NEXT] = nxt
    ei[:n_rt, C.EI_LAG] = lag
    ef[:n_rt, C.EF_W] = rt_w
    sub = np.arange(n_rt, n_entries, dtype=np.int64)
    ei[n_rt:, C.EI_FLOW] = (sub - n_rt) // max(1, sub_links.shape[1] * sub_links.shape[2])
    ei[n_rt:, C.EI_GSTART] = sub
    ef[n_rt:, C.EF_W] = 1.0
    return ei, ef


def hop_state(n_links, rt_ptr, rt_link, rt_w, sub_n, sub_hops, sub_links, ack_w=None,
              ack_hops=None) -> Hops:  # fmt: skip
    """The route entries and the links by level (:data:`uno.fluid.state.Hops`): the links'
    levels (the longest chain of links before each on the routes, so that a link is advanced
    after every link that feeds it in the same step), the routes' hop structure and the
    per-entry state, the per-level lists, and the phase drops' scratch. The grids' and the
    ACKs' settings are zero (the engine sets them); ``ack_w``, ``ack_hops``: every ACK route's
    weights and each flow's subflows' ACK hops (default: none). No INT records
    (:func:`uno.fluid.int_records.no_int_state`; the engine sets them where a law reads them),
    no QCN congestion points (:func:`uno.fluid.qcn.no_qcn_state`)."""
    gstart, nxt = route_groups(rt_ptr, rt_w)
    level = link_levels(n_links, *link_pairs(rt_link, rt_w, gstart, nxt, sub_n, sub_hops,
                                             sub_links))  # fmt: skip
    n_lvl = int(level.max(initial=0)) + 1
    ei, ef = route_entries(rt_ptr, rt_link, rt_w, gstart, nxt, level, sub_links)
    acks = np.zeros(C.ACKS.size)
    acks[C.ACKS.qcn] = -1.0  # (no congestion point: uno.fluid.qcn)
    acks[C.ACKS.dqm] = -1.0  # (no receiver rate: uno.fluid.dci)
    acks[C.ACKS.dup] = -1.0  # (no law hears duplicate ACKs: uno.fluid.filing)
    return Hops(
        level.astype(np.int32), np.array([n_lvl], dtype=np.int64), ei, ef,
        np.zeros(n_lvl, dtype=np.int64), np.full(n_links, NOT_IN_LEVEL, dtype=np.int32),
        np.zeros(n_lvl, dtype=np.int64), np.zeros(n_links, dtype=np.int64),
        np.zeros(n_lvl, dtype=np.int64),
        np.zeros(C.GRID.size, dtype=np.uint64), np.full(n_links, -1, dtype=np.int32),
        np.zeros((n_links, INPUTS_MAX), dtype=np.int32),
        np.zeros((n_links, C.FIG.size, INPUTS_MAX + 1)), np.zeros(n_links, dtype=np.int64),
        np.zeros(INPUTS_MAX, dtype=np.int64), acks,
        np.zeros(0) if ack_w is None else ack_w,
        np.zeros(len(sub_n), dtype=np.int64) if ack_hops is None else ack_hops,
        np.full(n_links, -1, dtype=np.int32), *no_int_state(len(ei)),
        *no_qcn_state(n_links),
    )  # fmt: skip


def route_wire(fs, hops: Hops, rt_ptr, rt_link, sub_n, link_delay, long_ps: float) -> None:
    """Each single-path or sprayed flow's wire link (``engine.fluid_wire``;
    :func:`uno.fluid.forward.forward`): its route's longest link when that link's propagation
    is at least ``long_ps`` (a WAN link) and a hop follows it. Its entries (every link of the
    hop, when the hop is split) hand their departures on ``FS_WIRE_PS`` later (``EI_LAG`` = -1)
    to the next hop's first entry (``FS_WIRE_NEXT``)."""
    ei = hops.ei
    n_rt = len(rt_link)
    delay = link_delay[rt_link]  # (per route entry, its link's propagation, ps)
    starts = rt_ptr[:-1]
    longest = np.maximum.reduceat(delay, starts)
    flow_of = ei[:n_rt, C.EI_FLOW]
    # the first entry of each route with its longest propagation
    where = np.where(delay == longest[flow_of], np.arange(n_rt), n_rt)
    first = np.minimum.reduceat(where, starts)
    nxt = ei[first, C.EI_NEXT]
    wired = (longest >= long_ps) & (nxt >= 0) & (sub_n == 0)
    if not wired.any():
        return
    group = ei[first, C.EI_GSTART]
    on_wire = wired[flow_of] & (ei[:n_rt, C.EI_GSTART] == group[flow_of])
    ei[:n_rt, C.EI_LAG][on_wire] = -1
    fs[wired, C.FS_WIRE_NEXT] = nxt[wired]
    fs[wired, C.FS_WIRE_PS] = longest[wired]


def subflow_wire(fs, sub_n, sub_hops, sub_links, link_delay, long_ps: float) -> bool:
    """:func:`route_wire` for the UnoLB flows: the hop of each flow's first subflow's longest
    link (``FS_WIRE_HOP``), when every subflow's link there has that propagation and a hop
    follows it; each subflow's departures there reach its own next hop through the delay
    line's columns ``R_SUBWIRE + 2 s``. Returns whether any flow has one (the ring then needs
    two columns a subflow)."""
    if not sub_n.any():
        return False
    n_sub = sub_links.shape[1]
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
        return False
    fs[wired, C.FS_WIRE_HOP] = wire_hop[wired]
    fs[wired, C.FS_WIRE_PS] = longest[wired]
    return True


def cc_params(cfg, plan) -> np.ndarray:
    """The ``P_*`` row of ``plan``'s controller: its law's constants (:mod:`uno.cc.law`), as the
    packet engines build them with the same config and FlowContext."""
    obj = make_cc(plan.cc_name, cfg.cc, plan.ctx)
    row = np.zeros(max(C.N_P, len(obj.consts)))
    row[: len(obj.consts)] = obj.consts
    row[C.P_KIND] = C.CC_LAW + obj.kind
    return row


def cc_rows(cfg, plans) -> np.ndarray:
    """The ``P_*`` rows of every flow (:func:`cc_params`), built once per distinct
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
                rows.append(cc_params(cfg, plan))
            by_object[key] = r
        index[i] = r
    if not rows:
        return np.zeros((0, C.N_P))
    width = max(len(r) for r in rows)  # (a law's constants may outnumber the P_* columns)
    return np.stack([np.pad(r, (0, width - len(r))) for r in rows])[index]


def law_columns(fs, cp, plans, cc_cfg, whole_packets: bool) -> int:
    """The columns of the controllers' state: a law's own (with its tail for the flow's
    constants), the widest. Marks what each law's flow reads (``FS_DRAWS``, ``FS_QTHR``,
    ``FS_RTTMIN``, ``FS_RATE``: :func:`uno.fluid.control.law_batch`; ``FS_CNP_GAP``, the
    receiver's least gap between CNPs, from the law's parameters ``cc_cfg.<name>``:
    :func:`uno.fluid.control.np_cnps`), whether its own timers run (``FS_LAW_TIMERS``) and
    what it hears as a packet sender's would (``FS_HEARS``): with ``whole_packets``
    (``engine.fluid_whole_packets``) the bytes in flight as whole packets, with its transport's
    ``report_every_timeout`` a timeout for every packet its timer takes."""
    width = C.N_C
    for f, plan in enumerate(plans):
        law = LAW_BY_NAME.get(plan.cc_name)
        if law is not None:
            if law.cnp_interval_ps is not None:
                fs[f, C.FS_CNP_GAP] = law.cnp_interval_ps(getattr(cc_cfg, plan.cc_name))
            fs[f, C.FS_LAW_TIMERS] = 1.0 if "timers" in law.signals else 0.0
            width = max(width, law.state_size + law.state_tail(cp[f]))
            row = fs[f]
            row[C.FS_DRAWS] = 1.0 if "queueing" in law.signals else 0.0
            if law.queue_threshold is not None:
                row[C.FS_QTHR] = law.queue_threshold(cp[f])
            row[C.FS_RTTMIN] = 1.0 if "rtt_min" in law.signals else 0.0
            row[C.FS_RATE] = 1.0 if "delivery_rate" in law.signals else 0.0
            row[C.FS_OWN_PACING] = 0.0 if law.pacing_rate is window_pacing else 1.0
            every = plan.facts.report_every_timeout
            row[C.FS_HEARS] = float((C.HEARS_WHOLE_PACKETS if whole_packets else 0)
                                    | (C.HEARS_EVERY_TIMEOUT if every else 0))  # fmt: skip
    return width

"""Packet-level queueing the fluid levels do not show: the chance that a packet's RTT sample
exceeds the fluid one by more than a slack, from the N*D/D/1 queue of the paced streams that
cross each link of its path and of its ACK's way back (UnoCC's gentle decrease reads one
packet's sample).

Units: time in ps, sizes in bytes, rates in bytes/ps (``x`` of the queue tails: packets).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from uno.fluid.columns import (
    FS_WIRE_HOP,
    FS_WIRE_NEXT,
    LS_ARR,
    LS_ARR2,
    LS_CAP,
    LS_FOLD,
    LS_JIT_ARR,
    LS_JIT_ARR2,
    LS_JIT_P,
    LS_JIT_X,
    LS_PACKETS,
)

#: up to this many streams at a link the N*D/D/1 tail is the exact Benes sum, beyond it the
#: Brownian-bridge approximation (within 1.1x of the sum there at loads of 0.8 and more)
BENES_MAX_SOURCES = 64
# log n! and log((n - k) / (k + 1)) for the whole numbers the Benes sums meet (up to one past
# BENES_MAX_SOURCES streams), the values math.lgamma and math.log give them: tables instead of
# three lgamma and one log a term
_LOG_FACT = np.array([math.lgamma(i + 1.0) for i in range(BENES_MAX_SOURCES + 2)])
_LOG_RATIO = np.array(
    [[math.log(j / (k + 1.0)) if j > 0 else 0.0 for k in range(BENES_MAX_SOURCES + 2)]
     for j in range(BENES_MAX_SOURCES + 2)]
)  # fmt: skip


@njit(cache=True, error_model="numpy")
def benes_tail(n: int, load: float, x: float) -> float:
    """P(Q > x) of the N*D/D/1 queue: ``n`` periodic streams with independent phases, period
    D = n / load slots, one packet served a slot (``load`` < 1); ``x`` in packets. The Benes
    sum: sum over k > x of C(n, k) a^k (1 - a)^(n - k) (D - n + x) / (D - k + x), a = (k -
    x) / D (the N*D/D/1 queue of J. W. Roberts and J. T. Virtamo, "The superposition of
    periodic cell arrival streams in an ATM multiplexer", IEEE Trans. Commun. 39(2), 1991)."""
    d = n / load
    total = 0.0
    k0 = int(math.floor(x)) + 1
    if k0 > n:
        return 0.0
    # log C(n, k), carried from k to k + 1 by the ratio (n - k) / (k + 1) (tables up to
    # BENES_MAX_SOURCES + 1 streams, the only sums packet_jitter_exceedance asks for)
    tables = n < _LOG_FACT.shape[0]
    if tables:
        log_binom = _LOG_FACT[n] - _LOG_FACT[k0] - _LOG_FACT[n - k0]
    else:
        log_binom = math.lgamma(n + 1.0) - math.lgamma(k0 + 1.0) - math.lgamma(n - k0 + 1.0)
    for k in range(k0, n + 1):
        a = (k - x) / d
        if a >= 1.0:
            break
        log_term = log_binom + k * math.log(a) + (n - k) * math.log1p(-a)
        total += math.exp(log_term) * (d - n + x) / (d - k + x)
        if k < n:
            log_binom += _LOG_RATIO[n - k, k] if tables else math.log((n - k) / (k + 1.0))
    return total


@njit(cache=True, error_model="numpy")
def packet_jitter_exceedance(x_pkts: float, n_sources: float, load: float) -> float:
    """Chance that a packet finds more than ``x_pkts`` packets' worth of bytes queued ahead of
    it at a link whose fluid queue is empty, fed by ``n_sources`` paced packet streams of
    total ``load`` (arrival rate / service rate): the tail of the N*D/D/1 queue (superposed
    periodic streams with independent phases). Up to ``BENES_MAX_SOURCES`` streams the exact
    Benes sum (:func:`benes_tail`, linear between the whole numbers of streams around
    ``n_sources``), beyond it, and where even the approximation is below 1e-4, its
    Brownian-bridge approximation exp(-2 x (x / N + 1 - load)), which bounds the sum from above
    (tests/test_fluid.py compares the two). No such queue at or above load 1: there the fluid
    queue itself carries the delay. A fluid link has none below it: its level stays 0, while
    with packets the streams' collisions queue a few packets now and then."""
    if x_pkts <= 0.0:
        return 1.0
    if load <= 0.0 or n_sources <= 0.0 or load >= 1.0:
        return 0.0
    approx = math.exp(-2.0 * x_pkts * (x_pkts / n_sources + 1.0 - load))
    if n_sources > BENES_MAX_SOURCES or approx < 1e-4:
        return approx
    lo = int(math.floor(n_sources))
    if lo < 1:
        lo = 1
    w = n_sources - lo if n_sources > lo else 0.0
    tail = benes_tail(lo, load, x_pkts)
    if w > 0.0:
        tail = (1.0 - w) * tail + w * benes_tail(lo + 1, load, x_pkts)
    return tail


@njit(cache=True, error_model="numpy")
def link_jitter_exceedance(ls, link, slack_ps, pkt_bytes) -> float:
    """:func:`packet_jitter_exceedance` at ``link`` for a queueing delay above ``slack_ps``
    (ps), packets of ``pkt_bytes``: the link's sources are its route entries' arrivals this
    step, counted as (sum r)^2 / sum r^2 (``n`` equal streams count ``n``). None at a link
    real packets cross (the hybrid's, ``LS_PACKETS``): their queue, which the fluid flows' RTT
    includes, is made of packets already."""
    arr = ls[link, LS_ARR]
    if arr <= 0.0 or ls[link, LS_PACKETS] > 0.0:
        return 0.0
    sq = ls[link, LS_ARR2]
    cap = ls[link, LS_CAP]
    x = slack_ps * cap / pkt_bytes
    if x == ls[link, LS_JIT_X] and arr == ls[link, LS_JIT_ARR] and sq == ls[link, LS_JIT_ARR2]:
        return ls[link, LS_JIT_P]
    n = arr * arr / sq if sq > 0.0 else 1.0
    p = packet_jitter_exceedance(x, n, arr / cap)
    ls[link, LS_JIT_X] = x
    ls[link, LS_JIT_ARR] = arr
    ls[link, LS_JIT_ARR2] = sq
    ls[link, LS_JIT_P] = p
    return p


@njit(cache=True, error_model="numpy", inline="always")
def gentle_exceedance(f, slack_ps, nic, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes) -> float:
    """Chance that the RTT sample of one of flow ``f``'s packets sent now exceeds the fluid one
    by more than ``slack_ps`` (ps) through packet-level queueing at the links of its path
    (:func:`link_jitter_exceedance`; independent links; a split hop's links weighed by their
    share; an UnoLB flow: the mean over its subflows). ``slack_ps`` <= 0: 1. The host's own
    NIC link ``nic`` is left out: it serves its flows round robin (uno/net/host.py), and a
    packet's RTT starts when it leaves it. ``subs``: the UnoLB subflows (``lb[:3]``: each flow's
    number of subflows, their hops and their links, unpacked in that order).

    UnoCC's gentle decrease (Uno paper Alg. 1 lines 9-13) reads one packet's RTT sample
    (uno/cc/uno.py ``_end_epoch``): where the fluid queue is empty below saturation, a packet
    still meets the other flows' packets now and then, and that resets MD_scale."""
    if slack_ps <= 0.0:
        return 1.0
    sub_n, sub_hops, _links = subs
    if sub_n[f] > 0:
        return subflow_part_exceedance(f, 0, sub_hops[f], slack_ps, nic, ls, subs, pkt_bytes)
    return entries_exceedance(rt_ptr[f], rt_ptr[f + 1], slack_ps, nic, rt_link, rt_w, ls, pkt_bytes)


@njit(cache=True, error_model="numpy")
def subflow_part_exceedance(f, h_lo, h_hi, slack_ps, nic, ls, subs, pkt_bytes) -> float:
    """:func:`gentle_exceedance` of UnoLB flow ``f`` over its subflows' hops ``h_lo`` to
    ``h_hi - 1`` alone: the mean over its subflows."""
    if slack_ps <= 0.0:
        return 1.0
    sub_n, _hops, sub_links = subs
    return subflows_exceedance(sub_links, f, 0, sub_n[f], h_lo, h_hi, slack_ps, nic, ls,
                               pkt_bytes)  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def subflows_exceedance(links, f, s_lo, s_hi, h_lo, h_hi, slack_ps, nic, ls, pkt_bytes) -> float:
    """The mean over flow ``f``'s subflows ``s_lo`` to ``s_hi - 1`` of the chance that a packet
    meets more than ``slack_ps`` (ps) of packet-level queueing at one of the links
    ``links[f, s, h_lo:h_hi]`` (:func:`link_jitter_exceedance`; independent links), the link
    ``nic`` left out."""
    total = 0.0
    for s in range(s_lo, s_hi):
        stay = 1.0
        for h in range(h_lo, h_hi):
            link = links[f, s, h]
            if link != nic:
                stay *= 1.0 - link_jitter_exceedance(ls, link, slack_ps, pkt_bytes)
        total += 1.0 - stay
    return total / (s_hi - s_lo)


@njit(cache=True, error_model="numpy", inline="always")
def wire_side_exceedance(f, beyond, slack_ps, nic, fs, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes):
    """:func:`gentle_exceedance` of flow ``f`` over its links before its wire link (``beyond``
    false: the whole path for a flow without one) or beyond it (0 for a flow without one)."""
    nxt = int(fs[f, FS_WIRE_NEXT])
    if nxt >= 0:
        lo, hi = (nxt, rt_ptr[f + 1]) if beyond else (rt_ptr[f], nxt)
        return entries_exceedance(lo, hi, slack_ps, nic, rt_link, rt_w, ls, pkt_bytes)
    hop = int(fs[f, FS_WIRE_HOP])
    if hop >= 0:
        _n, sub_hops, _links = subs
        lo, hi = (hop + 1, sub_hops[f]) if beyond else (0, hop + 1)
        return subflow_part_exceedance(f, lo, hi, slack_ps, nic, ls, subs, pkt_bytes)
    if beyond:
        return 0.0
    return gentle_exceedance(f, slack_ps, nic, rt_ptr, rt_link, rt_w, ls, subs, pkt_bytes)


@njit(cache=True, error_model="numpy", inline="always")
def entries_exceedance(lo, hi, slack_ps, nic, rt_link, rt_w, ls, pkt_bytes) -> float:
    """:func:`gentle_exceedance` over the route entries ``lo`` to ``hi - 1`` alone."""
    if slack_ps <= 0.0:
        return 1.0
    stay = 1.0
    for j in range(lo, hi):
        link = rt_link[j]
        if link != nic:
            exceed = rt_w[j] * link_jitter_exceedance(ls, link, slack_ps, pkt_bytes)
            fold = ls[link, LS_FOLD]
            # (a folded link stands for its group's links, as a split hop's several entries)
            stay *= 1.0 - exceed if fold == 1.0 else (1.0 - exceed / fold) ** fold
    return 1.0 - stay


@njit(cache=True, error_model="numpy", inline="always")
def ack_path_exceedance(f, slack_ps, rv_ptr, rv_link, rv_w, ls, lb, pkt_bytes) -> float:
    """Chance that the ACK of one of flow ``f``'s packets meets more than ``slack_ps`` (ps) of
    packet-level queueing on its way back (:func:`link_jitter_exceedance` at each link of the
    ACK route ``rv_*`` by its weights; an UnoLB flow with ACK hops of its own, the mean over its
    subflows' ``lb.ack_links``). The packet receiver's ACK waits in the same FIFO as the data of
    the ports it crosses (uno/net/port.py; with ``switch.ack_priority`` only at the receiver's
    NIC, the one link the ACK route then weighs), so a packet's RTT sample holds the queues the
    paced data streams there build now and then, as it holds those of its data's path."""
    if slack_ps <= 0.0:
        return 1.0
    n = lb.n[f]
    n_hops = lb.ack_hops[f]
    if n > 0 and n_hops > 0:
        return subflows_exceedance(lb.ack_links, f, 0, n, 0, n_hops, slack_ps, -1, ls, pkt_bytes)
    return entries_exceedance(rv_ptr[f], rv_ptr[f + 1], slack_ps, -1, rv_link, rv_w, ls, pkt_bytes)


#: the mean packet-level queue at a link is summed over its tail in steps of this many packets,
#: up to this many packets at most
WAIT_STEP_PKTS = 0.125
WAIT_MAX_PKTS = 64.0


@njit(cache=True, error_model="numpy")
def mean_queue_pkts(n_sources: float, load: float) -> float:
    """The mean of the N*D/D/1 queue (:func:`packet_jitter_exceedance`) in packets: its tail
    summed over x by the midpoint rule in steps of ``WAIT_STEP_PKTS``, to where it falls below
    1e-4 (or ``WAIT_MAX_PKTS``). None below one stream or at or above load 1."""
    if n_sources <= 0.0 or load <= 0.0 or load >= 1.0:
        return 0.0
    total = 0.0
    x = 0.5 * WAIT_STEP_PKTS
    while x < WAIT_MAX_PKTS:
        p = packet_jitter_exceedance(x, n_sources, load)
        total += p * WAIT_STEP_PKTS
        if p < 1e-4:
            break
        x += WAIT_STEP_PKTS
    return total


@njit(cache=True, error_model="numpy")
def link_mean_wait_ps(ls, link, pkt_bytes, among) -> float:
    """The mean packet-level queueing (ps) at ``link``, packets of ``pkt_bytes``, that the fluid
    levels do not show (as :func:`link_jitter_exceedance`: none where real packets cross or the
    fluid queue carries the delay). ``among`` true: met by a packet of one of the link's
    streams, which arrives at a random phase of the others (the queue of the others, their
    load, at a random time); false: by a packet of none of them (an ACK; the queue of all)."""
    arr = ls[link, LS_ARR]
    if arr <= 0.0 or ls[link, LS_PACKETS] > 0.0:
        return 0.0
    cap = ls[link, LS_CAP]
    sq = ls[link, LS_ARR2]
    n = arr * arr / sq if sq > 0.0 else 1.0
    load = arr / cap
    if among:
        if n <= 1.0:
            return 0.0
        load *= (n - 1.0) / n
        n -= 1.0
    return mean_queue_pkts(n, load) * pkt_bytes / cap


@njit(cache=True, error_model="numpy")
def last_packet_wait_ps(f, nic, rt_ptr, rt_link, rt_w, rv_ptr, rv_link, rv_w, ls, lb, pkt_bytes):
    """The mean packet-level queueing (ps) flow ``f``'s last packet meets on its way (every link
    of its route by its weight but its host's NIC ``nic``; an UnoLB flow: the mean over its
    subflows) and its ACK on the way back (:func:`link_mean_wait_ps`), packets of ``pkt_bytes``:
    the other flows' packets in service or queued where they collide, which a lone flow meets
    nowhere."""
    wait = 0.0
    n = lb.n[f]
    if n > 0:
        for s in range(n):
            for h in range(lb.hops[f]):
                link = lb.links[f, s, h]
                if link != nic:
                    wait += link_mean_wait_ps(ls, link, pkt_bytes, True) / n
    else:
        for j in range(rt_ptr[f], rt_ptr[f + 1]):
            if rt_link[j] != nic:
                wait += rt_w[j] * link_mean_wait_ps(ls, rt_link[j], pkt_bytes, True)
    n_back = lb.ack_hops[f]
    if n > 0 and n_back > 0:
        for s in range(n):
            for h in range(n_back):
                wait += link_mean_wait_ps(ls, lb.ack_links[f, s, h], pkt_bytes, False) / n
    else:
        for j in range(rv_ptr[f], rv_ptr[f + 1]):
            wait += rv_w[j] * link_mean_wait_ps(ls, rv_link[j], pkt_bytes, False)
    return wait

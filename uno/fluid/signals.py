"""The queueing delays a flow's packets meet, read from the links' levels (``LS_DELAY``): on
its route or its UnoLB subflows, on its ACKs' way back, and beyond its wire link. A flow's RTT
sample is its base RTT plus these (:mod:`uno.fluid.filing`).

Units: time in ps.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.fluid.columns import (
    FS_PFQ,
    FS_PFQ_RATE,
    FS_WIRE_HOP,
    FS_WIRE_NEXT,
    LS_BUF,
    LS_CAP,
    LS_DELAY,
    LS_FAULT,
    LS_LOSS,
    LS_Q,
    LS_QSLOPE,
    LS_QTREND,
)


@njit(cache=True, error_model="numpy", inline="always")
def path_delay(f: int, rt_ptr, rt_link, rt_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of flow ``f``'s path, split routes weighing each link by the share
    of the flow's bytes that crosses it. (Losses and ECN marks are decided as the bytes cross
    the links: :func:`uno.fluid.forward.forward`.)"""
    return entries_delay(rt_ptr[f], rt_ptr[f + 1], rt_link, rt_w, ls)


@njit(cache=True, error_model="numpy", inline="always")
def entries_delay(lo: int, hi: int, rt_link, rt_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of the route entries ``lo`` to ``hi - 1`` (:func:`path_delay`)."""
    delay = 0.0
    for j in range(lo, hi):
        delay += rt_w[j] * ls[rt_link[j], LS_DELAY]
    return delay


@njit(cache=True, error_model="numpy", inline="always")
def delay_ahead(link: int, ahead_ps: float, ls: np.ndarray) -> float:
    """Queueing delay in ps at ``link`` ``ahead_ps`` from now: its queue grown (or drained) at
    its recent growth rate (``LS_QSLOPE``) within its buffer, for at most as long as that rate
    has kept its sign (``LS_QTREND``), at the service its delay is taken at now (``LS_DELAY``
    per queued byte: the line, or the line PFC leaves it); at 0 ahead, its delay now."""
    if ahead_ps <= 0.0:
        return ls[link, LS_DELAY]
    q_now = ls[link, LS_Q]
    full = max(ls[link, LS_BUF], q_now)  # (a lossless queue may hold more than its buffer)
    span_ps = min(ahead_ps, ls[link, LS_QTREND])  # (no further than the trend has lasted)
    q_then = min(max(q_now + ls[link, LS_QSLOPE] * span_ps, 0.0), full)
    if q_then <= 0.0:
        return 0.0
    if q_now > 0.0:
        return ls[link, LS_DELAY] * (q_then / q_now)
    return q_then / ls[link, LS_CAP]


@njit(cache=True, error_model="numpy", inline="always")
def reverse_delay(f: int, ahead_ps: float, rv_ptr, rv_link, rv_w, ls: np.ndarray) -> float:
    """Queueing delay in ps of flow ``f``'s ACKs on their way back (receiver -> sender, the
    reverse route ``rv_*``, each link weighed by the share of the ACKs that crosses it), of
    bytes sent now whose ACKs reach the reverse links ``ahead_ps`` later (:func:`delay_ahead`).

    The packet receiver turns each data packet into an ACK and sends it through its host's NIC
    and the switches' output ports towards the sender (``uno.transport.receiver.Receiver.on_data``,
    hashed on (dst, src, entropy)); without ``switch.ack_priority`` an ACK waits in the same FIFO
    as the data (``uno.net.port.Port.receive``), behind the queue of the reverse path's ports.
    So the packet sender's RTT samples, its ACK clock and the flow's completion (its last ACK)
    include this delay, taken as the ACK meets the queues, a forward trip after the send: a
    reverse WAN queue filling meanwhile delays the ACKs of the bytes sent before it filled."""
    if ahead_ps <= 0.0:  # (the queues as they are now)
        return entries_delay(rv_ptr[f], rv_ptr[f + 1], rv_link, rv_w, ls)
    delay = 0.0
    for j in range(rv_ptr[f], rv_ptr[f + 1]):
        delay += rv_w[j] * delay_ahead(rv_link[j], ahead_ps, ls)
    return delay


@njit(cache=True, error_model="numpy")
def subflow_signals(f, ls, lb, losses) -> float:
    """Queueing delay in ps of flow ``f`` on subflows (UnoLB, PLB, REPS), the plain mean over
    its subflows. A REPS flow's subflows carry unequal shares
    (:func:`uno.fluid.balance.reps_shares`); where a batch is filed by subflow
    (:func:`uno.fluid.filing.file_sends`) each share comes back at its own RTT. Each subflow's
    loss probability goes into ``losses`` (which subflows a loss report names). (Losses and ECN
    marks are decided as the bytes cross the links: :func:`uno.fluid.forward.forward`.)"""
    sub_n, sub_hops, sub_links = lb.n, lb.hops, lb.links
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        kept = 1.0
        for h in range(sub_hops[f]):
            link = sub_links[f, s, h]
            kept *= (1.0 - ls[link, LS_LOSS]) * (1.0 - ls[link, LS_FAULT])
            delay += ls[link, LS_DELAY]
        losses[s] = 1.0 - kept
    return delay / n


@njit(cache=True, error_model="numpy")
def subflow_reverse_delay(f, ahead_ps, ls, lb) -> float:
    """Queueing delay in ps of UnoLB flow ``f``'s ACKs on their way back, ``ahead_ps`` from now
    (:func:`reverse_delay`), the mean over its subflows: each subflow's ACKs carry its
    entropy, hashed on (dst, src, entropy), so they take its own way back (``lb.ack_links``,
    ``lb.ack_hops``), which :func:`uno.fluid.balance.unolb_reroute` moves with the subflow."""
    sub_n, sub_rlinks, sub_rhops = lb.n, lb.ack_links, lb.ack_hops
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        for h in range(sub_rhops[f]):
            delay += delay_ahead(sub_rlinks[f, s, h], ahead_ps, ls)
    return delay / n


@njit(cache=True, error_model="numpy", inline="always")
def subflow_delay(f, s, start_ps, ahead_ps, ls, lb) -> float:
    """``start_ps`` plus subflow ``s`` of flow ``f``'s queueing (ps): on its way out now, and
    where its ACKs take their own way back (``lb.ack_hops``), on that way ``ahead_ps`` from now
    (:func:`delay_ahead`)."""
    delay = start_ps
    for h in range(lb.hops[f]):
        delay += ls[lb.links[f, s, h], LS_DELAY]
    for h in range(lb.ack_hops[f]):
        delay += delay_ahead(lb.ack_links[f, s, h], ahead_ps, ls)
    return delay


@njit(cache=True, error_model="numpy")
def subflow_rtt_offsets(f, ahead_ps, ls, lb, out) -> None:
    """Each of UnoLB flow ``f``'s subflows' queueing (ps) on its way out and, where its ACKs
    take their own way back (``lb.ack_hops``), on that way ``ahead_ps`` from now
    (:func:`subflow_reverse_delay`), less the mean over the subflows (the mean
    :func:`subflow_signals` and :func:`subflow_reverse_delay` give), into ``out[s]``: how much
    later than the flow's mean RTT subflow ``s``'s ACKs come back."""
    n = lb.n[f]
    mean = 0.0
    for s in range(n):
        delay = subflow_delay(f, s, 0.0, ahead_ps, ls, lb)
        out[s] = delay
        mean += delay
    mean /= n
    for s in range(n):
        out[s] -= mean


@njit(cache=True, error_model="numpy")
def subflow_part_delay(f, h_lo, h_hi, ls, subs) -> float:
    """Queueing delay in ps of UnoLB flow ``f``'s subflows' hops ``h_lo`` to ``h_hi - 1``, the
    mean over its subflows (:func:`subflow_signals`)."""
    sub_n, _hops, sub_links = subs
    n = sub_n[f]
    delay = 0.0
    for s in range(n):
        for h in range(h_lo, h_hi):
            delay += ls[sub_links[f, s, h], LS_DELAY]
    return delay / n


@njit(cache=True, error_model="numpy", inline="always")
def pfq_delay_ps(f, fs) -> float:
    """The time flow ``f``'s per-flow queue at its receiver-side DCI switch takes to let go
    what it holds now (ps; 0 without one: :mod:`uno.fluid.dci`)."""
    rate = fs[f, FS_PFQ_RATE]
    return fs[f, FS_PFQ] / rate if rate > 0.0 else 0.0


@njit(cache=True, error_model="numpy", inline="always")
def delay_beyond_wire(f, fs, rt_ptr, rt_link, rt_w, ls, subs) -> float:
    """Queueing delay in ps of flow ``f``'s links beyond its wire link (``FS_WIRE_NEXT``, an
    UnoLB flow's ``FS_WIRE_HOP``); 0 for a flow without one."""
    nxt = int(fs[f, FS_WIRE_NEXT])
    if nxt >= 0:  # (and a DCI switch's per-flow queue after the wire link)
        return entries_delay(nxt, rt_ptr[f + 1], rt_link, rt_w, ls) + pfq_delay_ps(f, fs)
    hop = int(fs[f, FS_WIRE_HOP])
    if hop >= 0:
        _n, sub_hops, _links = subs
        return subflow_part_delay(f, hop + 1, sub_hops[f], ls, subs)
    return 0.0

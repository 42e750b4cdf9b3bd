"""The fluid engine's step: :func:`advance` runs steps one after the other, each a short list of
named parts - the flows that start, the feedback that arrives, the sends, the links hop by hop,
and what happens to the step's bytes, filed for later. Every kernel is
``@njit(cache=True, error_model="numpy")`` and its pure-Python twin is ``kernel.py_func``
(tests compare the two on random inputs).

The kernels live in rooms by concern: the state's columns (:mod:`uno.fluid.columns`) and the
groups of arrays the kernels take (:mod:`uno.fluid.state`); the links' queues and marking
(:mod:`uno.fluid.links`); the drops by packet phases and the departure grids
(:mod:`uno.fluid.phases`); the walk of the links hop by hop (:mod:`uno.fluid.forward`); the
queueing a flow's packets meet (:mod:`uno.fluid.signals`, :mod:`uno.fluid.jitter`); load
balancing (:mod:`uno.fluid.balance`); the flows' delay lines (:mod:`uno.fluid.rings`), what
arrives through them (:mod:`uno.fluid.arrivals`) and what is filed in them
(:mod:`uno.fluid.filing`); losses and their detection (:mod:`uno.fluid.losses`), erasure-coded
blocks (:mod:`uno.fluid.coding`), the congestion controllers' laws (:mod:`uno.fluid.control`),
random draws (:mod:`uno.fluid.draws`) and cache hints (:mod:`uno.fluid.cache_hints`). This
module also gathers their public names, so ``uno.fluid.kernels`` is one namespace for scripts
and tests (``K.update_links.py_func``).

Units: time in picoseconds (float64), sizes in bytes, rates in bytes per picosecond.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from uno.cc.law import BPS_PS, in_whole_packets
from uno.cc.registry import on_send as law_on_send
from uno.cc.registry import on_timer as law_on_timer
from uno.cc.registry import pacing_rate as law_pacing
from uno.fluid.arrivals import *  # noqa: F403
from uno.fluid.arrivals import take_feedback
from uno.fluid.balance import *  # noqa: F403
from uno.fluid.cache_hints import *  # noqa: F403
from uno.fluid.coding import *  # noqa: F403
from uno.fluid.columns import *  # noqa: F403
from uno.fluid.columns import (
    ACKS,
    BL,
    C_CWND,
    CC_LAW,
    CT,
    FS_COPIES_SENT,
    FS_COPIES_UNFILED,
    FS_EC_N,
    FS_HALT,
    FS_INFLIGHT,
    FS_LAST_SEND,
    FS_LAW_TIMERS,
    FS_NIC,
    FS_NIC_LINK,
    FS_OPEN_SHARE,
    FS_OPEN_WAIT,
    FS_OWN_PACING,
    FS_RESEND_SHARE,
    FS_RESEND_WAIT,
    FS_RX_P,
    FS_SEND_TIME,
    FS_SENT,
    FS_START,
    FS_STATE,
    FS_UNSENT,
    FX_QUIET,
    FX_SEND,
    GRID,
    LS_ACK_IN,
    LS_CAP,
    LS_DEMAND,
    LS_EVEN_SHARE,
    LS_LEVEL,
    LS_NBIG,
    LS_NDEM,
    LS_NIC_SENDERS,
    LS_PAUSE,
    LS_PKT_CLAIM,
    LS_Q,
    LS_SATSUM,
    P_BASE_RTT,
    P_KIND,
    P_MSS,
    P_PACED,
)
from uno.fluid.control import *  # noqa: F403
from uno.fluid.control import cc_init
from uno.fluid.cycles import TALLY, cycles, tick
from uno.fluid.dci import receiver_init
from uno.fluid.draws import *  # noqa: F403
from uno.fluid.filing import *  # noqa: F403
from uno.fluid.filing import (
    file_deliveries,
    file_drops,
    file_sends,
    hold_for_block,
    note_block_rtts,
)
from uno.fluid.forward import *  # noqa: F403
from uno.fluid.forward import forward
from uno.fluid.jitter import *  # noqa: F403
from uno.fluid.links import *  # noqa: F403
from uno.fluid.links import acks_out
from uno.fluid.losses import *  # noqa: F403
from uno.fluid.pfc import pfc_step
from uno.fluid.phases import *  # noqa: F403
from uno.fluid.phases import ack_drift
from uno.fluid.qcn import qcn_step
from uno.fluid.rings import *  # noqa: F403
from uno.fluid.rings import mark_due, ring_take
from uno.fluid.sampling import (
    SF,
    Samples,
    first_sample_step,
    has_room,
    next_sample_step,
    take_sample,
)
from uno.fluid.signals import *  # noqa: F403
from uno.fluid.state import *  # noqa: F403
from uno.fluid.state import (
    DelayLines,
    Flows,
    Hops,
    Links,
    RingPool,
    Routes,
    StepScratch,
    Subflows,
)
from uno.fluid.timers import drain_far_timers


@njit(cache=True, error_model="numpy", inline="always")
def start_flows(k, step_end, flows, lines) -> int:
    """The flows of ``order`` starting before ``step_end`` (ps) begin at step ``k``: each
    takes its delay line and its controller's initial state, and joins the running flows
    (``active``); returns their number."""
    fs, order, counters, active, fx = flows.fs, flows.order, flows.counters, flows.active, flows.fx
    n_flows = fs.shape[0]
    nxt = int(counters[CT.next_start])
    n_active = int(counters[CT.running])
    while nxt < n_flows and fs[order[nxt], FS_START] < step_end:
        f = order[nxt]
        fs[f, FS_STATE] = 1.0
        ring_take(lines.pool, f)
        cc_init(flows.cs, flows.cp, f)
        if fs[f, FS_RX_P] > 0.0:  # (its law's receiver part: uno.fluid.dci)
            receiver_init(f, fs, flows.cs, flows.cp)
        fx[f, FX_QUIET] = 0.0
        mark_due(lines.calendar, k, f)
        active[n_active] = f
        n_active += 1
        nxt += 1
    counters[CT.next_start] = nxt
    return n_active


@njit(cache=True, error_model="numpy", inline="always")
def allowed_send(f, span, fs, cs, cp):
    """What flow ``f`` may send in ``span`` ps, and at what rate (bytes/ps): its window's room
    (in whole packets, as the packet sender counts it: a packet goes while the bytes in flight
    are below cwnd), at most its NIC rate, or its pacing rate (cwnd / base RTT for a window
    that paces, or the rate of a law that paces on its own), at most what it has left."""
    cwnd = cs[f, C_CWND]
    room = in_whole_packets(cwnd, cp[f, P_MSS]) - fs[f, FS_INFLIGHT]
    rate = fs[f, FS_NIC]
    if cp[f, P_PACED] > 0.0 and fs[f, FS_OWN_PACING] == 0.0:
        paced = cwnd / cp[f, P_BASE_RTT]
        if paced < rate:
            rate = paced
    elif cp[f, P_KIND] >= CC_LAW:  # a law that paces at a rate of its own
        paced = law_pacing(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f]) / BPS_PS
        if 0.0 < paced < rate:
            rate = paced
    send = rate * span
    if room < send:
        send = room
    if fs[f, FS_UNSENT] < send:
        send = fs[f, FS_UNSENT]
    return send, rate


@njit(cache=True, error_model="numpy", inline="always")
def plan_sends(now, step_end, dt_ps, n_active, flows, ls, scratch):
    """What each running flow could send this step (:func:`allowed_send`; a flow starting
    mid-step from its start): those with anything to send listed in
    ``scratch.senders[:n_cand]``, their NICs in ``scratch.nics[:n_nics]`` with the demand
    they meet there (``LS_DEMAND``, ``LS_NDEM``). A law with timers of its own
    (``FS_LAW_TIMERS``: DCQCN's rate-increase and alpha timers) first applies every expiry up
    to now, in order, each at its own time (:mod:`uno.cc.dcqcn`'s lazy timers), so the rate it
    paces at is the one an event-driven sender holds at the step's start (a timer due within
    the step acts at the next). A flow that can send nothing is quiet
    (``FX_QUIET``) until something is due for it. A flow sends up to its stop time
    (``FS_HALT``) and nothing after it: its bytes left, and any it would resend, are dropped.
    Returns (n_cand, n_nics)."""
    fs, cs, cp, fx, active = flows.fs, flows.cs, flows.cp, flows.fx, flows.active
    senders, nics = scratch.senders, scratch.nics
    n_nics = 0
    n_cand = 0
    for i in range(n_active):
        f = active[i]
        if fx[f, FX_QUIET] > 0.0:
            continue  # still nothing to send: window full or nothing left (FX_SEND = 0)
        span = dt_ps
        if fs[f, FS_START] > now:
            span = step_end - fs[f, FS_START]
        halt = fs[f, FS_HALT]
        if 0.0 < halt < step_end:  # its stop time (workload.flows[i].stop_us) within the step
            span -= step_end - halt
            if span <= 0.0:  # stopped: nothing more, new or resent
                fs[f, FS_UNSENT] = 0.0
                fx[f, FX_SEND] = 0.0
                fx[f, FX_QUIET] = 1.0
                continue
        if fs[f, FS_LAW_TIMERS] > 0.0:  # its timers' expiries up to now, in order, first
            law_on_timer(int(cp[f, P_KIND]) - CC_LAW, cs[f], cp[f], now)
        send, rate = allowed_send(f, span, fs, cs, cp)
        if send <= 0.0:
            fx[f, FX_SEND] = 0.0
            if span == dt_ps:  # (a flow starting mid-step could send more next step)
                fx[f, FX_QUIET] = 1.0
            continue
        fx[f, FX_SEND] = send
        senders[n_cand] = f
        n_cand += 1
        fs[f, FS_SEND_TIME] = send / rate
        nic = int(fs[f, FS_NIC_LINK])
        if ls[nic, LS_NDEM] == 0.0:
            nics[n_nics] = nic
            n_nics += 1
        ls[nic, LS_DEMAND] += send
        ls[nic, LS_NDEM] += 1.0
    return n_cand, n_nics


@njit(cache=True, error_model="numpy", inline="always")
def nic_data_room(ls, nic, dt_ps) -> float:
    """The bytes the host's NIC link ``nic`` takes from its data senders in a step of
    ``dt_ps``: its line capacity in the share of the step PFC does not pause
    (:mod:`uno.fluid.pfc`), less the bytes still queued there and the ACKs its receivers send
    in the step (``LS_ACK_IN``, :func:`uno.fluid.links.acks_out`). A packet host pushes its
    ACKs into the NIC's queue at once and hands it a data packet only when the port is free
    (uno/net/host.py, uno/net/nic.py), so its ACKs never wait behind its own data. Were data
    given the whole line, a host sending at line rate would queue its ACKs at its NIC step
    after step, and the flows it receives would see that queue in their RTT."""
    cap = ls[nic, LS_CAP] * dt_ps * (1.0 - ls[nic, LS_PAUSE])
    room = cap - ls[nic, LS_Q] - ls[nic, LS_ACK_IN]
    return room if room > 0.0 else 0.0


@njit(cache=True, error_model="numpy", inline="always")
def share_nics(dt_ps, n_cand, n_nics, flows, ls, scratch) -> None:
    """The host's NIC serves its flows round robin, one packet each (uno/net/nic.py): max-min
    shares of the room the step leaves for data (:func:`nic_data_room`), by one round of water
    filling (the hybrid's packet flows at the host take their turns too: ``LS_PKT_CLAIM``).
    The claims under the even share (``LS_EVEN_SHARE``) keep theirs; the others share what is
    left: the water level (``LS_LEVEL``), which no flow's send exceeds."""
    fs, fx = flows.fs, flows.fx
    senders, nics = scratch.senders, scratch.nics
    for j in range(n_nics):
        nic = nics[j]
        cap = nic_data_room(ls, nic, dt_ps)
        claim = ls[nic, LS_PKT_CLAIM]
        n_claims = ls[nic, LS_NDEM] + (1.0 if claim > 0.0 else 0.0)
        share = np.inf if ls[nic, LS_DEMAND] + claim <= cap else cap / n_claims
        ls[nic, LS_EVEN_SHARE] = share
        if claim > 0.0:
            if claim < share:
                ls[nic, LS_SATSUM] += claim
            else:
                ls[nic, LS_NBIG] += 1.0
    for i in range(n_cand):  # (each with FX_SEND > 0)
        f = senders[i]
        send = fx[f, FX_SEND]
        nic = int(fs[f, FS_NIC_LINK])
        if send < ls[nic, LS_EVEN_SHARE]:
            ls[nic, LS_SATSUM] += send
        else:
            ls[nic, LS_NBIG] += 1.0
    for j in range(n_nics):
        nic = nics[j]
        ls[nic, LS_NIC_SENDERS] = ls[nic, LS_NDEM]
        if ls[nic, LS_NBIG] > 0.0:
            cap = nic_data_room(ls, nic, dt_ps)
            ls[nic, LS_LEVEL] = (cap - ls[nic, LS_SATSUM]) / ls[nic, LS_NBIG]
        else:
            ls[nic, LS_LEVEL] = ls[nic, LS_EVEN_SHARE]


@njit(cache=True, error_model="numpy", inline="always")
def make_sends(now, dt_ps, n_cand, n_nics, flows, ls, scratch) -> int:
    """The sends (their bytes go on their way in :func:`uno.fluid.forward.forward`): each
    candidate sends its bytes, at most its NIC's water level (its share of a busy NIC, spread
    over the step); those that send stay in ``scratch.senders`` (returns their number), and a
    law with timers hears of the bytes (``on_send``: DCQCN's byte counter). The NICs' scratch
    is cleared."""
    fs, fx = flows.fs, flows.fx
    senders, nics = scratch.senders, scratch.nics
    n_senders = 0
    # (an uncoded flow has copies to send only after some batch came back late)
    copying = flows.counters[CT.late_batches] > 0
    for i in range(n_cand):
        f = senders[i]  # (the list is compacted in place: n_senders <= i)
        send = fx[f, FX_SEND]
        level = ls[int(fs[f, FS_NIC_LINK]), LS_LEVEL]
        if send > level:  # its share of a busy NIC, spread over the step
            send = level
            fx[f, FX_SEND] = send
            fs[f, FS_SEND_TIME] = dt_ps
        if send > 0.0:
            senders[n_senders] = f
            n_senders += 1
            fs[f, FS_LAST_SEND] = now if fs[f, FS_START] <= now else fs[f, FS_START]
            if fs[f, FS_LAW_TIMERS] > 0.0:  # (DCQCN's byte counter)
                law_on_send(int(flows.cp[f, P_KIND]) - CC_LAW, flows.cs[f], flows.cp[f],
                            fs[f, FS_LAST_SEND], send)  # fmt: skip
        fs[f, FS_UNSENT] -= send
        fs[f, FS_INFLIGHT] += send
        fs[f, FS_SENT] += send
        if send > 0.0 and fs[f, FS_EC_N] > 0.0:  # (a coded flow's resends go first)
            wait = fs[f, FS_RESEND_WAIT]
            resent = min(send, wait)
            opening = fs[f, FS_OPEN_WAIT] * resent / wait if wait > 0.0 else 0.0
            fs[f, FS_RESEND_WAIT] -= resent
            fs[f, FS_OPEN_WAIT] -= opening
            fs[f, FS_RESEND_SHARE] = resent / send
            fs[f, FS_OPEN_SHARE] = opening / send
        elif send > 0.0 and copying and fs[f, FS_RESEND_WAIT] > 0.0:  # (copies go first)
            copies = min(send, fs[f, FS_RESEND_WAIT])
            fs[f, FS_RESEND_WAIT] -= copies
            fs[f, FS_COPIES_UNFILED] += copies
            fs[f, FS_COPIES_SENT] += copies
    for j in range(n_nics):
        nic = nics[j]
        ls[nic, LS_DEMAND] = 0.0
        ls[nic, LS_NDEM] = 0.0
        ls[nic, LS_SATSUM] = 0.0
        ls[nic, LS_NBIG] = 0.0
    return n_senders


@njit(cache=True, error_model="numpy", _nrt=False)
def carry_feedback(k, now, n_senders, flows, links, routes, lb, hops, scratch) -> int:
    """After the links: a flow whose block is more than a step (a long RTT) keeps what happened
    to its sends, drops and deliveries for its block's last step, and files them there as one
    batch (its feedback at that time scale, its bytes moving every step:
    :func:`uno.fluid.filing.hold_for_block`); the receivers' ACKs move the departure grids of
    the links they cross (phase drops on) and, as bytes, reach those links in the next step
    (``engine.fluid_ack_bytes``). Returns the number of senders to file now."""
    fs, fx, block, counters = flows.fs, flows.fx, flows.block, flows.counters
    n_flows = fs.shape[0]
    senders, droppers, n_drop = scratch.senders, scratch.droppers, scratch.n_drop
    markers, n_mark = scratch.markers, scratch.n_mark
    if block[BL.steps, n_flows] > 1 or block[BL.held, n_flows] > 0:
        note_block_rtts(k, senders, n_senders, block, fs, links.ls, routes, lb, scratch.sub_loss,
                        hops.acks[ACKS.ahead])  # fmt: skip
        n_senders = hold_for_block(k, now, senders, n_senders, droppers, n_drop, markers, n_mark,
                                   block, fs, fx)  # fmt: skip
    if hops.grid[GRID.on] != 0:
        ack_drift(fs, links.ls, markers, n_mark[0], routes.rv_ptr, routes.rv_link, lb, hops)
    if hops.acks[ACKS.as_bytes] != 0.0:  # the deliveries' ACKs, bytes on their way back
        counters[CT.busy] = acks_out(fs, links.ls, markers, n_mark[0], routes.rv_ptr,
                                     routes.rv_link, routes.rv_w, lb, links.busy,
                                     int(counters[CT.busy]), hops.acks[ACKS.share])  # fmt: skip
    return n_senders


# Compiled without Numba's runtime (``_nrt=False``, and so is every kernel it calls): no array
# reference counts. With them, each array handed to a helper in the step loop cost an atomic
# increment and decrement (the inlined helpers' too: NRT_incref alone took ~9% of the 40%-load
# Fig. 10 run). The price: nothing in the step loop allocates; its working arrays come in
# ``scratch``. The step's larger parts (the feedback, the links' walk, the carry and the
# filing) are kernels of their own, not inlined: LLVM compiles them apart in about 70% of the
# time it takes over one function holding them all (minutes, the first time a run needs them).
# A call that is not inlined passes every field of the groups it is given, about a hundred
# arrays here: ~0.2 us, so a call made per level, per flow or per batch takes the arrays it
# reads (uno.fluid.phases.group_inputs) or is inlined up to its rare part
# (uno.fluid.balance.reps_acks), and one with nothing to do this step is not made.
@njit(cache=True, error_model="numpy", _nrt=False)
def advance(k_start, k_stop, dt_ps, flows, links, routes, lines, lb, hops, scratch, samples):
    """Run steps ``k_start`` .. ``k_stop - 1`` (step k covers [k dt, (k+1) dt)); returns the
    step reached: ``k_stop``, or earlier when every flow has finished or, at the end of the step
    in which the last of them finished, every flow marked ``FS_STOP`` has, or a flow marked
    ``FS_LEADS`` (others start after its tag's flows: Python starts them). The state comes in
    the groups of :mod:`uno.fluid.state`: ``flows`` (:data:`~uno.fluid.state.Flows`: its
    ``counters``, named by ``CT``, say which flow of ``order`` starts next, how many run, how
    many finished, how many links are busy, how many flows the run waits for), ``links``,
    ``routes``, ``lines`` (the delay lines), ``lb`` (the UnoLB subflows), ``hops`` (the route
    entries by level), ``scratch`` (the step's working arrays) and ``samples`` (the rates /
    cwnd / queues tables' arrays, :data:`uno.fluid.sampling.Samples`). Each may come as a plain
    tuple in its fields' order (the engine passes them so, as Numba types a plain tuple of
    arrays faster at each call from Python): they are named here.

    A step: (1.) the flows starting within it (:func:`start_flows`); (2.) the feedback
    arriving now, ACKs one RTT after their send and detected losses
    (:func:`uno.fluid.arrivals.take_feedback`; a flow with nothing due that could send nothing
    at its last try is passed over, its state untouched, until something is due for it); (3.)
    the sends (:func:`plan_sends`, :func:`share_nics`, :func:`make_sends`); (4.) the links, hop
    by hop (:func:`uno.fluid.forward.forward`) and, with PFC, the ingress queues' pauses for
    the next step (:func:`uno.fluid.pfc.pfc_step`), with QCN the congestion points' notices
    (:func:`uno.fluid.qcn.qcn_step`), a long-RTT flow's feedback held for its
    block's end (:func:`uno.fluid.filing.hold_for_block`), the deliveries' ACKs on the links of
    their way back (:func:`uno.fluid.phases.ack_drift`, :func:`uno.fluid.links.acks_out`); (5.)
    what happens to the step's bytes, fed back one RTT later
    (:func:`uno.fluid.filing.file_sends`, :func:`~uno.fluid.filing.file_drops`,
    :func:`~uno.fluid.filing.file_deliveries`). An idle network jumps to the next start
    (queues keep draining meanwhile). Where the run samples in the loop (``samples``' flag
    ``in_loop``), a sample is taken at the start of each step that
    :func:`uno.fluid.sampling.next_sample_step` names (:func:`uno.fluid.sampling.take_sample`),
    an idle stretch's jump stopping there too; the loop stops before a sample its arrays have
    no room for (flag ``full``: Python grows them, :meth:`uno.fluid.sampling.Sampler.make_room`)."""
    flows, links, routes = Flows(*flows), Links(*links), Routes(*routes)
    ring, pool, calendar = lines
    lines = DelayLines(ring, RingPool(*pool), calendar)
    lb, hops, scratch = Subflows(*lb), Hops(*hops), StepScratch(*scratch)
    smp = Samples(*samples)
    fs, order, counters = flows.fs, flows.order, flows.counters
    tally = scratch.tally  # (where the steps' time goes: uno.fluid.cycles)
    n_flows = fs.shape[0]
    led = counters[CT.led]
    k = k_start
    sampling = smp.flags[SF.in_loop] != 0
    k_sample = first_sample_step(k, dt_ps, smp.clock) if sampling else k_stop
    while k < k_stop:
        now = k * dt_ps
        if k == k_sample:
            if not has_room(int(counters[CT.running]), smp):
                smp.flags[SF.full] = 1
                break
            take_sample(float(int(now)), fs, flows.cs, links.ls, flows.active,
                        int(counters[CT.running]), samples)  # fmt: skip
            k_sample = next_sample_step(k, dt_ps, smp.clock)
        if counters[CT.running] == 0:
            nxt = int(counters[CT.next_start])
            if nxt >= n_flows:
                break
            first = int(fs[order[nxt], FS_START] // dt_ps)
            if first > k and counters[CT.busy] == 0:
                k = min(first, k_stop, k_sample)
                continue
        step_end = now + dt_ps
        t = cycles()
        n_active = start_flows(k, step_end, flows, lines)
        if lines.pool.far_meta[0] > 0:  # (timers beyond their lines' ends: uno.fluid.timers)
            drain_far_timers(k, fs, ring, lines.pool, calendar)
        t = tick(tally, TALLY.start, t)
        n_active = take_feedback(k, now, dt_ps, n_active, routes.rt_ptr, flows, links.ls, lines, lb, hops,
                                 scratch)  # fmt: skip
        t = tick(tally, TALLY.feedback, t)
        n_cand, n_nics = plan_sends(now, step_end, dt_ps, n_active, flows, links.ls, scratch)
        share_nics(dt_ps, n_cand, n_nics, flows, links.ls, scratch)
        n_senders = make_sends(now, dt_ps, n_cand, n_nics, flows, links.ls, scratch)
        t = tick(tally, TALLY.sends, t)
        counters[CT.busy] = forward(k, dt_ps, n_active, int(counters[CT.busy]), routes.rt_ptr,
                                    flows, links, lb, hops, lines, scratch)  # fmt: skip
        if links.pfc.shape[0] > 0:  # the ingress queues' pauses for the next step
            pfc_step(k, dt_ps, int(counters[CT.running]), flows.active, flows.fx, routes.rt_ptr,
                     hops.ef, links.ls, links.pfc, links.pf_ptr, links.pf_row, links.pf_w,
                     links.pf_live, links.pf_of, lb.n, lb.hops, lb.links)  # fmt: skip
        if hops.acks[ACKS.qcn] >= 0.0:  # the congestion points' samples and notices
            qcn_step(k, dt_ps, fs, links.ls, ring, lines.pool, calendar, hops)
        t = cycles()
        n_senders = carry_feedback(k, now, n_senders, flows, links, routes, lb, hops, scratch)
        t = tick(tally, TALLY.carry, t)
        file_sends(k, now, dt_ps, n_senders, flows, links.ls, routes, lines, lb, hops, scratch)
        t = tick(tally, TALLY.file_sends, t)
        if scratch.n_drop[0] > 0:  # (the calls pass every field of their groups: not for none)
            file_drops(k, now, dt_ps, flows, links.ls, lines, lb, scratch, hops.acks[ACKS.sides])
        t = tick(tally, TALLY.file_drops, t)
        if scratch.n_mark[0] > 0:
            file_deliveries(k, dt_ps, flows, links.ls, routes, lines, lb, hops, scratch)
        tick(tally, TALLY.file_deliveries, t)
        tally[TALLY.steps] += 1
        k += 1
        if counters[CT.waiting] == 0:
            break  # every flow the run waits for has finished (engine.stop_when_done)
        if counters[CT.led] != led:
            break  # a flow others wait for finished: Python starts them if its group is done
    return k

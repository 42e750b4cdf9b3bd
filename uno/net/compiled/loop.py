"""The kernels Python calls (the data plane's boundary): :func:`run` processes the kernel's
events up to the next Python event, :func:`inject` is a host's NIC port receiving a packet from
Python, :func:`start_flow` starts a kernel sender, :func:`nic_wait` and :func:`nic_continue`
let Python senders take their turns at a NIC the kernel schedules.

Each call reserves one eid ``eid`` of the engine's counter; the events it schedules take
``eid << EID_SHIFT`` + 0, 1, 2, ... (:mod:`uno.net.compiled.events`), so kernel events and
Python events (timers, NIC wakes, SimPy processes) interleave exactly as in the Python data
plane. Each returns the kernel top's time (ps) and engine eid, for the engine to compare with
its own heap's."""

from __future__ import annotations

from numba import njit

from uno.core.borrow import borrowed
from uno.core.packet import CN, DATA, NACK, TRIM
from uno.net.compiled.dci import dci_release
from uno.net.compiled.delivery import deliver, forward, receive_data, receive_trimmed
from uno.net.compiled.event_port import eport_hold_over, eport_tx_done, pfc_signal
from uno.net.compiled.events import heap_pop, kernel_top, room
from uno.net.compiled.layout import (
    CALL_PUSHES,
    EID_SHIFT,
    ERR_MISROUTED,
    EV,
    EV_BITS,
    EV_PORT_MASK,
    EV_SLOT_SHIFT,
    EV_TYPE_MASK,
    FL,
    HEAP_ROOM,
    NEVER_PS,
    POOL_ROOM,
    RUN_DONE,
    RUN_ERROR,
    RUN_HEAP,
    RUN_NICPY,
    RUN_NONE,
    RUN_PAUSED,
    RUN_POOL,
    RUN_RESUMED,
    H,
    K,
    P,
    R,
    S,
)
from uno.net.compiled.nic import nic_resumed, wait_for_nic
from uno.net.compiled.nic_turns import nic_serve, nic_wake
from uno.net.compiled.packets import free_row, hash_key, new_packet
from uno.net.compiled.ports import port_receive
from uno.net.compiled.sender_acks import (
    on_timer,
    sender_on_ack,
    sender_on_notice,
    sender_on_trim_nack,
)
from uno.net.compiled.senders import pace_wake, rate_changed, try_send


@njit(cache=True)
def _event(ST, F, U, PK, typ, payload, now):
    """A kernel event other than a delivery (``typ`` > ``EV.wire``) at ``now``. Returns
    (``RUN_NONE`` to go on, or the code that stops the call: ``RUN_NICPY`` with the flow whose
    turn it is, ``RUN_PAUSED`` / ``RUN_RESUMED`` with the port a PFC signal changed)."""
    index = (payload >> EV_BITS) & EV_PORT_MASK
    if typ == EV.rto:
        on_timer(ST, F, U, PK, index, now)
    elif typ == EV.nicwake:
        f = nic_wake(ST, F, U, PK, index, now)
        if f >= 0:  # a Python sender's turn: Python goes on with the wake (nic_continue)
            return RUN_NICPY, f
    elif typ == EV.pace:
        pace_wake(ST, F, U, PK, index, now)
    elif typ == EV.rate:
        rate_changed(ST, F, U, PK, index, now)
    elif typ == EV.txdone:
        pb = ST[H.off_ports] + index * P.size
        eport_tx_done(ST, F, U, PK, index, pb, payload >> EV_SLOT_SHIFT)
    elif typ == EV.cn:  # a switch forwards the notice one of its ports made
        forward(ST, F, U, PK, index, payload >> EV_SLOT_SHIFT, now)
    elif typ == EV.pfq:  # a DCI switch's per-flow queue releases its head packet
        node, slot = dci_release(ST, PK, index, now)
        forward(ST, F, U, PK, node, slot, now)
    elif typ == EV.hold:  # a shared event port's data packet may start
        eport_hold_over(ST, F, PK, index, now)
    elif pfc_signal(ST, F, PK, index, typ == EV.resume, now):
        pb = ST[H.off_ports] + index * P.size
        if typ == EV.resume and ST[pb + P.flags] & FL.knic:
            # the kernel's senders wait at this NIC: wake them as Host.nic_resumed would
            # (Python then only logs the interval)
            nic_resumed(ST, ST[pb + P.host], now)
        return (RUN_RESUMED if typ == EV.resume else RUN_PAUSED), index
    return RUN_NONE, -1


@njit(cache=True)
def _at_host(ST, F, U, PK, host, slot, now):
    """The packet in ``slot`` reached ``host`` at ``now``: a data packet of a flow whose
    receiver is the kernel's is answered there (:func:`receive_data`); an ACK of a kernel
    sender's flow is taken by it (:meth:`uno.net.host.Host.receive`, then the sender). Returns
    (``RUN_NONE`` to go on, ``RUN_ERROR``, ``RUN_DONE`` with the flow that completed, or
    ``host``: the packet is Python's; the slot)."""
    kind = PK[slot, K.kind]
    if (kind == DATA or kind == TRIM) and ST[
        ST[H.off_flows] + PK[slot, K.flow] * R.size + R.kernel
    ]:
        if kind == DATA:
            err = receive_data(ST, F, U, PK, host, slot, now)
        else:
            err = receive_trimmed(ST, F, U, PK, host, slot, now)
        if err:
            ST[H.error] = err
            return RUN_ERROR, slot
        return RUN_NONE, slot
    f = PK[slot, K.flow]
    if kind == DATA or kind == TRIM or not ST[ST[H.off_senders] + f * S.size + S.on]:
        return host, slot
    # a congestion notice, a trimmed copy's NACK or an ACK for a kernel sender
    if PK[slot, K.dst] != host:
        ST[H.error] = ERR_MISROUTED
        ST[H.error_arg] = slot
        return RUN_ERROR, slot
    done = 0
    if kind == CN:
        ST[H.rx_cn] += 1
        sender_on_notice(ST, F, f, PK[slot, K.seq], now)
    elif kind == NACK:
        ST[H.rx_nack] += 1
        sender_on_trim_nack(ST, F, U, PK, f, slot, now)
    else:
        ST[H.rx_ack] += 1
        done = sender_on_ack(ST, F, U, PK, f, slot, now)
    free_row(ST, PK, slot)
    if done == 1:
        return RUN_DONE, f
    if done < 0:
        ST[H.error] = -done
        ST[H.error_arg] = f
        return RUN_ERROR, slot
    return RUN_NONE, slot


@njit(cache=True)
def run(ST, F, U, PK, lim_t, lim_prio, lim_eid, eid):
    """Process kernel events in (time, eid) order while they come before the Python event
    keyed (``lim_t``, ``lim_prio``, ``lim_eid``) (kernel events have priority 1); the events
    this call schedules take sub-eids of the engine eid ``eid``. Stops after the first delivery
    to Python's endpoints (or once it has scheduled ``CALL_PUSHES`` events).

    A data packet whose flow has a kernel receiver is answered inside, an ACK whose flow has a
    kernel sender is taken by it, and the kernel senders' timers, pacing and NIC wakes are
    events here too. A kernel error stops the call (``RUN_ERROR``: ``H.error`` says which), and
    so do a PFC PAUSE or RESUME that changed a port, a heap or pool without room for an event's
    pushes or sends, a kernel sender's flow completing and a NIC wake reaching a Python
    sender's turn (``RUN_*``, :mod:`uno.net.compiled.layout`).

    Returns (the host a packet was delivered to, or a ``RUN_*`` code; its slot (the port, for
    a PAUSE or RESUME; the flow, for a completion or a Python sender's turn); its kind (the
    host, for a turn); its ECN; the time of the last event; the kernel top's time and engine
    eid)."""
    ST, F, U, PK = borrowed(ST), borrowed(F), borrowed(U), borrowed(PK)  # (see uno.core.borrow)
    base = eid << EID_SHIFT
    ST[H.eid] = base
    ht = ST[H.off_heap_t]
    he = ST[H.off_heap_e]
    host = RUN_NONE
    slot = -1
    kind = 0
    ecn = 0
    now = ST[H.now]
    while ST[H.heap_n] > 0 and ST[H.eid] - base < CALL_PUSHES:
        t = ST[ht]
        e = ST[he] >> EID_SHIFT
        if t > lim_t or (t == lim_t and (lim_prio < 1 or (lim_prio == 1 and e > lim_eid))):
            break
        if ST[H.heap_cap] - ST[H.heap_n] < HEAP_ROOM:
            host = RUN_HEAP
            break
        if ST[H.pool_cap] - ST[H.in_pool] < POOL_ROOM:
            host = RUN_POOL
            break
        payload = heap_pop(ST)
        now = t
        ST[H.now] = t
        typ = payload & EV_TYPE_MASK
        if typ > EV.wire:
            code, index = _event(ST, F, U, PK, typ, payload, t)
            if code == RUN_NONE:
                continue
            host = code
            slot = index
            if code == RUN_NICPY:
                kind = (payload >> EV_BITS) & EV_PORT_MASK
            break
        host, slot = deliver(ST, F, U, PK, payload, t)
        if host < 0:
            continue
        kind = PK[slot, K.kind]
        host, slot = _at_host(ST, F, U, PK, host, slot, t)
        if host == RUN_NONE:
            continue
        if host >= 0:
            ecn = PK[slot, K.ecn]
            free_row(ST, PK, slot)  # Python takes the packet from objs[slot] before any reuse
        break
    top_t, top_e = kernel_top(ST)
    return host, slot, kind, ecn, now, top_t, top_e


@njit(cache=True)
def inject(ST, F, U, PK, p, kind, size, src, dst, entropy, ecn, flow, seq, payload, now, eid):
    """Host NIC port ``p`` receives a packet from Python at ``now`` (its ECMP hash key is that
    of (``src``, ``dst``, ``entropy``)); a delivery event it schedules takes a sub-eid of
    engine eid ``eid``. Returns (pool slot, or -1 if the pool is full, -2 if the event heap has
    too little room; kernel top time, kernel top's engine eid)."""
    ST, F, U, PK = borrowed(ST), borrowed(F), borrowed(U), borrowed(PK)  # (see uno.core.borrow)
    if ST[H.heap_cap] - ST[H.heap_n] < HEAP_ROOM:
        return -2, NEVER_PS, 0
    if ST[H.free] < 0:
        return -1, NEVER_PS, 0
    slot = new_packet(ST, PK, kind, size, src, dst, entropy, hash_key(src, dst, entropy), ecn,
                      flow, seq, payload)  # fmt: skip
    ST[H.eid] = eid << EID_SHIFT
    ST[H.now] = now
    port_receive(ST, F, U, PK, p, slot, now)
    top_t, top_e = kernel_top(ST)
    return slot, top_t, top_e


@njit(cache=True)
def _enter(ST, now, eid):
    """Set the kernel's clock to ``now`` and its events' eids under engine eid ``eid`` for a
    call from Python; returns 0, or the ``RUN_*`` code of the room the pool or heap needs
    first (then nothing is set)."""
    code = room(ST)
    if code == 0:
        ST[H.eid] = eid << EID_SHIFT
        ST[H.now] = now
    return code


@njit(cache=True)
def start_flow(ST, F, U, PK, f, now, eid):
    """Kernel sender ``f`` starts at ``now`` (:meth:`uno.transport.sender.Sender.start`); the
    events it schedules take sub-eids of engine eid ``eid``. Returns (0, or a ``RUN_*`` code if
    the pool / heap needs room first, nothing done; kernel top time, kernel top's engine eid)."""
    ST, F, U, PK = borrowed(ST), borrowed(F), borrowed(U), borrowed(PK)  # (see uno.core.borrow)
    code = _enter(ST, now, eid)
    if code:
        return code, NEVER_PS, 0
    try_send(ST, F, U, PK, f, now, False)
    top_t, top_e = kernel_top(ST)
    return 0, top_t, top_e


@njit(cache=True)
def nic_wait(ST, F, U, PK, f, now, eid):
    """Python sender ``f`` found its host's NIC busy at ``now``, a NIC the kernel schedules: it
    waits in the kernel's FIFO; a wake it schedules takes a sub-eid of engine eid ``eid``.
    Returns (0, or a ``RUN_*`` code if the pool / heap needs room first, nothing done; kernel
    top time, kernel top's engine eid)."""
    ST, F, U, PK = borrowed(ST), borrowed(F), borrowed(U), borrowed(PK)  # (see uno.core.borrow)
    code = _enter(ST, now, eid)
    if code:
        return code, NEVER_PS, 0
    wait_for_nic(ST, f, ST[H.off_senders] + f * S.size, now)
    top_t, top_e = kernel_top(ST)
    return 0, top_t, top_e


@njit(cache=True)
def nic_continue(ST, F, U, PK, host, now, eid):
    """Go on with ``host``'s NIC wake at ``now`` after a Python sender's turn; the events it
    schedules take sub-eids of engine eid ``eid``. Returns (the next Python sender's flow or
    -1, or a ``RUN_*`` code (< -1) if the pool / heap needs room first, nothing done; kernel
    top time, kernel top's engine eid)."""
    ST, F, U, PK = borrowed(ST), borrowed(F), borrowed(U), borrowed(PK)  # (see uno.core.borrow)
    code = _enter(ST, now, eid)
    if code:
        return code, NEVER_PS, 0
    f = nic_serve(ST, F, U, PK, host, now)
    top_t, top_e = kernel_top(ST)
    return f, top_t, top_e

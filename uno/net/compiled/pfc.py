"""PFC's ingress queues in the kernel (:class:`uno.net.pfc.PfcIngress`): a queue per link into
a lossless switch counts the bytes that entered through it and have not left, and signals a
PAUSE past Xoff, a RESUME at Xon, to the upstream port one signal delay later (events
``EV.pause`` / ``EV.resume``: :func:`uno.net.compiled.event_port.pfc_signal`).

In the hybrid (:mod:`uno.fluid.hybrid_loop`) a queue's level also counts the fluid flows'
bytes that entered through its link (``ING.fluid``, set after each fluid step), and each
queue keeps the upstream port's pauses as signalled, which the fluid link reads as the share
of a step it is paused (:func:`paused_through_ps`)."""

from __future__ import annotations

from numba import njit

from uno.core.packet import DATA
from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import EV, EV_BITS, ING, H, K


@njit(cache=True)
def ingress_receive(ST, PK, ing, slot, now):
    """The packet in ``slot`` enters its switch through PFC ingress queue ``ing`` at ``now``
    (:meth:`uno.net.pfc.PfcIngress.receive`): counted (unless it is a control packet in the
    switch's control lane), and past Xoff a PAUSE for the upstream port's data lane."""
    ib = ST[H.off_ingress] + ing * ING.size
    if PK[slot, K.kind] != DATA and ST[ib + ING.ctrl]:
        PK[slot, K.ingress] = -1
        return
    PK[slot, K.ingress] = ing
    ST[ib + ING.bytes] += PK[slot, K.bytes]
    ST[ib + ING.arrived] += PK[slot, K.bytes]
    ingress_signal(ST, ib, now)


@njit(cache=True)
def ingress_release(ST, ing, size, now):
    """``size`` bytes that entered through PFC ingress queue ``ing`` left the switch or were
    dropped at ``now`` (:meth:`uno.net.pfc.PfcIngress.release`): at Xon or below, a pausing
    queue sends the RESUME."""
    ib = ST[H.off_ingress] + ing * ING.size
    ST[ib + ING.bytes] -= size
    ingress_signal(ST, ib, now)


@njit(cache=True)
def ingress_signal(ST, ib, now):
    """The queue at ``ib`` (its row's offset in ST) after its level changed at ``now``: its
    peak, and past Xoff a PAUSE if it is not pausing, at Xon or below a RESUME if it is. The
    level is its packets' bytes plus the fluid flows' (none outside the hybrid)."""
    level = ST[ib + ING.bytes] + ST[ib + ING.fluid]
    if level > ST[ib + ING.max_bytes]:
        ST[ib + ING.max_bytes] = level
    if not ST[ib + ING.pausing]:
        if level > ST[ib + ING.xoff]:
            signal_pause(ST, ib, now + ST[ib + ING.signal_ps])
    elif level <= ST[ib + ING.xon]:
        signal_resume(ST, ib, now + ST[ib + ING.signal_ps])


@njit(cache=True)
def signal_pause(ST, ib, at_ps):
    """The queue at ``ib`` starts pausing: its PAUSE reaches the upstream port at ``at_ps``, or
    just after the RESUME on its way there if that comes later (a RESUME the fluid's drain
    timed ahead of its arrival: :func:`uno.fluid.hybrid_loop.hybrid_pfc`)."""
    if not ST[ib + ING.p_open] and ST[ib + ING.p_end] > at_ps:
        at_ps = ST[ib + ING.p_end]
    ST[ib + ING.pausing] = 1
    ST[ib + ING.sent] += 1
    ST[ib + ING.p_from] = at_ps
    ST[ib + ING.p_open] = 1
    heap_push(ST, at_ps, next_eid(ST), (ST[ib + ING.up] << EV_BITS) | EV.pause)


@njit(cache=True)
def signal_resume(ST, ib, at_ps):
    """The queue at ``ib`` stops pausing: its RESUME reaches the upstream port at ``at_ps``, or
    just after its PAUSE if that comes later (:func:`signal_pause`)."""
    if at_ps < ST[ib + ING.p_from]:
        at_ps = ST[ib + ING.p_from]
    ST[ib + ING.pausing] = 0
    ST[ib + ING.p_end] = at_ps
    ST[ib + ING.p_open] = 0
    ST[ib + ING.p_acc] += at_ps - ST[ib + ING.p_from]
    heap_push(ST, at_ps, next_eid(ST), (ST[ib + ING.up] << EV_BITS) | EV.resume)


@njit(cache=True)
def paused_through_ps(ST, ib, t_ps):
    """The time (ps) the upstream port of the queue at ``ib`` is paused up to ``t_ps``, by the
    signals sent so far (a pause with no RESUME yet lasting to ``t_ps``; the earlier pauses
    ended before the latest began)."""
    start = ST[ib + ING.p_from]
    if ST[ib + ING.p_open]:
        return ST[ib + ING.p_acc] + max(0, t_ps - start)
    end = ST[ib + ING.p_end]
    return ST[ib + ING.p_acc] - (end - start) + min(max(0, t_ps - start), end - start)

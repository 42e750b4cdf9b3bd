"""A host's NIC turn-taking in the kernel (:class:`uno.net.nic.NicScheduler`): senders that
find the NIC busy wait in a FIFO (a list through their rows' ``S.nic_next``) and a wake
(``EV.nicwake``) is scheduled for when it frees; a NIC that PFC paused schedules none until its
RESUME. The wake itself, which lets the waiting senders send, is
:func:`uno.net.compiled.nic_turns.nic_wake`."""

from __future__ import annotations

from numba import njit

from uno.net.compiled.events import heap_push, next_eid
from uno.net.compiled.layout import EV, EV_BITS, PAUSED, H, N, P, S


@njit(cache=True)
def nic_busy_at(ST, nb):
    """Offset in ST of the busy-until of the NIC port of the NIC whose row is ``nb``."""
    return ST[H.off_ports] + ST[nb + N.port] * P.size + P.busy


@njit(cache=True)
def wait_for_nic(ST, f, sb, now):
    """Sender ``f`` (row ``sb``) found its host's NIC busy at ``now``: it waits in the host's
    FIFO (once), and a wake is scheduled when the NIC frees (:meth:`uno.net.nic.NicScheduler.
    wait`)."""
    nb = ST[H.off_nics] + ST[sb + S.host] * N.size
    if not ST[sb + S.nic_queued]:
        ST[sb + S.nic_queued] = 1
        ST[sb + S.nic_next] = -1
        tail = ST[nb + N.tail]
        if tail >= 0:
            ST[ST[H.off_senders] + tail * S.size + S.nic_next] = f
        else:
            ST[nb + N.head] = f
        ST[nb + N.tail] = f
    busy = ST[nic_busy_at(ST, nb)]
    if not ST[nb + N.pending] and busy < PAUSED:
        ST[nb + N.pending] = 1
        heap_push(ST, busy, next_eid(ST), (ST[sb + S.host] << EV_BITS) | EV.nicwake)


@njit(cache=True)
def nic_rewake(ST, host, now):
    """Schedule a wake of ``host``'s NIC when it is next free (not before ``now``) if senders
    wait there and no wake is pending."""
    nb = ST[H.off_nics] + host * N.size
    busy = ST[nic_busy_at(ST, nb)]
    if ST[nb + N.head] >= 0 and not ST[nb + N.pending] and busy < PAUSED:
        ST[nb + N.pending] = 1
        heap_push(ST, busy if busy > now else now, next_eid(ST), (host << EV_BITS) | EV.nicwake)


@njit(cache=True)
def nic_resumed(ST, host, now):
    """PFC resumed ``host``'s NIC (:meth:`uno.net.nic.NicScheduler.resumed`): its waiting
    kernel senders are woken when it is next free (while it was paused, no wake was set)."""
    nb = ST[H.off_nics] + host * N.size
    if ST[nb + N.head] >= 0 and not ST[nb + N.pending]:
        ST[nb + N.pending] = 1
        busy = ST[nic_busy_at(ST, nb)]
        heap_push(ST, busy if busy > now else now, next_eid(ST), (host << EV_BITS) | EV.nicwake)

"""A host's NIC wake in the kernel (:meth:`uno.net.nic.NicScheduler._wake`): while the NIC is
free, the senders waiting in its FIFO (:mod:`uno.net.compiled.nic`) take their turns in order;
then a wake for those still waiting. A Python sender waiting at a NIC the kernel schedules (one
it shares with kernel senders) takes its turn in Python: the wake stops at it and goes on when
Python calls :func:`uno.net.compiled.loop.nic_continue`. Times in ps."""

from __future__ import annotations

from numba import njit

from uno.net.compiled.layout import H, N, S
from uno.net.compiled.nic import nic_busy_at, nic_rewake
from uno.net.compiled.senders import try_send


@njit(cache=True)
def nic_serve(ST, F, U, PK, host, now):
    """The body of ``host``'s NIC wake at ``now`` from its next waiting sender on. Returns the
    flow of a Python sender whose turn it is (taken off the FIFO), or -1 once the wake is
    over."""
    nb = ST[H.off_nics] + host * N.size
    busy_at = nic_busy_at(ST, nb)
    snd = ST[H.off_senders]
    while ST[nb + N.head] >= 0 and ST[busy_at] <= now:
        f = ST[nb + N.head]
        sb = snd + f * S.size
        nxt = ST[sb + S.nic_next]
        ST[nb + N.head] = nxt
        if nxt < 0:
            ST[nb + N.tail] = -1
        ST[sb + S.nic_queued] = 0
        if not ST[sb + S.on]:
            return f
        if not ST[sb + S.done]:
            try_send(ST, F, U, PK, f, now, True)
    nic_rewake(ST, host, now)
    return -1


@njit(cache=True)
def nic_wake(ST, F, U, PK, host, now):
    """``host``'s NIC wake at ``now``: no wake is pending any more, and the waiting senders
    take their turns (:func:`nic_serve`, whose result it returns)."""
    ST[ST[H.off_nics] + host * N.size + N.pending] = 0
    return nic_serve(ST, F, U, PK, host, now)

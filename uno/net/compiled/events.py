"""The kernel's event heap and the eids of the events it schedules.

The heap is three arrays of ST (time in ps, eid, payload: :mod:`uno.net.compiled.layout`), a
binary heap ordered by (time, eid). Each call into the kernel reserves one eid ``e`` of the
engine's counter, and the events it schedules take ``e << EID_SHIFT`` + 0, 1, 2, ...: they sort
after every event scheduled before the call and before every event scheduled after it, in
creation order, exactly as the Python ports' eids would.
"""

from __future__ import annotations

from numba import njit

from uno.net.compiled.layout import EID_SHIFT, HEAP_ROOM, NEVER_PS, POOL_ROOM, RUN_HEAP, RUN_POOL, H


@njit(cache=True)
def heap_push(ST, t, eid, payload):
    """Push the event (``t`` ps, ``eid``) -> ``payload`` on the kernel's binary heap."""
    n = ST[H.heap_n]
    if n >= ST[H.heap_cap]:
        raise RuntimeError("compiled data plane: event heap full")
    ht = ST[H.off_heap_t]
    he = ST[H.off_heap_e]
    hp = ST[H.off_heap_p]
    i = n
    while i > 0:
        parent = (i - 1) >> 1
        pt = ST[ht + parent]
        if pt < t or (pt == t and ST[he + parent] < eid):
            break
        ST[ht + i] = pt
        ST[he + i] = ST[he + parent]
        ST[hp + i] = ST[hp + parent]
        i = parent
    ST[ht + i] = t
    ST[he + i] = eid
    ST[hp + i] = payload
    ST[H.heap_n] = n + 1


@njit(cache=True)
def heap_pop(ST):
    """Remove the heap's top; returns its payload (the caller read its time and eid)."""
    ht = ST[H.off_heap_t]
    he = ST[H.off_heap_e]
    hp = ST[H.off_heap_p]
    payload = ST[hp]
    n = ST[H.heap_n] - 1
    ST[H.heap_n] = n
    if n == 0:
        return payload
    t = ST[ht + n]
    eid = ST[he + n]
    pl = ST[hp + n]
    i = 0
    while True:
        child = 2 * i + 1
        if child >= n:
            break
        right = child + 1
        if right < n and (
            ST[ht + right] < ST[ht + child]
            or (ST[ht + right] == ST[ht + child] and ST[he + right] < ST[he + child])
        ):
            child = right
        ct = ST[ht + child]
        if t < ct or (t == ct and eid < ST[he + child]):
            break
        ST[ht + i] = ct
        ST[he + i] = ST[he + child]
        ST[hp + i] = ST[hp + child]
        i = child
    ST[ht + i] = t
    ST[he + i] = eid
    ST[hp + i] = pl
    return payload


@njit(cache=True)
def next_eid(ST):
    """The eid of the next event this call schedules."""
    eid = ST[H.eid]
    ST[H.eid] = eid + 1
    ST[H.pushes] += 1
    return eid


@njit(cache=True)
def kernel_top(ST):
    """The time (ps) and engine eid of the heap's top; (NEVER_PS, 0) when it is empty."""
    if ST[H.heap_n] > 0:
        return ST[ST[H.off_heap_t]], ST[ST[H.off_heap_e]] >> EID_SHIFT
    return NEVER_PS, 0


@njit(cache=True)
def room(ST):
    """0 if the pool and the heap have room for an event's sends and pushes, else the
    ``RUN_*`` code of the one to grow first."""
    if ST[H.pool_cap] - ST[H.in_pool] < POOL_ROOM:
        return RUN_POOL
    if ST[H.heap_cap] - ST[H.heap_n] < HEAP_ROOM:
        return RUN_HEAP
    return 0

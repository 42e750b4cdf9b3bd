"""Max-min fair flow-level baseline (``engine.kind=maxmin``).

The flow-level estimators of the literature (e.g. flowSim in m3, Li et al., SIGCOMM 2024) skip
congestion control altogether: at every flow arrival and completion the rates of all running
flows are recomputed as the max-min fair allocation of the link capacities by progressive
filling (every unfrozen flow's rate grows at the same pace; a flow freezes when a link on its
route saturates or it reaches its NIC rate), and each flow transfers its bytes at that rate
until the next event. There are no queues, marks or losses; a flow's completion time is its
transfer time plus its path's base RTT (a lone flow's FCT is its ideal FCT; with
``engine.fluid_last_packet``, less what its last packet's ACK gains on its last byte,
``FS_LAST_EARLY``: it finishes when its packet sender does). It is the
floor the fluid engine must beat in accuracy against the packet engine.

It reads the same scenario as the fluid engine (routes: the packet engine's ECMP path, or an
even split over equal-cost paths for spraying balancers; split routes load each link with the
flow's share) and writes the same tables. Units: ps, bytes, bytes/ps.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from uno.fluid import columns as K
from uno.fluid.engine import FluidSimulation
from uno.metrics.progress import Snapshot
from uno.metrics.result import RunResult
from uno.net.compiled.dataplane import loaded_entry


@njit(cache=True)
def maxmin_rates(active, n_active, rt_ptr, rt_link, rt_w, cap, nic, rates, residual, load, live):
    """Max-min fair rates (bytes/ps) of the flows ``active[:n_active]`` by progressive filling
    over link capacities ``cap`` with per-flow caps ``nic``; written into ``rates[f]``.
    ``residual``, ``load`` (per link) and ``live`` (the flows still growing, compacted as
    they freeze, so that a round costs what is left of them) are scratch arrays."""
    for i in range(n_active):
        f = active[i]
        rates[f] = 0.0
        live[i] = f
        for j in range(rt_ptr[f], rt_ptr[f + 1]):
            residual[rt_link[j]] = cap[rt_link[j]]
            load[rt_link[j]] = 0.0
    n_live = n_active
    while n_live > 0:
        for i in range(n_live):
            f = live[i]
            for j in range(rt_ptr[f], rt_ptr[f + 1]):
                load[rt_link[j]] += rt_w[j]
        delta = np.inf
        tight_link = -1  # the link (or, if -1, the NIC of tight_flow) that sets delta
        tight_flow = -1
        for i in range(n_live):
            f = live[i]
            head = nic[f] - rates[f]
            if head < delta:
                delta = head
                tight_link = -1
                tight_flow = f
            for j in range(rt_ptr[f], rt_ptr[f + 1]):
                link = rt_link[j]
                if load[link] > 0.0:
                    room = residual[link] / load[link]
                    if room < delta:
                        delta = room
                        tight_link = link
        if delta < 0.0:
            delta = 0.0
        for i in range(n_live):
            rates[live[i]] += delta
        # charge each link once for the growth of its growing flows (and clear its load)
        for i in range(n_live):
            f = live[i]
            for j in range(rt_ptr[f], rt_ptr[f + 1]):
                link = rt_link[j]
                if load[link] > 0.0:
                    residual[link] -= delta * load[link]
                    load[link] = 0.0
        if tight_link >= 0:
            residual[tight_link] = 0.0  # exactly saturated, whatever the rounding
        else:
            rates[tight_flow] = nic[tight_flow]
        kept = 0
        for i in range(n_live):
            f = live[i]
            stop = rates[f] >= nic[f] * (1.0 - 1e-9)
            if not stop:
                for j in range(rt_ptr[f], rt_ptr[f + 1]):
                    link = rt_link[j]
                    if residual[link] <= cap[link] * 1e-9:
                        stop = True
                        break
            if not stop:
                live[kept] = f
                kept += 1
        n_live = kept


#: the event loop's state between calls of :func:`maxmin_advance`: ints (the next flow of
#: ``order`` to start, running flows, rate computations so far, flows the run waits for not
#: finished yet, whether the run is over) and floats (now, the last finish of a flow the run
#: waits for, the run's stop: ``stop_ps``, then that last finish once they all have)
I_NEXT, I_ACTIVE, I_EVENTS, I_WAITED, I_OVER = range(5)
F_NOW, F_LAST_WAITED, F_STOP = range(3)


@njit(cache=True)
def maxmin_advance(
    max_events,
    ist,
    fst,
    start,
    size,
    base_rtt,
    order,
    rt_ptr,
    rt_link,
    rt_w,
    cap,
    nic,
    waits,
    halt,
    leads,
    finish,
    remaining,
    active,
    rates,
    residual,
    load,
    live,
):
    """Event loop: flows start at ``start`` (ps, visited in ``order``), each must move ``size``
    bytes; rates are recomputed at every start and completion. Writes ``finish`` (ps, transfer end +
    ``base_rtt``, the last packet's ACK's delay; -1: not finished) and ``remaining`` (bytes each
    flow has still to move; ``size`` before the first call). The run ends at the stop time, or once
    every flow has finished, or once every flow with ``waits`` set has (engine.stop_when_done: at
    the last of their finishes). A flow leaves at its stop time ``halt`` (ps; ``inf``: none;
    ``workload.flows[i].stop_us``) and its rate is shared again; one whose last ACK would come after
    it (transfer end + base RTT) has not finished, as its packet sender hears nothing after it. Runs
    at most ``max_events`` rate computations, from and back to the state ``ist``/``fst`` (``I_*``,
    ``F_*``; ``active`` the running flows, ``rates`` theirs, the rest scratch), so that the run is
    the same whatever the calls, and returns after an event at which a flow marked in ``leads``
    finished (flows wait for its tag's: the caller sets their ``start`` and sorts the unstarted tail
    of ``order`` again); returns whether it is over."""
    n = start.shape[0]
    nxt = ist[I_NEXT]
    n_active = ist[I_ACTIVE]
    events = ist[I_EVENTS]
    n_waited = ist[I_WAITED]
    now = fst[F_NOW]
    last_waited = fst[F_LAST_WAITED]
    stop_ps = fst[F_STOP]
    over = False
    calls = 0
    led = False
    while calls < max_events and not led:
        if not (nxt < n or n_active > 0):
            over = True
            break
        calls += 1
        # admit the flows starting now
        while nxt < n and start[order[nxt]] <= now:
            active[n_active] = order[nxt]
            n_active += 1
            nxt += 1
        maxmin_rates(active, n_active, rt_ptr, rt_link, rt_w, cap, nic, rates, residual, load, live)
        events += 1
        # next event: a completion, a start or a stop
        t_next = start[order[nxt]] if nxt < n else np.inf
        for i in range(n_active):
            f = active[i]
            if halt[f] < t_next:
                t_next = halt[f]
            if rates[f] > 0.0:
                t_done = now + remaining[f] / rates[f]
                if t_done < t_next:
                    t_next = t_done
        if t_next > stop_ps:
            t_next = stop_ps
        span = t_next - now
        kept = 0
        for i in range(n_active):
            f = active[i]
            remaining[f] -= rates[f] * span
            # done within a picosecond of transfer (times of ~1e10 ps cannot resolve less)
            if remaining[f] <= size[f] * 1e-9 or remaining[f] <= rates[f] * 1.0:
                remaining[f] = 0.0
                if halt[f] < t_next + base_rtt[f]:
                    continue  # stopped before its last ACK: it leaves unfinished
                finish[f] = t_next + base_rtt[f]
                led = led or leads[f]
                if waits[f]:
                    n_waited -= 1
                    last_waited = max(last_waited, finish[f])
                    if n_waited == 0 and last_waited < stop_ps:
                        stop_ps = last_waited
            elif halt[f] > t_next:
                active[kept] = f
                kept += 1
        n_active = kept
        now = t_next
        if now >= stop_ps:
            over = True
            break
    ist[I_NEXT] = nxt
    ist[I_ACTIVE] = n_active
    ist[I_EVENTS] = events
    ist[I_WAITED] = n_waited
    ist[I_OVER] = 1 if over else 0
    fst[F_NOW] = now
    fst[F_LAST_WAITED] = last_waited
    fst[F_STOP] = stop_ps
    return over


class MaxMinSimulation(FluidSimulation):
    """The max-min baseline on the fluid engine's scenario arrays."""

    engine_name = "maxmin"

    def kernels(self) -> tuple:
        """The compiled kernels the run calls first
        (:func:`uno.core.jit_cache.announce_compile`)."""
        return (maxmin_advance,)

    runs_cc = False
    folds_links = False  # (its water-filling counts each link's flows' shares)
    #: while it runs: the event loop's state (maxmin_advance's ist, fst) and each flow's bytes
    #: left to move (what the progress watcher reads)
    mm_state: tuple[np.ndarray, np.ndarray] | None = None
    remaining: np.ndarray | None = None

    def run(self, measure_memory: bool = False) -> RunResult:
        fs = self.fs
        n = len(self.flows)
        n_links = len(self.ls)
        start = fs[:, K.FS_START].copy()
        size = fs[:, K.FS_SIZE].copy()
        waits = fs[:, K.FS_STOP] > 0.0
        halt = np.where(fs[:, K.FS_HALT] > 0.0, fs[:, K.FS_HALT], np.inf)
        finish = np.full(n, -1.0)
        # (set before the first call: the progress watcher reads them meanwhile)
        self.remaining = size.copy()
        ist = np.array([0, 0, 0, int(waits.sum()), 0], dtype=np.int64)
        fst = np.array([0.0, 0.0, float(self.max_time_ps)])
        self.mm_state = (ist, fst)
        active, live = np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64)
        rates, residual, load = np.zeros(n), np.zeros(n_links), np.zeros(n_links)
        args = (
            ist, fst, start, size, fs[:, K.FS_BASE_RTT] - fs[:, K.FS_LAST_EARLY], self.order,
            self.rt_ptr, self.rt_link, self.rt_w, self.ls[:, K.LS_CAP].copy(),
            fs[:, K.FS_NIC].copy(), waits, halt, fs[:, K.FS_LEADS] > 0.0, finish, self.remaining,
            active, rates, residual, load, live,
        )  # fmt: skip
        # its compiled entry, loaded before the run's time as the packets' kernels are
        step = loaded_entry(maxmin_advance, (0, *args))
        t0 = time.perf_counter()
        budget = self.wall_budget  # (uno.core.budget: each call returns within about its aim)
        while True:
            before = int(ist[I_EVENTS])
            over = step(budget.units(), *args)
            budget.spent(int(ist[I_EVENTS]) - before)
            if over:
                break
            if self.chains.any:
                self._start_chained(finish, start, int(ist[I_NEXT]), fst[F_STOP])
        wall = time.perf_counter() - t0
        # the run's end: the last finish (transfer end + base RTT) of the flows the run waits
        # for, once they all have, or the stop time; a flow whose last ACK would come after it
        # has not finished
        end_ps = min(fst[F_LAST_WAITED], fst[F_STOP]) if ist[I_WAITED] == 0 else fst[F_NOW]
        remaining = self.remaining
        self.now_ps = int(end_ps)
        done = (finish >= 0) & (finish <= end_ps)
        fs[:, K.FS_FINISH] = np.where(done, finish, -1.0)
        fs[:, K.FS_STATE] = np.where(done, 2.0, np.where(fs[:, K.FS_START] < end_ps, 1.0, 0.0))
        fs[:, K.FS_SENT] = np.where(done, fs[:, K.FS_SIZE], fs[:, K.FS_SIZE] - remaining)
        fs[:, K.FS_DELIVERED] = fs[:, K.FS_SENT]
        fs[:, K.FS_ACKED] = fs[:, K.FS_SENT]
        self.k_done = 0
        self.n_finished = int(done.sum())
        result = self._collect(wall, None)
        result.summary["run"]["maxmin_rate_computations"] = int(ist[I_EVENTS])
        return result

    def _start_chained(self, finish, start, next_start: int, stop_ps: float) -> None:
        """The flows waiting for a group that is now done start at its last finish plus their
        delay (:meth:`uno.fluid.chains.FlowChains.start_ready`, which reads the finished
        flows' state and finish from ``fs``); ``start``, the event loop's copy, follows. A
        flow's finish is its last ACK's arrival: one after the stop time ``stop_ps`` never
        comes."""
        fs = self.fs
        done = (finish >= 0.0) & (finish <= stop_ps)
        fs[done, K.FS_STATE] = 2.0
        fs[done, K.FS_FINISH] = finish[done]
        if self.chains.start_ready(fs, self.order, next_start):
            start[:] = fs[:, K.FS_START]

    def progress_snapshot(self) -> Snapshot:
        """What the progress watcher shows (:mod:`uno.metrics.progress`); reads only."""
        ist, fst = self.mm_state if self.mm_state is not None else (None, None)
        now = max(fst[F_NOW], self.now_ps) if fst is not None else 0.0  # (now_ps: the end)
        remaining = self.remaining if self.remaining is not None else self.fs[:, K.FS_SIZE]
        done, total, started, late = self.required_work(now, self.fs[:, K.FS_SIZE] - remaining)
        events = int(ist[I_EVENTS]) if ist is not None else 0
        return Snapshot(int(now), done, total, started, late, int((remaining == 0.0).sum()),
                        len(self.flows), events, "rate computations")  # fmt: skip

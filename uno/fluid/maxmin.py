"""Max-min fair flow-level baseline (``engine.kind=maxmin``).

The flow-level estimators of the literature (e.g. flowSim in m3, Li et al., SIGCOMM 2024) skip
congestion control altogether: at every flow arrival and completion the rates of all running
flows are recomputed as the max-min fair allocation of the link capacities by progressive
filling (every unfrozen flow's rate grows at the same pace; a flow freezes when a link on its
route saturates or it reaches its NIC rate), and each flow transfers its bytes at that rate
until the next event. There are no queues, marks or losses; a flow's completion time is its
transfer time plus its path's base RTT (so a lone flow's FCT equals its ideal FCT). It is the
floor the fluid engine must beat in accuracy against the packet engine.

It reads the same scenario as the fluid engine (routes: the packet engine's ECMP path, or an
even split over equal-cost paths for spraying balancers; split routes load each link with the
flow's share) and writes the same tables. Units: ps, bytes, bytes/ps.
"""

from __future__ import annotations

import time

import numpy as np
from numba import njit

from uno.core.sim import RunResult
from uno.fluid import kernels as K
from uno.fluid.engine import FluidSimulation


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


@njit(cache=True)
def maxmin_run(
    start,
    size,
    base_rtt,
    order,
    rt_ptr,
    rt_link,
    rt_w,
    cap,
    nic,
    stop_ps,
    waits,
    finish,
    remaining,
):
    """Event loop: flows start at ``start`` (ps, visited in ``order``), each must move ``size``
    bytes; rates are recomputed at every start and completion. Writes ``finish`` (ps, transfer
    end + base RTT; -1: not finished by ``stop_ps``) and ``remaining`` (bytes each flow had
    still to move at the end). The run ends at ``stop_ps``, or once every flow has finished,
    or once every flow with ``waits`` set has (engine.stop_when_done: at the last of their
    finishes). Returns (the run's end: the last of those finishes, else ``stop_ps``; rate
    recomputations)."""
    n = start.shape[0]
    n_links = cap.shape[0]
    remaining[:] = size
    n_waited = 0
    for f in range(n):
        if waits[f]:
            n_waited += 1
    last_waited = 0.0
    rates = np.zeros(n)
    live = np.zeros(n, dtype=np.int64)
    residual = np.zeros(n_links)
    load = np.zeros(n_links)
    active = np.zeros(n, dtype=np.int64)
    n_active = 0
    nxt = 0
    now = 0.0
    events = 0
    while nxt < n or n_active > 0:
        # admit the flows starting now
        while nxt < n and start[order[nxt]] <= now:
            active[n_active] = order[nxt]
            n_active += 1
            nxt += 1
        maxmin_rates(active, n_active, rt_ptr, rt_link, rt_w, cap, nic, rates, residual, load, live)
        events += 1
        # next event: a completion or a start
        t_next = start[order[nxt]] if nxt < n else np.inf
        for i in range(n_active):
            f = active[i]
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
                finish[f] = t_next + base_rtt[f]
                if waits[f]:
                    n_waited -= 1
                    last_waited = max(last_waited, finish[f])
                    if n_waited == 0 and last_waited < stop_ps:
                        stop_ps = last_waited
            else:
                active[kept] = f
                kept += 1
        n_active = kept
        now = t_next
        if now >= stop_ps:
            break
    if n_waited == 0:  # (every flow the run waits for finished: the last one's finish)
        return min(last_waited, stop_ps), events
    return now, events


class MaxMinSimulation(FluidSimulation):
    """The max-min baseline on the fluid engine's scenario arrays."""

    engine_name = "maxmin"
    runs_cc = False

    def run(self, measure_memory: bool = False) -> RunResult:
        fs = self.fs
        ls = self.ls
        t0 = time.perf_counter()
        n = len(self.flows)
        finish = np.full(n, -1.0)
        remaining = np.zeros(n)
        end_ps, events = maxmin_run(
            fs[:, K.FS_START].copy(), fs[:, K.FS_SIZE].copy(), fs[:, K.FS_BASE_RTT].copy(),
            self.order, self.rt_ptr, self.rt_link, self.rt_w, ls[:, K.LS_CAP].copy(),
            fs[:, K.FS_NIC].copy(), float(self.max_time_ps), fs[:, K.FS_STOP] > 0.0, finish,
            remaining,
        )  # fmt: skip
        wall = time.perf_counter() - t0
        # end_ps: the last finish (transfer end + base RTT) of the flows the run waits for,
        # or the stop time; a flow whose last ACK would come after it has not finished
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
        result.summary["run"]["maxmin_rate_computations"] = int(events)
        return result

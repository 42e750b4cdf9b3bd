"""The packet recorder's sample read in one kernel call on the compiled data plane
(:class:`KernelSamples`): the sampled flows' rates and windows from the kernel senders' rows,
the chosen ports' queues and phantom levels, and the busy ports that hold either. It writes the
rows :class:`uno.metrics.recorder.Recorder` writes, value for value and in its order: the
flows in the order they started, each sampled once more after it finished, then the chosen
ports, then the busy ones.

Units: times in ps, sizes in bytes, rates in Gb/s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from numba import njit

from uno.cc.law import C
from uno.core.units import PS_PER_S
from uno.net.compiled.layout import PF, H, P, S
from uno.net.compiled.ports import held_level, phantom_at, settle_port

#: the counts: flows sampled, rows of each table
N_ACTIVE, N_RATES, N_CWND, N_QUEUES = 0, 1, 2, 3
#: rows each table's array starts with (doubled as needed)
FIRST_ROWS = 4096


@njit(cache=True)
def sample_senders(ST, F, now, scale, flags, active, counts, last, rates, cwnd) -> None:
    """Rows of ``rates`` (time, flow, Gb/s sent and acknowledged since the last sample) and
    ``cwnd`` (time, flow, window, bytes in flight) for the flows ``active[:counts[N_ACTIVE]]``
    (``flags``: each table on or off), from their kernel senders' rows; a flow whose sender is
    done leaves the list after this sample, the others keep their order."""
    off = ST[H.off_senders]
    kept = 0
    for i in range(counts[N_ACTIVE]):
        f = active[i]
        row = off + f * S.size
        sent, acked = ST[row + S.sent_bytes], ST[row + S.acked_bytes]
        if flags[0]:
            n = counts[N_RATES]
            rates[n, 0] = now
            rates[n, 1] = f
            rates[n, 2] = (sent - last[f, 0]) * scale
            rates[n, 3] = (acked - last[f, 1]) * scale
            counts[N_RATES] = n + 1
            last[f, 0] = sent
            last[f, 1] = acked
        if flags[1]:
            n = counts[N_CWND]
            cwnd[n, 0] = now
            cwnd[n, 1] = f
            cwnd[n, 2] = F[ST[row + S.frow], C.cwnd]
            cwnd[n, 3] = ST[row + S.inflight]
            counts[N_CWND] = n + 1
        if ST[row + S.done] == 0:
            active[kept] = f
            kept += 1
    counts[N_ACTIVE] = kept


@njit(cache=True)
def sample_ports(ST, F, U, PK, now, chosen, chosen_phantom, busy, busy_phantom, counts, queues,
                 idle_i, idle_f) -> None:  # fmt: skip
    """Rows of ``queues`` (time, position among the chosen then the busy ports, queued bytes,
    phantom level): every chosen port (settled at ``now``: its view's ``occupancy_bytes``;
    ``chosen_phantom``: whether it has a phantom queue), then the busy ports that hold either,
    read as :func:`uno.net.compiled.ports.port_levels` reads them. A busy port found empty
    and drained is passed over while what its levels follow from is unchanged (``idle_i``:
    whether so, its arrivals, its phantom level's time; ``idle_f``: the level then and its
    drain rate): with no arrival its queue stays empty, and the level, drained from the same
    point at the same rate, stays 0. (A phantom level whose stored value is above 0 long after
    it drained would otherwise be settled at every sample.)"""
    n = counts[N_QUEUES]
    off = ST[H.off_ports]
    for j in range(chosen.shape[0]):
        p = chosen[j]
        q = settle_port(ST, F, U, PK, p, now)[0]  # (always settled, as its view reads it)
        level = phantom_at(ST, F, p, now) if chosen_phantom[j] else 0.0
        queues[n, 0] = now
        queues[n, 1] = j
        queues[n, 2] = q
        queues[n, 3] = level
        n += 1
    for i in range(busy.shape[0]):
        p = busy[i]
        pb = off + p * P.size
        arrivals, ph_last = ST[pb + P.arrivals], ST[pb + P.ph_last]
        level_then, drain = F[p, PF.ph_level], F[p, PF.ph_drain]
        if (idle_i[i, 0] == 1 and idle_i[i, 1] == arrivals and idle_i[i, 2] == ph_last
                and idle_f[i, 0] == level_then and idle_f[i, 1] == drain):  # fmt: skip
            continue
        q, level = held_level(ST, F, U, PK, p, now, busy_phantom[i])
        if q != 0 or level != 0.0:
            idle_i[i, 0] = 0
            queues[n, 0] = now
            queues[n, 1] = chosen.shape[0] + i
            queues[n, 2] = q
            queues[n, 3] = level
            n += 1
        else:
            idle_i[i, 0], idle_i[i, 1], idle_i[i, 2] = 1, arrivals, ph_last
            idle_f[i, 0], idle_f[i, 1] = level_then, drain
    counts[N_QUEUES] = n


@njit(cache=True)
def sample_fits(group) -> bool:
    """Whether a sample fits the tables' arrays of ``group`` (:meth:`KernelSamples.group`)."""
    flags, counts, rates, cwnd = group[1], group[3], group[5], group[6]
    chosen, busy, queues = group[7], group[9], group[11]
    n_active = counts[N_ACTIVE]
    if flags[0] and counts[N_RATES] + n_active > rates.shape[0]:
        return False
    if flags[1] and counts[N_CWND] + n_active > cwnd.shape[0]:
        return False
    n_ports = chosen.shape[0] + busy.shape[0]
    return flags[2] == 0 or counts[N_QUEUES] + n_ports <= queues.shape[0]


@njit(cache=True)
def take_kernel_sample(ST, F, U, PK, now, group) -> bool:
    """The recorder's sample at ``now``: the flows' rows (:func:`sample_senders`), then the
    ports' (:func:`sample_ports`); ``group``: :meth:`KernelSamples.group`. Returns False, and
    takes nothing, when the tables' arrays have no room for it (Python grows them)."""
    if not sample_fits(group):
        return False
    scale, flags, active, counts, last, rates, cwnd = group[:7]
    chosen, chosen_phantom, busy, busy_phantom, queues, idle_i, idle_f = group[7:]
    if flags[0] or flags[1]:
        sample_senders(ST, F, now, scale, flags, active, counts, last, rates, cwnd)
    if flags[2]:
        sample_ports(ST, F, U, PK, now, chosen, chosen_phantom, busy, busy_phantom, counts,
                     queues, idle_i, idle_f)  # fmt: skip
    return True


def no_samples() -> tuple:
    """A :meth:`KernelSamples.group` of the same types that samples nothing (a run whose
    recorder reads its samples from Python)."""
    ints, rows = np.zeros(0, dtype=np.int64), np.zeros((0, 4))
    return (1.0, np.zeros(3, dtype=np.int64), ints, np.zeros(4, dtype=np.int64),
            np.zeros((0, 2), dtype=np.int64), rows, rows, ints, ints, ints, ints, rows,
            np.zeros((0, 3), dtype=np.int64), np.zeros((0, 2)))  # fmt: skip


def _grown(rows: np.ndarray, need: int) -> np.ndarray:
    """``rows``, or a copy with at least ``need`` rows (doubling)."""
    if need <= len(rows):
        return rows
    size = max(len(rows), 1)
    while size < need:
        size *= 2
    out = np.zeros((size, rows.shape[1]))
    out[: len(rows)] = rows
    return out


class KernelSamples:
    """The recorder's samples on compiled data plane ``dp`` (:attr:`Recorder.kernel`): flows as
    they start (:meth:`flow_started`), a sample in one kernel call (:meth:`sample`),
    the tables at the end (:meth:`tables`). ``chosen``: the port views every sample reads;
    ``busy``: those read when they hold bytes or a phantom level; ``flags``: rates, cwnd,
    queues sampled. Only for runs whose sampled flows all have kernel senders and that have
    no DCI switch (:func:`kernel_samples_fit`)."""

    def __init__(self, dp, chosen: list, busy: list, flags: tuple[bool, bool, bool],
                 interval_ps: int):  # fmt: skip
        self.dp = dp
        n_flows = len(dp.flows)
        self.flags = np.array(flags, dtype=np.int64)
        self.scale = 8 * PS_PER_S / interval_ps / 1e9  # (the recorder's: Gb/s over the interval)
        self.active = np.zeros(n_flows, dtype=np.int64)
        self.counts = np.zeros(4, dtype=np.int64)
        self.last = np.zeros((n_flows, 2), dtype=np.int64)
        self.rates = np.zeros((FIRST_ROWS, 4))
        self.cwnd = np.zeros((FIRST_ROWS, 4))
        self.queues = np.zeros((FIRST_ROWS, 4))
        self.names = [p.name for p in chosen] + [p.name for p in busy]
        self.chosen = np.array([p.index for p in chosen], dtype=np.int64)
        self.chosen_phantom = np.array([p.phantom is not None for p in chosen], dtype=np.int64)
        self.busy = np.array([p.index for p in busy], dtype=np.int64)
        self.busy_phantom = np.array([p.phantom is not None for p in busy], dtype=np.int64)
        self.idle_i = np.zeros((len(busy), 3), dtype=np.int64)
        self.idle_f = np.zeros((len(busy), 2))

    def flow_started(self, flow_id: int) -> None:
        n = self.counts[N_ACTIVE]
        self.active[n] = flow_id
        self.last[flow_id] = 0
        self.counts[N_ACTIVE] = n + 1

    def group(self) -> tuple:
        """What :func:`take_kernel_sample` reads and writes: the rates' scale (Gb/s per byte
        over the interval), the flags, the sampled flows and the counts, each flow's bytes at
        the last sample, the tables' arrays and the ports'."""
        return (self.scale, self.flags, self.active, self.counts, self.last, self.rates,
                self.cwnd, self.chosen, self.chosen_phantom, self.busy, self.busy_phantom,
                self.queues, self.idle_i, self.idle_f)  # fmt: skip

    def make_room(self) -> None:
        """Grow (double) the tables' arrays a sample might not fit."""
        counts, flags = self.counts, self.flags
        n_active = int(counts[N_ACTIVE])
        if flags[0] or flags[1]:
            self.rates = _grown(self.rates, int(counts[N_RATES]) + n_active)
            self.cwnd = _grown(self.cwnd, int(counts[N_CWND]) + n_active)
        if flags[2]:
            self.queues = _grown(self.queues, int(counts[N_QUEUES]) + len(self.chosen)
                                 + len(self.busy))  # fmt: skip

    def sample(self, now_ps: int) -> None:
        """A sample at ``now_ps``: the flows' rows, then the ports' (the tables' arrays grown
        first where it does not fit)."""
        dp = self.dp
        if not take_kernel_sample(dp.ST, dp.F, dp.U, dp.PK, now_ps, self.group()):
            self.make_room()
            take_kernel_sample(dp.ST, dp.F, dp.U, dp.PK, now_ps, self.group())

    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables sampled, in the recorder's columns and types."""
        out = {}
        names = np.array(self.names, dtype=object)
        for table, n, cols, on in (
            ("rates", N_RATES, ("flow_id", "sent_gbps", "acked_gbps"), self.flags[0]),
            ("cwnd", N_CWND, ("flow_id", "cwnd_bytes", "inflight_bytes"), self.flags[1]),
            ("queues", N_QUEUES, ("port", "queue_bytes", "phantom_bytes"), self.flags[2]),
        ):
            if not on:
                continue
            rows = getattr(self, table)[: self.counts[n]]
            key = rows[:, 1].astype(np.int64)
            data = {
                "time_ps": rows[:, 0].astype(np.int64),
                cols[0]: names[key] if table == "queues" else key,
                cols[1]: rows[:, 2].astype(np.int64) if table == "queues" else rows[:, 2],
                cols[2]: rows[:, 3].astype(np.int64) if table == "cwnd" else rows[:, 3],
            }
            out[table] = pd.DataFrame(data)
        return out


def kernel_samples_fit(dp, network, flows: list) -> bool:
    """Whether a run's samples can be read in the kernel (:class:`KernelSamples`): every
    packet flow's sender runs there, and no DCI switch (whose per-flow queues the recorder
    reads from Python) is in the network."""
    if network.dcis:
        return False
    in_kernel = dp.kernel_senders
    return all(in_kernel[f.flow_id] for f in flows)

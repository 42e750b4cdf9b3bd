"""The fluid engine's rates / cwnd / queues tables, in the packet engine's formats: compiled
samples written into arrays the run keeps (:class:`Sampler`).

A sample (every ``engine.sample_interval_us``, at the step nearest each multiple of it) reads
the running flows' bytes sent and acknowledged since the last one, their windows and bytes in
flight, and the chosen links' queues (:func:`take_sample`). The fluid engine's step loop takes
them itself (:func:`uno.fluid.kernels.advance`, at the steps :func:`next_sample_step` names), so
a sampled run returns to Python no more often than an unsampled one; the hybrid takes its fluid
part's with the packet recorder's samples, inside its kernel's calls
(:func:`uno.fluid.hybrid_loop.hybrid_steps`) or from Python (:meth:`Sampler.sample`). Each table's arrays
grow (doubling) when a sample might not fit: the step loop stops before such a sample and
:meth:`Sampler.make_room` grows them.

Units: time in ps, sizes in bytes, rates in Gb/s in the tables.
"""

from __future__ import annotations

import fnmatch
from collections import namedtuple

import numpy as np
import pandas as pd
from numba import njit

from uno.core.layout import layout
from uno.core.units import us_to_ps
from uno.fluid import columns as C
from uno.fluid.columns import C_CWND, FS_ACKED, FS_HALT, FS_INFLIGHT, FS_PFQ, FS_SENT, LS_PH, LS_Q
from uno.fluid.results import folded_rows
from uno.scenario import is_switch_port
from uno.topo.base import HOST

#: ``Samples.flags`` (int64): which tables are sampled, whether the queues are every busy
#: link's as well as the chosen ones, whether some flow has a stop time (``FS_HALT``), whether
#: the step loop samples (the fluid engine's own run), 1: the step loop stopped before a sample
#: its arrays had no room for
SF = layout("SampleFlags", ("rates", "cwnd", "queues", "busy", "stops", "in_loop", "full"))
#: ``Samples.clock`` (float64, ps): the time of the next sample, the interval, the last
#: sample's time
SK = layout("SampleClock", ("next_ps", "interval_ps", "last_ps"))
#: ``Samples.counts`` (int64): the rows each table holds
SN = layout("SampleCounts", ("rates", "cwnd", "queues"))

#: the sampler's state: its flags, clock and counts (above); each table's rows (time, a flow
#: or row index, two values: ``*_t``, ``*_i``, ``*_v``); each flow's bytes sent and acknowledged
#: at the last sample; the links whose queues are always sampled (``ports``, sorted) and the
#: same as a mask over the links (``port_mask``); the row of ``ls`` each link reports (``rep``;
#: empty: its own); the links that may be sampled (``keep``; empty: all); the DCI switches'
#: per-flow queues: their flows, each one's switch, and ``pfq_meta`` = (the switches, the
#: links: the first row index after the links')
Samples = namedtuple(
    "Samples",
    ["flags", "clock", "counts", "rate_t", "rate_i", "rate_v", "cwnd_t", "cwnd_i", "cwnd_v",
     "queue_t", "queue_i", "queue_v", "last_sent", "last_acked", "ports", "port_mask", "rep",
     "keep", "pfq_flows", "pfq_switch", "pfq_meta"],
)  # fmt: skip

#: rows each table's arrays start with (they double as needed)
FIRST_ROWS = 4096


def empty_rows(n_rows: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A table's arrays for ``n_rows`` rows: times, indices, two values a row."""
    return np.zeros(n_rows, np.int64), np.zeros(n_rows, np.int64), np.zeros((n_rows, 2))


def idle_samples(n_flows: int = 0) -> Samples:
    """A sampler that samples nothing (a run with ``engine.sample_interval_us`` = 0, the
    hybrid's step loop, a twin run on copies): what the step loop gets when it does not
    sample."""
    z = np.zeros(0, np.int64)
    return Samples(np.zeros(SF.size, np.int64), np.zeros(SK.size), np.zeros(SN.size, np.int64),
                   *empty_rows(0), *empty_rows(0), *empty_rows(0), np.zeros(n_flows),
                   np.zeros(n_flows), z, z, z, z, z, z, np.zeros(2, np.int64))  # fmt: skip


@njit(cache=True, error_model="numpy", inline="always")
def queue_rows_needed(smp) -> int:
    """The most rows one sample adds to the queues table."""
    n_links = smp.pfq_meta[1]
    links = n_links if smp.flags[SF.busy] != 0 else smp.ports.shape[0]
    return links + smp.pfq_meta[0] + smp.pfq_flows.shape[0]


@njit(cache=True, error_model="numpy", inline="always")
def has_room(n_running, smp) -> bool:
    """Whether a sample of ``n_running`` running flows fits the arrays."""
    counts = smp.counts
    if counts[SN.rates] + n_running > smp.rate_t.shape[0]:
        return False
    if counts[SN.cwnd] + n_running > smp.cwnd_t.shape[0]:
        return False
    return counts[SN.queues] + queue_rows_needed(smp) <= smp.queue_t.shape[0]


@njit(cache=True, error_model="numpy", inline="always")
def put_row(t, i, v, n, now_ps, index, a, b) -> None:
    """Row ``n`` of a table: ``now_ps``, ``index``, values ``a`` and ``b``."""
    t[n] = now_ps
    i[n] = index
    v[n, 0] = a
    v[n, 1] = b


@njit(cache=True, error_model="numpy", inline="always")
def sample_flows(now_ps, span_ps, last_ps, fs, cs, active, n_running, smp) -> None:
    """The running flows' rows (``active[:n_running]``): their rates over the ``span_ps``
    since the last sample (Gb/s), their windows and bytes in flight. A flow that stopped
    (``FS_HALT``) before the last sample is not sampled again (the packet recorder samples a
    sender that is done once more, at the first sample after)."""
    flags, counts = smp.flags, smp.counts
    rates = flags[SF.rates] != 0 and span_ps > 0
    cwnd = flags[SF.cwnd] != 0
    scale = 8e3 / span_ps if span_ps > 0 else 0.0  # bytes per ps -> Gb/s
    n_r, n_c = counts[SN.rates], counts[SN.cwnd]
    for i in range(n_running):
        f = active[i]
        if flags[SF.stops] != 0 and 0.0 < fs[f, FS_HALT] <= last_ps:
            continue
        if rates:
            sent, acked = fs[f, FS_SENT], fs[f, FS_ACKED]
            put_row(smp.rate_t, smp.rate_i, smp.rate_v, n_r, now_ps, f,
                    (sent - smp.last_sent[f]) * scale, (acked - smp.last_acked[f]) * scale)  # fmt: skip
            smp.last_sent[f] = sent
            smp.last_acked[f] = acked
            n_r += 1
        if cwnd:
            put_row(smp.cwnd_t, smp.cwnd_i, smp.cwnd_v, n_c, now_ps, f, cs[f, C_CWND],
                    fs[f, FS_INFLIGHT])  # fmt: skip
            n_c += 1
    counts[SN.rates] = n_r
    counts[SN.cwnd] = n_c


@njit(cache=True, error_model="numpy", inline="always")
def sample_queues(now_ps, fs, ls, smp) -> None:
    """The queues' rows: the chosen links' (``ports``) or, with ``busy``, those and every link
    holding a queue (each link's reported row, ``rep``; only the links ``keep`` allows), in
    link order; then each DCI switch's per-flow queues together and each non-empty one."""
    n = smp.counts[SN.queues]
    t, idx, v = smp.queue_t, smp.queue_i, smp.queue_v
    rep, keep = smp.rep, smp.keep
    if smp.flags[SF.busy] != 0:
        for link in range(smp.pfq_meta[1]):
            row = rep[link] if rep.shape[0] else link
            if smp.port_mask[link] == 0 and ls[row, LS_Q] <= 0.0:
                continue
            if keep.shape[0] and keep[link] <= 0:
                continue
            put_row(t, idx, v, n, now_ps, link, ls[row, LS_Q], ls[row, LS_PH])
            n += 1
    else:
        for p in range(smp.ports.shape[0]):
            link = smp.ports[p]
            row = rep[link] if rep.shape[0] else link
            put_row(t, idx, v, n, now_ps, link, ls[row, LS_Q], ls[row, LS_PH])
            n += 1
    n_switches, base = smp.pfq_meta[0], smp.pfq_meta[1]
    if smp.pfq_flows.shape[0]:
        for s in range(n_switches):
            put_row(t, idx, v, n + s, now_ps, base + s, 0.0, 0.0)
        for j in range(smp.pfq_flows.shape[0]):  # (in the flows' order, as a bincount sums)
            v[n + smp.pfq_switch[j], 0] += fs[smp.pfq_flows[j], FS_PFQ]
        n += n_switches
        for j in range(smp.pfq_flows.shape[0]):
            held = fs[smp.pfq_flows[j], FS_PFQ]
            if held > 0.0:
                put_row(t, idx, v, n, now_ps, base + n_switches + j, held, 0.0)
                n += 1
    smp.counts[SN.queues] = n


@njit(cache=True, error_model="numpy", _nrt=False)
def take_sample(now_ps, fs, cs, ls, active, n_running, smp) -> None:
    """One sample at ``now_ps`` (the arrays have room: :func:`has_room`): the running flows'
    rows (:func:`sample_flows`), the queues' (:func:`sample_queues`); the clock's last sample
    is then ``now_ps``."""
    smp = Samples(*smp)
    last_ps = smp.clock[SK.last_ps]
    sample_flows(now_ps, now_ps - last_ps, last_ps, fs, cs, active, n_running, smp)
    smp.clock[SK.last_ps] = now_ps
    if smp.flags[SF.queues] != 0:
        sample_queues(now_ps, fs, ls, smp)


@njit(cache=True, error_model="numpy", inline="always")
def next_sample_step(k, dt_ps, clock) -> int:
    """The step at whose start the step loop takes its next sample: the nearest to the next
    sample time, after step ``k`` (sample times whose step is not after ``k`` pass: with a
    step longer than the interval, one sample a step); the clock's next time follows."""
    step = int(round(clock[SK.next_ps] / dt_ps))
    while step <= k:
        clock[SK.next_ps] += clock[SK.interval_ps]
        step = int(round(clock[SK.next_ps] / dt_ps))
    return step


@njit(cache=True, error_model="numpy", inline="always")
def first_sample_step(k, dt_ps, clock) -> int:
    """:func:`next_sample_step` at a kernel call's first step ``k``: a sample due at ``k``
    itself (the call before stopped there without it) is taken there."""
    return next_sample_step(k - 1, dt_ps, clock)


class Sampler:
    """The rates / cwnd / queues tables of the packet engine's recorder for fluid run ``sim``:
    the samples' arrays (:data:`Samples`), the ports chosen by ``engine.queue_ports``, the
    tables at the end."""

    def __init__(self, sim, cfg, in_loop: bool = True):
        en = cfg.engine
        self.sim = sim
        n_flows, n_links = len(sim.flows), len(sim.port_names)
        ports, busy = chosen_ports(sim, en.queue_ports)
        mask = np.zeros(n_links, np.int64)
        mask[ports] = 1
        pfq_flows, pfq_switch, self.pfq_names = pfq_rows(sim)
        rep = folded_rows(sim)
        rep = np.zeros(0, np.int64) if rep is None else rep.astype(np.int64)
        flags = np.zeros(SF.size, np.int64)
        flags[SF.rates], flags[SF.cwnd] = en.sample_rates, en.sample_cwnd
        flags[SF.queues], flags[SF.busy] = en.sample_queues, busy
        flags[SF.stops] = bool((sim.fs[:, C.FS_HALT] > 0.0).any())
        flags[SF.in_loop] = in_loop
        clock = np.zeros(SK.size)
        clock[SK.interval_ps] = clock[SK.next_ps] = us_to_ps(en.sample_interval_us)
        self.group = Samples(
            flags, clock, np.zeros(SN.size, np.int64), *empty_rows(FIRST_ROWS),
            *empty_rows(FIRST_ROWS), *empty_rows(FIRST_ROWS), np.zeros(n_flows),
            np.zeros(n_flows), ports, mask, rep, np.zeros(0, np.int64), pfq_flows, pfq_switch,
            np.array([len(self.pfq_names) - len(pfq_flows), n_links], np.int64),
        )  # fmt: skip
        self.make_room(n_flows)

    @property
    def last_t(self) -> float:
        """The last sample's time (ps; 0: none yet)."""
        return float(self.group.clock[SK.last_ps])

    def keep_ports(self, keep: np.ndarray) -> None:
        """Sample the queues of the links ``keep`` marks only (the hybrid: those a fluid flow
        can reach; the packet recorder samples every port's own queue)."""
        g = self.group
        keep = np.asarray(keep, dtype=np.int64)
        ports = g.ports[keep[g.ports] > 0]
        mask = np.zeros_like(g.port_mask)
        mask[ports] = 1
        self.group = g._replace(ports=ports, port_mask=mask, keep=keep)
        self.make_room(0)

    def make_room(self, n_running: int) -> bool:
        """Grow (double) the arrays of any table a sample of ``n_running`` flows might not fit;
        clears the step loop's stop for it. Returns whether any grew (the step loop's
        arguments then change). (Called for each sample the hybrid takes from Python: the rows a
        sample may need are counted in Python, not through a call to Numba's dispatcher.)"""
        g = self.group
        g.flags[SF.full] = 0
        counts = g.counts
        grown = {}
        for name, n, need in (("rate", counts[SN.rates], n_running),
                              ("cwnd", counts[SN.cwnd], n_running),
                              ("queue", counts[SN.queues], queue_rows_needed.py_func(g))):  # fmt: skip
            t, i, v = getattr(g, f"{name}_t"), getattr(g, f"{name}_i"), getattr(g, f"{name}_v")
            if n + need <= len(t):
                continue
            size = max(len(t), 1)
            while size < n + need:
                size *= 2
            nt, ni, nv = empty_rows(size)
            nt[:n], ni[:n], nv[:n] = t[:n], i[:n], v[:n]
            grown.update({f"{name}_t": nt, f"{name}_i": ni, f"{name}_v": nv})
        if grown:
            self.group = g._replace(**grown)
        return bool(grown)

    def sample(self, now_ps: int) -> None:
        """A sample now (of ``sim``'s running flows and links), taken from Python: the
        hybrid's, the run's last."""
        sim = self.sim
        n_running = int(sim.counters[C.CT.running])
        self.make_room(n_running)
        take_sample(float(now_ps), sim.fs, sim.cs, sim.ls, sim.active, n_running,
                    tuple(self.group))  # fmt: skip

    def tables(self) -> dict[str, pd.DataFrame]:
        """The rates, cwnd and queues tables: one row per sampled flow or queue and sample,
        in time order, the flows of a sample in index order, the links in link order; a table
        the run does not sample (``engine.sample_rates``, ``sample_cwnd``, ``sample_queues``)
        is left out, as the packet recorder leaves it out."""
        g = self.group
        flow_ids = np.array([p.spec.flow_id for p in self.sim.flows], dtype=np.int64)
        names = np.array(list(self.sim.port_names) + self.pfq_names, dtype=object)
        out = {}
        for name, n, cols, key_map, flag in (
            ("rate", g.counts[SN.rates], ["flow_id", "sent_gbps", "acked_gbps"], flow_ids,
             SF.rates),
            ("cwnd", g.counts[SN.cwnd], ["flow_id", "cwnd_bytes", "inflight_bytes"], flow_ids,
             SF.cwnd),
            ("queue", g.counts[SN.queues], ["port", "queue_bytes", "phantom_bytes"], names,
             SF.queues),
        ):  # fmt: skip
            if g.flags[flag] == 0:
                continue
            table = "rates" if name == "rate" else "queues" if name == "queue" else name
            if n == 0:
                out[table] = pd.DataFrame({c: [] for c in ["time_ps", *cols]})
                continue
            t, i, v = (getattr(g, f"{name}_{part}")[:n] for part in "tiv")
            if name != "queue":  # (a sample's flows come in the running list's order)
                order = np.lexsort((i, t))
                t, i, v = t[order], i[order], v[order]
            out[table] = pd.DataFrame({"time_ps": t, cols[0]: key_map[i], cols[1]: v[:, 0],
                                       cols[2]: v[:, 1]})  # fmt: skip
        return out


def chosen_ports(sim, selectors) -> tuple[np.ndarray, bool]:
    """The links whose queues every sample reads (``engine.queue_ports``: ``receivers``, the
    switch ports to hosts some flow goes to; ``all``; name patterns), sorted, and whether
    every busy link's are read as well (``busy``)."""
    names = sim.port_names
    routing = sim.scenario.routing
    dsts = {p.spec.dst for p in sim.flows}
    chosen: list[int] = []
    busy = False
    for sel in selectors:
        if sel == "receivers":
            chosen += [
                e.edge_id
                for e in routing.edges
                if is_switch_port(routing, e)
                and routing.topo.nodes[e.dst].kind == HOST
                and routing.host_id_of_node[e.dst] in dsts
            ]
        elif sel == "all":
            chosen += list(range(len(names)))
        elif sel == "busy":
            busy = True
        else:
            chosen += [i for i, nm in enumerate(names) if fnmatch.fnmatchcase(nm, sel)]
    return np.array(sorted(set(chosen)), dtype=np.int64), busy


def pfq_rows(sim) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """The DCI switches' per-flow queues in the queues table, named as the packet recorder
    names them (:mod:`uno.net.dci`): ``<switch>/pfq``, every queue of the switch together, and
    ``<switch>/pfq/flow<id>``, each non-empty one; their rows follow the links'
    (:mod:`uno.fluid.dci`). Returns the flows with such a queue, each one's switch (its index
    among the names' switches) and the names."""
    fs = sim.fs
    flows = np.flatnonzero(fs[:, C.FS_PFQ_RATE] > 0)
    routing = sim.scenario.routing
    switch_of = [
        routing.topo.nodes[routing.edges[int(sim.rt_link[int(fs[f, C.FS_WIRE_NEXT]) - 1])].dst].name
        for f in flows
    ]
    switches = sorted(set(switch_of))
    switch = np.array([switches.index(s) for s in switch_of], dtype=np.int64)
    names = [f"{s}/pfq" for s in switches] + [
        f"{switch_of[i]}/pfq/flow{sim.flows[f].spec.flow_id}" for i, f in enumerate(flows)
    ]
    return flows.astype(np.int64), switch, names

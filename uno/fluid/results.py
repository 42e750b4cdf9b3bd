"""What a fluid run records: the flows and ports tables, the summary, and the rates / cwnd /
queues tables sampled between chunks of steps (:class:`Sampler`), in the packet engine's
formats.

Units: time in ps, sizes in bytes, rates in Gb/s in the tables.
"""

from __future__ import annotations

import resource
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from uno.core.errors import InvariantError
from uno.core.units import PS_PER_US
from uno.fluid import columns as C
from uno.fluid.pfc import pfc_summary
from uno.metrics.flows import FLOW_COLUMNS, flows_frame
from uno.metrics.summary import class_summary
from uno.scenario import is_switch_port
from uno.topo.base import HOST

#: how the flow-level engines route each balancer's flows (the summary's ``lb_model``; the
#: balancers they route: uno.fluid.routes, the others refused before the run)
LB_MODELS = {
    "ecmp": "the packet engine's ECMP path",
    "spray": "even split over equal-cost paths",
    "unolb": "UnoLB subflows on hashed paths, moved on losses",
    "plb": "one hashed path, moved after congested rounds and on losses (PLB's rules)",
    "reps": "subflows on recycled entropies, moved at marked rounds (REPS's Algorithm 1)",
}

if TYPE_CHECKING:
    from uno.fluid.engine import FluidSimulation


def flows_table(sim) -> pd.DataFrame:
    """The flows table (:data:`uno.metrics.flows.FLOW_COLUMNS`) of fluid run ``sim``: packet
    counts are the bytes over the flow's MSS (its mean packet size for the packets sent)."""
    fs = sim.fs
    plans = sim.flows
    n = len(plans)
    mss = sim.scenario.data_bytes
    specs = [p.spec for p in plans]
    paths = [p.path for p in plans]
    finished = fs[:, C.FS_STATE] == 2.0
    finish = np.where(finished, np.round(fs[:, C.FS_FINISH]), np.nan)
    start = sim.chains.start_times_ps(fs)
    fct = finish - start
    ideal = np.fromiter((p.ideal_fct_ps for p in plans), dtype=np.int64, count=n)
    size = np.fromiter((s.size_bytes for s in specs), dtype=np.int64, count=n)
    wire = np.fromiter((p.wire_bytes for p in plans), dtype=np.int64, count=n)
    packets = np.fromiter((p.n_packets for p in plans), dtype=np.int64, count=n)
    # the packets of the sent size (parity included), at the flow's mean packet size
    n_packets = np.round(fs[:, C.FS_SIZE] / np.maximum(1.0, wire / packets)).astype(np.int64)
    # paths are shared objects: each distinct one's BDP once
    bdp_of = {key: path.bdp_bytes() for key, path in {id(p): p for p in paths}.items()}
    retrans = np.round(np.maximum(0.0, fs[:, C.FS_SENT] - fs[:, C.FS_SIZE]) / mss)
    loss_events = fs[:, C.FS_LOSS_EVENTS].astype(np.int64)
    coded = fs[:, C.FS_EC_N] > 0
    frac = np.minimum(1.0, fs[:, C.FS_DELIVERED] / fs[:, C.FS_SIZE])
    cols = {
        "flow_id": [s.flow_id for s in specs],
        "src": [s.src for s in specs],
        "dst": [s.dst for s in specs],
        "cls": [p.cls for p in plans],
        "tag": [s.tag for s in specs],
        "size_bytes": size,
        "start_ps": start,
        "stop_ps": [s.stop_ps for s in specs],
        "finish_ps": finish,
        "fct_ps": fct,
        "ideal_fct_ps": ideal,
        "slowdown": fct / ideal,
        "mean_rate_gbps": size * 8e3 / fct,
        "base_rtt_ps": [path.base_rtt_ps for path in paths],
        "bdp_bytes": [bdp_of[id(path)] for path in paths],
        "hops": [path.hops for path in paths],
        "packets": n_packets,
        "sent_packets": np.round(fs[:, C.FS_SENT] / mss).astype(np.int64),
        "retransmits": retrans.astype(np.int64),
        "timeouts": fs[:, C.FS_TIMEOUTS].astype(np.int64),
        "fast_retransmits": np.round(fs[:, C.FS_FAST_BYTES] / mss).astype(np.int64),
        "coded": coded,
        "nacks": np.where(coded, loss_events, 0),
        "notices": fs[:, C.FS_QCN_HEARD].astype(np.int64),
        "trims": np.maximum(fs[:, C.FS_TRIMS], 0.0).astype(np.int64),
        "sent_bytes": np.round(fs[:, C.FS_SENT]).astype(np.int64),
        # (a flow whose receiver coalesces its echoes into CNPs: the CNPs, as the packet ACKs
        # that carry one)
        "ecn_acks": np.where(
            fs[:, C.FS_CNP_GAP] > 0, fs[:, C.FS_CNPS], np.round(fs[:, C.FS_MARKED] / mss)
        ).astype(np.int64),
        "bytes_delivered": np.where(finished, size, np.floor(frac * size)).astype(np.int64),
        "cc": [p.cc_name for p in plans],
        "lb": [sim.cfg.lb.algo] * n,
        "seed": [sim.cfg.seed] * n,
    }
    assert set(cols) == set(FLOW_COLUMNS)
    return flows_frame(cols)


def folded_rows(sim) -> np.ndarray | None:
    """The row of ``sim.ls`` each link reports: its folded group's (:mod:`uno.fluid.folding`),
    or None where every link reports its own."""
    rep = sim.link_rep
    return None if (rep == np.arange(len(rep))).all() else rep


def link_rows_seen(sim) -> np.ndarray:
    """Each link's row as the tables report it: a folded group's links each their group's
    row (:mod:`uno.fluid.folding`)."""
    rep = folded_rows(sim)
    return sim.ls if rep is None else sim.ls[rep]


def ports_table(sim) -> pd.DataFrame:
    """The ports table of fluid run ``sim``: each link that carried bytes, its counts in bytes
    and in full packets of the scenario's data packet size."""
    ls = link_rows_seen(sim)
    busy = np.nonzero(ls[:, C.LS_IN] > 0)[0]
    edges = sim.scenario.routing.edges
    mss = sim.scenario.data_bytes
    drops = np.round(ls[busy, C.LS_DROP] / mss).astype(np.int64)
    trims = np.zeros(len(busy), dtype=np.int64)
    if sim.cfg.switch.trimming.enabled:  # (the switch ports trim what they cannot queue)
        at_switch = ~np.isin(busy, sim.nic_link)
        trims[at_switch] = drops[at_switch]
        drops[at_switch] = 0
    return pd.DataFrame(
        {
            "port": [sim.port_names[i] for i in busy],
            "kind": [edges[i].kind for i in busy],
            "rate_gbps": [edges[i].rate_bps / 1e9 for i in busy],
            "buffer_bytes": [edges[i].buffer_bytes for i in busy],
            "arrivals": np.round(ls[busy, C.LS_IN] / mss).astype(np.int64),
            "tx_packets": np.round(ls[busy, C.LS_TX] / mss).astype(np.int64),
            "tx_bytes": np.round(ls[busy, C.LS_TX]).astype(np.int64),
            "drops": drops,
            "fault_drops": np.round(ls[busy, C.LS_FDROP] / mss).astype(np.int64),
            "trims": trims,
            "ecn_marks": np.round(ls[busy, C.LS_MARKS] / mss).astype(np.int64),
            "max_queue_bytes": ls[busy, C.LS_MAXQ],
            "queue_bytes_at_end": ls[busy, C.LS_Q],
        }
    )


def run_summary(sim, flows: pd.DataFrame, wall_s: float) -> dict:
    """The summary of fluid run ``sim`` (its flows table ``flows``, ``wall_s`` seconds of
    wall time), after checking that no flow delivered more bytes than it sent."""
    fs = sim.fs
    delivered_ok = np.all(fs[:, C.FS_DELIVERED] <= fs[:, C.FS_SENT] * (1 + 1e-9) + 1e-6)
    if not delivered_ok:
        raise InvariantError("fluid engine: a flow delivered more bytes than it sent")
    lb_algo = sim.cfg.lb.algo
    return {
        "run": dict(
            sim.meta,
            sim_time_us=sim.now_ps / PS_PER_US,
            wall_s=wall_s,
            events=0,
            packet_hops=0,
            packet_hops_per_s=0.0,
            fluid_steps=int(sim.k_done),
            fluid_step_us=sim.dt_first_ps / PS_PER_US,
            fluid_step_last_us=sim.dt_ps / PS_PER_US,
            all_flows_finished=bool(flows["finish_ps"].notna().all()),
            peak_rss_mib=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            lb_model=LB_MODELS[lb_algo],
        ),
        "classes": class_summary(flows),
        "packets": {},
        "retransmits": int(flows["retransmits"].sum()),
        "trims": int(flows["trims"].sum()),  # (the trimmed packets the flows heard NACKs of)
        "timeouts": int(flows["timeouts"].sum()),
        **({"pfc": pfc_summary(sim)} if len(getattr(sim, "pfc", ())) else {}),
        **({"faults": fault_summary(sim)} if sim.faults.any else {}),
        "fluid": {
            "lost_bytes": float(fs[:, C.FS_LOST].sum()),
            "sent_bytes": float(fs[:, C.FS_SENT].sum()),
            "delivered_bytes": float(fs[:, C.FS_DELIVERED].sum()),
            # the flows' bytes (and ACKs) the links still hold: 0 once every flow has finished,
            # unless ACKs came back before the bytes they acknowledge had arrived
            "queued_bytes_at_end": float(link_rows_seen(sim)[:, C.LS_QF].sum()),
        },
    }


def fault_summary(sim) -> dict:
    """The faults' part of the summary (as the packet engine's): the links with a fault at
    some time, and the data packets their faults lost (on the way out; not the ACKs)."""
    faulty = sim.faults.faulty_links()
    lost = sim.ls[faulty, C.LS_FDROP].sum() / sim.scenario.data_bytes
    return {"links_with_faults": len(faulty), "fault_drops": int(round(lost)), "block_losses": []}


class Sampler:
    """The rates / cwnd / queues tables of the packet engine's recorder, sampled between
    chunks of steps (every ``engine.sample_interval_us``)."""

    def __init__(self, sim: FluidSimulation, cfg):
        import fnmatch

        en = cfg.engine
        self.sim = sim
        self.en = en
        names = sim.port_names
        routing = sim.scenario.routing
        dsts = {p.spec.dst for p in sim.flows}
        chosen: list[int] = []
        busy = False
        for sel in en.queue_ports:
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
        self.ports = np.array(sorted(set(chosen)), dtype=np.int64)
        self._set_pfq_rows(sim)
        self.keep = None  # (keep_ports)
        self.busy = busy
        self.rep = folded_rows(sim)  # (a sample reads only the rows it reports)
        self.last_sent = np.zeros(len(sim.flows))
        self.last_acked = np.zeros(len(sim.flows))
        self.last_t = 0
        self.stops = bool((sim.fs[:, C.FS_HALT] > 0.0).any())
        # per sample: (time, flow or port indices, two value arrays)
        self.rates: list[tuple] = []
        self.cwnd: list[tuple] = []
        self.queues: list[tuple] = []

    def _set_pfq_rows(self, sim) -> None:
        """The rows the DCI switches' per-flow queues take in the queues table, named as the
        packet recorder names them (:mod:`uno.net.dci`): ``<switch>/pfq``, every queue of the
        switch together, and ``<switch>/pfq/flow<id>``, each non-empty one; indices after the
        links' (:mod:`uno.fluid.dci`)."""
        fs = sim.fs
        self.pfq_flows = np.flatnonzero(fs[:, C.FS_PFQ_RATE] > 0)
        routing = sim.scenario.routing
        n_links = len(sim.port_names)
        switch_of = [
            routing.topo.nodes[
                routing.edges[int(sim.rt_link[int(fs[f, C.FS_WIRE_NEXT]) - 1])].dst
            ].name
            for f in self.pfq_flows
        ]
        switches = sorted(set(switch_of))
        self.pfq_switch = np.array([switches.index(s) for s in switch_of], dtype=np.int64)
        self.pfq_names = [f"{s}/pfq" for s in switches] + [
            f"{switch_of[i]}/pfq/flow{sim.flows[f].spec.flow_id}"
            for i, f in enumerate(self.pfq_flows)
        ]
        self.pfq_base = n_links

    def keep_ports(self, keep: np.ndarray) -> None:
        """Sample the queues of the links ``keep`` marks only (the hybrid: those a fluid flow
        can reach; the packet recorder samples every port's own queue)."""
        self.ports = self.ports[keep[self.ports] > 0]
        self.keep = keep

    def sample(self, now_ps: int) -> None:
        sim = self.sim
        fs, cs, ls = sim.fs, sim.cs, sim.ls
        span = now_ps - self.last_t
        # the running flows (FS_STATE 1), in flow order: the kernel's list of them, not a scan
        # of every flow's row (a run of 23,226 flows has a few hundred running at a time)
        running = np.sort(sim.active[: int(sim.counters[C.CT.running])])
        if self.stops:
            # a flow that stopped (FS_HALT) is sampled once more at the first sample after
            # its stop time, as the packet recorder samples a sender that is done
            halt = fs[running, C.FS_HALT]
            running = running[~((halt > 0.0) & (halt <= self.last_t))]
        self.last_t = now_ps
        if self.en.sample_rates and span > 0 and len(running):
            scale = 8e3 / span  # bytes per ps -> Gb/s
            sent = fs[running, C.FS_SENT]
            acked = fs[running, C.FS_ACKED]
            self.rates.append(
                (now_ps, running, (sent - self.last_sent[running]) * scale,
                 (acked - self.last_acked[running]) * scale)
            )  # fmt: skip
            self.last_sent[running] = sent
            self.last_acked[running] = acked
        if self.en.sample_cwnd and len(running):
            self.cwnd.append(
                (now_ps, running, cs[running, C.C_CWND], fs[running, C.FS_INFLIGHT].copy())
            )
        if self.en.sample_queues:
            ports, rep = self.ports, self.rep
            if self.busy:
                queued = ls[:, C.LS_Q] if rep is None else ls[rep, C.LS_Q]
                ports = np.union1d(ports, np.nonzero(queued > 0)[0])
                if self.keep is not None:
                    ports = ports[self.keep[ports] > 0]
            if len(ports):
                rows = ports if rep is None else rep[ports]
                self.queues.append((now_ps, ports, ls[rows, C.LS_Q], ls[rows, C.LS_PH]))
            if len(self.pfq_flows):
                self._sample_pfqs(now_ps, fs)

    def _sample_pfqs(self, now_ps: int, fs) -> None:
        """The DCI switches' per-flow queues now: each switch's together, each non-empty one."""
        held = fs[self.pfq_flows, C.FS_PFQ]
        n_switches = len(self.pfq_names) - len(self.pfq_flows)
        totals = np.bincount(self.pfq_switch, weights=held, minlength=n_switches)
        busy = np.flatnonzero(held > 0)
        rows = np.concatenate([np.arange(n_switches), n_switches + busy]) + self.pfq_base
        values = np.concatenate([totals, held[busy]])
        self.queues.append((now_ps, rows, values, np.zeros(len(rows))))

    def tables(self) -> dict[str, pd.DataFrame]:
        flow_ids = np.array([p.spec.flow_id for p in self.sim.flows], dtype=np.int64)
        names = np.array(list(self.sim.port_names) + self.pfq_names, dtype=object)
        out = {}
        for name, rows, cols, key_map in (
            ("rates", self.rates, ["flow_id", "sent_gbps", "acked_gbps"], flow_ids),
            ("cwnd", self.cwnd, ["flow_id", "cwnd_bytes", "inflight_bytes"], flow_ids),
            ("queues", self.queues, ["port", "queue_bytes", "phantom_bytes"], names),
        ):
            if not rows:
                out[name] = pd.DataFrame({c: [] for c in ["time_ps", *cols]})
                continue
            lengths = [len(r[1]) for r in rows]
            data = {"time_ps": np.repeat([r[0] for r in rows], lengths).astype(np.int64)}
            data[cols[0]] = key_map[np.concatenate([r[1] for r in rows])]
            data[cols[1]] = np.concatenate([r[2] for r in rows])
            data[cols[2]] = np.concatenate([r[3] for r in rows])
            out[name] = pd.DataFrame(data)
        return out

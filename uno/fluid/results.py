"""What a fluid run records: the flows and ports tables, the summary, and the rates / cwnd /
queues tables of :mod:`uno.fluid.sampling`, in the packet engine's formats.

Units: time in ps, sizes in bytes, rates in Gb/s in the tables.
"""

from __future__ import annotations

import resource

import numpy as np
import pandas as pd

from uno.core.errors import InvariantError
from uno.core.units import PS_PER_US
from uno.fluid import columns as C
from uno.fluid.pfc import pfc_summary
from uno.metrics.flows import FLOW_COLUMNS, flows_frame
from uno.metrics.summary import class_summary

#: how the flow-level engines route each balancer's flows (the summary's ``lb_model``; the
#: balancers they route: uno.fluid.routes, the others refused before the run)
LB_MODELS = {
    "ecmp": "the packet engine's ECMP path",
    "spray": "even split over equal-cost paths",
    "unolb": "UnoLB subflows on hashed paths, moved on losses",
    "plb": "one hashed path, moved after congested rounds and on losses (PLB's rules)",
    "reps": "subflows on recycled entropies, moved at marked rounds (REPS's Algorithm 1)",
}


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
            **({"stopped_stalled": True} if sim.stopped_stalled else {}),
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
            "unaccounted_bytes": unaccounted_bytes(fs),
            **late_acks(sim.counters),
            **stalls(fs, sim.now_ps, sim.flows),
        },
    }


#: a running flow whose bytes in flight nothing will release, once it has neither sent nor
#: timed out for this many of its retransmission timeouts
STALL_RTOS = 10.0


def stalled_flows(fs: np.ndarray, now_ps: float) -> np.ndarray:
    """The rows of flow state ``fs`` of uncoded flows still running at ``now_ps`` that hold
    bytes in flight with none on their way back (no ACK filed), none waiting for the timer or
    for fast retransmit's evidence and none reported lost, and that have neither sent nor
    timed out for ``STALL_RTOS`` of their timeouts: a window that no ACK and no timer will
    open again, which a longer run would not finish (an accounting fault of the engine's)."""
    running = (fs[:, C.FS_STATE] == 1.0) & (fs[:, C.FS_EC_N] <= 0.0)
    held = fs[:, C.FS_INFLIGHT] >= 1.0
    idle = (
        (fs[:, C.FS_PENDING] < 1.0)
        & (fs[:, C.FS_WAIT] < 1.0)
        & (fs[:, C.FS_UNREVEALED] < 1.0)
        & (fs[:, C.FS_LOSS_PENDING] < 1.0)
    )
    last = np.maximum(
        np.maximum(fs[:, C.FS_LAST_SEND], fs[:, C.FS_LAST_TIMEOUT]), fs[:, C.FS_START]
    )
    quiet = now_ps - last > STALL_RTOS * fs[:, C.FS_RTO]
    return np.nonzero(running & held & idle & quiet)[0]


#: how often (in steps) a run looks whether every flow left has stalled (:func:`all_stalled`):
#: a multiple of the engines' other look intervals, so that it looks at the same steps in
#: every run of a config, however its kernel calls fall
STALL_CHECK_STEPS = 4096


def all_stalled(
    fs: np.ndarray, counters: np.ndarray, order: np.ndarray, chains, now_ps: float
) -> bool:
    """Whether a flow of flow state ``fs`` runs at ``now_ps``, every running flow has stalled
    (:func:`stalled_flows`) and every flow not started yet (``order`` from ``counters``'s next
    start on) waits for its group to end (``chains``: :meth:`uno.fluid.chains.FlowChains.waiting`):
    no later step can finish a flow, so the run may stop before its stop time."""
    running = int(counters[C.CT.running])
    if running == 0:
        return False
    later = order[int(counters[C.CT.next_start]) :]
    if not chains.waiting(fs)[later].all():
        return False
    return len(stalled_flows(fs, now_ps)) == running


def stalls(fs: np.ndarray, now_ps: float, plans, prefix: str = "") -> dict:
    """The summary's count of :func:`stalled_flows` and the id of the first (-1: none)."""
    rows = stalled_flows(fs, now_ps)
    first = plans[int(rows[0])].spec.flow_id if len(rows) else -1
    return {f"{prefix}stalled_flows": int(len(rows)), f"{prefix}stalled_flow_id": int(first)}


def late_acks(counters: np.ndarray, prefix: str = "") -> dict:
    """The batches (and their bytes) whose ACKs came back later than their flow's
    retransmission timeout after their send (:func:`uno.fluid.filing.late_acks`), whose
    timers resent copies of them though they arrived."""
    return {
        f"{prefix}late_ack_batches": int(counters[C.CT.late_batches]),
        f"{prefix}late_ack_bytes": int(counters[C.CT.late_bytes]),
    }


def unaccounted_bytes(fs: np.ndarray) -> float:
    """The bytes the finished flows of flow state ``fs`` sent that they neither had
    acknowledged nor lost nor sent as copies of bytes their timers took though they arrived
    (whose ACKs are duplicates), or that they left in flight (summed as magnitudes): 0 up to
    rounding when every byte sent is accounted for."""
    done = fs[:, C.FS_FINISH] >= 0.0
    copies = np.where(fs[done, C.FS_EC_N] > 0.0, 0.0, fs[done, C.FS_COPIES_SENT])
    gap = fs[done, C.FS_SENT] - fs[done, C.FS_ACKED] - fs[done, C.FS_LOST] - copies
    return float(np.abs(gap).sum() + np.abs(fs[done, C.FS_INFLIGHT]).sum())


def fault_summary(sim) -> dict:
    """The faults' part of the summary (as the packet engine's): the links with a fault at
    some time, and the data packets their faults lost (on the way out; not the ACKs)."""
    faulty = sim.faults.faulty_links()
    lost = sim.ls[faulty, C.LS_FDROP].sum() / sim.scenario.data_bytes
    return {"links_with_faults": len(faulty), "fault_drops": int(round(lost)), "block_losses": []}

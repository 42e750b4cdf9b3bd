"""The simulation context: the event engine, the seeded random streams, the recorder, and the
network and flows built into them. Two simulations in one process share nothing."""

from __future__ import annotations

import gc
import time
import tracemalloc
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from uno.core.engine import Engine
from uno.core.errors import InvariantError
from uno.core.rng import RngStreams
from uno.core.units import PS_PER_US, rate_bps
from uno.metrics.recorder import Recorder
from uno.metrics.summary import class_summary, format_summary


@dataclass
class RunResult:
    """What a run produced: the per-flow table, sampled tables and the summary dict."""

    flows: pd.DataFrame
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    summary: dict = field(default_factory=dict)

    def summary_text(self) -> str:
        return format_summary(self.summary)


class Simulation:
    """Owns one run's engine, random streams, recorder, network and flows."""

    def __init__(self, seed: int):
        self.engine = Engine()
        self.rng = RngStreams(seed)
        self.recorder: Recorder | None = None
        self.network = None
        self.flows: list = []
        self.meta: dict = {}
        self.max_time_ps = 0
        self.check_invariants = True
        self._n_done = 0
        self._n_required = None  # flows that must finish before the run stops (None: all)
        self.stop_tags: set[str] = set()
        self._stop = self.engine.event()

    # ---- flow lifecycle -----------------------------------------------------------------
    def _arrivals(self):
        """SimPy process starting flows at their start times (flows sorted by start)."""
        engine = self.engine
        for flow in sorted(self.flows, key=lambda f: (f.start_ps, f.flow_id)):
            if flow.start_ps > engine.now:
                yield engine.timeout(flow.start_ps - engine.now)
            if self.recorder is not None:
                self.recorder.flow_started(flow)
            flow.sender.start()

    def flow_completed(self, flow) -> None:
        if self.stop_tags and flow.tag not in self.stop_tags:
            return
        self._n_done += 1
        if self._n_required is None:
            self._n_required = (
                sum(1 for f in self.flows if f.tag in self.stop_tags)
                if self.stop_tags
                else len(self.flows)
            )
        if self._n_done == self._n_required and not self._stop.triggered:
            self._stop.succeed()

    # ---- running ------------------------------------------------------------------------
    def run(self, measure_memory: bool = False) -> RunResult:
        engine = self.engine
        if not self.flows:
            raise InvariantError("no flows to simulate")
        engine.process(self._arrivals())
        if self.recorder is not None:
            self.recorder.start()
        if measure_memory:
            tracemalloc.start()
        # The run allocates millions of short-lived packets and heap entries but no reference
        # cycles (tests/test_engine_gc.py checks this), so reference counting frees everything
        # and the cyclic collector would only rescan live objects: pause it for the run.
        gc_was_enabled = gc.isenabled()
        gc.collect()
        gc.disable()
        t0 = time.perf_counter()
        try:
            engine.run_until(self.max_time_ps, self._stop)
        finally:
            wall_s = time.perf_counter() - t0
            if gc_was_enabled:
                gc.enable()
        peak_mem = None
        if measure_memory:
            peak_mem = tracemalloc.get_traced_memory()[1]
            tracemalloc.stop()
        return self._collect(wall_s, peak_mem)

    def _collect(self, wall_s: float, peak_mem_bytes: int | None) -> RunResult:
        net = self.network
        packets = net.check_conservation() if self.check_invariants else {}
        if self.check_invariants:
            self._check_flows()
        flows = self.flows_table()
        hops = net.packet_hops()
        sim_time_ps = self.engine.now
        summary = {
            "run": dict(
                self.meta,
                sim_time_us=sim_time_ps / PS_PER_US,
                wall_s=wall_s,
                events=self.engine.events_scheduled,
                packet_hops=hops,
                packet_hops_per_s=hops / wall_s if wall_s > 0 else 0.0,
                all_flows_finished=bool(flows["finish_ps"].notna().all()),
            ),
            "classes": class_summary(flows),
            "packets": packets,
            "retransmits": int(flows["retransmits"].sum()),
            "timeouts": int(flows["timeouts"].sum()),
        }
        if peak_mem_bytes is not None:
            summary["run"]["peak_traced_memory_bytes"] = peak_mem_bytes
        tables = {"flows": flows}
        if self.recorder is not None:
            tables.update(self.recorder.tables())
        tables["ports"] = self.ports_table()
        return RunResult(flows=flows, tables=tables, summary=summary)

    def _check_flows(self) -> None:
        for f in self.flows:
            s, r = f.sender, f.receiver
            if r.bytes_received > f.size_bytes:
                raise InvariantError(
                    f"flow {f.flow_id}: delivered {r.bytes_received} B > size {f.size_bytes} B"
                )
            if r.n_got > s.next_seq:
                raise InvariantError(f"flow {f.flow_id}: received packets that were never sent")
            if f.finish_ps is not None and r.bytes_received != f.size_bytes:
                raise InvariantError(
                    f"flow {f.flow_id}: finished with {r.bytes_received} of {f.size_bytes} B delivered"
                )
            if s.n_acked > r.n_got:
                raise InvariantError(f"flow {f.flow_id}: more packets acked than received")

    def flows_table(self) -> pd.DataFrame:
        rows = []
        seed = self.meta.get("seed")
        for f in self.flows:
            s = f.sender
            fct = f.fct_ps
            rows.append(
                {
                    "flow_id": f.flow_id,
                    "src": f.src,
                    "dst": f.dst,
                    "cls": f.cls,
                    "tag": f.tag,
                    "size_bytes": f.size_bytes,
                    "start_ps": f.start_ps,
                    "finish_ps": f.finish_ps,
                    "fct_ps": fct,
                    "ideal_fct_ps": f.ideal_fct_ps,
                    "slowdown": fct / f.ideal_fct_ps if fct is not None else np.nan,
                    "mean_rate_gbps": rate_bps(f.size_bytes, fct) / 1e9 if fct else np.nan,
                    "base_rtt_ps": f.path.base_rtt_ps,
                    "bdp_bytes": f.path.bdp_bytes(),
                    "hops": f.path.hops,
                    "packets": f.n_packets,
                    "sent_packets": s.sent_packets,
                    "retransmits": s.retransmits,
                    "timeouts": s.timeouts,
                    "ecn_acks": s.ecn_acks,
                    "bytes_delivered": f.receiver.bytes_received,
                    "cc": f.cc_name,
                    "lb": f.lb_name,
                    "seed": seed,
                }
            )
        df = pd.DataFrame(rows)
        df["finish_ps"] = df["finish_ps"].astype("Int64")
        df["fct_ps"] = df["fct_ps"].astype("Int64")
        return df

    def ports_table(self) -> pd.DataFrame:
        now = self.engine.now
        rows = []
        for p in self.network.ports:
            if p.arrivals == 0:
                continue
            rows.append(
                {
                    "port": p.name,
                    "kind": p.kind,
                    "rate_gbps": p.rate_bps / 1e9,
                    "buffer_bytes": p.buffer_bytes,
                    "arrivals": p.arrivals,
                    "tx_packets": p.tx_packets,
                    "tx_bytes": p.tx_bytes,
                    "drops": p.drops,
                    "ecn_marks": p.ecn_marks,
                    "max_queue_bytes": p.max_bytes,
                    "queue_bytes_at_end": p.occupancy_bytes(now),
                }
            )
        return pd.DataFrame(rows)

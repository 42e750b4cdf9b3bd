"""The packet engine's simulation: the event engine, the seeded random streams, the recorder,
and the network and flows built into them (by :mod:`uno.build`), run to the end and collected
into a :class:`uno.metrics.result.RunResult`. Two simulations in one process share nothing."""

from __future__ import annotations

import gc
import resource
import time
import tracemalloc

import numpy as np
import pandas as pd
from simpy.core import StopSimulation

from uno.core.engine import Engine
from uno.core.errors import InvariantError
from uno.core.rng import RngStreams
from uno.core.units import PS_PER_US, rate_bps
from uno.metrics.flows import FLOW_COLUMNS, flows_frame
from uno.metrics.progress import Snapshot
from uno.metrics.recorder import Recorder
from uno.metrics.result import RunResult
from uno.metrics.rtts import rtt_report
from uno.metrics.summary import class_summary


class Simulation:
    """Owns one run's engine, random streams, recorder, network and flows."""

    def __init__(self, seed: int):
        self.engine = Engine()
        self.rng = RngStreams(seed)
        self.recorder: Recorder | None = None
        self.network = None
        #: (ingress queues, PauseLog) when PFC is on (uno.net.pfc)
        self.pfc = None
        #: engine.record_rtts: the Python senders' RTT bins (uno.metrics.rtts)
        self.rtt_counts = None
        self.flows: list = []
        self.meta: dict = {}
        self.max_time_ps = 0
        self.check_invariants = True
        self._n_done = 0
        self.n_finished = 0  # flows finished, whatever their tags
        self._n_required = None  # flows that must finish before the run stops (None: all)
        self.stop_tags: set[str] = set()
        self._stop = self.engine.event()
        self._started = False
        self._finished = False
        self._gc_paused = False  # start() disabled the collector, finish() enables it again
        self._tracing_memory = False
        self._wall_s = 0.0  # time inside advance() calls only
        self._over = False
        self.n_required_started = 0  # started flows of those the run waits for
        self._progress_flows = None  # (progress_snapshot: the required flows, ...)

    # ---- flow lifecycle -----------------------------------------------------------------
    def _arrivals(self):
        """SimPy process starting flows at their start times (flows sorted by start). Flows
        that wait for a group (``after``) start from :meth:`flow_completed`."""
        engine = self.engine
        self._unfinished: dict[str, int] = {}
        self._dependents: dict[str, list] = {}
        for flow in self.flows:
            self._unfinished[flow.tag] = self._unfinished.get(flow.tag, 0) + 1
            if flow.after:
                self._dependents.setdefault(flow.after, []).append(flow)
        for flow in sorted(self.flows, key=lambda f: (f.start_ps, f.flow_id)):
            if flow.after:
                continue
            if flow.start_ps > engine.now:
                yield engine.timeout(flow.start_ps - engine.now)
            self._start_flow(flow)

    def _start_flow(self, flow) -> None:
        if not self.stop_tags or flow.tag in self.stop_tags:
            self.n_required_started += 1
        if self.recorder is not None:
            self.recorder.flow_started(flow)
        flow.sender.start()
        if flow.stop_ps is not None:
            self.engine.call_at(max(flow.stop_ps, self.engine.now), flow.sender.stop)

    def flow_completed(self, flow) -> None:
        self.n_finished += 1
        left = self._unfinished[flow.tag] - 1
        self._unfinished[flow.tag] = left
        if left == 0:
            now = self.engine.now
            for dep in self._dependents.pop(flow.tag, ()):
                dep.start_ps += now  # its delay after the group, now an absolute time
                self.engine.call_at(dep.start_ps, self._start_flow, dep)
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
        """Run to the end (all flows done, or ``max_time_ps``) and collect the results."""
        self.start(measure_memory)
        self.advance(self.max_time_ps)
        return self.finish()

    def start(self, measure_memory: bool = False) -> None:
        """Schedule the flow arrivals and the recorder, and pause the cyclic collector until
        :meth:`finish`. Then call :meth:`advance` until it returns True, and :meth:`finish`."""
        if self._started:
            raise InvariantError("simulation already started")
        if not self.flows:
            raise InvariantError("no flows to simulate")
        self._started = True
        engine = self.engine
        engine.process(self._arrivals())
        if self.recorder is not None:
            self.recorder.start()
        dp = self.network.dataplane if self.network is not None else None
        if dp is not None:
            dp.load_kernels()  # (loaded before the run: its engine time is the run's)
        # The stop event ends the engine loop (run_until catches StopSimulation). Registered
        # once here rather than by every advance() call, so stepping adds no callbacks to it.
        self._stop.callbacks.append(StopSimulation.callback)
        if measure_memory:
            tracemalloc.start()
            self._tracing_memory = True
        # The run allocates millions of short-lived packets and heap entries but no reference
        # cycles (tests/test_engine_gc.py checks this), so reference counting frees everything
        # and the cyclic collector would only rescan live objects: pause it for the run. Only a
        # simulation that found it enabled enables it again, so interleaved simulations leave
        # it as they found it whatever order they finish in. (No collection first: it would
        # only walk the objects just built, tens of milliseconds, to free the few cycles that
        # composing a config leaves, which the collector frees once enabled again.)
        self._gc_paused = gc.isenabled()
        gc.disable()

    def advance(self, until_ps: int) -> bool:
        """Run the engine up to ``until_ps`` (events due at ``until_ps`` included; capped at
        ``max_time_ps``) or until every required flow is done. Returns whether the run is over.
        Stepping in any increments gives the same results as one call."""
        if not self._started or self._finished:
            raise InvariantError("advance() needs a started, unfinished simulation")
        engine = self.engine
        if until_ps < engine.now:
            raise ValueError(f"until_ps={until_ps} is before the current time {engine.now} ps")
        if not self._over:
            until_ps = min(until_ps, self.max_time_ps)
            t0 = time.perf_counter()
            try:
                engine.run_until(until_ps)
            except BaseException:
                self._release()  # a broken run must not leave the process without a collector
                raise
            finally:
                self._wall_s += time.perf_counter() - t0
            # Everything due at max_time_ps has run once a call reached it (the engine processes
            # entries due exactly at its stop time), so the run is over then.
            self._over = self._stop.processed or until_ps == self.max_time_ps
        return self._over

    def kernels(self) -> tuple:
        """The compiled kernels the run calls first (:func:`uno.core.jit_cache.announce_compile`):
        the compiled data plane's event loop, none on the Python one."""
        dp = self.network.dataplane if self.network is not None else None
        if dp is None:
            return ()
        from uno.net.compiled import loop

        return (loop.run,)

    def progress_snapshot(self) -> Snapshot:
        """What the progress watcher shows (:mod:`uno.metrics.progress`). It runs in the
        watcher's thread while the run goes on, so it only reads."""
        now, done, total, started, late = self.packet_work()
        return Snapshot(now, done, total, started, late, self.n_finished, len(self.flows),
                        self.network.packet_hops(), "packet-hops")  # fmt: skip

    def packet_work(self) -> tuple[int, int, int, bool, bool]:
        """The simulated time reached (the compiled data plane's kernel runs ahead of the
        engine's clock between its returns to Python); the required flows'
        (``engine.stop_when_done``) bytes received and their bytes; whether every one has
        started; whether one starts at or after the stop time (one that waits for a group,
        ``after``, starts when the group is done: not known before)."""
        if self._progress_flows is None:
            flows, tags = self.flows, self.stop_tags
            index = [i for i, f in enumerate(flows) if not tags or f.tag in tags]
            total = sum(flows[i].size_bytes for i in index)
            late = any(not flows[i].after and flows[i].start_ps >= self.max_time_ps for i in index)
            ids = np.array([flows[i].flow_id for i in index], dtype=np.int64)
            self._progress_flows = (np.array(index, dtype=np.int64), ids, total, late)
        index, ids, total, late = self._progress_flows
        now = self.engine.now
        dp = self.network.dataplane
        if dp is not None:
            kernel_now, got = dp.progress_view()
            now, done = max(now, kernel_now), int(got[ids].sum())
        else:
            flows = self.flows
            done = sum(flows[i].receiver.bytes_received for i in index.tolist())
        return now, done, total, self.n_required_started == len(index), late

    @property
    def over(self) -> bool:
        """Whether the run has ended: every required flow done, or ``max_time_ps`` reached."""
        return self._over

    def finish(self) -> RunResult:
        """Restore the collector and collect the tables (at the time reached, over or not)."""
        if not self._started or self._finished:
            raise InvariantError("finish() needs a started, unfinished simulation")
        self._finished = True
        peak_mem = tracemalloc.get_traced_memory()[1] if self._tracing_memory else None
        self._release()
        return self._collect(self._wall_s, peak_mem)

    def _release(self) -> None:
        """Give back what start() took: the collector and memory tracing. Idempotent."""
        if self._gc_paused:
            self._gc_paused = False
            gc.enable()
        if self._tracing_memory:
            self._tracing_memory = False
            tracemalloc.stop()

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
            "trims": sum(p.trims for p in net.ports),  # packets the switches trimmed
            "timeouts": int(flows["timeouts"].sum()),
        }
        faulty = [p.fault for p in net.ports if p.fault is not None]
        if faulty:
            per_k: list[int] = []
            for fault in faulty:
                for model in fault.models:
                    counts = getattr(model, "losses_per_block", None)
                    if counts is not None:
                        per_k += [0] * (len(counts) - len(per_k))
                        for k, n in enumerate(counts):
                            per_k[k] += n
            summary["faults"] = {
                "links_with_faults": len(faulty),
                "fault_drops": sum(f.drops for f in faulty),
                # link blocks (of block_packets) that lost k packets, k = 0, 1, 2, ...
                "block_losses": per_k,
            }
        coded = [f for f in self.flows if f.coding is not None]
        if coded:
            layout_wire = sum(f.coding.layout.n_wire for f in coded)
            layout_data = sum(f.coding.layout.n_data for f in coded)
            message = sum(f.wire_bytes for f in coded)
            sent = sum(f.sender.sent_bytes for f in coded)
            summary["ec"] = {
                "coded_flows": len(coded),
                "code_overhead": layout_wire / layout_data - 1.0,
                "message_wire_bytes": message,
                "sent_wire_bytes": sent,
                "wire_overhead": sent / message - 1.0,
                "nacks": sum(f.sender.nacks for f in coded),
            }
        if net.dataplane is not None:
            summary["dataplane"] = {"kind": "compiled", "senders": net.dataplane.senders_note}
        else:
            summary["dataplane"] = {"kind": "python", "senders": "in Python"}
        if net.dcis:
            summary["dci"] = {
                d.switch.name: {
                    "switch_int_notices": sum(
                        t.notices for t in net.dci_taps.values() if t.dci is d
                    ),  # fmt: skip
                    "pfq_packets": sum(t.pfq_packets for t in net.dci_taps.values() if t.dci is d),
                    "pfq_drops": sum(t.pfq_drops for t in net.dci_taps.values() if t.dci is d),
                    "pfq_max_bytes": d.max_bytes,
                    "pfq_bytes_at_end": d.bytes,
                }
                for d in net.dcis
            }
        if self.pfc is not None:
            from uno.net.pfc import pfc_summary

            ingresses, log = self.pfc
            summary["pfc"] = pfc_summary(
                ingresses, log, sim_time_ps, self.check_invariants, len(net.switches)
            )
        if peak_mem_bytes is not None:
            summary["run"]["peak_traced_memory_bytes"] = peak_mem_bytes
        # the process's peak resident memory so far (this run's peak when it is the process's
        # only or largest run)
        summary["run"]["peak_rss_mib"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        tables = {"flows": flows}
        if self.recorder is not None:
            tables.update(self.recorder.tables())
        tables["ports"] = self.ports_table()
        if self.pfc is not None:
            tables["pauses"] = self.pfc[1].table(sim_time_ps)
        if self.rtt_counts is not None:
            tables["rtts"], summary["rtt_us"] = self._rtts()
        return RunResult(flows=flows, tables=tables, summary=summary)

    def rtt_bin_counts(self) -> np.ndarray:
        """The run's RTT bins: the Python senders' and the kernel senders' samples."""
        counts = self.rtt_counts.astype(np.float64)
        dataplane = self.network.dataplane
        kernel = dataplane.rtt_counts() if dataplane is not None else None
        if kernel is not None:
            counts += kernel
        return counts

    def _rtts(self) -> tuple:
        """The run's RTT bins as a table, and the quantiles of the samples (us)."""
        return rtt_report(self.rtt_bin_counts())

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
        """The flows table (:data:`uno.metrics.flows.FLOW_COLUMNS`) of the flows so far."""
        seed = self.meta.get("seed")
        if self.network is not None and self.network.dataplane is not None:
            self.network.dataplane.sync()  # the kernel's receivers' counts
        cols: dict[str, list] = {c: [] for c in FLOW_COLUMNS}
        for f in self.flows:
            s = f.sender
            fct = f.fct_ps
            row = {
                "flow_id": f.flow_id,
                "src": f.src,
                "dst": f.dst,
                "cls": f.cls,
                "tag": f.tag,
                "size_bytes": f.size_bytes,
                "start_ps": f.start_ps,
                "stop_ps": f.stop_ps,
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
                "fast_retransmits": s.fast_retransmits,
                "coded": f.coding is not None,
                "nacks": s.nacks,
                "notices": s.notices,
                "trims": s.trims,
                "sent_bytes": s.sent_bytes,
                "ecn_acks": s.ecn_acks,
                "bytes_delivered": f.receiver.bytes_received,
                "cc": f.cc_name,
                "lb": f.lb_name,
                "seed": seed,
            }
            for c, v in row.items():
                cols[c].append(v)
        return flows_frame(cols)

    def ports_table(self) -> pd.DataFrame:
        now = self.engine.now
        rows = []
        for p in self.network.ports:
            if p.arrivals == 0:
                continue
            # Settle first: packets that left by now are counted as sent, and their ECN marks
            # decided, whether or not a sampler happened to touch the port since they left.
            queue_bytes = p.occupancy_bytes(now)
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
                    "trims": p.trims,
                    "fault_drops": p.fault.drops if p.fault is not None else 0,
                    "ecn_marks": p.ecn_marks,
                    "max_queue_bytes": p.max_bytes,
                    "queue_bytes_at_end": queue_bytes,
                }
            )
        frame = pd.DataFrame(rows)
        taps = self.network.dci_taps
        if taps and not frame.empty:  # the DCI switches' counters, by the port into them
            for col, attr in (("dci_notices", "notices"), ("pfq_packets", "pfq_packets"),
                              ("pfq_drops", "pfq_drops")):  # fmt: skip
                frame[col] = [getattr(taps[n], attr) if n in taps else 0 for n in frame["port"]]
        return frame

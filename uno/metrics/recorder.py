"""Periodic sampling of per-flow sending rate and window, and of queue occupancy, into tidy
column lists that become ``rates``, ``cwnd`` and ``queues`` tables. Runs as engine events; it
reads counters only, so it never changes what the network does (settling a port's departed
packets on a read is a pure bookkeeping step, see :mod:`uno.net.port`)."""

from __future__ import annotations

import fnmatch

import pandas as pd
from simpy.events import URGENT

from uno.core.units import PS_PER_S


class Recorder:
    def __init__(
        self,
        engine,
        interval_ps: int,
        sample_rates: bool,
        sample_cwnd: bool,
        sample_queues: bool,
    ):
        self.engine = engine
        self.interval_ps = interval_ps
        self.sample_rates = sample_rates
        self.sample_cwnd = sample_cwnd
        self.sample_queues = sample_queues
        self.active: dict[
            int, object
        ] = {}  # flow_id -> Flow, started and not yet sampled after finish
        self._last_sent: dict[int, int] = {}
        self._last_acked: dict[int, int] = {}
        self.ports: list = []
        self.busy_ports: list = []  # scanned every sample, recorded only when non-empty
        #: DCI switches' elements (uno.net.dci): their per-flow queues, sampled as "queues"
        #: rows named "<switch>/pfq" (all flows) and "<switch>/pfq/flow<id>" (each non-empty one)
        self.dcis: list = []
        self.rates = {"time_ps": [], "flow_id": [], "sent_gbps": [], "acked_gbps": []}
        self.cwnd = {"time_ps": [], "flow_id": [], "cwnd_bytes": [], "inflight_bytes": []}
        self.queues = {"time_ps": [], "port": [], "queue_bytes": [], "phantom_bytes": []}
        #: called before each sample (the compiled data plane brings its DCI switches' Python
        #: objects up to date)
        self.before_sample = None
        #: other samplers taken at each sample, each called with its time (ps): the hybrid's
        #: fluid flows and links (uno.fluid.hybrid)
        self.companions: list = []
        #: the sampled flows' counters: (flow ids, their Flow objects) -> lists of their bytes
        #: sent, bytes acknowledged, window (bytes), bytes in flight and whether each is done;
        #: each sender's own attributes, or the compiled data plane's arrays read in one go
        #: (uno.net.compiled.dataplane.CompiledDataplane.sender_counters)
        self.read_flows = read_senders
        #: (port, queued bytes, phantom level) of the busy-scan ports that hold either at a
        #: time (ps): each port's own reads, or the compiled data plane's arrays read in one
        #: call (uno.net.compiled.dataplane.CompiledDataplane.busy_levels)
        self.busy_levels = self._busy_levels
        #: the samples read in one kernel call instead, where the compiled data plane holds
        #: every sampled flow's sender (uno.net.compiled.recording.KernelSamples): its
        #: flow_started, sample and tables take the place of these
        self.kernel = None
        #: the sample event's callable, one object all run (the hybrid finds its heap entry)
        self.tick = self._tick

    # ---- configuration ------------------------------------------------------------------
    def select_ports(self, selectors: list[str], all_ports: list, receiver_ports: list) -> None:
        chosen: dict[str, object] = {}
        busy = False
        for sel in selectors:
            if sel == "receivers":
                for p in receiver_ports:
                    chosen[p.name] = p
            elif sel == "all":
                for p in all_ports:
                    chosen[p.name] = p
            elif sel == "busy":
                busy = True
            else:
                for p in all_ports:
                    if fnmatch.fnmatchcase(p.name, sel):
                        chosen[p.name] = p
        self.ports = list(chosen.values())
        if busy:
            self.busy_ports = [p for p in all_ports if p.name not in chosen]

    def flow_started(self, flow) -> None:
        if self.kernel is not None:
            self.kernel.flow_started(flow.flow_id)
            return
        self.active[flow.flow_id] = flow
        self._last_sent[flow.flow_id] = 0
        self._last_acked[flow.flow_id] = 0

    def start(self) -> None:
        """Schedule the samples, every ``interval_ps`` from now. Their entries are keyed as a
        SimPy process's timeouts would be (an urgent start entry now, each sample's entry
        scheduled by the one before), so a run's other events keep their order whichever way
        the recorder runs; the hybrid's kernel may take them itself
        (:class:`uno.fluid.hybrid.HybridSimulation`), handing back the next one's key."""
        if self.interval_ps > 0 and (self.sample_rates or self.sample_cwnd or self.sample_queues):
            engine = self.engine
            engine.push_entry((engine.now, URGENT, engine.next_eid(), self._arm, None))

    def _arm(self, _arg=None) -> None:
        self.engine.call_in(self.interval_ps, self.tick)

    def _tick(self, _arg=None) -> None:
        self.sample()
        self.engine.call_in(self.interval_ps, self.tick)

    # ---- sampling -----------------------------------------------------------------------
    def sample(self) -> None:
        if self.kernel is not None:
            now = self.engine.now
            self.kernel.sample(now)
            for companion in self.companions:
                companion(now)
            return
        if self.before_sample is not None:
            self.before_sample()
        now = self.engine.now
        scale = 8 * PS_PER_S / self.interval_ps / 1e9
        fids = list(self.active)
        sent, acked, cwnd, inflight, done = self.read_flows(fids, list(self.active.values()))
        times = [now] * len(fids)
        if self.sample_rates:
            r, last_sent, last_acked = self.rates, self._last_sent, self._last_acked
            r["time_ps"] += times
            r["flow_id"] += fids
            r["sent_gbps"] += [(b - last_sent[f]) * scale for f, b in zip(fids, sent, strict=True)]
            r["acked_gbps"] += [
                (b - last_acked[f]) * scale for f, b in zip(fids, acked, strict=True)
            ]
            last_sent.update(zip(fids, sent, strict=True))
            last_acked.update(zip(fids, acked, strict=True))
        if self.sample_cwnd:
            c = self.cwnd
            c["time_ps"] += times
            c["flow_id"] += fids
            c["cwnd_bytes"] += [float(w) for w in cwnd]
            c["inflight_bytes"] += inflight
        for fid, finished in zip(fids, done, strict=True):
            if finished:
                del self.active[fid]
        for companion in self.companions:
            companion(now)
        if self.sample_queues:
            q = self.queues
            for p in self.ports:
                q["time_ps"].append(now)
                q["port"].append(p.name)
                q["queue_bytes"].append(p.occupancy_bytes(now))
                q["phantom_bytes"].append(p.phantom_bytes(now))
            for d in self.dcis:
                q["time_ps"].append(now)
                q["port"].append(d.name)
                q["queue_bytes"].append(d.bytes)
                q["phantom_bytes"].append(0.0)
                for fid, nbytes in d.flow_bytes().items():
                    q["time_ps"].append(now)
                    q["port"].append(f"{d.name}/flow{fid}")
                    q["queue_bytes"].append(nbytes)
                    q["phantom_bytes"].append(0.0)
            for p, occ, ph in self.busy_levels(now):
                q["time_ps"].append(now)
                q["port"].append(p.name)
                q["queue_bytes"].append(occ)
                q["phantom_bytes"].append(ph)

    def _busy_levels(self, now: int) -> list[tuple]:
        """(port, queued bytes, phantom level) of the busy-scan ports that hold either."""
        out = []
        for p in self.busy_ports:
            occ = p.occupancy_bytes(now)
            ph = p.phantom_bytes(now)
            if occ or ph:
                out.append((p, occ, ph))
        return out

    # ---- tables -------------------------------------------------------------------------
    def tables(self) -> dict[str, pd.DataFrame]:
        if self.kernel is not None:
            return self.kernel.tables()
        out = {}
        if self.sample_rates:
            out["rates"] = pd.DataFrame(self.rates).astype({"time_ps": "int64", "flow_id": "int64"})
        if self.sample_cwnd:
            out["cwnd"] = pd.DataFrame(self.cwnd).astype({"time_ps": "int64", "flow_id": "int64"})
        if self.sample_queues:
            out["queues"] = pd.DataFrame(self.queues).astype(
                {"time_ps": "int64", "queue_bytes": "int64"}
            )
        return out


def read_senders(flow_ids: list, flows: list) -> tuple[list, list, list, list, list]:
    """The senders' own counters (:attr:`Recorder.read_flows`): bytes sent, bytes acknowledged,
    window (bytes), bytes in flight, done, one list entry per flow of ``flows``."""
    senders = [flow.sender for flow in flows]
    return (
        [s.sent_bytes for s in senders],
        [s.acked_bytes for s in senders],
        [s.cc.cwnd_bytes for s in senders],
        [s.inflight_bytes for s in senders],
        [s.done for s in senders],
    )

"""The compiled data plane seen from Python: :class:`CompiledDataplane` builds the kernel's
state from a configured network (:mod:`uno.net.compiled.build_state`), puts its port views in
place of the network's ports, calls the kernels at the boundary (:mod:`uno.net.compiled.loop`)
and copies the kernel's counters back to the Python objects that samplers, tables and checks
read."""

from __future__ import annotations

import functools

import numba
import numpy as np

import uno.net.compiled.loop as kernels
from uno.cc.law import INT_FIELDS, C
from uno.core.errors import InvariantError
from uno.core.packet import ACK, CN, DATA, KIND_NAMES, NACK, TRIM, Packet
from uno.faults.models import REASON_BLOCK, REASON_DOWN, REASON_RANDOM
from uno.metrics.recorder import read_senders
from uno.net.compiled.build_state import build_state
from uno.net.compiled.layout import (
    BAD_BYTES,
    BAD_HELD,
    BAD_QUEUE_SUM,
    ERR_MISROUTED,
    ERR_OUTSTANDING,
    ERR_SEQ,
    FL,
    ING,
    KI,
    N_KINDS,
    NEVER_PS,
    RUN_DONE,
    RUN_ERROR,
    RUN_HEAP,
    RUN_NICPY,
    RUN_PAUSED,
    RUN_POOL,
    RUN_RESUMED,
    D,
    H,
    K,
    N,
    P,
    Q,
    R,
    S,
    pool_columns,
)
from uno.net.compiled.ports import check_ports, port_levels
from uno.net.compiled.views import CompiledPort, KernelNic
from uno.net.dci import FlowQueue
from uno.net.event_port import DATA_PRIORITY
from uno.net.port import DROP_BUFFER
from uno.net.switch import Switch

#: fault drop reasons in the kernel's order (``REASON.down``, ``.random``, ``.block``)
_REASON_NAMES = (REASON_DOWN, REASON_RANDOM, REASON_BLOCK)


def compiled_entry(dispatcher, args):
    """The compiled function ``dispatcher`` runs for ``args`` (Numba's ``entry_point`` of the
    overload of their types), callable without the dispatcher's type resolution on every call:
    ~0.3 µs of the ~0.9 µs a call with four arrays costs, twice per packet the sender hands
    over. The boundary's arguments keep their types (the arrays', Python ints and a bool), so
    the overload stays right; if this Numba keeps no such entry, the dispatcher is returned."""
    try:
        return dispatcher.overloads[tuple(numba.typeof(a) for a in args)].entry_point
    except (AttributeError, KeyError):
        return dispatcher


def loaded_entry(dispatcher, args):
    """:func:`compiled_entry` for ``args``, its overload loaded first (from Numba's cache, or
    compiled) as a call with them would load it."""
    dispatcher.compile(tuple(numba.typeof(a) for a in args))
    return compiled_entry(dispatcher, args)


class CompiledDataplane:
    """The network of one simulation as kernel state; built from a configured Network, whose
    ports it replaces by :class:`CompiledPort` views (same names and statistics)."""

    def __init__(self, engine, network, flows: list, pool_packets: int = 4096,
                 kernel_receivers: bool = True, int_stampers: dict | None = None,
                 pfc: tuple | None = None, kernel_senders: bool = True):  # fmt: skip
        """``flows``: the run's flows by flow id (None: a flow that is not the packets', e.g. the
        hybrid engine's fluid flows). With ``kernel_receivers``
        the kernel answers the data packets of every flow without erasure coding itself; the
        other flows' receivers stay in Python. ``int_stampers``: INT on, the
        :class:`uno.net.int.IntStamper` of each port that writes records, by port name
        (:func:`uno.net.int.int_stampers`); all share one setting. ``kernel_senders``: the
        senders with a compiled form (:func:`uno.net.compiled.support.kernel_sender_supported`)
        whose receiver is the kernel's run in the kernel, with their hosts' NIC turn-taking;
        Python sees such a flow's start and completion. ``pfc``: PFC on, (the
        :class:`uno.net.pfc.PfcIngress` queues, the :class:`uno.net.pfc.PauseLog`) configured
        on the network's event ports: the kernel counts and signals, and its counters are
        copied back to them (:meth:`sync_network`)."""
        self.engine = engine
        self.network = network
        for i, flow in enumerate(flows):
            if flow is not None and flow.flow_id != i:
                raise ValueError("compiled data plane: flow ids must be 0, 1, ... in order")
        self.flows = flows
        for port in network.ports:
            if type(port).__name__ not in ("Port", "EventPort"):
                raise ValueError(
                    f"compiled data plane: port {port.name} is a {type(port).__name__}"
                )
        self._ingresses, self._pause_log = pfc if pfc is not None else ([], None)
        state = build_state(network, flows, kernel_receivers, int_stampers, self._ingresses,
                            kernel_senders)  # fmt: skip
        self.ST, self.F, self.U = state.ST, state.F, state.U
        self._faulty = state.faulty
        self._kernel_rx = state.kernel_rx
        self._ktx = state.ktx
        self._ktx_array = np.asarray(state.ktx, dtype=bool)
        self._kernel_tx = any(state.ktx)
        self.senders_note = state.senders_note
        self._int_max = state.int_max
        self._prow = int(state.starts.ports)  # ports' rows start here in ST
        self._dci = bool(network.dcis)  # DCI switches' elements (uno.net.dci) in the kernel
        self._port_index = {p.name: i for i, p in enumerate(network.ports)}
        self._row_views()
        self._pk_cols = pool_columns(self._int_max)
        self.PK = np.zeros((0, self._pk_cols), dtype=np.int64)
        self.objs: list = []
        self.ST[H.free] = -1
        self._grow(pool_packets)
        self.top = (NEVER_PS, 0)  # the kernel's next event (time, engine eid)
        # the kernels called per packet: through their dispatchers, then the compiled
        # functions themselves (compiled_entry): inject's after its first call, run's and
        # start_flow's once load_kernels has loaded them as the run starts
        self._inject = self._first_inject
        self._run = kernels.run
        self._start_flow = kernels.start_flow
        self.calls = 0  # calls into the kernel: each took one engine eid
        self._hosts = network.hosts
        self._dropped_seen = [0] * N_KINDS
        self._fault_dropped_seen = [0] * (len(_REASON_NAMES) * N_KINDS)
        self._rx_seen = self._tx_seen = self._ack_seen = 0
        self._cn_made_seen = self._cn_taken_seen = 0
        self._trim_seen = self._nack_seen = 0
        self._attach()

    @property
    def kernel_senders(self) -> list[bool]:
        """Per flow id, whether the kernel runs its sender."""
        return list(self._ktx)

    def _row_views(self) -> None:
        """The flows' receiver rows and senders' rows: views of ST."""
        ST, n = self.ST, len(self.flows)
        off = int(ST[H.off_flows])
        self._flow_rows = ST[off : off + n * R.size].reshape(n, R.size)
        off = int(ST[H.off_senders])
        self._snd_rows = ST[off : off + n * S.size].reshape(n, S.size)

    def _attach(self) -> None:
        """Put the port views in place of the network's ports (a host's NIC, its scheduler's
        port, a switch's ports), the kernel's NIC turn-taking at the NICs it schedules, and the
        kernel's start in place of its senders'."""
        network, flows = self.network, self.flows
        self.views = [CompiledPort(self, i, p) for i, p in enumerate(network.ports)]
        for view in self.views:
            owner = view.owner
            if isinstance(owner, Switch):
                owner.ports[owner.ports.index(view.python_port)] = view
                continue
            owner.nic = view
            owner.nic_scheduler.port = view
            if self.ST[self._prow + view.index * P.size + P.flags] & FL.knic:
                owner.nic_scheduler = KernelNic(self, view, owner.host_id)
        network.ports = self.views
        network.port_by_name = {v.name: v for v in self.views}
        network.dataplane = self
        self.engine.attach_dataplane(self)
        kernel_nics = {flow.src for flow, k in zip(flows, self._ktx, strict=True) if k}
        for flow, k in zip(flows, self._ktx, strict=True):
            if flow is None:
                continue
            if k:
                flow.sender.start = functools.partial(self.start_flow, flow.flow_id)
                flow.sender.stop = functools.partial(self.stop_flow, flow.flow_id)
            elif flow.src in kernel_nics:
                flow.sender.use_nic(self._hosts[flow.src].nic_scheduler)

    def _grow(self, extra: int) -> None:
        """Add ``extra`` free rows to the packet pool."""
        old = self.PK
        n = len(old)
        PK = np.zeros((n + extra, self._pk_cols), dtype=np.int64)
        PK[:n] = old
        PK[n:, K.next] = np.arange(n + 1, n + extra + 1)
        PK[n + extra - 1, K.next] = self.ST[H.free]
        self.ST[H.free] = n
        self.ST[H.pool_cap] = n + extra
        self.PK = PK
        self.objs.extend([None] * extra)

    def _grow_heap(self) -> None:
        """Double the event heap: a bigger ST with the heap moved to its end (the old heap's
        cells stay unused); the views of ST are renewed."""
        old = self.ST
        cap = int(old[H.heap_cap])
        new_cap = 2 * cap
        n = len(old)
        ST = np.zeros(n + 3 * new_cap, dtype=np.int64)
        ST[:n] = old
        for k, col in enumerate((H.off_heap_t, H.off_heap_e, H.off_heap_p)):
            at = n + k * new_cap
            ST[at : at + cap] = old[old[col] : old[col] + cap]
            ST[col] = at
        ST[H.heap_cap] = new_cap
        self.ST = ST
        self._row_views()
        for view in self.views:
            view.state_moved()

    def _grew(self, code: int) -> bool:
        """Grow the heap or the pool if ``code`` asks (``RUN_HEAP``, ``RUN_POOL``)."""
        if code == RUN_HEAP:
            self._grow_heap()
        elif code == RUN_POOL:
            self._grow(len(self.PK))
        else:
            return False
        return True

    # ---- the boundary ---------------------------------------------------------------------
    def load_kernels(self) -> None:
        """Load the kernels every run calls (``run``, ``start_flow``) before the run starts,
        so that its engine time is the run's, not that of loading them (a tenth of a second in
        a fresh process): their compiled entries for the types the calls pass (the state
        arrays, Python ints)."""
        state = (self.ST, self.F, self.U, self.PK)
        self._run = loaded_entry(kernels.run, (*state, 0, 0, 0, 0))
        self._start_flow = loaded_entry(kernels.start_flow, (*state, 0, 0, 0))

    def _first_inject(self, *args):
        out = kernels.inject(*args)  # (compiles, or loads from Numba's cache, the overload)
        self._inject = compiled_entry(kernels.inject, args)
        return out

    def stop_flow(self, flow_id: int, _arg=None) -> None:
        """Kernel sender ``flow_id`` stops now (in place of its Python sender's ``stop``): done,
        it sends and hears nothing more."""
        self._snd_rows[flow_id][S.done] = 1

    def start_flow(self, flow_id: int) -> None:
        """Kernel sender ``flow_id`` starts now (in place of its Python sender's ``start``)."""
        engine = self.engine
        while True:
            self.calls += 1
            code, top_t, top_e = self._start_flow(
                self.ST, self.F, self.U, self.PK, flow_id, engine.now, engine.next_eid()
            )
            if not self._grew(code):
                break
        self.top = (top_t, top_e)

    def send(self, port: int, pkt) -> None:
        """Host NIC port ``port`` receives ``pkt`` now."""
        engine = self.engine
        self.calls += 1
        while True:
            slot, top_t, top_e = self._inject(
                self.ST, self.F, self.U, self.PK, port, pkt.kind, pkt.size_bytes, pkt.src,
                pkt.dst, pkt.entropy, pkt.ecn, pkt.flow_id, pkt.seq, pkt.payload_bytes,
                engine.now, engine.next_eid(),
            )  # fmt: skip
            if slot >= 0:
                break
            if slot == -2:
                self._grow_heap()
            else:
                self._grow(len(self.PK))
            self.calls += 1
        self.objs[slot] = pkt
        self.top = (top_t, top_e)
        if self._dci and pkt.kind == ACK:  # C_R, R_credit, R-bar_DQM (uno.cc.mlcc)
            rate = getattr(pkt, "credit_rate_bps", 0)
            if rate:
                row = self.PK[slot]
                row[K.credit] = pkt.credit
                row[K.credit_rate] = rate
                row[K.dqm_rate] = pkt.dqm_rate_bps
        if self._int_max:
            hops = getattr(pkt, "int_hops", None)
            if hops:  # an ACK from a Python receiver echoes its data packet's records
                row = self.PK[slot]
                row[KI.n_records] = len(hops)
                row[KI.size : KI.size + INT_FIELDS * len(hops)] = [
                    x for record in hops for x in record
                ]

    def run(self, lim_t: int, lim_prio: int, lim_eid: int):
        """Run the kernel up to the Python event keyed (lim_t, lim_prio, lim_eid). Returns the
        packet delivered to a host, and the host, or None."""
        engine = self.engine
        self.calls += 1
        host, slot, kind, ecn, now, top_t, top_e = self._run(
            self.ST, self.F, self.U, self.PK, lim_t, lim_prio, lim_eid, engine.next_eid()
        )
        self.top = (top_t, top_e)
        return self.take_result(host, slot, kind, ecn, now)

    def take_result(self, host: int, slot: int, kind: int, ecn: int, now: int):
        """What Python does with the kernel's ``run`` result (host or ``RUN_*`` code, slot,
        kind, ECN, time): the packet delivered to a host, and the host, or None."""
        engine = self.engine
        if host < 0:
            if host == RUN_DONE:
                self._flow_done(slot, now)
            elif host == RUN_PAUSED or host == RUN_RESUMED:
                self._pfc_signalled(slot, host == RUN_RESUMED, now)
            elif host == RUN_NICPY:
                self._python_turns(slot, kind, now)
            elif host == RUN_ERROR:
                self._raise_kernel_error(now)
            else:
                self._grew(host)
            return None
        engine.set_clock(now)
        if kind == CN:  # a congestion notice a switch made in the kernel: no object yet
            row = self.PK[slot].tolist()
            pkt = Packet(CN, row[K.flow], row[K.seq], row[K.bytes], 0, row[K.src], row[K.dst],
                         row[K.entropy], row[K.hkey], row[K.sent])  # fmt: skip
            if self._int_max and row[KI.n_records]:  # a DCI switch's Switch-INT (uno.net.dci)
                pkt.int_hops = self._records(slot)
            return pkt, self._hosts[host]
        pkt = self.objs[slot]
        pkt.ecn = ecn == 1
        if self._int_max:
            if self.PK[slot, KI.n_records]:
                pkt.int_hops = self._records(slot)
        if self._dci and kind == DATA:  # C_D and the per-flow queue left (uno.net.dci)
            pkt.credit = int(self.PK[slot, K.credit])
            pkt.pfq_bytes = int(self.PK[slot, K.pfq_bytes])
        if kind != pkt.kind:  # a switch trimmed it, or the kernel's receiver answered it
            self._follow_kernel(pkt, kind, slot)
        return pkt, self._hosts[host]

    def _records(self, slot: int) -> list:
        """The INT records of the packet in ``slot``, as tuples."""
        n = int(self.PK[slot, KI.n_records])
        flat = self.PK[slot, KI.size : KI.size + INT_FIELDS * n].tolist()
        return [tuple(flat[i : i + INT_FIELDS]) for i in range(0, len(flat), INT_FIELDS)]

    def _follow_kernel(self, pkt, kind: int, slot: int) -> None:
        """Make ``pkt`` what the kernel made its row: a trimmed header (``TRIM``), the kernel
        receiver's ACK, or its NACK of a trimmed copy."""
        if kind == TRIM:
            pkt.kind = TRIM
            pkt.size_bytes = int(self.PK[slot, K.bytes])
            return
        self.flows[pkt.flow_id].receiver.turn_into_ack(pkt)
        if kind == NACK:
            pkt.kind = NACK
            pkt.info = None

    def _python_turns(self, flow_id: int, host: int, now: int) -> None:
        """A NIC wake of ``host`` came to Python sender ``flow_id``'s turn (``RUN_NICPY``):
        it sends (``nic_ready``), then the wake goes on in the kernel
        (:func:`uno.net.compiled.loop.nic_continue`) until it is over, Python senders' turns
        taken here as they come."""
        engine = self.engine
        engine.set_clock(now)
        while flow_id >= 0:
            self.flows[flow_id].sender.nic_ready()
            while True:
                self.calls += 1
                flow_id, top_t, top_e = kernels.nic_continue(
                    self.ST, self.F, self.U, self.PK, host, now, engine.next_eid()
                )
                if not self._grew(flow_id):
                    break
            self.top = (top_t, top_e)

    def nic_waiting(self, host: int) -> bool:
        """Whether a sender waits at ``host``'s NIC, one the kernel schedules."""
        ST = self.ST
        return bool(ST[int(ST[H.off_nics]) + host * N.size + N.head] >= 0)

    def nic_wait(self, flow_id: int) -> None:
        """Python sender ``flow_id`` waits for its turn at a NIC the kernel schedules."""
        engine = self.engine
        while True:
            self.calls += 1
            code, top_t, top_e = kernels.nic_wait(
                self.ST, self.F, self.U, self.PK, flow_id, engine.now, engine.next_eid()
            )
            if not self._grew(code):
                break
        self.top = (top_t, top_e)

    def _flow_done(self, flow_id: int, now: int) -> None:
        """Kernel sender ``flow_id`` received its last ACK at ``now``: the flow completes
        (:meth:`uno.transport.sender.Sender._finish`: its finish time, the simulation hears)."""
        self.engine.set_clock(now)
        flow = self.flows[flow_id]
        self._store_sender(flow_id)
        flow.finish_ps = now
        flow.sender.on_complete(flow)

    def _pfc_signalled(self, port: int, resumed: bool, now: int) -> None:
        """A PAUSE or RESUME changed port ``port`` at ``now``: log the interval and, for a
        resumed NIC, wake its waiting senders (:meth:`uno.net.event_port.EventPort.resume`)."""
        self.engine.set_clock(now)
        view = self.views[port]
        if not resumed:
            self._pause_log.paused(view, DATA_PRIORITY, now)
            return
        self._pause_log.resumed(view, DATA_PRIORITY, now)
        wake = getattr(view.owner, "nic_resumed", None)
        if wake is not None and not self.ST[self._prow + port * P.size + P.flags] & FL.knic:
            wake()  # (the kernel woke the senders at the NICs it schedules)

    def _raise_kernel_error(self, now: int) -> None:
        err = int(self.ST[H.error])
        arg = int(self.ST[H.error_arg])
        if err == ERR_OUTSTANDING:
            raise InvariantError(
                f"flow {arg}: all packets acked at {now} ps but some still outstanding"
            )
        row = self.PK[arg]
        flow_id = int(row[K.flow])
        where = (
            f"at {now} ps: {KIND_NAMES[int(row[K.kind])]} packet of flow {flow_id}, seq "
            f"{int(row[K.seq])}, src {int(row[K.src])}, dst {int(row[K.dst])}"
        )
        if err == ERR_MISROUTED:
            raise InvariantError(f"compiled data plane: misrouted {where}")
        if err == ERR_SEQ:
            raise InvariantError(f"flow {flow_id}: received seq outside the flow {where}")
        raise InvariantError(
            f"flow {flow_id}: complete with a byte count other than its size {where}"
        )

    @property
    def events_scheduled(self) -> int:
        """Events the kernel scheduled (each call also took one engine eid, not an event)."""
        return int(self.ST[H.pushes]) - self.calls

    # ---- accounting -----------------------------------------------------------------------
    def sync(self) -> None:
        """Bring the network's counters and the kernel receivers' and senders' Python objects
        up to date."""
        self.sync_network()
        self.sync_receivers()
        self.sync_senders()
        self.sync_dci()

    def sender_counters(self, flow_ids: list, flows: list) -> tuple[list, list, list, list, list]:
        """What a sampler reads of the flows ``flow_ids`` (their Flow objects ``flows``): bytes
        sent, bytes acknowledged, window (bytes), bytes in flight and whether each is done
        (:attr:`uno.metrics.recorder.Recorder.read_flows`), a list entry per flow: the
        kernel's senders' from its arrays in one gather (their Python objects are left as
        they are), the others' from their objects."""
        if not flow_ids:
            return [], [], [], [], []
        ids = np.asarray(flow_ids, dtype=np.int64)
        rows = self._snd_rows[ids]
        cwnd = self.F[rows[:, S.frow], C.cwnd]
        out = (
            rows[:, S.sent_bytes].tolist(),
            rows[:, S.acked_bytes].tolist(),
            cwnd.tolist(),
            rows[:, S.inflight].tolist(),
            (rows[:, S.done] != 0).tolist(),
        )
        in_python = np.flatnonzero(~self._ktx_array[ids]).tolist()
        if in_python:
            own = read_senders([flow_ids[i] for i in in_python], [flows[i] for i in in_python])
            for column, values in zip(out, own, strict=True):
                for i, value in zip(in_python, values, strict=True):
                    column[i] = value
        return out

    def busy_levels(self, ports: list):
        """A function of the time (ps) that returns (port, queued bytes, phantom level) for
        those of ``ports`` (views) that hold either then, as their views read them, in one
        call into the kernel (:func:`uno.net.compiled.ports.port_levels`)."""
        index = np.array([p.index for p in ports], dtype=np.int64)
        phantom = np.array([p.phantom is not None for p in ports], dtype=np.int64)
        held = np.zeros(len(ports), dtype=np.int64)
        queued = np.zeros(len(ports), dtype=np.int64)
        level = np.zeros(len(ports))

        def levels(now_ps: int) -> list[tuple]:
            # (ST and F read anew: a grown state replaces them)
            n = port_levels(self.ST, self.F, self.U, self.PK, index, now_ps, phantom, held,
                            queued, level)  # fmt: skip
            kept = (held[:n].tolist(), queued[:n].tolist(), level[:n].tolist())
            return [(ports[j], q, ph) for j, q, ph in zip(*kept, strict=True)]

        return levels

    def sync_dci(self) -> None:
        """Copy the DCI switches' elements' state (queued bytes and packets, peak, each flow's
        queue) and their taps' counters to their Python objects (uno.net.dci)."""
        net = self.network
        if not net.dcis:
            return
        ST = self.ST
        at = int(ST[H.off_dci])
        for i, el in enumerate(net.dcis):
            row = ST[at + i * D.size : at + (i + 1) * D.size].tolist()
            el.bytes, el.packets, el.max_bytes = row[D.bytes], row[D.packets], row[D.max_bytes]
        q_rows = ST[int(ST[H.off_pfq]) : int(ST[H.off_pfq]) + len(self.flows) * Q.size]
        for f, row in enumerate(q_rows.reshape(-1, Q.size).tolist()):
            if row[Q.dci] >= 0:
                q = net.dcis[row[Q.dci]].queues.setdefault(f, FlowQueue(row[Q.rate]))
                q.bytes, q.rate_bps, q.credit = row[Q.bytes], row[Q.rate], row[Q.credit]
        for name, tap in net.dci_taps.items():
            pb = self._prow + self._port_index[name] * P.size
            tap.notices = int(ST[pb + P.dci_notices])
            tap.pfq_packets = int(ST[pb + P.pfq_packets])
            tap.pfq_drops = int(ST[pb + P.pfq_drops])

    def sync_senders(self) -> None:
        """Copy the kernel senders' counters and laws' state to their Python
        :class:`uno.transport.sender.Sender` and law objects (what tables and checks read)."""
        if self._kernel_tx:
            for f, in_kernel in enumerate(self._ktx):
                if in_kernel:
                    self._store_sender(f)

    def _store_sender(self, f: int) -> None:
        s = self.flows[f].sender
        row = self._snd_rows[f].tolist()
        s.next_seq = row[S.next_seq]
        s.inflight_bytes = row[S.inflight]
        s.n_acked = row[S.n_acked]
        s.sent_bytes = row[S.sent_bytes]
        s.sent_packets = row[S.sent_pkts]
        s.acked_bytes = row[S.acked_bytes]
        s.retransmits = row[S.retx]
        s.timeouts = row[S.timeouts]
        s.lost_packets = row[S.lost]
        s.dup_acks = row[S.dup]
        s.ecn_acks = row[S.ecn_acks]
        s.fast_retransmits = row[S.fast_retx]
        s.notices = row[S.notices]
        s.trims = row[S.trims]
        s.done = bool(row[S.done])
        s.rto_ps = row[S.rto]
        s.cc.state[:] = self.F[row[S.frow], : len(s.cc.state)]
        s.cc.state_written()
        s.restore_send_state(bool(row[S.armed]), row[S.next_send], row[S.wake] - 1)

    def sync_receivers(self) -> None:
        """Copy the kernel receivers' state (counts, completion, the sequence numbers got) to
        their :class:`uno.transport.receiver.Receiver` objects."""
        rows = self._flow_rows
        for i, flow in enumerate(self.flows):
            if not self._kernel_rx[i]:
                continue
            row = rows[i]
            rx = flow.receiver
            rx.n_got = int(row[R.n_got])
            rx.bytes_received = int(row[R.bytes])
            rx.dup_packets = int(row[R.dup])
            rx.ecn_packets = int(row[R.ecn])
            rx.complete_ps = int(row[R.complete]) if row[R.complete] >= 0 else None
            rx.cnps_sent = int(row[R.cnps])
            rx.trimmed = int(row[R.trimmed])
            rx.last_cnp_ps = int(row[R.last_cnp]) if row[R.last_cnp] >= 0 else None
            rx.next_ack_path = int(row[R.next_ack_path])
            off = int(row[R.got_off])
            words = self.ST[off : off + (flow.n_packets + 63) // 64]
            bits = np.unpackbits(words.view(np.uint8), bitorder="little")[: flow.n_packets]
            rx.got = bytearray(bits.tobytes())

    def rtt_counts(self) -> np.ndarray | None:
        """The kernel senders' RTT bins (uno.metrics.rtts), None when not counted."""
        n = int(self.ST[H.rtt_bins])
        if not n:
            return None
        at = int(self.ST[H.off_rtt])
        return self.ST[at : at + n].copy()

    def progress_view(self) -> tuple[int, np.ndarray]:
        """The time of the kernel's last event, and each flow's bytes received so far (the
        kernel's count for its receivers, the Python receiver's own for the others). Copies
        nothing to the Python objects: the progress watcher reads it from its thread while the
        run goes on."""
        got = self._flow_rows[:, R.bytes].copy()
        for i, kernel in enumerate(self._kernel_rx):
            if not kernel and self.flows[i] is not None:
                got[i] = self.flows[i].receiver.bytes_received
        return int(self.ST[H.now]), got

    def sync_network(self) -> None:
        """Bring the network's packet counters up to the kernel's: its drops, and the data
        packets its receivers took and answered with ACKs; the PFC ingress queues' and the
        fault models' counters."""
        net = self.network
        ST = self.ST
        tx = int(ST[H.tx_data])  # data the kernel's senders put into their NICs
        if tx != self._tx_seen:
            net.injected[DATA] += tx - self._tx_seen
            net.in_flight += tx - self._tx_seen
            self._tx_seen = tx
        acks = int(ST[H.rx_ack])  # ACKs the kernel's senders took at their hosts
        if acks != self._ack_seen:
            net.delivered[ACK] += acks - self._ack_seen
            net.in_flight -= acks - self._ack_seen
            self._ack_seen = acks
        made, taken = int(ST[H.tx_cn]), int(ST[H.rx_cn])  # congestion notices (uno.net.qcn)
        if made != self._cn_made_seen or taken != self._cn_taken_seen:
            net.injected[CN] += made - self._cn_made_seen
            net.delivered[CN] += taken - self._cn_taken_seen
            net.in_flight += made - self._cn_made_seen - (taken - self._cn_taken_seen)
            self._cn_made_seen, self._cn_taken_seen = made, taken
        rx = int(ST[H.rx_data])
        new_rx = rx - self._rx_seen
        if new_rx:
            net.delivered[DATA] += new_rx
            net.injected[ACK] += new_rx
            self._rx_seen = rx
        # trimmed packets the kernel's receivers answered with NACKs, NACKs its senders took
        trims, nacks = int(ST[H.rx_trim]), int(ST[H.rx_nack])
        if trims != self._trim_seen or nacks != self._nack_seen:
            net.delivered[TRIM] += trims - self._trim_seen
            net.injected[NACK] += trims - self._trim_seen
            net.delivered[NACK] += nacks - self._nack_seen
            net.in_flight -= nacks - self._nack_seen
            self._trim_seen, self._nack_seen = trims, nacks
        for kind in range(N_KINDS):
            n = int(ST[H.drops_data + kind])
            new = n - self._dropped_seen[kind]
            if new:
                net.dropped[(DROP_BUFFER, KIND_NAMES[kind])] += new
                net.in_flight -= new
                self._dropped_seen[kind] = n
        if self._ingresses:
            off = int(ST[H.off_ingress])
            rows = ST[off : off + len(self._ingresses) * ING.size].reshape(-1, ING.size)
            for ing, row in zip(self._ingresses, rows, strict=True):
                ing.bytes = int(row[ING.bytes])
                ing.max_bytes = int(row[ING.max_bytes])
                ing.pausing = bool(row[ING.pausing])
                ing.pauses_sent = int(row[ING.sent])
                ing.violations = int(row[ING.violations])
        if self._faulty:
            self._sync_faults()

    def _sync_faults(self) -> None:
        """The fault drops by reason and kind, each faulty link's drops and each block model's
        counters."""
        net = self.network
        ST = self.ST
        for i in range(len(self._fault_dropped_seen)):
            n = int(ST[H.fault_drops_down_data + i])
            new = n - self._fault_dropped_seen[i]
            if new:
                net.dropped[(_REASON_NAMES[i // N_KINDS], KIND_NAMES[i % N_KINDS])] += new
                net.in_flight -= new
                self._fault_dropped_seen[i] = n
        for port, faulty_link, block_counters in self._faulty:
            faulty_link.drops = int(ST[self._prow + port * P.size + P.flt_drops])
            for block, off in block_counters:
                block.blocks = int(ST[off])
                counts = ST[off + 1 : off + 2 + len(block.cumulative)]
                block.losses_per_block = [int(c) for c in counts]

    def packets_in_network(self) -> int:
        """Packets in the pool: in queues or on links (checked against the ports' counts)."""
        return int(self.ST[H.in_pool])

    def check_ports(self) -> None:
        """Raise :class:`InvariantError` naming the first port whose kernel state is
        inconsistent (:func:`uno.net.compiled.ports.check_ports`: queued bytes negative, over
        the buffer or not the sum of its packets; packets held not those in its FIFOs)."""
        port, bad = check_ports(self.ST, self.PK)
        if port < 0:
            return
        view = self.views[port]
        what = {
            BAD_BYTES: f"{view.bytes} B queued, outside [0, {view.buffer_bytes}]",
            BAD_QUEUE_SUM: f"{view.bytes} B queued, not the sum of its queued packets' sizes",
            BAD_HELD: f"holds {view.packets_held()} packets by its count, not what its FIFOs hold",
        }[int(bad)]
        raise InvariantError(f"compiled data plane: port {view.name}: {what}")

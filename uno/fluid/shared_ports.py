"""The ports of the hybrid engine's packets on the links they share with fluid flows, on either
data plane: :class:`PortLinks` couples the Python data plane's ports (:class:`HybridPort`),
:class:`KernelLinks` the compiled one's (:mod:`uno.net.compiled`, the same rules compiled:
:mod:`uno.net.shared_link`). Both give the hybrid (:mod:`uno.fluid.hybrid`) the same two
things at each fluid step: the bytes each port took since the last (in the order the ports first
took a packet), and, after the step, the fluid model's state for the ports to read. Sizes in
bytes, times in ps."""

from __future__ import annotations

import numpy as np

from uno.core.packet import DATA
from uno.core.units import BITS_PER_BYTE, PS_PER_S
from uno.fluid import kernels as K
from uno.fluid.folding import members
from uno.fluid.hybrid_loop import copy_link_state, fluid_step, heap_room, take_touched
from uno.fluid.hybrid_pfc import fluid_in_queues
from uno.net import shared_link
from uno.net.compiled.layout import FL, PF, H, P
from uno.net.compiled.pcg import pcg64_words
from uno.net.compiled.views import KernelNic
from uno.net.overflow import ADMIT, verdict
from uno.net.phantom import phantom_raised
from uno.net.port import Port

# the shared link's rules, interpreted (a compiled call per packet costs more than the rule)
fluid_on_link = shared_link.fluid_on_link.py_func
fluid_fills_buffer = shared_link.fluid_fills_buffer.py_func
squeezed_out = shared_link.squeezed_out.py_func
packet_loss = shared_link.packet_loss.py_func
behind_fluid_ps = shared_link.behind_fluid_ps.py_func
nic_fluid_gap_ps = shared_link.nic_fluid_gap_ps.py_func
shared_queue_level = shared_link.shared_queue_level.py_func
fluid_sent_bytes = shared_link.fluid_sent_bytes.py_func
shared_int_record = shared_link.shared_int_record.py_func


class HybridPort(Port):
    """A port of the Python data plane whose link the fluid flows share
    (:mod:`uno.fluid.hybrid`)."""

    __slots__ = ("_link", "_coupler", "_stamp", "_accounted", "_fluid_q", "_link_q",
                 "_fluid_arr", "_fluid_ph", "_fluid_loss", "_packet_loss", "_drop_draw", "_full_bytes",
                 "_ps_per_byte", "_nic", "_fluid_senders", "_bytes_per_ps", "_ls",
                 "int_stamper")  # fmt: skip

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.int_stamper = None  # uno.net.int.IntStamper when this port writes INT records

    def couple(self, coupler: PortLinks, link: int, nic: bool) -> None:
        """Read the fluid state of routing edge ``link`` from ``coupler``'s fluid links;
        ``nic``: the link is a host's NIC (shared round robin)."""
        ls = coupler.ls
        self._nic = nic
        self._fluid_senders = ls[:, K.LS_NIC_SENDERS]
        self._bytes_per_ps = self.rate_bps / (BITS_PER_BYTE * PS_PER_S)
        self._link = link
        self._coupler = coupler
        self._ls = ls
        self._stamp = -1
        self._accounted = 0
        self._fluid_q = ls[:, K.LS_QF]
        self._link_q = ls[:, K.LS_Q]
        self._fluid_arr = ls[:, K.LS_ARR]
        self._fluid_ph = ls[:, K.LS_PH]
        self._fluid_loss = ls[:, K.LS_LOSS]
        self._packet_loss = ls[:, K.LS_PKT_LOSS]
        # its own stream, so the drops leave the port's marking draws as they were
        self._drop_draw = coupler.rng.buffered(f"hybrid_drop/{self.name}")
        self._full_bytes = coupler.full_bytes
        self._ps_per_byte = BITS_PER_BYTE * PS_PER_S / self.rate_bps

    def see_no_fluid(self, zeros: np.ndarray) -> None:
        """From now on read the fluid flows' part of every link as ``zeros`` (a row per link):
        no fluid bytes held, arriving or lost, no phantom level (:meth:`PortLinks.retire`)."""
        self._fluid_q = self._link_q = self._fluid_arr = self._fluid_ph = zeros
        self._fluid_loss = self._packet_loss = self._fluid_senders = zeros

    def receive(self, pkt) -> None:
        if pkt.kind and self.control_lane is not None:
            Port.receive(self, pkt)
            return
        if self.int_stamper is not None:  # (Port.receive settles without stamping)
            self._settle(self._engine._now)
        coupler = self._coupler
        if self._stamp != coupler.epoch:  # first bytes since the coupler last looked
            self._stamp = coupler.epoch
            coupler.touched.append(self)
        link = self._link
        if self._nic:
            self._round_robin(pkt, link)
            return
        fluid_bytes = float(self._fluid_q[link])
        if fluid_on_link(fluid_bytes, self._fluid_arr[link]):
            now = self._engine._now
            self._settle(now)
            size = pkt.size_bytes
            policy = self.overflow_policy
            outcome = verdict(policy, self.bytes, size, self.buffer_bytes)
            if (
                outcome == ADMIT
                and fluid_fills_buffer(self.bytes, fluid_bytes, size, self.buffer_bytes)
                and squeezed_out(self._drop_draw.next(), self._full_bytes,
                                 self._packet_loss_at(link), size, pkt.kind == DATA)
            ):  # fmt: skip
                outcome = policy
            if outcome != ADMIT:
                self.arrivals += 1
                if self._overflow(pkt, now, outcome):  # trimmed: its header goes on
                    self.control_lane.receive(pkt)
                return
            behind = behind_fluid_ps(now, float(self._link_q[link]), self._ps_per_byte)
            if behind > self._busy_until_ps:
                self._busy_until_ps = behind
        Port.receive(self, pkt)

    def _notify_source(self, pkt, now: int, queue_bytes: int) -> None:
        """A congestion point on a link the fluid flows hold or send bytes on samples the
        link's level (:func:`uno.net.shared_link.shared_queue_level`, as RED reads it), in
        whole bytes."""
        link = self._link
        fluid_bytes = float(self._fluid_q[link])
        if not self._nic and fluid_on_link(fluid_bytes, self._fluid_arr[link]):
            queue_bytes = int(
                shared_queue_level(queue_bytes, fluid_bytes, float(self._link_q[link]))
            )
        Port._notify_source(self, pkt, now, queue_bytes)

    def _packet_loss_at(self, link: int) -> float:
        """The share of a packet's arrivals the full fluid link drops
        (:func:`uno.net.shared_link.packet_loss`)."""
        return packet_loss(float(self._fluid_loss[link]), float(self._packet_loss[link]))

    def _round_robin(self, pkt, link: int) -> None:
        """A host's NIC: ``pkt`` goes as in the packet engine, then, after a data packet,
        the line carries the fluid flows' bytes sent in between: their share ``r`` of the line
        in the fluid step makes r / (1 - r) of the packet's size, and the round robin at most
        a packet's worth of each fluid flow with bytes to send. (ACKs join the NIC's queue
        when they are made, not a turn: uno/net/host.py.)"""
        accepted = self.enqueued_bytes
        Port.receive(self, pkt)
        if pkt.kind != DATA or self.enqueued_bytes == accepted:
            return
        self._busy_until_ps += nic_fluid_gap_ps(
            pkt.size_bytes, float(self._fluid_arr[link]), self._bytes_per_ps,
            float(self._fluid_senders[link]), self._ps_per_byte,
        )  # fmt: skip

    def _decide_mark(self, p, remaining: int) -> None:
        if self._nic:
            Port._decide_mark(self, p, remaining)  # (its own packets only: see receive)
            return
        link = self._link
        fluid_bytes = float(self._fluid_q[link])
        if not fluid_on_link(fluid_bytes, self._fluid_arr[link]):
            Port._decide_mark(self, p, remaining)  # no fluid on this link
            return
        level = shared_queue_level(remaining, fluid_bytes, float(self._link_q[link]))
        mark = False
        if self._mark_phantom:
            ph = self.phantom
            own = ph.level_at(p.dep_ps)
            shared = float(self._fluid_ph[link])
            mark = ph.red.decide(shared if shared > own else own)
        if not mark and self._mark_physical:
            mark = level > self.red.kmin_bytes and self.red.decide(level)
        if mark:
            p.ecn = True
            self.ecn_marks += 1

    def _settle(self, now: int) -> None:
        """:meth:`Port._settle`, each packet that left stamped after its ECN decision."""
        if self.int_stamper is None:
            Port._settle(self, now)
            return
        fifo = self._fifo
        i = self._qhead
        while i < len(fifo) and fifo[i].dep_ps <= now:
            self._settle_head(fifo[i])
            i += 1

    def _deliver(self, _arg=None) -> None:
        if self.int_stamper is not None and self._qhead == self._head:
            self._settle_head(self._fifo[self._head])  # (not settled by a later arrival)
        Port._deliver(self, _arg)

    def _settle_head(self, p) -> None:
        """Settle the oldest queued packet ``p``, which has left: its ECN decision, then its
        INT record (:func:`uno.net.shared_link.shared_int_record`: on a link the fluid flows
        share, their bytes count too)."""
        self._qhead += 1
        remaining = self.bytes - p.size_bytes
        self.bytes = remaining
        if self._marking and p.kind == DATA and not p.ecn:
            self._decide_mark(p, remaining)
        if p.kind != DATA:
            return
        sent = self.enqueued_bytes - remaining
        qlen = remaining
        if not self._nic:
            ls, link = self._ls, self._link
            fluid_sent = fluid_sent_bytes(
                float(ls[link, K.LS_TXF_BEFORE]), float(ls[link, K.LS_TXF]),
                float(ls[link, K.LS_TX_END]),
                float(ls[link, K.LS_TX_END] - ls[link, K.LS_TX_AT]), p.dep_ps,
            )  # fmt: skip
            fluid_bytes = float(self._fluid_q[link])
            qlen, sent = shared_int_record(
                remaining, sent, fluid_on_link(fluid_bytes, self._fluid_arr[link]),
                fluid_bytes, float(self._link_q[link]), fluid_sent,
            )  # fmt: skip
        self.int_stamper.stamp(p, p.dep_ps, qlen, sent, self.rate_bps)

    def take_step_bytes(self) -> int:
        """Bytes accepted since the last call."""
        new = self.enqueued_bytes - self._accounted
        self._accounted = self.enqueued_bytes
        return new


class PortLinks:
    """The hybrid's coupling with the Python data plane: every port a :class:`HybridPort`
    reading the fluid links ``ls`` (rows: the routing edges, the ports' order) as they are.
    ``nic_schedulers``: each host NIC's link -> its turn-taking; ``reached``: per link, whether
    a fluid flow can reach it (:func:`uno.fluid.links.fold_packet_bytes`)."""

    def __init__(self, ports: list, ls: np.ndarray, nic_schedulers: dict, rng, full_bytes: float,
                 reached: np.ndarray, link_rep: np.ndarray):  # fmt: skip
        self.ls = ls
        self.reached = reached
        self.link_rep = link_rep
        self.rng = rng
        self.full_bytes = full_bytes
        self.touched: list[HybridPort] = []  # ports that took bytes in this epoch
        self.epoch = 0
        self._schedulers = nic_schedulers
        self._nic_links = np.fromiter(nic_schedulers, dtype=np.int64, count=len(nic_schedulers))
        self._ports = ports
        for e, port in enumerate(ports):  # (a folded link's port reads its group's row)
            port.couple(self, int(link_rep[e]), e in nic_schedulers)

    def queues_hold_fluid(self, pfc: np.ndarray) -> bool:
        """(:meth:`KernelLinks.queues_hold_fluid`: never, as the Python data plane's hybrid
        has no PFC ingress queues shared with the fluid bytes.)"""
        return False

    def retire(self, now_ps: int) -> None:
        """The fluid model is done at ``now_ps`` (:func:`uno.fluid.hybrid_loop.fluid_done`):
        every port reads no fluid bytes from then on, and is the packet engine's. A port
        whose packets still read the fluid model's phantom level (its link holds a sliver of
        fluid bytes, :func:`uno.net.shared_link.fluid_on_link`) takes it where it is higher
        than its own (it counts the fluid flows' bytes, which the port's own never saw), and
        drains from it."""
        zeros = np.zeros(len(self.ls))
        for port in self._ports:
            link = port._link
            if (
                not port._nic
                and port.phantom is not None
                and fluid_on_link(float(port._fluid_q[link]), float(port._fluid_arr[link]))
            ):
                port.phantom.raise_to(now_ps, float(port._fluid_ph[link]))
            port.see_no_fluid(zeros)

    def _take_touched(self) -> tuple[np.ndarray, np.ndarray]:
        """The ports (links) that took a packet since the last call, in the order of their
        first, and the bytes each accepted; a new epoch starts."""
        touched = self.touched
        self.touched = []
        self.epoch += 1
        links = np.fromiter((p._link for p in touched), dtype=np.int64, count=len(touched))
        nbytes = np.fromiter(
            (p.take_step_bytes() for p in touched), dtype=np.float64, count=len(touched)
        )
        return links, nbytes

    def step(self, fluid, k: int) -> None:
        """Fluid step ``k`` of ``fluid`` (:class:`uno.fluid.engine.FluidSimulation`): the
        packets' bytes of the last step in (:func:`uno.fluid.links.fold_packet_bytes`), then
        the step (the ports read its state as it is)."""
        links, nbytes = self._take_touched()
        schedulers = self._schedulers
        waiting = np.fromiter(
            (
                -1 if link not in schedulers else int(schedulers[link].waiting_senders() > 0)
                for link in links.tolist()
            ),
            dtype=np.int64,
            count=len(links),
        )
        K.fold_packet_bytes(fluid.ls, fluid.busy, fluid.counters, links, nbytes, waiting,
                            self._nic_links, self.reached, self.link_rep, fluid.dt_ps)  # fmt: skip
        fluid.advance(k, k + 1)

    def forget(self) -> None:
        """Drop the packets' bytes since the last step from the account."""
        self._take_touched()


class KernelLinks:
    """The hybrid's coupling with the compiled data plane ``dataplane``: every port's row says
    whether its link is a host's NIC (one of ``nic_schedulers``' links) or a link both kinds of
    bytes queue on, its drops by the fluid bytes draw from a stream of its own (the Python
    port's), and after each fluid step the fluid links' state ``ls`` is copied into its floats
    (:mod:`uno.fluid.hybrid_loop`). ``coupling`` is what the kernels take of it; ``reached``
    as :class:`PortLinks`'; ``pfc_rows``: the fluid's PFC ingress rows the packets' kernel
    decides for (:func:`uno.fluid.hybrid_pfc.shared_rows`)."""

    def __init__(self, dataplane, ls: np.ndarray, nic_schedulers: dict, rng, full_bytes: float,
                 reached: np.ndarray, link_rep: np.ndarray, pfc_rows: np.ndarray):  # fmt: skip
        self._dp = dataplane
        n = len(dataplane.views)
        ST = dataplane.ST
        at = int(ST[H.off_ports])
        rows = ST[at : at + n * P.size].reshape(n, P.size)
        nic_links = np.fromiter(nic_schedulers, dtype=np.int64, count=len(nic_schedulers))
        rows[:, P.shared] = shared_link.SHARED_LINK
        rows[nic_links, P.shared] = shared_link.SHARED_NIC
        words: list[int] = []
        base = len(dataplane.U)
        for i, view in enumerate(dataplane.views):
            rows[i, P.sh_rng] = base + len(words)
            words.extend(pcg64_words(rng.buffered(f"hybrid_drop/{view.name}")))
        dataplane.U = np.concatenate([dataplane.U, np.array(words, dtype=np.uint64)])
        rate_bps = np.array([v.rate_bps for v in dataplane.views], dtype=np.float64)
        F = dataplane.F
        F[:n, PF.sh_ps_per_byte] = BITS_PER_BYTE * PS_PER_S / rate_bps
        F[:n, PF.sh_bytes_per_ps] = rate_bps / (BITS_PER_BYTE * PS_PER_S)
        F[:n, PF.sh_full_bytes] = full_bytes
        copy_link_state(F, ls, n, link_rep)
        # the hosts whose NIC turn-taking is Python's (no kernel sender there) and that have
        # packet senders: whether one waits is copied in before each step
        python_senders = {
            f.src for f, k in zip(dataplane.flows, dataplane.kernel_senders, strict=True)
            if f is not None and not k
        }  # fmt: skip
        self._python_nics = []
        for link, sched in nic_schedulers.items():
            host = int(rows[link, P.host])
            if host in python_senders and not isinstance(sched, KernelNic):
                self._python_nics.append((host, sched))
        n_hosts = int(rows[:, P.host].max()) + 1
        self.coupling = (
            np.zeros(n, dtype=np.int64),  # bytes each port had accepted
            np.zeros(n_hosts, dtype=np.int64),  # Python senders waiting, per host
            nic_links,
            np.zeros(n, dtype=np.int64),  # (scratch: ports, bytes, waiting)
            np.zeros(n, dtype=np.float64),
            np.zeros(n, dtype=np.int64),
            np.zeros(len(ls), dtype=np.int64),  # (scratch: the links busy before a step)
            reached,
            link_rep,
            *members(link_rep),
            pfc_rows,
        )

    def queues_hold_fluid(self, pfc: np.ndarray) -> bool:
        """Whether a PFC ingress queue the fluid bytes share with the packets counts any in its
        level (:func:`uno.fluid.hybrid_pfc.fluid_in_queues`; ``pfc``: the fluid's rows)."""
        rows = self.coupling[11]
        return len(rows) > 0 and fluid_in_queues(self._dp.ST, pfc, rows)

    def retire(self, now_ps: int) -> None:
        """(:meth:`PortLinks.retire`: the phantom levels taken over, the ports' floats of the
        fluid flows' part zeroed; the fluid bytes sent stay, as INT records count them.)"""
        F, n, ST = self._dp.F, len(self._dp.views), self._dp.ST
        at = int(ST[H.off_ports])
        rows = ST[at : at + n * P.size].reshape(n, P.size)
        shared = rows[:, P.shared] == shared_link.SHARED_LINK
        phantom = (rows[:, P.flags] & FL.phantom) != 0
        for p in np.flatnonzero(shared & phantom & (F[:n, PF.sh_phantom] > 0.0)).tolist():
            if not fluid_on_link(F[p, PF.sh_fluid_q], F[p, PF.sh_rate]):
                continue
            F[p, PF.ph_level] = phantom_raised(F[p, PF.ph_level], now_ps - rows[p, P.ph_last],
                                               F[p, PF.ph_drain], F[p, PF.sh_phantom],
                                               F[p, PF.ph_size])  # fmt: skip
            rows[p, P.ph_last] = now_ps
        for col in (PF.sh_fluid_q, PF.sh_link_q, PF.sh_rate, PF.sh_phantom, PF.sh_loss,
                    PF.sh_senders):  # fmt: skip
            F[:n, col] = 0.0

    def make_heap_room(self) -> None:
        """Grow the kernel's event heap until a fluid step's PFC signals fit
        (:func:`uno.fluid.hybrid_loop.heap_room`)."""
        ST = self._dp.ST
        need = heap_room(len(self.coupling[11]))
        while int(ST[H.heap_cap]) - int(ST[H.heap_n]) < need:
            self._dp._grow_heap()
            ST = self._dp.ST

    @property
    def kernel_driven(self) -> bool:
        """Whether no NIC turn-taking is Python's: the steps may run inside the kernel
        (:func:`uno.fluid.hybrid_loop.hybrid_steps`)."""
        return not self._python_nics

    def step(self, fluid, k: int) -> None:
        """(:meth:`PortLinks.step`, the ports' floats set after the step:
        :func:`uno.fluid.hybrid_loop.fluid_step`.)"""
        py_waiting = self.coupling[1]
        for host, sched in self._python_nics:
            py_waiting[host] = sched.waiting_senders()
        self.make_heap_room()
        dp = self._dp
        eid = dp.engine.next_eid() if len(self.coupling[11]) else -1
        fluid_step(dp.ST, dp.F, k, fluid.dt_ps, self.coupling, fluid.kernel_args()[1:], eid)

    def forget(self) -> None:
        """(:meth:`PortLinks.forget`.)"""
        c = self.coupling
        take_touched(self._dp.ST, c[0], c[1], c[3], c[4], c[5])

"""The DCI switches' element (``switch.dci``): what MLCC (Zhao et al., ICPP 2025, §3.2) has the
switches where a datacenter meets the long-distance links do, usable by any scheme.

* **Sender side** (the near-source loop): a cross-DC data packet entering the DCI switch of its
  source's datacenter has its INT records read and cleared; the switch sends them to the source
  in a Switch-INT notice (a congestion notice, ``CN``, of level 0 that carries the records and
  the data packet's send time), at most one per flow per ``notice_interval_us`` (0: one per
  packet). The sender's law hears it through ``on_report``.
* **Receiver side** (the receiver-driven loop): a cross-DC data packet entering the DCI switch
  of its destination's datacenter has its INT records erased (the switches of the receiver's
  datacenter, the DCI switch's egress port among them, write new ones) and joins its flow's
  per-flow queue (PFQ), created on the flow's first packet. A PFQ releases its head packet into
  the switch's forwarding, stamped with the flow's credit C_D (-1 before any) and the bytes the
  PFQ still holds, and the next one a serialisation time at the flow's credited rate later
  (Algorithm 1's dequeue rate R_credit; a rate change applies from the next packet on). The
  rate and C_D come from the flow's ACKs as they pass the switch (the receiver's C_R and
  R_credit, :data:`uno.cc.mlcc.RECEIVER`); until the first, a new PFQ drains at
  ``initial_rate_gbps`` (null: the receiving host's line rate). The PFQs share the switch's
  buffer (its largest port buffer): a packet that does not fit is dropped (``buffer_full``).

Counters, per port a packet entered a DCI switch through (columns of the ports table):
Switch-INT notices sent (``dci_notices``), packets that went through a PFQ (``pfq_packets``) and
PFQ drops (``pfq_drops``); per DCI switch (the summary's ``dci``): the most bytes its PFQs held
together and the packets they hold at the end.

Times are integer picoseconds, sizes bytes, rates bit/s.
"""

from __future__ import annotations

from collections import deque

from uno.core.errors import ConfigError
from uno.core.packet import ACK, CN, DATA, Packet
from uno.core.units import gbps_to_bps, us_to_ps
from uno.net.hashing import flow_hash_key
from uno.net.port import DROP_BUFFER


def pfq_gap_ps(size_bytes: int, rate_bps: int) -> int:
    """The time a PFQ's packet of ``size_bytes`` takes at ``rate_bps``, rounded up (ps)."""
    return -(-size_bytes * 8 * 10**12 // rate_bps)


class FlowQueue:
    """One flow's PFQ at a receiver-side DCI switch."""

    __slots__ = ("packets", "bytes", "rate_bps", "credit", "next_ps", "pending")

    def __init__(self, rate_bps: int):
        self.packets: deque = deque()
        self.bytes = 0
        self.rate_bps = rate_bps
        self.credit = -1  # C_D: none until an ACK brings the receiver's C_R
        self.next_ps = 0  # the earliest the next packet may leave
        self.pending = False  # a release is scheduled


class DciTap:
    """Where one port delivers into a DCI switch, with the element's counters for that port:
    Switch-INT notices sent, packets through a PFQ, PFQ drops."""

    __slots__ = ("dci", "port", "notices", "pfq_packets", "pfq_drops")

    def __init__(self, dci: DciElement, port):
        self.dci = dci
        self.port = port
        self.notices = 0
        self.pfq_packets = 0
        self.pfq_drops = 0

    def receive(self, pkt) -> None:
        self.dci.receive(pkt, self)


class DciElement:
    """The element of one DCI switch (``switch``) in datacenter ``switch.dc``."""

    def __init__(self, engine, network, switch, cfg, host_dc: list[int], buffer_bytes: int):
        self.engine = engine
        self.network = network
        self.switch = switch
        self.name = f"{switch.name}/pfq"
        self.dc = switch.dc
        self.host_dc = host_dc
        self.near_source = bool(cfg.near_source)
        self.notice_gap_ps = us_to_ps(cfg.notice_interval_us)
        self.notice_bytes = int(cfg.notice_bytes)
        self.per_flow_queues = bool(cfg.per_flow_queues)
        self.initial_rate_bps = (
            gbps_to_bps(cfg.initial_rate_gbps) if cfg.initial_rate_gbps is not None else None
        )
        self.buffer_bytes = buffer_bytes
        self.queues: dict[int, FlowQueue] = {}
        self.bytes = 0
        self.packets = 0
        self.max_bytes = 0
        self._last_notice: dict[int, int] = {}

    # ---- arrivals ----------------------------------------------------------------------------
    def receive(self, pkt, tap: DciTap) -> None:
        """``pkt`` entered the switch through ``tap``'s port."""
        kind = pkt.kind
        if kind == DATA:
            src_dc = self.host_dc[pkt.src]
            dst_dc = self.host_dc[pkt.dst]
            if src_dc != dst_dc:
                if src_dc == self.dc:
                    if self.near_source:
                        self._near_source(pkt, tap)
                elif dst_dc == self.dc:
                    pkt.int_hops = None  # the receiver's datacenter writes its own
                    if self.per_flow_queues:
                        self._enqueue(pkt, tap)
                        return
        elif kind == ACK and self.per_flow_queues:
            rate = getattr(pkt, "credit_rate_bps", 0.0)
            if rate > 0.0 and self.host_dc[pkt.src] == self.dc:
                q = self.queues.get(pkt.flow_id)
                if q is not None:  # Algorithm 1 lines 3-4: C_D and R_credit from the ACK
                    q.credit = pkt.credit
                    q.rate_bps = max(1, int(rate))
        self.switch.receive(pkt)

    def _near_source(self, pkt, tap) -> None:
        hops = getattr(pkt, "int_hops", None)
        if not hops:
            return
        pkt.int_hops = None
        now = self.engine._now
        fid = pkt.flow_id
        if self.notice_gap_ps:
            last = self._last_notice.get(fid)
            if last is not None and now - last < self.notice_gap_ps:
                return
            self._last_notice[fid] = now
        notice = Packet(CN, fid, 0, self.notice_bytes, 0, pkt.dst, pkt.src, pkt.entropy,
                        flow_hash_key(pkt.dst, pkt.src, pkt.entropy), pkt.sent_ps)  # fmt: skip
        notice.int_hops = hops
        net = self.network
        net.injected[CN] += 1
        net.in_flight += 1
        tap.notices += 1
        self.switch.receive(notice)

    # ---- per-flow queues ---------------------------------------------------------------------
    def _enqueue(self, pkt, tap) -> None:
        size = pkt.size_bytes
        if self.bytes + size > self.buffer_bytes:
            tap.pfq_drops += 1
            self.network.drop(pkt, DROP_BUFFER, tap.port)
            return
        tap.pfq_packets += 1
        q = self.queues.get(pkt.flow_id)
        if q is None:
            rate = self.initial_rate_bps
            if rate is None:
                rate = self.network.hosts[pkt.dst].nic.rate_bps
            q = self.queues[pkt.flow_id] = FlowQueue(int(rate))
        q.packets.append(pkt)
        q.bytes += size
        self.bytes += size
        self.packets += 1
        if self.bytes > self.max_bytes:
            self.max_bytes = self.bytes
        if not q.pending:
            now = self.engine._now
            if q.next_ps <= now:
                self._release(q)
            else:
                q.pending = True
                self.engine.call_at(q.next_ps, self._release, q)

    def _release(self, q: FlowQueue) -> None:
        """``q``'s head packet leaves for the switch's forwarding; the next one is due a
        serialisation time at the flow's rate later."""
        pkt = q.packets.popleft()
        size = pkt.size_bytes
        q.bytes -= size
        self.bytes -= size
        self.packets -= 1
        now = self.engine._now
        q.next_ps = now + pfq_gap_ps(size, q.rate_bps)
        pkt.credit = q.credit
        pkt.pfq_bytes = q.bytes
        if q.packets:
            q.pending = True
            self.engine.call_at(q.next_ps, self._release, q)
        else:
            q.pending = False
        self.switch.receive(pkt)

    # ---- reading -----------------------------------------------------------------------------
    def packets_held(self) -> int:
        return self.packets

    def occupancy_bytes(self, _now: int = 0) -> int:
        """Bytes in the PFQs together."""
        return self.bytes

    def phantom_bytes(self, _now: int = 0) -> float:
        return 0.0

    def flow_bytes(self) -> dict[int, int]:
        """Bytes per flow of the PFQs holding any."""
        return {fid: q.bytes for fid, q in self.queues.items() if q.bytes}


def dci_int_stampers(network, int_cfg, tie_salt: int = 0) -> dict:
    """The INT stampers of the DCI switches' ports into their own datacenter, by port name:
    they write records whatever ``switch.int_telemetry.tiers`` says (the receiver-side DCI
    switch "erases and reinserts the INT information", MLCC §3.2)."""
    from uno.net.int import IntStamper

    dci_switches = {id(d.switch) for d in network.dcis}
    out = {}
    for element in network.dcis:
        for port in element.switch.ports:
            nxt = port.next_node
            if getattr(nxt, "dc", None) == element.dc and id(nxt) not in dci_switches:
                out[port.name] = IntStamper(int(int_cfg.max_records), int_cfg.replacement,
                                            tie_salt)  # fmt: skip
    return out


def reinsert_int(network, int_cfg, tie_salt: int = 0) -> None:
    """Give the DCI switches' ports into their own datacenter an INT stamper where they have
    none (:func:`dci_int_stampers`)."""
    stampers = dci_int_stampers(network, int_cfg, tie_salt)
    for port in network.ports:
        if port.name in stampers and getattr(port, "int_stamper", None) is None:
            port.int_stamper = stampers[port.name]


def configure_dci(network, dci_cfg) -> list[DciElement]:
    """Give every switch of tier ``dci_cfg.tier`` its element, and every port into one a tap;
    the taps, by port name, in ``network.dci_taps``. Run before PFC (its ingress queues hand
    packets on to what a port delivered to)."""
    dcis = [sw for sw in network.switches.values() if sw.tier == dci_cfg.tier]
    if not dcis:
        tiers = sorted({sw.tier for sw in network.switches.values()})
        raise ConfigError("switch.dci.tier", f"no switch of tier {dci_cfg.tier!r} (tiers: {tiers})")
    host_dc = [h.dc for h in network.hosts]
    elements = {}
    for sw in dcis:
        buffer = max(p.buffer_bytes for p in sw.ports)
        elements[sw.name] = DciElement(network.engine, network, sw, dci_cfg, host_dc, buffer)
    for port in network.ports:
        element = elements.get(getattr(port.next_node, "name", None))
        if element is not None and port.next_node is element.switch:
            tap = network.dci_taps[port.name] = DciTap(element, port)
            port._next_receive = tap.receive
    network.dcis = list(elements.values())
    return network.dcis

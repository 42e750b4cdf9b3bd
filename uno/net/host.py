"""A host: one NIC port towards its ToR, whose data turn-taking a :class:`NicScheduler` owns
(:mod:`uno.net.nic`), and demultiplexing of arriving packets to the transport endpoint of their
flow (data to the receiver, ACK/NACK to the sender). Control packets (ACKs) are pushed into the
NIC queue immediately; data waits for its turn at the scheduler.
"""

from __future__ import annotations

from uno.core.packet import DATA, TRIM
from uno.net.nic import NicScheduler


class Host:
    """End host ``host_id`` in datacenter ``dc``."""

    __slots__ = ("name", "host_id", "dc", "nic", "nic_scheduler", "_network", "_engine", "_flows")

    def __init__(self, name: str, host_id: int, dc: int, network):
        self.name = name
        self.host_id = host_id
        self.dc = dc
        self.nic = None
        self.nic_scheduler: NicScheduler | None = None
        self._network = network
        self._engine = network.engine
        self._flows = network.flows_by_id  # (the same list, filled once the flows exist)

    def attach_nic(self, port) -> None:
        """Make ``port`` this host's NIC (one per host)."""
        if self.nic is not None:
            raise ValueError(f"host {self.name} has more than one link; hosts have one NIC")
        self.nic = port
        self.nic_scheduler = NicScheduler(self._engine, port)

    def nic_resumed(self) -> None:
        """PFC resumed the NIC port (called by :class:`uno.net.event_port.EventPort`)."""
        self.nic_scheduler.resumed()

    # ---- sending ----------------------------------------------------------------------
    def send(self, pkt) -> None:
        """Hand a packet from a local transport endpoint to the NIC queue."""
        net = self._network
        net.injected[pkt.kind] += 1
        net.in_flight += 1
        self.nic.receive(pkt)

    # ---- receiving --------------------------------------------------------------------
    def receive(self, pkt) -> None:
        net = self._network
        net.delivered[pkt.kind] += 1
        net.in_flight -= 1
        if pkt.dst != self.host_id:
            net.misrouted(pkt, self)
        flow = self._flows[pkt.flow_id]
        if pkt.kind == DATA:
            flow.receiver.on_data(pkt)
        elif pkt.kind == TRIM:
            flow.receiver.on_trimmed(pkt)
        else:
            flow.sender.on_control(pkt)

    def __repr__(self) -> str:
        return f"Host({self.name})"

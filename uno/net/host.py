"""A host: one NIC port towards its ToR, and demultiplexing of arriving packets to the
transport endpoint of their flow (data to the receiver, ACK/NACK to the sender).

Data leaves a host the way a NIC pulls it: a sender hands over a data packet only when the
NIC is idle, so the packet's send time is the moment it starts on the wire (RTT samples and
retransmission timers never include time spent behind the host's own backlog), and flows of
one host share the NIC round-robin, one packet at a time. Control packets (ACKs) are pushed
into the NIC queue immediately. A NIC that PFC paused (``PAUSED_PS``) takes no data until it
is resumed.
"""

from __future__ import annotations

from collections import deque

from uno.core.packet import DATA
from uno.net.event_port import PAUSED_PS


class Host:
    """End host ``host_id`` in datacenter ``dc``."""

    __slots__ = ("name", "host_id", "dc", "nic", "_network", "_engine", "_waiting", "_wake_pending")

    def __init__(self, name: str, host_id: int, dc: int, network):
        self.name = name
        self.host_id = host_id
        self.dc = dc
        self.nic = None
        self._network = network
        self._engine = network.engine
        self._waiting: deque = deque()
        self._wake_pending = False

    # ---- sending ----------------------------------------------------------------------
    def nic_free(self, now: int) -> bool:
        """Whether the NIC can start a data packet now."""
        return self.nic._busy_until_ps <= now

    def wait_for_nic(self, sender) -> None:
        """Queue ``sender`` to be called (``sender.nic_ready()``) when the NIC is next free."""
        if not sender.nic_waiting:
            sender.nic_waiting = True
            self._waiting.append(sender)
        busy = self.nic._busy_until_ps
        if not self._wake_pending and busy < PAUSED_PS:
            self._wake_pending = True
            self._engine.call_at(busy, self._wake)

    def _wake(self, _arg=None) -> None:
        self._wake_pending = False
        waiting = self._waiting
        now = self._engine._now
        nic = self.nic
        while waiting and nic._busy_until_ps <= now:
            sender = waiting.popleft()
            sender.nic_waiting = False
            sender.nic_ready()
        if waiting and not self._wake_pending and nic._busy_until_ps < PAUSED_PS:
            self._wake_pending = True
            self._engine.call_at(max(nic._busy_until_ps, now), self._wake)

    def nic_resumed(self) -> None:
        """PFC resumed the NIC (:class:`uno.net.event_port.EventPort`): wake the waiting
        senders when it is next free (while paused, :meth:`wait_for_nic` schedules nothing)."""
        if self._waiting and not self._wake_pending:
            self._wake_pending = True
            self._engine.call_at(max(self.nic._busy_until_ps, self._engine._now), self._wake)

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
        if pkt.kind == DATA:
            pkt.flow.receiver.on_data(pkt)
        else:
            pkt.flow.sender.on_control(pkt)

    def __repr__(self) -> str:
        return f"Host({self.name})"

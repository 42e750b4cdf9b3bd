"""The turn-taking of one host's data senders at its NIC (:class:`NicScheduler`).

Data leaves a host the way a NIC pulls it: a sender hands over a data packet only when the NIC
port is free (everything it accepted has started on the wire), so a packet's send time is the
moment it starts on the wire: RTT samples and retransmission timers never include time spent
behind the host's own backlog. Senders that find the NIC busy wait in a FIFO and are called back
(``sender.nic_ready()``) when it frees, one packet each in turn: flows of one host share the NIC
round robin; a sender ready when the NIC frees joins the end of the FIFO if others wait. A NIC
port that PFC paused (``PAUSED_PS``, :mod:`uno.net.event_port`) takes no data until
:meth:`NicScheduler.resumed`.

The scheduler is the only reader of the port's projected free time (``_busy_until_ps``) and the
only owner of the waiting state, so senders and ports need not know each other's internals.
"""

from __future__ import annotations

from collections import deque

from uno.net.event_port import PAUSED_PS


class NicScheduler:
    """Who sends next on one NIC port ``port``; schedules through the engine's ``call_at``."""

    __slots__ = ("port", "_engine", "_waiting", "_queued", "_wake_pending")

    def __init__(self, engine, port):
        self.port = port
        self._engine = engine
        self._waiting: deque = deque()
        self._queued: set = set()  # senders in _waiting (each at most once)
        self._wake_pending = False

    def free(self, now_ps: int, turn: bool = False) -> bool:
        """Whether a sender may start a data packet at ``now_ps``: the NIC is free and, unless
        it is the sender's turn (called by this scheduler's wake), no sender waits. A sender
        whose pacing timer or ACK comes at the instant the NIC frees thus queues behind the
        waiting ones instead of taking the NIC from them (a sender paced at line rate would
        otherwise win every tie and starve the host's other flows)."""
        return self.port._busy_until_ps <= now_ps and (turn or not self._waiting)

    def wait(self, sender) -> None:
        """Queue ``sender`` to be called (``sender.nic_ready()``) when the NIC is next free."""
        if sender not in self._queued:
            self._queued.add(sender)
            self._waiting.append(sender)
        busy = self.port._busy_until_ps
        if not self._wake_pending and busy < PAUSED_PS:
            self._wake_pending = True
            self._engine.call_at(busy, self._wake)

    def _wake(self, _arg=None) -> None:
        self._wake_pending = False
        waiting = self._waiting
        now = self._engine._now
        port = self.port
        while waiting and port._busy_until_ps <= now:
            sender = waiting.popleft()
            self._queued.discard(sender)
            sender.nic_ready()
        if waiting and not self._wake_pending and port._busy_until_ps < PAUSED_PS:
            self._wake_pending = True
            self._engine.call_at(max(port._busy_until_ps, now), self._wake)

    def resumed(self) -> None:
        """PFC resumed the port: wake the waiting senders when it is next free (while it was
        paused, :meth:`wait` scheduled nothing)."""
        if self._waiting and not self._wake_pending:
            self._wake_pending = True
            self._engine.call_at(max(self.port._busy_until_ps, self._engine._now), self._wake)

    def waiting_senders(self) -> int:
        return len(self._waiting)

"""What Python sees of the compiled data plane's ports and NICs: :class:`CompiledPort` stands
in for each :class:`uno.net.port.Port` (same names and statistics, read from the kernel's
arrays), and :class:`KernelNic` for the NIC turn-taking of a host whose NIC the kernel
schedules."""

from __future__ import annotations

from uno.core.units import serialization_ps
from uno.net.compiled.layout import FL, PF, H, P
from uno.net.compiled.ports import settle_port
from uno.net.phantom import phantom_level


class KernelNic:
    """The NIC turn-taking (:class:`uno.net.nic.NicScheduler`'s interface) of a host whose NIC
    the kernel schedules because some of its senders are the kernel's: its Python senders wait
    in the same kernel FIFO, and the kernel hands them their turns (``RUN_NICPY``)."""

    __slots__ = ("port", "_dataplane", "_host")

    def __init__(self, dataplane, port: CompiledPort, host: int):
        self.port = port
        self._dataplane = dataplane
        self._host = host

    def free(self, now_ps: int, turn: bool = False) -> bool:
        """(:meth:`uno.net.nic.NicScheduler.free`: no sender may pass the waiting ones.)"""
        return self.port.busy_until_ps <= now_ps and (
            turn or not self._dataplane.nic_waiting(self._host)
        )

    def wait(self, sender) -> None:
        self._dataplane.nic_wait(sender.flow.flow_id)

    def waiting_senders(self) -> int:
        """(:meth:`uno.net.nic.NicScheduler.waiting_senders`: here 1 if any waits, else 0.)"""
        return int(self._dataplane.nic_waiting(self._host))

    def resumed(self) -> None:
        """(The kernel wakes this NIC's waiting senders on a RESUME itself.)"""


class CompiledPort:
    """A port of the compiled data plane, seen from Python: the facts and statistics a
    :class:`uno.net.port.Port` offers (read from the kernel's arrays), and ``receive`` for a
    host's NIC. ``red`` and ``phantom`` are the port's marking configuration (thresholds,
    drain rate), not its state, which lives in the kernel: read the phantom level with
    :meth:`phantom_bytes` and the queue with :meth:`occupancy_bytes`. ``python_port`` is the
    port it stands in for."""

    __slots__ = ("_dp", "_st", "index", "_row", "python_port", "name", "kind", "rate_bps",
                 "delay_ps", "buffer_bytes", "owner", "next_node", "red", "phantom", "fault",
                 "control_lane")  # fmt: skip

    def __init__(self, dataplane, index: int, port):
        self._dp = dataplane
        self.index = index
        self.python_port = port
        self.state_moved()
        for attr in ("name", "kind", "rate_bps", "delay_ps", "buffer_bytes", "owner",
                     "next_node", "red", "phantom", "control_lane"):  # fmt: skip
            setattr(self, attr, getattr(port, attr))
        # its faults' models and counters (the kernel applies them; the data plane's
        # sync_network copies the counters back for the summary and the ports table)
        self.fault = port.fault

    def state_moved(self) -> None:
        """Read the data plane's state array anew (it was replaced by a bigger one)."""
        ST = self._dp.ST
        # the int64 state as a memoryview: indexing it gives a Python int directly, ~20x
        # cheaper than a numpy scalar (the NIC scheduler reads the busy-until per data packet)
        self._st = memoryview(ST)
        self._row = int(ST[H.off_ports]) + self.index * P.size

    def receive(self, pkt) -> None:
        self._dp.send(self.index, pkt)

    def _int(self, col: int) -> int:
        return self._st[self._row + col]

    @property
    def busy_until_ps(self) -> int:
        """When the port will have sent what it accepted (ps; PAUSED while paused)."""
        return self._st[self._row + P.busy]

    #: (the name :class:`uno.net.nic.NicScheduler` reads a port's busy-until by)
    _busy_until_ps = busy_until_ps

    @property
    def marks_physical(self) -> bool:
        return bool(self._int(P.flags) & FL.mark_phys)

    @property
    def arrivals(self) -> int:
        return self._int(P.arrivals)

    @property
    def drops(self) -> int:
        return self._int(P.drops)

    @property
    def trims(self) -> int:
        return self._int(P.trims)

    @property
    def ecn_marks(self) -> int:
        return self._int(P.marks)

    @property
    def max_bytes(self) -> int:
        return self._int(P.max_bytes)

    @property
    def enqueued_bytes(self) -> int:
        return self._int(P.enq_bytes)

    @property
    def bytes(self) -> int:
        return self._int(P.bytes)

    @property
    def tx_bytes(self) -> int:
        return self.enqueued_bytes - self.bytes

    def _settled(self, now: int) -> tuple[int, int, int]:
        dp = self._dp
        q, queued, waiting = settle_port(dp.ST, dp.F, dp.U, dp.PK, self.index, now)
        return int(q), int(queued), int(waiting)

    def occupancy_bytes(self, now: int) -> int:
        return self._settled(now)[0]

    @property
    def tx_packets(self) -> int:
        _, queued, waiting = self._settled(self._dp.engine.now)
        return self.arrivals - self.drops - queued - waiting

    def packets_held(self) -> int:
        return self._int(P.held)

    def phantom_bytes(self, now: int) -> float:
        if self.phantom is None:
            return 0.0
        F = self._dp.F
        level = phantom_level.py_func(
            F[self.index, PF.ph_level], now - self._int(P.ph_last), F[self.index, PF.ph_drain]
        )
        return float(level)

    def serialization_ps(self, size_bytes: int) -> int:
        return serialization_ps(size_bytes, self.rate_bps)

    def __repr__(self) -> str:
        return f"CompiledPort({self.name}, {self.rate_bps / 1e9:g} Gb/s, {self.delay_ps} ps)"

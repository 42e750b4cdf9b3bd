"""Priority-based flow control (IEEE 802.1Qbb PFC): a lossless fabric by back-pressure.

A switch counts, per ingress queue (one per incoming link and priority), the bytes that
entered through that link and have not yet left the switch. When the count exceeds ``xoff``
the switch sends a PAUSE for that priority to the upstream port; when it falls to ``xon`` or
below, a RESUME. The upstream port finishes the frame in service and then sends nothing of that
priority until the RESUME (:class:`uno.net.event_port.EventPort`). Pauses propagate: a paused
switch port's queue grows, its own ingress queues cross Xoff and pause their upstream ports —
head-of-line blocking and congestion spreading, which is the point of modelling it.

Timing: a PAUSE or RESUME is a 64-byte MAC control frame sent on the reverse direction of the
link ahead of any queued data (802.1Qbb frames bypass the data queues); it acts at the upstream
port one propagation delay plus its own serialisation after the switch decides. The frame the
upstream port is sending then completes.

Headroom (what may still arrive after Xoff is crossed, per ingress queue): the bytes on the
wire (rate x delay), those the upstream port sends while the PAUSE travels (rate x (delay +
PAUSE serialisation)), and the frame it has just started plus the one being received (two full
data packets) — the delay terms of IEEE 802.1Qbb Annex N's headroom model, without the
interface and higher-layer response times a simulated port does not have.

Derived thresholds (``switch.pfc.xoff_bytes: null``): every ingress queue of a switch gets
``xoff = B / n - headroom_max`` where B is the smallest egress buffer of the switch, n its number
of PFC ingress queues and headroom_max the largest headroom among them. Then even if all n
queues fill to Xoff + headroom and drain into one egress port, that port's buffer holds them:
no packet that entered through a PFC ingress queue can be dropped for buffer overflow. A drop
of such a packet is an invariant violation (``pfc.lossless_violations`` in the summary; with
``engine.check_invariants`` the run stops with an error). ``xon`` defaults to ``xoff`` less two
full data packets.

Ingress queues exist only on links into switches (hosts consume at line rate and never pause),
at the switches all of whose incoming links are of a kind in ``switch.pfc.port_kinds`` (empty:
every kind). A switch with another incoming link (a border switch fed by a WAN link whose
round trip no buffer could cover as headroom) stays lossy as a whole: that link's traffic would
share the egress buffers without back-pressure, and no Xoff could then keep the other ingress
queues lossless. Its drops are ordinary drops; the summary counts such switches
(``lossy_switches``). Only the data priority
is paused; with ``switch.ack_priority`` control packets travel in their own priority, which
PFC leaves alone (they are never dropped), otherwise they share the data FIFO and are paused
with it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from uno.core.errors import ConfigError, InvariantError
from uno.core.units import serialization_ps
from uno.net.event_port import DATA_PRIORITY

if TYPE_CHECKING:
    from uno.net.event_port import EventPort

#: wire size of a PFC PAUSE / RESUME frame (a minimum Ethernet frame)
PAUSE_FRAME_BYTES = 64


def headroom_bytes(rate_bps: int, delay_ps: int, full_packet_bytes: int) -> int:
    """Bytes that can still reach an ingress queue after it crosses Xoff (module docstring)."""
    in_flight_ps = 2 * delay_ps + serialization_ps(PAUSE_FRAME_BYTES, rate_bps)
    return math.ceil(rate_bps * in_flight_ps / 8e12) + 2 * full_packet_bytes


class PauseLog:
    """Pause intervals of every port: (port, priority, start_ps, end_ps or None if open)."""

    def __init__(self) -> None:
        self.intervals: list[list] = []
        self._open: dict[tuple[str, int], int] = {}  # (port, priority) -> index of open interval

    def paused(self, port: EventPort, priority: int, now_ps: int) -> None:
        self._open[(port.name, priority)] = len(self.intervals)
        self.intervals.append([port.name, port.kind, priority, now_ps, None])

    def resumed(self, port: EventPort, priority: int, now_ps: int) -> None:
        i = self._open.pop((port.name, priority))
        self.intervals[i][4] = now_ps

    def table(self, end_ps: int):
        """One row per pause interval; an interval still open ends at ``end_ps`` (``open``)."""
        import pandas as pd

        rows = [
            {
                "port": name,
                "kind": kind,
                "priority": prio,
                "start_us": start / 1e6,
                "end_us": (end if end is not None else end_ps) / 1e6,
                "duration_us": ((end if end is not None else end_ps) - start) / 1e6,
                "open": end is None,
            }
            for name, kind, prio, start, end in self.intervals
        ]
        columns = ["port", "kind", "priority", "start_us", "end_us", "duration_us", "open"]
        return pd.DataFrame(rows, columns=columns)


class PfcIngress:
    """The ingress queue of one link into a switch (the data priority)."""

    __slots__ = (
        "upstream",
        "_switch_receive",
        "_engine",
        "name",
        "xoff_bytes",
        "xon_bytes",
        "headroom_bytes",
        "bytes",
        "max_bytes",
        "pausing",
        "pauses_sent",
        "violations",
        "_signal_ps",
        "_control_lane",
        "switch_name",
    )

    def __init__(self, upstream: EventPort, switch, xoff: int, xon: int, headroom: int):
        self.upstream = upstream
        # (the switch's receive, or what stands before it: a DCI switch's element)
        self._switch_receive = getattr(upstream, "_next_receive", None) or switch.receive
        self.switch_name = switch.name
        self._engine = upstream._engine
        self.name = upstream.name
        self.xoff_bytes = xoff
        self.xon_bytes = xon
        self.headroom_bytes = headroom
        self.bytes = 0
        self.max_bytes = 0
        self.pausing = False
        self.pauses_sent = 0
        self.violations = 0
        self._signal_ps = upstream.delay_ps + serialization_ps(PAUSE_FRAME_BYTES, upstream.rate_bps)
        # with ack_priority, the switch's ports serve control packets in a priority of their own
        self._control_lane = False

    @property
    def signal_ps(self) -> int:
        """Delay of a PAUSE or RESUME to the upstream port: the link's delay and the frame's
        serialisation (ps)."""
        return self._signal_ps

    @property
    def control_lane(self) -> bool:
        """Whether control packets bypass this queue (the switch's control lane)."""
        return self._control_lane

    def receive(self, pkt) -> None:
        """A packet arrived at the switch through this link."""
        if pkt.kind and self._control_lane:
            pkt.ingress = None
        else:
            pkt.ingress = self
            b = self.bytes + pkt.size_bytes
            self.bytes = b
            if b > self.max_bytes:
                self.max_bytes = b
            if b > self.xoff_bytes and not self.pausing:
                self.pausing = True
                self.pauses_sent += 1
                self._engine.call_in(self._signal_ps, self.upstream.pause, DATA_PRIORITY)
        self._switch_receive(pkt)

    def release(self, size_bytes: int) -> None:
        """A packet that entered here left the switch (or was dropped)."""
        b = self.bytes - size_bytes
        self.bytes = b
        if self.pausing and b <= self.xon_bytes:
            self.pausing = False
            self._engine.call_in(self._signal_ps, self.upstream.resume, DATA_PRIORITY)

    def dropped(self, pkt) -> None:
        """A packet that entered through this lossless queue was dropped at an egress port."""
        self.violations += 1
        self.release(pkt.size_bytes)


def lossless_switches(incoming: dict, kinds) -> dict:
    """Of ``incoming`` (switch name -> its incoming links, each with a ``kind``), the switches
    with PFC ingress queues: those all of whose incoming links are of a kind in ``kinds``
    (empty: every kind). A switch with an unselected incoming link stays lossy: that link's
    traffic shares the egress buffers without back-pressure, so no threshold could keep the
    others lossless."""
    kinds = set(kinds)
    by_switch = {
        name: ups
        for name, ups in incoming.items()
        if not kinds or all(p.kind in kinds for p in ups)
    }
    if not by_switch:
        raise ConfigError(
            "switch.pfc.port_kinds",
            f"{sorted(kinds)} leaves no switch whose incoming links are all of those kinds",
        )
    return by_switch


def switch_thresholds(name: str, ups: list, min_buffer_bytes: int, pfc_cfg,
                      full_packet_bytes: int) -> tuple[int, int, dict]:  # fmt: skip
    """Xoff and Xon (bytes) of switch ``name``'s ingress queues, whose upstream links ``ups``
    have a ``name``, ``rate_bps`` and ``delay_ps``, its smallest egress buffer
    ``min_buffer_bytes``; and each link's headroom (name -> bytes). See the module docstring."""
    rooms = {
        p.name: (
            pfc_cfg.headroom_bytes
            if pfc_cfg.headroom_bytes is not None
            else headroom_bytes(p.rate_bps, p.delay_ps, full_packet_bytes)
        )
        for p in ups
    }
    if pfc_cfg.xoff_bytes is not None:
        xoff = int(pfc_cfg.xoff_bytes)
    else:
        xoff = min_buffer_bytes // len(ups) - max(rooms.values())
        if xoff < full_packet_bytes:
            raise ConfigError(
                "switch.pfc.xoff_bytes",
                f"switch {name}: its smallest port buffer ({min_buffer_bytes} B) shared by "
                f"{len(ups)} ingress queues leaves {xoff} B for Xoff after "
                f"{max(rooms.values())} B of headroom (less than one packet); set xoff_bytes, "
                "enlarge the buffers or leave long links out of switch.pfc.port_kinds",
            )
    if pfc_cfg.xon_bytes is not None:
        xon = int(pfc_cfg.xon_bytes)
        if xon > xoff:
            raise ConfigError(
                "switch.pfc.xon_bytes", f"must be <= Xoff ({xoff} B at switch {name}), got {xon}"
            )
    else:
        xon = max(0, xoff - 2 * full_packet_bytes)
    return xoff, xon, rooms


def configure_pfc(network, pfc_cfg, full_packet_bytes: int) -> list[PfcIngress]:
    """Put a PFC ingress queue on every selected link into a switch of ``network`` (whose ports
    are :class:`EventPort`); returns them. Thresholds per the module docstring."""
    from uno.net.switch import Switch

    incoming: dict[str, list] = {}
    for port in network.ports:
        if isinstance(port.next_node, Switch):
            incoming.setdefault(port.next_node.name, []).append(port)
    ingresses = []
    for name, ups in lossless_switches(incoming, pfc_cfg.port_kinds).items():
        sw = network.switches[name]
        buffer = min(p.buffer_bytes for p in sw.ports)
        xoff, xon, rooms = switch_thresholds(name, ups, buffer, pfc_cfg, full_packet_bytes)
        for up in ups:
            ing = PfcIngress(up, sw, xoff, xon, rooms[up.name])
            ing._control_lane = bool(sw.ports) and bool(getattr(sw.ports[0], "control_lane", False))
            up._next_receive = ing.receive
            ingresses.append(ing)
    return ingresses


def pfc_summary(
    ingresses: list[PfcIngress], log: PauseLog, end_ps: int, check: bool, n_switches: int
) -> dict:
    """The run summary's ``pfc`` block; raises on a lossless violation when ``check``."""
    violations = sum(i.violations for i in ingresses)
    if check and violations:
        worst = max(ingresses, key=lambda i: i.violations)
        raise InvariantError(
            f"PFC: {violations} packets that entered through lossless ingress queues were dropped "
            f"for buffer overflow (most at {worst.name}: Xoff {worst.xoff_bytes} B, headroom "
            f"{worst.headroom_bytes} B, peak {worst.max_bytes} B)"
        )
    table = log.table(end_ps)
    return {
        "ingress_queues": len(ingresses),
        "lossy_switches": n_switches - len({i.switch_name for i in ingresses}),
        "pause_frames": sum(i.pauses_sent for i in ingresses),
        "pause_intervals": len(table),
        "ports_paused": int(table["port"].nunique()) if len(table) else 0,
        "total_pause_us": float(table["duration_us"].sum()) if len(table) else 0.0,
        "max_ingress_bytes": max((i.max_bytes for i in ingresses), default=0),
        "lossless_violations": violations,
    }

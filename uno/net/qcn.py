"""QCN congestion points: switch ports that send a congestion notification straight to the
source of a sampled data packet, the near-source control loop of Annulus.

Annulus (Saeed et al., "Annulus: A Dual Congestion Control Loop for Datacenter and WAN Traffic
Aggregates", SIGCOMM 2020) adds to the end-to-end control loop a second, short loop: the ToR
switch computes QCN's congestion measure on its queue and sends its feedback directly to the
sending host, so intra- and cross-datacenter flows hear of congestion with the same delay. Gear
(Han et al., "In-Band Network Telemetry-Based Congestion Control for Cross-Datacenter Networks",
IEEE/ACM ToN) runs it as a baseline with the settings of its §IV-A (v): the feedback

    F_b = (Q - Q_eq) + w (Q - Q_old),   w = 8,

sampled every 15 KB at the ToR switches, and a sender cut with gain G_D = 1/128; its §VI adds
that Annulus "treats the TOR switch in DC as the congestion point, which directly forwards the
QCN packets back to the host". The measure is QCN's congestion point (IEEE 802.1Qau; Alizadeh
et al., "Data Center Transport Mechanisms: Congestion Control Theory and IEEE Standardization",
Allerton 2008), written with the sign Gear uses: positive F_b means congestion.

Readings (where neither text says):

* **When a port samples.** Every ``sample_bytes`` of data bytes it accepts (Gear's "sampling
  interval ... 15KB"; the standard's interval shrinks as F_b grows, which Gear's fixed interval
  does not). At a sample, Q is the port's data queue with the sampled packet in it, and Q_old
  becomes Q, whether or not a message is sent (QCN's rule).
* **Q_eq.** Given by neither paper here: ``qeq_bytes`` (default 34,000 bytes, the equilibrium
  queue of a Linux implementation of QCN's congestion point, ``QCN_Q_EQ``).
* **Quantisation.** QCN carries F_b in 6 bits: F_b is capped at F_max = Q_eq (2w + 1) (the
  standard's cap) and sent as ``level`` = floor(63 F_b / F_max); a sample whose level is 0 sends
  nothing. With G_D = 1/128 the largest cut is 63/128, QCN's rule G_D |F_max| = 1/2.
* **The message.** A ``message_bytes`` frame (64: a minimum Ethernet frame) of kind ``cn``,
  addressed to the sampled packet's source and routed there as any packet (queued as a control
  packet where ports have a control lane); it carries the level in its sequence field and the
  flow's id, and the sender's congestion control hears it (``on_notify``).

Which ports: the egress ports of the switches whose tier is in ``tiers`` (default ``[tor]``),
and of those the ports whose link kind is in ``port_kinds`` (empty: all).
"""

from __future__ import annotations

import math

from numba import njit

#: the largest level a 6-bit F_b carries
QCN_LEVELS = 63


@njit(cache=True)
def qcn_level(queue_bytes, qold_bytes, qeq_bytes, w):
    """The quantised feedback of a sample (0: no congestion, else 1..63): F_b =
    (Q - Q_eq) + w (Q - Q_old), capped at Q_eq (2w + 1), in 63 steps."""
    fb = (queue_bytes - qeq_bytes) + w * (queue_bytes - qold_bytes)
    if not fb > 0.0:
        return 0
    fb_max = qeq_bytes * (2.0 * w + 1.0)
    if fb >= fb_max:
        return QCN_LEVELS
    return int(math.floor(QCN_LEVELS * fb / fb_max))


@njit(cache=True)
def qcn_sample(counted_bytes, qold_bytes, queue_bytes, size_bytes, sample_bytes, qeq_bytes, w):
    """A data packet of ``size_bytes`` joined a congestion point's queue, which now holds
    ``queue_bytes``: the bytes counted towards the next sample and Q_old after it, and the level
    to send the packet's source (0: none). A sample every ``sample_bytes`` (the excess carries
    over); at a sample Q_old becomes Q whether or not a notice goes out."""
    counted = counted_bytes + size_bytes
    if counted < sample_bytes:
        return counted, qold_bytes, 0
    level = qcn_level(float(queue_bytes), float(qold_bytes), float(qeq_bytes), float(w))
    return counted - sample_bytes, queue_bytes, level


class CongestionPoint:
    """One port's QCN sampler: the bytes accepted since its last sample and Q_old."""

    __slots__ = ("sample_bytes", "qeq_bytes", "w", "counted_bytes", "qold_bytes", "sent")

    def __init__(self, sample_bytes: int, qeq_bytes: int, w: float):
        self.sample_bytes = sample_bytes
        self.qeq_bytes = qeq_bytes
        self.w = w
        self.counted_bytes = 0
        self.qold_bytes = 0
        self.sent = 0  # notifications sent

    def accepted(self, size_bytes: int, queue_bytes: int) -> int:
        """A data packet of ``size_bytes`` joined the queue, which now holds ``queue_bytes``:
        the level to send its source (0: none)."""
        self.counted_bytes, self.qold_bytes, level = _sample(
            self.counted_bytes, self.qold_bytes, queue_bytes, size_bytes, self.sample_bytes,
            self.qeq_bytes, self.w,
        )  # fmt: skip
        if level:
            self.sent += 1
        return level


#: the Python data plane's form of the sampler (a per-packet call into Numba costs more)
_sample = qcn_sample.py_func


def congestion_points(network, qcn_cfg) -> dict:
    """A :class:`CongestionPoint` for every egress port of the switches whose tier
    ``qcn_cfg.tiers`` names (of those, the ports whose link kind ``qcn_cfg.port_kinds``
    names, if it names any), by port name."""
    from uno.net.switch import switch_ports

    ports = switch_ports(network, qcn_cfg.tiers, qcn_cfg.port_kinds, "switch.qcn.tiers")
    return {
        p.name: CongestionPoint(int(qcn_cfg.sample_bytes), int(qcn_cfg.qeq_bytes), float(qcn_cfg.w))
        for p in ports
    }


def configure_qcn(network, qcn_cfg) -> int:
    """Make the chosen ports congestion points (:func:`congestion_points`); their messages
    are ``qcn_cfg.message_bytes`` long. Returns how many ports sample."""
    points = congestion_points(network, qcn_cfg)
    for port in network.ports:
        point = points.get(port.name)
        if point is not None:
            port.set_congestion_point(point, int(qcn_cfg.message_bytes))
    return len(points)

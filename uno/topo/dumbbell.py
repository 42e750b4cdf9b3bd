"""Dumbbell: ``n_senders`` hosts on a left switch, ``n_receivers`` hosts on a right switch, one
bottleneck link between the switches. An incast's default receiver is ``r0``, behind the
bottleneck, so that the senders' flows cross it."""

from __future__ import annotations

from uno.core.units import gbps_to_bps, us_to_ps
from uno.topo.base import BOTTLENECK, HOST, SWITCH, LinkSpec, NodeSpec, Topology


def build_dumbbell(cfg) -> Topology:
    """Hosts ``s0..`` (ids 0..n_senders-1) then ``r0..``; switches ``left`` and ``right``."""
    topo = Topology(name="dumbbell", incast_receiver="r0")
    host_bps = gbps_to_bps(cfg.host_rate_gbps)
    neck_bps = gbps_to_bps(cfg.bottleneck_rate_gbps)
    delay = us_to_ps(cfg.link_delay_us)
    neck_delay = us_to_ps(cfg.bottleneck_delay_us)
    buf = int(cfg.buffer_bytes)
    nic = int(cfg.nic_buffer_bytes)
    for i in range(cfg.n_senders):
        topo.nodes.append(NodeSpec(f"s{i}", HOST, 0, "sender"))
    for i in range(cfg.n_receivers):
        topo.nodes.append(NodeSpec(f"r{i}", HOST, 0, "receiver"))
    topo.nodes.append(NodeSpec("left", SWITCH, 0, "left"))
    topo.nodes.append(NodeSpec("right", SWITCH, 0, "right"))
    for i in range(cfg.n_senders):
        topo.links.append(LinkSpec(f"s{i}", "left", host_bps, delay, nic, buf, "host"))
    for i in range(cfg.n_receivers):
        topo.links.append(LinkSpec(f"r{i}", "right", host_bps, delay, nic, buf, "host"))
    topo.links.append(LinkSpec("left", "right", neck_bps, neck_delay, buf, buf, BOTTLENECK))
    return topo

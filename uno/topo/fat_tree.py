"""k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 ToR and k/2 aggregation
switches, (k/2)^2 core switches, k/2 hosts per ToR, k^3/4 hosts in all."""

from __future__ import annotations

from uno.core.units import gbps_to_bps, us_to_ps
from uno.topo.base import HOST, SWITCH, LinkSpec, NodeSpec, Topology


def add_fat_tree(
    topo: Topology,
    k: int,
    dc: int,
    rate_bps: int,
    delay_ps: int,
    switch_buffer_bytes: int,
    nic_buffer_bytes: int,
    prefix: str = "",
) -> list[str]:
    """Append one fat tree's nodes and links to ``topo``; return the names of its core switches.

    Hosts are appended in order (pod, ToR, host), so host ids are contiguous per datacenter."""
    half = k // 2
    for pod in range(k):
        for t in range(half):
            for h in range(half):
                topo.nodes.append(
                    NodeSpec(f"{prefix}h{(pod * half + t) * half + h}", HOST, dc, "host")
                )
    for pod in range(k):
        for t in range(half):
            topo.nodes.append(NodeSpec(f"{prefix}tor{pod * half + t}", SWITCH, dc, "tor"))
        for a in range(half):
            topo.nodes.append(NodeSpec(f"{prefix}agg{pod * half + a}", SWITCH, dc, "agg"))
    cores = [f"{prefix}core{c}" for c in range(half * half)]
    for name in cores:
        topo.nodes.append(NodeSpec(name, SWITCH, dc, "core"))
    buf = switch_buffer_bytes
    for pod in range(k):
        for t in range(half):
            tor = f"{prefix}tor{pod * half + t}"
            for h in range(half):
                host = f"{prefix}h{(pod * half + t) * half + h}"
                topo.links.append(
                    LinkSpec(host, tor, rate_bps, delay_ps, nic_buffer_bytes, buf, "host")
                )
            for a in range(half):
                agg = f"{prefix}agg{pod * half + a}"
                topo.links.append(LinkSpec(tor, agg, rate_bps, delay_ps, buf, buf, "fabric"))
        for a in range(half):
            agg = f"{prefix}agg{pod * half + a}"
            # aggregation switch a of every pod connects to cores a*half .. a*half+half-1
            for c in range(half):
                core = cores[a * half + c]
                topo.links.append(LinkSpec(agg, core, rate_bps, delay_ps, buf, buf, "fabric"))
    return cores


def build_fat_tree(cfg) -> Topology:
    """A single k-ary fat tree (datacenter 0)."""
    topo = Topology(name=f"fat_tree_k{cfg.k}")
    add_fat_tree(
        topo,
        int(cfg.k),
        0,
        gbps_to_bps(cfg.link_rate_gbps),
        us_to_ps(cfg.link_delay_us),
        int(cfg.buffer_bytes),
        int(cfg.nic_buffer_bytes),
    )
    return topo

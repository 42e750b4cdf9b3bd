"""k-ary fat tree (Al-Fares et al., SIGCOMM 2008): k pods of k/2 ToR and k/2 aggregation
switches, (k/2)^2 core switches, k/2 hosts per ToR, k^3/4 hosts in all.

Oversubscription (``tor_uplinks``, ``agg_uplinks``, both k/2 by default): a ToR keeps its k/2
hosts and has ``tor_uplinks`` uplinks, one to each of its pod's ``tor_uplinks`` aggregation
switches (k/2 : tor_uplinks at the ToR); an aggregation switch links to every ToR of its pod (k/2
down) and to ``agg_uplinks`` core switches (k/2 : agg_uplinks), aggregation switch ``a`` of every
pod to cores ``a x agg_uplinks ..``: ``tor_uplinks x agg_uplinks`` cores of k down ports, each
reaching every pod once. This is how the REPS authors' htsim topology files build their 8:1
1,024-host tree (``fat_tree_1024_8os.topo``: k = 16, ToR 8 down / 2 up, aggregation 8 down /
4 up, 8 cores of 16 down ports: ``tor_uplinks=2 agg_uplinks=4``)."""

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
    tor_uplinks: int | None = None,
    agg_uplinks: int | None = None,
) -> list[str]:
    """Append one fat tree's nodes and links to ``topo``; return the names of its core switches.

    Hosts are appended in order (pod, ToR, host), so host ids are contiguous per datacenter.
    ``tor_uplinks`` / ``agg_uplinks`` (None: k/2) oversubscribe it (module docstring)."""
    half = k // 2
    n_aggs = half if tor_uplinks is None else tor_uplinks
    up = half if agg_uplinks is None else agg_uplinks
    for pod in range(k):
        for t in range(half):
            for h in range(half):
                topo.nodes.append(
                    NodeSpec(f"{prefix}h{(pod * half + t) * half + h}", HOST, dc, "host")
                )
    for pod in range(k):
        for t in range(half):
            topo.nodes.append(NodeSpec(f"{prefix}tor{pod * half + t}", SWITCH, dc, "tor"))
        for a in range(n_aggs):
            topo.nodes.append(NodeSpec(f"{prefix}agg{pod * n_aggs + a}", SWITCH, dc, "agg"))
    cores = [f"{prefix}core{c}" for c in range(n_aggs * up)]
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
            for a in range(n_aggs):
                agg = f"{prefix}agg{pod * n_aggs + a}"
                topo.links.append(LinkSpec(tor, agg, rate_bps, delay_ps, buf, buf, "fabric"))
        for a in range(n_aggs):
            agg = f"{prefix}agg{pod * n_aggs + a}"
            # aggregation switch a of every pod connects to cores a*up .. a*up+up-1
            for c in range(up):
                core = cores[a * up + c]
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
        tor_uplinks=cfg.tor_uplinks,
        agg_uplinks=cfg.agg_uplinks,
    )
    return topo

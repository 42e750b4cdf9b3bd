"""The Uno two-datacenter topology (Uno paper §5.1; reference numbers in docs/design.md).

Two k-ary fat trees (k = 8: 128 hosts each). Every core switch has ``core_border_links``
parallel links to its datacenter's border switch (the authors' artifact uses 8); the two border
switches are joined by ``wan_links`` parallel WAN links (default 8). All links 100 Gb/s by
default, 1 µs per intra-DC and core-border link, the border-to-border one-way delay configurable
(default 886.5 µs as in the artifact: inter-DC base RTT 1.792 ms, 128x the 14.03 µs intra-DC RTT)
or derived from ``inter_rtt_ratio``. Buffers 1 MiB per port, with separate overrides for
intra-DC ports and border/WAN ports (paper Fig. 12: ~175 KiB intra, ~2.2 MiB inter).
"""

from __future__ import annotations

from uno.core.errors import ConfigError
from uno.core.units import gbps_to_bps, serialization_ps, us_to_ps
from uno.topo.base import SWITCH, LinkSpec, NodeSpec, Topology
from uno.topo.fat_tree import add_fat_tree

#: Links on the longest intra-DC path (host-ToR-agg-core-agg-ToR-host).
INTRA_PATH_LINKS = 6
#: Non-WAN links on an inter-DC path (host-ToR-agg-core-border | border-core-agg-ToR-host).
INTER_PATH_FABRIC_LINKS = 8


def wan_delay_for_ratio_ps(cfg, data_wire_bytes: int, ack_bytes: int) -> int:
    """One-way WAN delay that makes inter-DC base RTT = ``inter_rtt_ratio`` x intra-DC base RTT."""
    rate = gbps_to_bps(cfg.link_rate_gbps)
    wan_rate = gbps_to_bps(cfg.wan_rate_gbps)
    d = us_to_ps(cfg.link_delay_us)
    per_link = 2 * d + serialization_ps(data_wire_bytes, rate) + serialization_ps(ack_bytes, rate)
    intra_rtt = INTRA_PATH_LINKS * per_link
    fixed = (
        INTER_PATH_FABRIC_LINKS * per_link
        + serialization_ps(data_wire_bytes, wan_rate)
        + serialization_ps(ack_bytes, wan_rate)
    )
    wan_delay = (cfg.inter_rtt_ratio * intra_rtt - fixed) / 2
    if wan_delay < 0:
        raise ConfigError(
            "topo.inter_rtt_ratio",
            f"{cfg.inter_rtt_ratio} is too small: the inter-DC path without WAN delay already has "
            f"{fixed / intra_rtt:.2f}x the intra-DC RTT",
        )
    return int(round(wan_delay))


def build_two_dc(cfg, data_wire_bytes: int, ack_bytes: int) -> Topology:
    """Hosts 0..n-1 are DC 0, n..2n-1 DC 1 (n = k^3/4)."""
    topo = Topology(name=f"two_dc_k{cfg.k}")
    rate = gbps_to_bps(cfg.link_rate_gbps)
    delay = us_to_ps(cfg.link_delay_us)
    intra_buf = int(
        cfg.intra_buffer_bytes if cfg.intra_buffer_bytes is not None else cfg.buffer_bytes
    )
    inter_buf = int(
        cfg.inter_buffer_bytes if cfg.inter_buffer_bytes is not None else cfg.buffer_bytes
    )
    nic = int(cfg.nic_buffer_bytes)
    if cfg.inter_rtt_ratio is not None:
        wan_delay = wan_delay_for_ratio_ps(cfg, data_wire_bytes, ack_bytes)
    else:
        wan_delay = us_to_ps(cfg.wan_delay_us)
    borders = []
    cores_by_dc = []
    for dc in range(2):
        cores_by_dc.append(
            add_fat_tree(
                topo,
                int(cfg.k),
                dc,
                rate,
                delay,
                intra_buf,
                nic,
                prefix=f"dc{dc}/",
                tor_uplinks=cfg.tor_uplinks,
                agg_uplinks=cfg.agg_uplinks,
            )  # fmt: skip
        )
    # Host ids must be contiguous per DC: move all hosts to the front, DC 0 first.
    topo.nodes.sort(key=lambda n: (n.kind != "host", n.dc if n.kind == "host" else 0))
    for dc in range(2):
        border = f"dc{dc}/border"
        borders.append(border)
        topo.nodes.append(NodeSpec(border, SWITCH, dc, "border"))
        for core in cores_by_dc[dc]:
            for _ in range(int(cfg.core_border_links)):
                topo.links.append(
                    LinkSpec(core, border, rate, delay, inter_buf, inter_buf, "border")
                )
    wan_rate = gbps_to_bps(cfg.wan_rate_gbps)
    for _ in range(int(cfg.wan_links)):
        topo.links.append(
            LinkSpec(borders[0], borders[1], wan_rate, wan_delay, inter_buf, inter_buf, "wan")
        )
    return topo

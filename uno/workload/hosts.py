"""Facts about hosts that workloads may use (never the engine)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class HostFacts:
    """``dc[h]`` is host h's datacenter, ``rack[h]`` the index of its edge switch,
    ``rate_bps[h]`` the rate of its access link (empty if unknown). ``receiver`` is the
    topology's designated incast receiver (:meth:`uno.topo.base.Topology.designated_receiver`)
    and ``bottleneck_side[h]`` the part of the network host h is in once the topology's
    bottleneck links are cut (:meth:`uno.topo.base.Topology.bottleneck_sides`; empty: none).
    ``wan_bps`` is the capacity of the WAN links, both directions summed (0: none)."""

    dc: tuple[int, ...]
    rack: tuple[int, ...]
    rate_bps: tuple[int, ...] = ()
    receiver: int = 0
    bottleneck_side: tuple[int, ...] = ()
    wan_bps: int = 0

    @property
    def n_hosts(self) -> int:
        return len(self.dc)

    @property
    def n_dcs(self) -> int:
        return len(set(self.dc))

    def in_dc(self, dc: int) -> list[int]:
        return [h for h, d in enumerate(self.dc) if d == dc]

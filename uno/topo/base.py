"""Plain-data topology description: nodes and full-duplex links."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

HOST = "host"
SWITCH = "switch"
#: the link kind of a topology's named bottleneck (the dumbbell's left-right link)
BOTTLENECK = "bottleneck"


@dataclass(frozen=True)
class NodeSpec:
    """A node. ``tier`` is descriptive (host, tor, agg, core, border, left, right...)."""

    name: str
    kind: str  # HOST or SWITCH
    dc: int = 0
    tier: str = ""


@dataclass(frozen=True)
class LinkSpec:
    """A full-duplex link between nodes ``a`` and ``b``: one output port in each direction.

    ``buffer_ab_bytes`` is the buffer of the port at ``a`` sending towards ``b``; likewise
    ``buffer_ba_bytes``. ``kind`` groups links for switch options (host, fabric, border, wan,
    bottleneck...)."""

    a: str
    b: str
    rate_bps: int
    delay_ps: int
    buffer_ab_bytes: int
    buffer_ba_bytes: int
    kind: str = "fabric"


@dataclass
class Topology:
    """Nodes and links. Hosts get ids 0..n_hosts-1 in the order they appear in ``nodes``.
    ``incast_receiver`` names the host an incast sends to unless the workload names one (None:
    host 0): a topology with a bottleneck names a host behind it, so that the incast's flows
    cross it."""

    name: str
    nodes: list[NodeSpec] = field(default_factory=list)
    links: list[LinkSpec] = field(default_factory=list)
    incast_receiver: str | None = None

    @property
    def hosts(self) -> list[NodeSpec]:
        return [n for n in self.nodes if n.kind == HOST]

    @property
    def switches(self) -> list[NodeSpec]:
        return [n for n in self.nodes if n.kind == SWITCH]

    @property
    def n_hosts(self) -> int:
        return sum(1 for n in self.nodes if n.kind == HOST)

    @property
    def n_dcs(self) -> int:
        return len({n.dc for n in self.nodes if n.kind == HOST})

    def host_dc(self) -> list[int]:
        """Datacenter index of each host id."""
        return [n.dc for n in self.hosts]

    def link_kinds(self) -> set[str]:
        return {link.kind for link in self.links}

    def designated_receiver(self) -> int:
        """Host id of ``incast_receiver`` (0 if None)."""
        if self.incast_receiver is None:
            return 0
        names = [n.name for n in self.hosts]
        if self.incast_receiver not in names:
            raise ValueError(
                f"topology {self.name}: incast_receiver {self.incast_receiver!r} is not a host"
            )
        return names.index(self.incast_receiver)

    def bottleneck_sides(self) -> tuple[int, ...]:
        """Per host id, the part of the network the host is in once the links of kind
        :data:`BOTTLENECK` are cut (parts numbered in host order from 0); empty if there is no
        such link. Every path between hosts in different parts crosses a bottleneck link."""
        if BOTTLENECK not in self.link_kinds():
            return ()
        parent = {n.name: n.name for n in self.nodes}

        def root(name: str) -> str:
            while parent[name] != name:
                parent[name] = parent[parent[name]]
                name = parent[name]
            return name

        for link in self.links:
            if link.kind != BOTTLENECK:
                parent[root(link.a)] = root(link.b)
        parts: dict[str, int] = {}
        return tuple(parts.setdefault(root(h.name), len(parts)) for h in self.hosts)

    def validate(self) -> None:
        """Raise ValueError for duplicate names, dangling links, or non-positive rates."""
        names = [n.name for n in self.nodes]
        if len(set(names)) != len(names):
            raise ValueError(f"topology {self.name}: duplicate node names")
        known = set(names)
        for link in self.links:
            if link.a not in known or link.b not in known:
                raise ValueError(
                    f"topology {self.name}: link {link.a}-{link.b} names an unknown node"
                )
            if link.rate_bps <= 0:
                raise ValueError(f"topology {self.name}: link {link.a}-{link.b} has rate <= 0")
            if link.delay_ps < 0:
                raise ValueError(f"topology {self.name}: link {link.a}-{link.b} has delay < 0")
            if link.buffer_ab_bytes <= 0 or link.buffer_ba_bytes <= 0:
                raise ValueError(f"topology {self.name}: link {link.a}-{link.b} has buffer <= 0")


def add_switch_latency(topo: Topology, latency_ps: int) -> None:
    """Every switch traversal of ``topo`` takes ``latency_ps`` more: each switch-to-switch
    link's delay grows by it and each host link's by half of it, so every host-to-host path
    (two host links and its switches' links in between) is exactly its switches' latency
    longer, in both directions (for a latency in whole even picoseconds). Where along the path
    the time is spent differs from a switch pipeline, not how long the path takes."""
    if latency_ps <= 0:
        return
    hosts = {n.name for n in topo.nodes if n.kind == HOST}
    topo.links[:] = [
        replace(
            link,
            delay_ps=link.delay_ps + (latency_ps // 2 if hosts & {link.a, link.b} else latency_ps),
        )  # fmt: skip
        for link in topo.links
    ]

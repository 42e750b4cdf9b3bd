"""Shortest-path (hop count) equal-cost routing tables and path properties.

For every destination host, a breadth-first search gives each node's hop distance to it; a
node's equal-cost next hops are its out-edges (one per parallel link) to neighbours one hop
closer. Path properties (base RTT, bottleneck rate) follow the first equal-cost edge at each
hop; the builders here make all equal-cost paths identical in those properties.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

from uno.core.units import BITS_PER_BYTE, PS_PER_S, serialization_ps
from uno.topo.base import HOST, Topology


@dataclass(frozen=True)
class Edge:
    """Directed edge: the output port at ``src`` of link ``link_index`` towards ``dst``."""

    edge_id: int
    link_index: int
    src: int  # node index
    dst: int  # node index
    rate_bps: int
    delay_ps: int
    buffer_bytes: int
    kind: str


@dataclass(frozen=True)
class PathInfo:
    """Properties of the path a flow's packets take (data forward, ACKs back)."""

    hops: int
    base_rtt_ps: int
    bottleneck_bps: int
    one_way_delay_ps: int  # propagation only

    def bdp_bytes(self) -> float:
        """Bandwidth-delay product at the bottleneck rate over the base RTT, in bytes."""
        return self.bottleneck_bps * self.base_rtt_ps / (BITS_PER_BYTE * PS_PER_S)


class Routing:
    """Equal-cost next-hop tables for ``topo``."""

    def __init__(self, topo: Topology):
        self.topo = topo
        self.node_index = {n.name: i for i, n in enumerate(topo.nodes)}
        self.host_nodes = [i for i, n in enumerate(topo.nodes) if n.kind == HOST]
        self.host_id_of_node = {node: hid for hid, node in enumerate(self.host_nodes)}
        self.edges: list[Edge] = []
        self.out_edges: list[list[int]] = [[] for _ in topo.nodes]
        for li, link in enumerate(topo.links):
            a, b = self.node_index[link.a], self.node_index[link.b]
            for src, dst, buf in ((a, b, link.buffer_ab_bytes), (b, a, link.buffer_ba_bytes)):
                e = Edge(
                    len(self.edges), li, src, dst, link.rate_bps, link.delay_ps, buf, link.kind
                )
                self.edges.append(e)
                self.out_edges[src].append(e.edge_id)
        # next_hops[node][host_id] -> tuple of edge ids
        n_nodes = len(topo.nodes)
        self._tails: dict[tuple[int, int], tuple[Edge, ...]] = {}
        self.next_hops: list[list[tuple[int, ...]]] = [
            [() for _ in self.host_nodes] for _ in range(n_nodes)
        ]
        # A host with a single link reaches the rest of the network through its switch, so
        # every other node's next hops towards it are those towards that switch: one search per
        # switch serves all its single-homed hosts (the same tables, 10-30x fewer searches).
        via_switch: dict[int, list[tuple[int, ...]]] = {}
        in_degree = [0] * n_nodes
        for e in self.edges:
            in_degree[e.dst] += 1
        for hid, hnode in enumerate(self.host_nodes):
            out = self.out_edges[hnode]
            sw = self.edges[out[0]].dst if len(out) == 1 else -1
            if sw >= 0 and in_degree[hnode] == 1 and topo.nodes[sw].kind != HOST:
                hops_to_sw = via_switch.get(sw)
                if hops_to_sw is None:
                    hops_to_sw = via_switch[sw] = self._next_hops_towards(sw)
                down = tuple(e for e in self.out_edges[sw] if self.edges[e].dst == hnode)
                for u in range(n_nodes):
                    self.next_hops[u][hid] = hops_to_sw[u]
                self.next_hops[sw][hid] = down
                self.next_hops[hnode][hid] = ()
            else:
                hops = self._next_hops_towards(hnode)
                for u in range(n_nodes):
                    self.next_hops[u][hid] = hops[u]

    def _next_hops_towards(self, root: int) -> list[tuple[int, ...]]:
        """Per node, its out-edges to neighbours one hop closer to ``root`` (hop count)."""
        dist = self._bfs(root)
        out: list[tuple[int, ...]] = []
        for u in range(len(self.topo.nodes)):
            du = dist[u]
            if du <= 0:
                out.append(())
                continue
            out.append(tuple(e for e in self.out_edges[u] if dist[self.edges[e].dst] == du - 1))
        return out

    def _bfs(self, root: int) -> list[int]:
        dist = [-1] * len(self.topo.nodes)
        dist[root] = 0
        frontier = deque([root])
        while frontier:
            u = frontier.popleft()
            for e in self.out_edges[u]:
                v = self.edges[e].dst
                if dist[v] < 0:
                    dist[v] = dist[u] + 1
                    # hosts do not forward: do not expand through a host other than the root
                    if self.topo.nodes[v].kind != HOST:
                        frontier.append(v)
        return dist

    def reachable(self, src_host: int, dst_host: int) -> bool:
        return bool(self.next_hops[self.host_nodes[src_host]][dst_host])

    def path_edges(self, src_host: int, dst_host: int) -> list[Edge]:
        """Edges of the first equal-cost path from ``src_host`` to ``dst_host``."""
        return list(self._edges_from(self.host_nodes[src_host], dst_host, src_host))

    def _edges_from(self, node: int, dst_host: int, src_host: int) -> tuple[Edge, ...]:
        """The first equal-cost path's edges from ``node`` to ``dst_host``, memoised per
        (node, destination): every host under a switch shares the switch's tail."""
        key = (node, dst_host)
        found = self._tails.get(key)
        if found is not None:
            return found
        if node == self.host_nodes[dst_host]:
            path: tuple[Edge, ...] = ()
        else:
            hops = self.next_hops[node][dst_host]
            if not hops:
                raise ValueError(f"no route from host {src_host} to host {dst_host}")
            e = self.edges[hops[0]]
            path = (e, *self._edges_from(e.dst, dst_host, src_host))
        self._tails[key] = path
        return path

    def path_info(self, src_host: int, dst_host: int, data_bytes: int, ack_bytes: int) -> PathInfo:
        """Base RTT of a data packet of ``data_bytes`` forward and its ACK of ``ack_bytes`` back."""
        fwd = self._edges_from(self.host_nodes[src_host], dst_host, src_host)
        rev = self._edges_from(self.host_nodes[dst_host], src_host, dst_host)
        rtt = sum(e.delay_ps + serialization_ps(data_bytes, e.rate_bps) for e in fwd)
        rtt += sum(e.delay_ps + serialization_ps(ack_bytes, e.rate_bps) for e in rev)
        return PathInfo(
            hops=len(fwd),
            base_rtt_ps=rtt,
            bottleneck_bps=min(e.rate_bps for e in fwd),
            one_way_delay_ps=sum(e.delay_ps for e in fwd),
        )

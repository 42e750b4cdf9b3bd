"""Shortest-path (hop count) equal-cost routing tables and path properties.

For every destination host, a breadth-first search gives each node's hop distance to it; a
node's equal-cost next hops are its out-edges (one per parallel link) to neighbours one hop
closer. Path properties (base RTT, bottleneck rate) follow the first equal-cost edge at each
hop; the builders here make all equal-cost paths identical in those properties.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import numpy as np

from uno.core.arrays import concat_ranges
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
        # per edge, with one extra slot at the end (index -1) for the paddings of path matrices
        self._edge_dst = np.array([e.dst for e in self.edges] + [-1], dtype=np.int64)
        self._edge_delay_ps = np.array([e.delay_ps for e in self.edges] + [0], dtype=np.int64)
        self._edge_rate_bps = np.array([e.rate_bps for e in self.edges] + [1], dtype=np.int64)
        n_nodes = len(topo.nodes)
        self._tails: dict[tuple[int, int], tuple[Edge, ...]] = {}
        # A host with a single link reaches the rest of the network through its switch, so
        # every other node's next hops towards it are those towards that switch: one search per
        # switch serves all its single-homed hosts (the same tables, 10-30x fewer searches).
        in_degree = [0] * n_nodes
        for e in self.edges:
            in_degree[e.dst] += 1
        roots: dict[int, int] = {}  # node searched from -> its row in the searches
        self._root_of_host: list[int] = []
        self._downs: list[tuple[int, tuple[int, ...]] | None] = []  # (switch, edges down)
        for hnode in self.host_nodes:
            out = self.out_edges[hnode]
            sw = self.edges[out[0]].dst if len(out) == 1 else -1
            if sw >= 0 and in_degree[hnode] == 1 and topo.nodes[sw].kind != HOST:
                root = sw
                down = tuple(e for e in self.out_edges[sw] if self.edges[e].dst == hnode)
                self._downs.append((sw, down))
            else:
                root = hnode
                self._downs.append(None)
            self._root_of_host.append(roots.setdefault(root, len(roots)))
        # per search: the chosen edges grouped by (root, node), and how many each
        self._chosen, self._counts = self._search_towards(list(roots))
        self._next_hop_csr = self._build_csr()
        self._first_hop: np.ndarray | None = None
        self._next_hops: list[list[tuple[int, ...]]] | None = None

    @property
    def next_hops(self) -> list[list[tuple[int, ...]]]:
        """``next_hops[node][host_id]``: the tuple of edge ids out of ``node`` one hop closer to
        host ``host_id`` (built on first use; :meth:`next_hop_table` holds the same tables)."""
        if self._next_hops is None:
            n_nodes = len(self.topo.nodes)
            ends = np.cumsum(self._counts).tolist()
            flat = self._chosen.tolist()
            starts = [0, *ends[:-1]]
            # one tuple per (root, node), shared by the hosts of the root
            tuples = [tuple(flat[a:b]) for a, b in zip(starts, ends, strict=True)]
            towards = [tuples[r * n_nodes : (r + 1) * n_nodes] for r in range(len(self._counts))]
            table = [[towards[r][u] for r in self._root_of_host] for u in range(n_nodes)]
            for hid, hnode in enumerate(self.host_nodes):
                if self._downs[hid] is not None:
                    sw, down = self._downs[hid]
                    table[sw][hid] = down
                    table[hnode][hid] = ()
            self._next_hops = table
        return self._next_hops

    def _search_towards(self, roots: list[int]) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`_next_hops_towards` of every node in ``roots`` at once (one breadth-first
        search per root, run level by level for all roots together as array operations): the
        chosen edge ids grouped by (root, node) in root-major order, each group in out-edge
        order, and the size of every group (shape (roots, nodes))."""
        n_nodes = len(self.topo.nodes)
        n_roots = len(roots)
        src = np.array([e.src for e in self.edges], dtype=np.int64)
        dst = np.array([e.dst for e in self.edges], dtype=np.int64)
        if n_roots == 0 or len(src) == 0:
            return np.zeros(0, dtype=np.int64), np.zeros((n_roots, n_nodes), dtype=np.int64)
        forwards = np.array([n.kind != HOST for n in self.topo.nodes])
        # the edges into each node, for "is any in-edge's tail on the frontier"
        by_dst = np.argsort(dst, kind="stable")
        has_in = np.bincount(dst, minlength=n_nodes) > 0
        first_in = np.searchsorted(dst[by_dst], np.arange(n_nodes))[has_in]
        rows = np.arange(n_roots)
        dist = np.full((n_roots, n_nodes), -1, dtype=np.int64)
        dist[rows, roots] = 0
        frontier = np.zeros((n_roots, n_nodes), dtype=bool)
        frontier[rows, roots] = True  # the root expands, host or not
        level = 0
        while frontier.any():
            level += 1
            reached = np.zeros((n_roots, n_nodes), dtype=bool)
            tails = frontier[:, src[by_dst]]
            reached[:, has_in] = np.logical_or.reduceat(tails, first_in, axis=1)
            new = reached & (dist < 0)
            dist[new] = level
            # hosts do not forward: do not expand through a host other than the root
            frontier = new & forwards
        # an out-edge leads one hop closer to the root
        d_src = dist[:, src]
        closer = (d_src > 0) & (dist[:, dst] == d_src - 1)
        # out_edges lists each node's edges by increasing id: group the chosen ones by tail
        by_src = np.argsort(src, kind="stable")
        r_idx, col = np.nonzero(closer[:, by_src])
        chosen = by_src[col]
        counts = np.bincount(r_idx * n_nodes + src[chosen], minlength=n_roots * n_nodes)
        return chosen, counts.reshape(n_roots, n_nodes)

    def _build_csr(self) -> tuple[np.ndarray, np.ndarray]:
        """The next-hop tables as a CSR (:meth:`next_hop_table`), from the searches."""
        n_nodes, n_hosts = len(self.topo.nodes), len(self.host_nodes)
        root_of_host = np.asarray(self._root_of_host, dtype=np.int64)
        starts = np.zeros(self._counts.size, dtype=np.int64)
        np.cumsum(self._counts.ravel()[:-1], out=starts[1:])
        # row node x n_hosts + host reads the group of (the host's root, node)
        count = self._counts.T[:, root_of_host].copy()
        start = starts.reshape(self._counts.shape).T[:, root_of_host].copy()
        # a single-homed host: its switch's edges down to it, nothing from the host itself
        down_edges: list[int] = []
        for hid, hnode in enumerate(self.host_nodes):
            if self._downs[hid] is not None:
                sw, down = self._downs[hid]
                count[sw, hid] = len(down)
                start[sw, hid] = len(self._chosen) + len(down_edges)
                down_edges.extend(down)
                count[hnode, hid] = 0
        pool = np.concatenate([self._chosen, np.asarray(down_edges, dtype=np.int64)])
        ptr = np.zeros(n_nodes * n_hosts + 1, dtype=np.int64)
        np.cumsum(count.ravel(), out=ptr[1:])
        flat = pool[concat_ranges(start.ravel(), count.ravel())]
        return ptr, flat

    def _next_hops_towards(self, root: int) -> list[tuple[int, ...]]:
        """Per node, its out-edges to neighbours one hop closer to ``root`` (hop count): the
        definition, one search at a time (the tables are built by
        :meth:`_search_towards`)."""
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
        ptr = self._next_hop_csr[0]
        row = self.host_nodes[src_host] * len(self.host_nodes) + dst_host
        return bool(ptr[row + 1] > ptr[row])

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
            first = int(self.first_hop_table()[node * len(self.host_nodes) + dst_host])
            if first < 0:
                raise ValueError(f"no route from host {src_host} to host {dst_host}")
            e = self.edges[first]
            path = (e, *self._edges_from(e.dst, dst_host, src_host))
        self._tails[key] = path
        return path

    def next_hop_table(self) -> tuple[np.ndarray, np.ndarray]:
        """``next_hops`` as a CSR: the equal-cost next-hop edge ids of (node, destination
        host) are ``edges[ptr[row]:ptr[row + 1]]``, row = node x n_hosts + host."""
        return self._next_hop_csr

    def first_hop_table(self) -> np.ndarray:
        """The first equal-cost next-hop edge of every (node, destination host), -1 where
        there is none, as a flat array (row = node x n_hosts + host); built once."""
        if self._first_hop is None:
            ptr, flat = self.next_hop_table()
            first = np.full(len(ptr) - 1, -1, dtype=np.int64)
            some = ptr[1:] > ptr[:-1]
            first[some] = flat[ptr[:-1][some]]
            self._first_hop = first
        return self._first_hop

    def path_edge_matrix(self, src_hosts: np.ndarray, dst_hosts: np.ndarray) -> np.ndarray:
        """The edge ids of the first equal-cost path of every (src, dst) host pair, one row
        per pair in hop order, padded with -1 (shape (pairs, longest path)). Raises ValueError
        for a pair without a route."""
        src_hosts = np.asarray(src_hosts, dtype=np.int64)
        dst_hosts = np.asarray(dst_hosts, dtype=np.int64)
        first = self.first_hop_table()
        host_node = np.asarray(self.host_nodes, dtype=np.int64)
        edge_dst = self._edge_dst
        n_hosts = len(self.host_nodes)
        node = host_node[src_hosts]
        target = host_node[dst_hosts]
        rows = np.arange(len(node))
        columns = []
        moving = rows[node != target]
        for _ in range(len(self.topo.nodes)):  # a path visits each node at most once
            if len(moving) == 0:
                break
            e = first[node[moving] * n_hosts + dst_hosts[moving]]
            if (e < 0).any():
                bad = moving[np.argmax(e < 0)]
                raise ValueError(f"no route from host {src_hosts[bad]} to host {dst_hosts[bad]}")
            column = np.full(len(node), -1, dtype=np.int64)
            column[moving] = e
            columns.append(column)
            node[moving] = edge_dst[e]
            moving = moving[node[moving] != target[moving]]
        if not columns:
            return np.full((len(node), 0), -1, dtype=np.int64)
        return np.stack(columns, axis=1)

    def path_infos(
        self, src_hosts: np.ndarray, dst_hosts: np.ndarray, data_bytes: int, ack_bytes: int
    ) -> list[PathInfo]:
        """:meth:`path_info` of every (src, dst) host pair (arrays), computed together; pairs
        with equal properties share one PathInfo."""
        fwd = self.path_edge_matrix(src_hosts, dst_hosts)
        if len(fwd) == 0:
            return []
        if fwd.shape[1] == 0 or (fwd[:, 0] < 0).any():
            raise ValueError("a host has no path to itself")
        rtt = self.base_rtts_ps(src_hosts, dst_hosts, np.full(len(fwd), data_bytes), ack_bytes, fwd)
        on = fwd >= 0
        keys = zip(
            on.sum(axis=1).tolist(),
            rtt.tolist(),
            np.where(on, self._edge_rate_bps[fwd], np.iinfo(np.int64).max).min(axis=1).tolist(),
            self._edge_delay_ps[fwd].sum(axis=1).tolist(),
            strict=True,
        )
        interned: dict[tuple[int, int, int, int], PathInfo] = {}
        infos = []
        for key in keys:
            info = interned.get(key)
            if info is None:
                info = interned[key] = PathInfo(*key)
            infos.append(info)
        return infos

    def base_rtts_ps(
        self,
        src_hosts: np.ndarray,
        dst_hosts: np.ndarray,
        data_bytes: np.ndarray,
        ack_bytes: int,
        fwd: np.ndarray | None = None,
    ) -> np.ndarray:
        """The base RTT in ps (int64) of each (src, dst, data packet size) as :meth:`path_info`
        gives it: a ``data_bytes[i]``-byte packet forward and an ``ack_bytes`` ACK back on the
        first paths. ``fwd``: the forward paths' :meth:`path_edge_matrix`, if at hand."""
        if fwd is None:
            fwd = self.path_edge_matrix(src_hosts, dst_hosts)
        rev = self.path_edge_matrix(dst_hosts, src_hosts)
        data_bytes = np.asarray(data_bytes, dtype=np.int64)
        delay, rate = self._edge_delay_ps, self._edge_rate_bps
        ack_ps = [serialization_ps(ack_bytes, e.rate_bps) for e in self.edges]
        rev_ps = (delay + np.array([*ack_ps, 0], dtype=np.int64))[rev].sum(axis=1)
        # serialisation_ps in int64: exact while size x 8 x 10^12 fits
        if len(data_bytes) and int(data_bytes.max()) * BITS_PER_BYTE * PS_PER_S >= 2**63:
            ser = np.array(
                [[serialization_ps(int(b), self.edges[e].rate_bps) if e >= 0 else 0 for e in row]
                 for b, row in zip(data_bytes.tolist(), fwd.tolist(), strict=True)],
                dtype=np.int64,
            ).reshape(fwd.shape)  # fmt: skip
        else:
            bits_ps = (data_bytes * (BITS_PER_BYTE * PS_PER_S))[:, None]
            ser = np.where(fwd >= 0, -(-bits_ps // rate[fwd]), 0)
        return delay[fwd].sum(axis=1) + ser.sum(axis=1) + rev_ps

    def queue_drains_ps(self, src_hosts: np.ndarray, dst_hosts: np.ndarray) -> list[int]:
        """Per (src, dst) host pair, the time in ps to drain a full buffer at every switch
        queue on the first path (:func:`uno.scenario.queue_drain_ps`)."""
        nodes = self.topo.nodes
        per_edge = [
            0 if nodes[e.src].kind == HOST
            else e.buffer_bytes * BITS_PER_BYTE * PS_PER_S // e.rate_bps
            for e in self.edges
        ]  # fmt: skip
        fwd = self.path_edge_matrix(src_hosts, dst_hosts)
        if max(per_edge, default=0) * max(1, fwd.shape[1]) >= 2**63:  # beyond int64: exactly
            return [sum(per_edge[e] for e in row if e >= 0) for row in fwd.tolist()]
        return np.array([*per_edge, 0], dtype=np.int64)[fwd].sum(axis=1).tolist()

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

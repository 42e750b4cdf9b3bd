"""Topology builders and routing, checked against the reference numbers of docs/design.md."""

from __future__ import annotations

import pytest

import uno
from uno.api import to_run_config
from uno.config.validate import check_config
from uno.scenario import host_facts, reference_paths
from uno.topo.registry import build_topology
from uno.topo.routing import Routing


def topo_of(overrides):
    cfg = to_run_config(uno.compose(overrides))
    topo = build_topology(cfg.topo, 4160, 64)
    return topo, Routing(topo)


def test_two_dc_structure():
    topo, routing = topo_of(["topo=two_dc"])
    assert topo.n_hosts == 256 and topo.n_dcs == 2
    kinds = [link.kind for link in topo.links]
    assert kinds.count("wan") == 8
    assert kinds.count("border") == 2 * 16 * 8  # 16 cores per DC, 8 links each
    assert kinds.count("host") == 256
    hosts = host_facts(routing)
    assert hosts.dc[:128] == (0,) * 128 and hosts.dc[128:] == (1,) * 128


def test_two_dc_reference_rtts_and_bdps():
    _, routing = topo_of(["topo=two_dc"])
    intra = routing.path_info(0, 127, 4160, 64)
    inter = routing.path_info(0, 255, 4160, 64)
    assert intra.hops == 6 and inter.hops == 9
    # docs/design.md: 14.03 us / 175,344 B intra, 1792 us / 22.4 MB inter
    assert intra.base_rtt_ps == 14_027_520
    assert intra.bdp_bytes() == pytest.approx(175_344)
    assert inter.base_rtt_ps == 1_792_041_280
    assert inter.bdp_bytes() == pytest.approx(22_400_516, abs=1)
    assert inter.base_rtt_ps / intra.base_rtt_ps == pytest.approx(127.75, abs=0.01)


def test_inter_rtt_ratio_sets_wan_delay():
    _, routing = topo_of(["topo=two_dc", "topo.inter_rtt_ratio=128"])
    intra = routing.path_info(0, 127, 4160, 64).base_rtt_ps
    inter = routing.path_info(0, 255, 4160, 64).base_rtt_ps
    assert inter / intra == pytest.approx(128, rel=1e-6)


def test_ecmp_fanout_in_two_dc():
    topo, routing = topo_of(["topo=two_dc"])
    idx = routing.node_index
    # ToR up to 4 aggs, agg up to 4 cores, core to border over 8 parallel links, 8 WAN links
    assert len(routing.next_hops[idx["dc0/tor0"]][200]) == 4
    assert len(routing.next_hops[idx["dc0/agg0"]][200]) == 4
    assert len(routing.next_hops[idx["dc0/core0"]][200]) == 8
    assert len(routing.next_hops[idx["dc0/border"]][200]) == 8
    # intra-DC traffic never takes the border
    assert all(routing.edges[e].kind != "border" for e in routing.next_hops[idx["dc0/core0"]][100])


def test_fat_tree_sizes_and_paths():
    topo, routing = topo_of(["topo=fat_tree", "topo.k=4"])
    assert topo.n_hosts == 16
    assert len(topo.switches) == 4 * 4 + 4  # k pods x (k/2 tor + k/2 agg) + (k/2)^2 cores
    assert routing.path_info(0, 1, 4160, 64).hops == 2  # same ToR
    assert routing.path_info(0, 2, 4160, 64).hops == 4  # same pod
    assert routing.path_info(0, 15, 4160, 64).hops == 6  # other pod


def test_oversubscribed_fat_tree_as_the_reps_authors_8_to_1_tree():
    """k = 16, ToR 8 down / 2 up, aggregation 8 down / 4 up: 128 ToRs, 32 aggregation
    switches, 8 cores of 16 down ports; 8 paths between pods (2 x 4), 2 within a pod."""
    topo, routing = topo_of(["topo=fat_tree", "topo.k=16", "topo.tor_uplinks=2",
                             "topo.agg_uplinks=4"])  # fmt: skip
    tiers = [n.tier for n in topo.switches]
    assert topo.n_hosts == 1024
    assert (tiers.count("tor"), tiers.count("agg"), tiers.count("core")) == (128, 32, 8)
    degree = {}
    for link in topo.links:
        for end in (link.a, link.b):
            degree[end] = degree.get(end, 0) + 1
    assert {degree[f"core{c}"] for c in range(8)} == {16}
    assert {degree[f"agg{a}"] for a in range(32)} == {8 + 4}
    assert {degree[f"tor{t}"] for t in range(128)} == {8 + 2}
    assert routing.path_info(0, 1023, 4160, 64).hops == 6
    with pytest.raises(uno.core.errors.ConfigError, match=r"^topo\.tor_uplinks"):
        check_config(to_run_config(uno.compose(["topo=fat_tree", "topo.k=4",
                                                "topo.tor_uplinks=3"])))  # fmt: skip


@pytest.mark.parametrize("kind", ["fat_tree", "dumbbell", "gear_two_dc", "two_dc"])
def test_switch_latency_adds_each_switch_once_to_every_path(kind):
    """0.5 us per switch traversal: every host-to-host path is (switches on it) x 0.5 us
    longer one way, in both directions, on every topology."""
    base, routing0 = topo_of([f"topo={kind}"])
    _, routing1 = topo_of([f"topo={kind}", "topo.switch_latency_us=0.5"])
    n = base.n_hosts
    for src, dst in ((0, n - 1), (n - 1, 0), (0, 1), (1, n // 2)):
        a = routing0.path_info(src, dst, 4160, 64)
        b = routing1.path_info(src, dst, 4160, 64)
        switches = a.hops - 1
        assert b.base_rtt_ps - a.base_rtt_ps == 2 * switches * 500_000


def test_dumbbell_bottleneck():
    topo, routing = topo_of(["topo=dumbbell", "topo.n_senders=3", "topo.bottleneck_rate_gbps=10"])
    assert topo.n_hosts == 4
    path = routing.path_info(0, 3, 4160, 64)
    assert path.hops == 3 and path.bottleneck_bps == 10_000_000_000


def test_reference_paths_pick_intra_and_widest():
    _, routing = topo_of(["topo=two_dc"])
    refs = reference_paths(routing, host_facts(routing), 4160, 64)
    (intra, intra_dst), (inter, inter_dst) = refs.intra, refs.inter
    assert intra.base_rtt_ps == 14_027_520 and intra.hops == 6  # the 6-hop class path
    assert inter.base_rtt_ps == 1_792_041_280 and inter.hops == 9  # the 9-hop class path
    assert refs.widest.base_rtt_ps == 1_792_041_280
    assert intra_dst < 128 <= inter_dst


@pytest.mark.parametrize(
    "overrides",
    [["topo=two_dc"], ["topo=fat_tree"], ["topo=dumbbell"], ["topo=two_dc", "topo.k=4"]],
)
def test_next_hops_equal_a_search_from_every_host(overrides):
    """The tables shared through each host's switch are those a search rooted at every host
    gives (the definition: out-edges to neighbours one hop closer, hosts not forwarding)."""
    _, routing = topo_of(overrides)
    for hid, hnode in enumerate(routing.host_nodes):
        expect = routing._next_hops_towards(hnode)
        got = [routing.next_hops[u][hid] for u in range(len(expect))]
        assert got == expect, f"host {hid}"


@pytest.mark.parametrize(
    "overrides",
    [["topo=two_dc"], ["topo=fat_tree"], ["topo=dumbbell"], ["topo=gear_two_dc"],
     ["topo=mlcc_two_dc"]],
)  # fmt: skip
def test_path_tables_for_all_pairs_match_one_pair_at_a_time(overrides):
    """The array forms of the routing tables and path facts (the CSR of next hops, the
    first-path matrix, path infos, base RTTs, drain times, marking thresholds) equal the
    one-pair-at-a-time definitions, value and type."""
    import numpy as np

    from uno.scenario import (
        marking_plan,
        marking_threshold_bytes,
        marking_thresholds_bytes,
        queue_drain_ps,
    )

    cfg = to_run_config(uno.compose([*overrides, "switch=ecn"]))
    topo = build_topology(cfg.topo, 4160, 64)
    routing = Routing(topo)
    n_hosts = len(routing.host_nodes)
    ptr, flat = routing.next_hop_table()
    for u in range(len(topo.nodes)):
        for h in range(n_hosts):
            row = u * n_hosts + h
            assert tuple(flat[ptr[row] : ptr[row + 1]].tolist()) == routing.next_hops[u][h]
    rng = np.random.default_rng(3)
    src = rng.integers(0, n_hosts, 400)
    dst = (src + rng.integers(1, n_hosts, 400)) % n_hosts
    paths = routing.path_edge_matrix(src, dst)
    infos = routing.path_infos(src, dst, 4160, 64)
    sizes = rng.integers(64, 4160, 400)
    rtts = routing.base_rtts_ps(src, dst, sizes, 64)
    drains = routing.queue_drains_ps(src, dst)
    refs = reference_paths(routing, host_facts(routing), 4160, 64)
    marking = marking_plan(cfg.switch, routing, refs.widest.bdp_bytes(), refs.intra[0].bdp_bytes())
    ks = marking_thresholds_bytes(marking, routing, src, dst)
    for i, (s, d) in enumerate(zip(src.tolist(), dst.tolist(), strict=True)):
        edges = routing.path_edges(s, d)
        assert [e for e in paths[i].tolist() if e >= 0] == [e.edge_id for e in edges]
        assert infos[i] == routing.path_info(s, d, 4160, 64)
        assert rtts[i] == routing.path_info(s, d, int(sizes[i]), 64).base_rtt_ps
        assert drains[i] == queue_drain_ps(routing, s, d)
        k = marking_threshold_bytes(marking, edges)
        assert ks[i] == k and type(ks[i]) is type(k)

"""The Gear (§IV-B) and MLCC (§4.1) two-datacenter topologies: sizes, rates, delays and buffers
against the papers' numbers, oversubscription, routes and ECMP between and within the DCs, base
RTTs, config checks, and a short end-to-end run."""

from __future__ import annotations

from collections import Counter

import pytest
from conftest import flows_override, run

import uno
from uno.api import to_run_config
from uno.config.validate import check_config
from uno.core.errors import ConfigError
from uno.core.units import serialization_ps
from uno.scenario import host_facts, reference_paths
from uno.topo.registry import TOPO_KINDS, build_topology
from uno.topo.routing import Routing

DATA, ACK = 4160, 64
MIB = 1 << 20
GBPS = 1_000_000_000


def topo_of(overrides):
    cfg = to_run_config(uno.compose(overrides))
    topo = build_topology(cfg.topo, DATA, ACK)
    return topo, Routing(topo)


def links_between(topo, tier_a: str, tier_b: str):
    tier = {n.name: n.tier for n in topo.nodes}
    return [link for link in topo.links if {tier[link.a], tier[link.b]} == {tier_a, tier_b}]


def capacity(links) -> int:
    return sum(link.rate_bps for link in links)


def test_both_are_registered_topo_kinds():
    assert "gear_two_dc" in TOPO_KINDS and "mlcc_two_dc" in TOPO_KINDS


# ---- Gear ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def gear():
    return topo_of(["topo=gear_two_dc"])


def test_gear_structure_matches_the_paper(gear):
    topo, routing = gear
    topo.validate()
    # 128 servers per fabric in 4 pods of 4 ToR + 4 aggregation switches, 8 core switches
    assert topo.n_hosts == 256 and topo.n_dcs == 2
    tiers = Counter((n.dc, n.tier) for n in topo.switches)
    for dc in range(2):
        assert tiers[(dc, "tor")] == 16 and tiers[(dc, "agg")] == 16 and tiers[(dc, "core")] == 8
    # hosts first and contiguous per DC, DC 0 first
    assert all(n.kind == "host" for n in topo.nodes[:256])
    assert host_facts(routing).dc == (0,) * 128 + (1,) * 128
    kinds = Counter(link.kind for link in topo.links)
    # 128 host links, 16 ToRs x 4 aggs, 16 aggs x 2 cores per DC; one WAN link per core pair
    assert kinds == {"host": 256, "fabric": 2 * (64 + 32), "wan": 8}
    for link in topo.links:
        assert link.rate_bps == 100_000_000_000  # 100 Gb/s everywhere
        # switch ports only: the host side of a host link is the NIC
        switch_ports = [link.buffer_ba_bytes]
        if link.kind != "host":
            switch_ports.append(link.buffer_ab_bytes)
        assert all(b == 10_000_000 for b in switch_ports)  # 10 MB per switch port
        if link.kind == "wan":
            assert link.delay_ps == 25_000_000_000  # 25 ms
            assert link.a.startswith("dc0/core") and link.b == link.a.replace("dc0", "dc1")
        else:
            assert link.delay_ps == pytest.approx(20_000_000 / 6, abs=1)


def test_gear_oversubscription_is_4_to_1(gear):
    topo, _ = gear
    tor, agg = "dc0/tor0", "dc0/agg0"
    down = capacity(lk for lk in topo.links if lk.b == tor and lk.kind == "host")
    up = capacity(lk for lk in topo.links if lk.a == tor and lk.kind == "fabric")
    agg_down = capacity(lk for lk in topo.links if lk.b == agg)
    agg_up = capacity(lk for lk in topo.links if lk.a == agg)
    # a fat-tree pod: every ToR to every agg (2:1), every agg to 2 of the 8 cores (2:1)
    assert down / up == 2 and agg_down / agg_up == 2
    assert (down / up) * (agg_down / agg_up) == 4
    # the same ratio over the whole fabric: host capacity / aggregation-to-core capacity
    hosts = capacity(lk for lk in topo.links if lk.kind == "host" and lk.b.startswith("dc0/"))
    core = capacity(links_between(topo, "agg", "core"))
    assert hosts / (core / 2) == 4


def test_gear_routes_and_ecmp(gear):
    topo, routing = gear
    idx = routing.node_index
    for src, dst in [(0, 1), (0, 8), (0, 127), (0, 128), (255, 0), (130, 250)]:
        assert routing.reachable(src, dst) and routing.reachable(dst, src)
    # intra-DC across pods: ToR -> 4 aggs -> 2 cores each; never the WAN
    assert len(routing.next_hops[idx["dc0/tor0"]][127]) == 4
    assert len(routing.next_hops[idx["dc0/agg0"]][127]) == 2
    assert all(e.kind != "wan" for e in routing.path_edges(0, 127))
    # inter-DC: the same 4 x 2 fan-out, then each core's own WAN link
    assert len(routing.next_hops[idx["dc0/tor0"]][255]) == 4
    assert len(routing.next_hops[idx["dc0/agg0"]][255]) == 2
    assert [routing.edges[e].kind for e in routing.next_hops[idx["dc0/core0"]][255]] == ["wan"]
    assert routing.path_info(0, 255, DATA, ACK).hops == 7


def test_gear_base_rtts(gear):
    _, routing = gear
    refs = reference_paths(routing, host_facts(routing), DATA, ACK)
    intra, inter = refs.intra[0], refs.inter[0]
    # 20 us one way between pods; 25 ms + the fabric one way between DCs: RTT ~50 ms
    assert intra.hops == 6 and intra.one_way_delay_ps == pytest.approx(20_000_000, abs=10)
    per_hop = serialization_ps(DATA, 100 * GBPS) + serialization_ps(ACK, 100 * GBPS)
    assert intra.base_rtt_ps == pytest.approx(40_000_000 + 6 * per_hop, abs=20)
    assert inter.hops == 7 and inter.one_way_delay_ps == pytest.approx(25_020_000_000, abs=10)
    assert inter.base_rtt_ps == pytest.approx(50_040_000_000 + 7 * per_hop, abs=20)
    assert inter.bottleneck_bps == 100_000_000_000


def test_gear_parameters_move_the_topology():
    topo, _ = topo_of(
        ["topo=gear_two_dc", "topo.hosts_per_tor=4", "topo.core_switches=16", "topo.pods=2"]
    )
    assert topo.n_hosts == 2 * 2 * 4 * 4
    assert sum(1 for n in topo.switches if n.tier == "core") == 32
    assert sum(1 for lk in topo.links if lk.kind == "wan") == 16


def test_gear_core_count_must_split_over_aggs():
    with pytest.raises(ConfigError, match="topo.core_switches"):
        check_config(to_run_config(uno.compose(["topo=gear_two_dc", "topo.core_switches=6"])))


# ---- MLCC ---------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def mlcc():
    return topo_of(["topo=mlcc_two_dc"])


def test_mlcc_structure_matches_the_paper(mlcc):
    topo, routing = mlcc
    topo.validate()
    tiers = Counter((n.dc, n.tier) for n in topo.switches)
    for dc in range(2):  # two spines, four leaves and a DCI switch per DC
        assert tiers[(dc, "spine")] == 2 and tiers[(dc, "leaf")] == 4
        assert tiers[(dc, "border")] == 1
    assert topo.n_hosts == 2 * 4 * 32
    assert all(n.kind == "host" for n in topo.nodes[:256])
    assert host_facts(routing).dc == (0,) * 128 + (1,) * 128
    kinds = Counter(link.kind for link in topo.links)
    assert kinds == {"host": 256, "fabric": 2 * 8, "border": 2 * 2, "wan": 2}
    gbps = GBPS
    for link in topo.links:
        if link.kind == "host":
            assert (link.rate_bps, link.delay_ps) == (25 * gbps, 1_000_000)
            assert link.buffer_ba_bytes == 22 * MIB
        elif link.kind == "wan":
            assert (link.rate_bps, link.delay_ps) == (100 * gbps, 3_000_000_000)
            assert link.a == "dc0/dci" and link.b == "dc1/dci"
            assert link.buffer_ab_bytes == link.buffer_ba_bytes == 128 * MIB
        elif link.kind == "border":  # spine -> DCI
            assert (link.rate_bps, link.delay_ps) == (100 * gbps, 5_000_000)
            assert "spine" in link.a and link.b.endswith("/dci")
            assert (link.buffer_ab_bytes, link.buffer_ba_bytes) == (22 * MIB, 128 * MIB)
        else:  # leaf - spine
            assert (link.rate_bps, link.delay_ps) == (100 * gbps, 5_000_000)
            assert link.buffer_ab_bytes == link.buffer_ba_bytes == 22 * MIB


def test_mlcc_leaf_oversubscription_is_4_to_1(mlcc):
    topo, _ = mlcc
    down = capacity(lk for lk in topo.links if lk.b == "dc0/leaf0" and lk.kind == "host")
    up = capacity(lk for lk in topo.links if lk.a == "dc0/leaf0")
    assert down / up == 4


def test_mlcc_routes_and_ecmp(mlcc):
    topo, routing = mlcc
    idx = routing.node_index
    for src, dst in [(0, 1), (0, 32), (0, 127), (0, 128), (255, 0), (200, 129)]:
        assert routing.reachable(src, dst) and routing.reachable(dst, src)
    # across leaves: 2 spines; between DCs: 2 spines, then 2 parallel long-distance links
    assert len(routing.next_hops[idx["dc0/leaf0"]][127]) == 2
    assert len(routing.next_hops[idx["dc0/leaf0"]][255]) == 2
    assert len(routing.next_hops[idx["dc0/spine0"]][255]) == 1
    assert len(routing.next_hops[idx["dc0/dci"]][255]) == 2
    assert len(routing.next_hops[idx["dc1/dci"]][255]) == 2  # down to either spine
    # intra-DC traffic never climbs to the DCI switch
    assert all(e.kind in ("host", "fabric") for e in routing.path_edges(0, 127))
    kinds = [e.kind for e in routing.path_edges(0, 255)]
    assert kinds == ["host", "fabric", "border", "wan", "border", "fabric", "host"]


def test_mlcc_base_rtts(mlcc):
    _, routing = mlcc
    refs = reference_paths(routing, host_facts(routing), DATA, ACK)
    intra, inter = refs.intra[0], refs.inter[0]
    # 1 + 5 + 5 + 1 us one way across leaves; 3 ms + 22 us one way between DCs: RTT ~6 ms
    assert intra.hops == 4 and intra.one_way_delay_ps == 12_000_000
    assert inter.hops == 7 and inter.one_way_delay_ps == 3_022_000_000
    host_hop = serialization_ps(DATA, 25 * GBPS) + serialization_ps(ACK, 25 * GBPS)
    hop = serialization_ps(DATA, 100 * GBPS) + serialization_ps(ACK, 100 * GBPS)
    assert intra.base_rtt_ps == 24_000_000 + 2 * host_hop + 2 * hop
    assert inter.base_rtt_ps == 6_044_000_000 + 2 * host_hop + 5 * hop
    assert intra.bottleneck_bps == inter.bottleneck_bps == 25_000_000_000


def test_mlcc_host_limit_is_checked():
    cfg = uno.compose(["topo=mlcc_two_dc", "topo.leaves=64", "topo.hosts_per_leaf=1024"])
    with pytest.raises(ConfigError, match="topo.hosts_per_leaf"):
        check_config(to_run_config(cfg))


# ---- end to end -----------------------------------------------------------------------------


@pytest.mark.parametrize("topo,host_gbps", [("mlcc_two_dc", 25), ("gear_two_dc", 100)])
def test_short_run_completes_every_flow(topo, host_gbps):
    flows = [(0, 40, 100_000), (1, 200, 100_000), (130, 5, 100_000, 10.0)]
    r = run(
        [
            f"topo={topo}",
            "workload=flows",
            flows_override(flows),
            "cc=dctcp",
            "engine.sample_interval_us=1000",
        ]
    )
    f = r.flows
    assert len(f) == 3 and f["finish_ps"].notna().all()
    assert list(f["cls"]) == ["intra", "inter", "inter"]
    assert (f["bytes_delivered"] == 100_000).all()
    # never faster than the ideal (base RTT + message at the bottleneck rate), less the one
    # packet's first-hop serialisation the ideal counts twice
    slack = serialization_ps(DATA, host_gbps * GBPS)
    assert (f["fct_ps"] >= f["ideal_fct_ps"] - slack).all()

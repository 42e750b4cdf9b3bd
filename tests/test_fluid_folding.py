"""Folded links (uno.fluid.folding): alike links that every route crossing them splits evenly
over receive the same bytes, so one stands for its group, and the run is the one the unfolded
routes give."""

import numpy as np

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid.folding import fold_groups, fold_links
from uno.fluid.hybrid import packet_links
from uno.fluid.state import Routes
from uno.net.compiled.layout import PF

INCAST = ["engine.kind=fluid", "engine.progress=false", "workload.size_bytes=20000000"]


def _sim(overrides):
    return build_simulation(to_run_config(uno.compose([*INCAST, *overrides])))


def _routes(rt, rv=None):
    """Routes from lists of hops, each a list of (link, share)."""

    def csr(routes):
        ptr = np.cumsum([0] + [sum(len(h) for h in r) for r in routes]).astype(np.int64)
        links = np.array([x for r in routes for h in r for x, _ in h], dtype=np.int64)
        shares = np.array([w for r in routes for h in r for _, w in h], dtype=np.float64)
        return ptr, links, shares

    return Routes(*csr(rt), *csr(rv if rv is not None else [[] for _ in rt]))


def _alike(n_links):
    return np.ones((n_links, C.N_LS)), np.zeros(n_links, dtype=np.int64)


def test_only_groups_every_crossing_route_splits_evenly_over_fold():
    rows, delay = _alike(8)
    split = [[(0, 1.0)], [(1, 0.5), (2, 0.5)], [(3, 1.0)]]
    other = [[(4, 1.0)], [(2, 0.5), (1, 0.5)], [(5, 1.0)]]
    assert fold_groups(_routes([split, other]), rows, delay) == [(1, 2)]
    # a one-link hop on a member (an ECMP flow, a hashed ACK) keeps the group apart
    single = [[(4, 1.0)], [(2, 1.0)], [(5, 1.0)]]
    assert fold_groups(_routes([split, single]), rows, delay) == []
    assert fold_groups(_routes([split], [single]), rows, delay) == []
    # as does a hop over another set sharing a link, or uneven shares
    overlap = [[(4, 1.0)], [(2, 0.5), (6, 0.5)]]
    assert fold_groups(_routes([split, overlap]), rows, delay) == []
    uneven = [[(1, 0.25), (2, 0.75)]]
    assert fold_groups(_routes([uneven]), rows, delay) == []
    # and links that differ in rate or propagation
    rows[2, C.LS_CAP] = 2.0
    assert fold_groups(_routes([split]), rows, delay) == []
    rows, delay = _alike(8)
    delay[1] = 5
    assert fold_groups(_routes([split]), rows, delay) == []


def test_a_folded_hop_is_one_entry_at_its_groups_first_link():
    rows, delay = _alike(8)
    split = [[(0, 1.0)], [(2, 0.25), (1, 0.25), (7, 0.25), (6, 0.25)], [(3, 1.0)]]
    routes, fold, rep = fold_links(_routes([split, split], [split]), rows, delay)
    assert routes.rt_ptr.tolist() == [0, 3, 6]
    assert routes.rt_link.tolist() == [0, 1, 3, 0, 1, 3]
    assert routes.rt_w.tolist() == [1.0] * 6
    assert routes.rv_ptr.tolist() == [0, 3]
    assert fold[1] == 4 and fold[[0, 2, 3, 6, 7]].tolist() == [1.0] * 5
    assert rep.tolist() == [0, 1, 1, 3, 4, 5, 1, 1]


def _finite_rel_diff(a, b):
    """The largest relative difference between ``a`` and ``b`` where both are finite."""
    ok = np.isfinite(a) & np.isfinite(b) & ((a != 0) | (b != 0))
    a, b = a[ok], b[ok]
    return float((np.abs(a - b) / np.maximum(np.abs(a), np.abs(b))).max(initial=0.0))


def test_the_folded_incast_steps_as_the_unfolded_one():
    """The default incast (spraying over the fat trees' tiers) folded and not: over its first
    1,000 steps every flow's state and every link's (a member's: its group's) agree to float
    rounding, with one route entry a hop; over the whole run, where rounding grows as losses
    and timeouts fall a step apart, the classes' mean FCTs within 1%."""
    folded = _sim(["engine.fluid_fold_links=true", "engine.sample_interval_us=0"])
    unfolded = _sim(["engine.fluid_fold_links=false", "engine.sample_interval_us=0"])
    assert len(folded.rt_link) * 10 < len(unfolded.rt_link)
    assert (folded.ls[:, C.LS_FOLD] > 1).sum() > 10
    folded.advance(0, 1000)
    unfolded.advance(0, 1000)
    flow_cols = np.setdiff1d(np.arange(C.N_FS), [C.FS_WIRE_NEXT])  # (an entry's index)
    assert folded.fs[:, C.FS_SENT].sum() > 5e7
    assert _finite_rel_diff(folded.fs[:, flow_cols], unfolded.fs[:, flow_cols]) < 1e-12
    assert _finite_rel_diff(folded.cs, unfolded.cs) < 1e-12
    # (a group draws one packet grid for its links, each of them one of its own)
    link_cols = np.setdiff1d(np.arange(C.LS_FOLD), [C.LS_GRID])
    seen = folded.ls[folded.link_rep][:, link_cols]
    assert _finite_rel_diff(seen, unfolded.ls[:, link_cols]) < 1e-12
    means = []
    for fold in ("true", "false"):
        flows = _sim([f"engine.fluid_fold_links={fold}"]).run().tables["flows"]
        means.append(flows.groupby("cls")["fct_ps"].mean())
    np.testing.assert_allclose(means[0], means[1], rtol=0.01)


def test_the_links_a_group_stands_for_carry_the_same_bytes_unfolded():
    """What folding rests on: unfolded, the members of each group the fold finds end a run
    of the sprayed incast with the same counts and the same queue mid-run."""
    folded = _sim(["engine.fluid_fold_links=true"])
    unfolded = _sim(["engine.fluid_fold_links=false", "engine.max_sim_time_ms=2",
                     "engine.allow_unfinished=true"])  # fmt: skip
    unfolded.run()
    groups = [np.flatnonzero(folded.link_rep == r) for r in np.unique(folded.link_rep)]
    groups = [g for g in groups if len(g) > 1]
    assert groups
    busy = 0
    for g in groups:
        rows = unfolded.ls[g][:, [C.LS_TX, C.LS_IN, C.LS_Q, C.LS_MARKS, C.LS_MAXQ]]
        np.testing.assert_allclose(rows, np.broadcast_to(rows[0], rows.shape), rtol=1e-12)
        busy += rows[0, 0] > 0
    assert busy > 5


def test_every_member_of_a_group_is_sampled_with_its_group():
    sim = _sim(["engine.max_sim_time_ms=1", "engine.allow_unfinished=true",
                "engine.queue_ports=[all]", "engine.sample_interval_us=100"])  # fmt: skip
    queues = sim.run().tables["queues"]
    rep = sim.link_rep
    names = sim.port_names
    seen = queues.groupby("port")["queue_bytes"].max()
    members = np.flatnonzero(rep != np.arange(len(rep)))
    queued = [m for m in members if seen[names[int(rep[m])]] > 0]
    assert queued  # (a group that queued: its members show its queue, not their empty rows)
    for m in queued:
        assert seen[names[m]] == seen[names[int(rep[m])]]


def test_no_fold_where_a_links_own_state_matters():
    assert (_sim(["lb=ecmp"]).ls[:, C.LS_FOLD] == 1).all()
    pfc = ["switch.pfc.enabled=true", "switch.pfc.port_kinds=[host,fabric]"]
    assert (_sim(pfc).ls[:, C.LS_FOLD] == 1).all()
    assert (_sim(["engine.fluid_fold_links=false"]).ls[:, C.LS_FOLD] == 1).all()


def test_the_hybrids_packets_count_in_their_groups_mean():
    """In the hybrid (the incast's inter-DC flows as packets, on the compiled data plane) the
    fluid flows' groups fold with the links the packets cross: every port of a group reads the
    group's row, and the run keeps to the unfolded one's FCTs (within 5% a class: at the
    hybrid's settled steps the inter-DC mean moves by about 3%)."""
    hybrid = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"]
    means = {}
    # mid-run (2 ms), a group's ports read its row, queues and all
    sim = _sim([*hybrid, "engine.max_sim_time_ms=2", "engine.allow_unfinished=true"])
    sim.run()
    rep = sim.fluid.link_rep
    folded = np.flatnonzero(rep != np.arange(len(rep)))
    assert len(folded) > 10
    F, ls = sim.network.dataplane.F, sim.fluid.ls
    assert (ls[rep[folded], C.LS_Q] > 0).any()
    np.testing.assert_array_equal(F[folded, PF.sh_link_q], ls[rep[folded], C.LS_Q])
    for fold in ("true", "false"):
        sim = _sim([*hybrid, f"engine.fluid_fold_links={fold}"])
        flows = sim.run().tables["flows"]
        means[fold] = flows.groupby("cls")["fct_ps"].mean()
    np.testing.assert_allclose(means["true"]["inter"], means["false"]["inter"], rtol=0.05)
    np.testing.assert_allclose(means["true"]["intra"], means["false"]["intra"], rtol=0.05)


def test_the_hybrid_can_keep_the_packets_links_apart():
    """With engine.hybrid_fold_packet_links=false no group holds a link a packet flow may
    cross; the fluid flows' other hops still fold, and the run is the unfolded one's."""
    hybrid = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"]
    apart = _sim([*hybrid, "engine.hybrid_fold_packet_links=false"])
    scenario = apart.fluid.scenario
    plans = [p for p in scenario.flows if p.spec.tag == "inter"]
    crossed = packet_links(scenario, plans)
    rep = apart.fluid.link_rep
    folded = np.flatnonzero(np.bincount(rep, minlength=len(rep)) != 1)
    assert len(folded) and not np.isin(crossed, folded).any()
    assert len(apart.fluid.rt_link) < len(
        _sim([*hybrid, "engine.fluid_fold_links=false"]).fluid.rt_link
    )
    got = apart.run().tables["flows"]["fct_ps"]
    want = _sim([*hybrid, "engine.fluid_fold_links=false"]).run().tables["flows"]["fct_ps"]
    np.testing.assert_allclose(got, want, rtol=1e-3)

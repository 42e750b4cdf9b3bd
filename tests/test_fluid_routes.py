"""The fluid engine's routes, links and delay lines: the step kernel against its Python twin,
bytes conserved hop by hop, route and path kernels against Python and the packet engine's hash,
the ACKs' way back, the delay lines' pool, and the step growing and coarsening mid-run."""

from __future__ import annotations

import numpy as np
import pytest
from fluid_cases import DUMBBELL, random_links, switch_indices, unolb_sim

import uno
from uno.fluid import kernels as K
from uno.fluid.arrays import growth_ladders, ring_pool

RNG = np.random.default_rng(7)


@pytest.mark.parametrize("scheme", ["uno", "mprdma_bbr"])
def test_step_kernel_matches_python(scheme):
    """The whole step loop (``advance``) against its Python twin, from a mid-run state of the
    Fig. 10 traffic: UnoLB subflows, coding and whole-packet losses (``uno``), or MP-RDMA + BBR
    with fast retransmit (``mprdma_bbr``)."""
    import copy

    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=60", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    k = sim.advance(0, 400)  # compiled, to a state with flows running and queues up
    assert sim.counters[1] > 0 and sim.counters[3] > 0
    names = ("fs", "cs", "ls", "ring", "counters", "active", "busy", "loss_rng", "fx", "calendar",
             "block")  # fmt: skip
    twin = {n: copy.deepcopy(getattr(sim, n)) for n in sim.STEPPED_STATE}
    pool_twin, lb_twin, hops_twin = twin["ring_pool"], twin["lb"], twin["hops"]
    k_fast = sim.advance(k, k + 300)
    with np.errstate(over="ignore"):
        k_py = K.advance.py_func(k, k + 300, *sim.kernel_args(twin))
    assert k_py == k_fast == k + 300
    for n in names:
        if n == "calendar":  # bitsets: exactly
            np.testing.assert_array_equal(sim.calendar, twin[n])
        else:
            np.testing.assert_allclose(getattr(sim, n), twin[n], rtol=1e-9, atol=1e-6, err_msg=n)
    for a, b in zip((*sim.lb, *sim.ring_pool), (*lb_twin, *pool_twin), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-6)
    np.testing.assert_array_equal(sim.hops[0], hops_twin[0])  # levels
    cols = [K.EI_LINK, K.EI_FLOW, K.EI_GSTART, K.EI_NEXT, K.EI_LAG]  # routes (not the lists)
    np.testing.assert_array_equal(sim.hops[2][:, cols], hops_twin[2][:, cols])
    # each entry's bytes: queued, in this step, carried to the next
    np.testing.assert_allclose(sim.hops[3], hops_twin[3], rtol=1e-9, atol=1e-6)


@pytest.mark.parametrize("scheme", ["uno_ecmp", "uno"])
def test_links_conserve_bytes_hop_by_hop(scheme):
    """Every link passes on exactly what it lets go, in the same step: a link's arrivals are
    the flows' sends at their first hop plus the departures of the links before it, never more
    (before, the next hop saw each flow's rate times the departures / arrivals ratio of the hop
    before at the previous step, up to 16x, and dropped bytes its uplink never delivered: on
    the Fig. 10 traffic the ToR -> host ports 'received' 1.8x what the agg -> ToR ports sent).
    Bytes: in = out + dropped + queued at every link, and the downlinks to the hosts, which
    only pass on what their uplinks delivered at line rate, drop nothing here. The step is
    also the Python twin's (``forward.py_func``). A flow that sends nothing is walked from the
    first hop holding its bytes (``FX_FIRST``): no hop before it holds any."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=300", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    routing = sim.scenario.routing
    ls = sim.ls
    to_host = np.array([routing.topo.nodes[e.dst].kind == "host" for e in routing.edges])
    feeding = np.array([routing.topo.nodes[e.dst].tier == "tor" for e in routing.edges])
    ei, ef = sim.hops[2], sim.hops[3]
    n_rt = int(sim.rt_ptr[-1])
    entry_flow = ei[:n_rt, K.EI_FLOW]
    plain = sim.lb[0][entry_flow] == 0  # (UnoLB flows: their subflow hops, below)
    # UnoLB subflow hop h of subflow s of flow f is entry n_rt + (f S + s) H + h
    sub_n, sub_hops = sim.lb[0], sim.lb[1]
    n_sub_max, n_hop_max = sim.lb[2].shape[1:]
    sub_entry = np.arange(len(ef) - n_rt)
    sub_flow = sub_entry // (n_sub_max * n_hop_max)
    sub_hop = sub_entry % n_hop_max
    sub_real = ((sub_entry // n_hop_max) % n_sub_max < sub_n[sub_flow]) & (
        sub_hop < sub_hops[sub_flow]
    )
    skipped = 0
    sub_skipped = 0
    k = 0
    steps = 0
    while k < 4000 and sim.counters[2] < len(sim.flows):
        # a flow that sends nothing is walked from FX_FIRST: no hop before it holds its bytes
        first = sim.fx[entry_flow, K.FX_FIRST]
        before = plain & (sim.fx[entry_flow, K.FX_NETQ] > 0) & (np.arange(n_rt) < first)
        assert not (ef[:n_rt, K.EF_Q][before] > 0).any()
        assert not (ef[:n_rt, K.EF_CARRY][before] > 0).any()
        # an entry's marked bytes are some of its bytes
        assert (ef[:, K.EF_MQ] <= ef[:, K.EF_Q] * (1 + 1e-9) + 1e-6).all()
        assert (ef[:, K.EF_MCARRY] <= ef[:, K.EF_CARRY] * (1 + 1e-9) + 1e-6).all()
        starts = first[plain & (sim.fx[entry_flow, K.FX_NETQ] > 0)].astype(np.int64)
        assert (ei[starts, K.EI_GSTART] == starts).all()  # a hop's first entry
        skipped += int(before.sum())
        # an UnoLB flow that sends nothing is walked from hop FX_FIRST of every subflow: no
        # subflow holds its bytes at a hop before it
        before = (
            sub_real & (sim.fx[sub_flow, K.FX_NETQ] > 0) & (sub_hop < sim.fx[sub_flow, K.FX_FIRST])
        )
        assert not (ef[n_rt:, K.EF_Q][before] > 0).any()
        assert not (ef[n_rt:, K.EF_CARRY][before] > 0).any()
        sub_skipped += int(before.sum())
        tx0, in0 = ls[:, K.LS_TX].copy(), ls[:, K.LS_IN].copy()
        if steps == 200:  # one step in the Python twin: the same state
            import copy

            twin = {a: copy.deepcopy(getattr(sim, a)) for a in sim.STEPPED_STATE}
            k_py = K.advance.py_func(k, k + 1, *sim.kernel_args(twin))
        k_next = sim.advance(k, k + 1)
        if steps == 200:
            assert k_py == k_next
            np.testing.assert_allclose(sim.ls, twin["ls"], rtol=1e-9, atol=1e-6)
        steps += 1
        dep = ls[:, K.LS_TX] - tx0
        arr = ls[:, K.LS_IN] - in0
        # a ToR's ports to its hosts receive, in each step, what the agg -> ToR and
        # host -> ToR ports let go in it: never more
        assert arr[to_host].sum() <= dep[feeding].sum() * (1 + 1e-9) + 1e-6
        k = k_next
    # in = out + dropped + queued, link by link
    np.testing.assert_allclose(
        ls[:, K.LS_IN], ls[:, K.LS_TX] + ls[:, K.LS_DROP] + ls[:, K.LS_Q], rtol=1e-9, atol=1e-3
    )
    # a ToR's ports to its hosts receive what the agg -> ToR and host -> ToR ports let go
    tor_in = ls[to_host, K.LS_IN].sum()
    assert tor_in <= ls[feeding, K.LS_TX].sum() * (1 + 1e-9)
    assert ls[to_host, K.LS_DROP].sum() == 0.0
    # the walk did start past the first hop
    assert (skipped if scheme == "uno_ecmp" else sub_skipped) > 0


def test_route_parts_match_the_whole_route_and_python():
    """``entries_delay`` and ``entries_exceedance`` over a route's entries before and from any
    split point (a wire flow's before / beyond its WAN link) make up ``path_delay`` and
    ``gentle_exceedance`` of the whole route, and agree with their Python twins."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                       "workload.n_flows=40", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    ls = random_links(len(sim.ls), RNG)
    ls[:, K.LS_DELAY] = RNG.uniform(0, 1e6, len(ls))
    ls[:, K.LS_QSLOPE] = ls[:, K.LS_CAP] * RNG.uniform(-1, 1, len(ls))
    ls[:, K.LS_QTREND] = RNG.uniform(0, 4e6, len(ls))  # (some shorter than the look-ahead)
    ls[:, K.LS_ARR] = ls[:, K.LS_CAP] * RNG.uniform(0, 1.1, len(ls)) * (RNG.random(len(ls)) < 0.8)
    ls[:, K.LS_ARR2] = ls[:, K.LS_ARR] ** 2 / RNG.uniform(1, 30, len(ls))
    route = (sim.rt_link, sim.rt_w, ls)
    for f in range(len(sim.fs)):
        lo, hi = int(sim.rt_ptr[f]), int(sim.rt_ptr[f + 1])
        nic = int(sim.fs[f, K.FS_NIC_LINK])
        whole = K.path_delay(f, sim.rt_ptr, *route)
        for mid in range(lo, hi + 1):
            parts = [K.entries_delay(a, b, *route) for a, b in ((lo, mid), (mid, hi))]
            assert sum(parts) == pytest.approx(whole, rel=1e-12)
            assert parts[1] == K.entries_delay.py_func(mid, hi, *route)
            for slack in (-1.0, 3e5, 1e6):
                args = [(a, b, slack, nic, *route, 4160.0) for a, b in ((lo, mid), (mid, hi))]
                p = [K.entries_exceedance(*x) for x in args]
                assert p == [K.entries_exceedance.py_func(*x) for x in args]
                full = K.gentle_exceedance(f, slack, nic, sim.rt_ptr, sim.rt_link, sim.rt_w, ls,
                                           sim.lb[:3], 4160.0)  # fmt: skip
                assert 1.0 - (1.0 - p[0]) * (1.0 - p[1]) == pytest.approx(full, rel=1e-12)


def test_path_kernels_match_python():
    sim = unolb_sim()
    ls = random_links(len(sim.ls), RNG)
    ls[:, K.LS_MARK] = RNG.random(len(ls)) * (RNG.random(len(ls)) < 0.5)
    ls[:, K.LS_LOSS] = RNG.random(len(ls)) * (RNG.random(len(ls)) < 0.3)
    ls[:, K.LS_DELAY] = RNG.uniform(0, 1e6, len(ls))
    ls[:, K.LS_QSLOPE] = ls[:, K.LS_CAP] * RNG.uniform(-1, 1, len(ls))
    ls[:, K.LS_QTREND] = RNG.uniform(0, 4e6, len(ls))  # (some shorter than the look-ahead)
    ls[:, K.LS_ARR] = ls[:, K.LS_CAP] * RNG.uniform(0, 1.1, len(ls)) * (RNG.random(len(ls)) < 0.8)
    ls[:, K.LS_ARR2] = ls[:, K.LS_ARR] ** 2 / RNG.uniform(1, 30, len(ls))
    for f in range(len(sim.fs)):
        for slack in (-1.0, 0.0, 3e5, 1e6):
            nic = int(sim.fs[f, K.FS_NIC_LINK])
            args = (f, slack, nic, sim.rt_ptr, sim.rt_link, sim.rt_w, ls, sim.lb[:3], 4160.0)
            a, b = K.gentle_exceedance(*args), K.gentle_exceedance.py_func(*args)
            assert a == pytest.approx(b, rel=1e-12) and 0.0 <= a <= 1.0
            assert a == 1.0 or slack > 0
        a = K.path_delay(f, sim.rt_ptr, sim.rt_link, sim.rt_w, ls)
        b = K.path_delay.py_func(f, sim.rt_ptr, sim.rt_link, sim.rt_w, ls)
        assert a == pytest.approx(b, rel=1e-12)
        for ahead_ps in (0.0, 2e6):
            a = K.reverse_delay(f, ahead_ps, sim.rv_ptr, sim.rv_link, sim.rv_w, ls)
            b = K.reverse_delay.py_func(f, ahead_ps, sim.rv_ptr, sim.rv_link, sim.rv_w, ls)
            assert a == pytest.approx(b, rel=1e-12)
        la, lb = np.zeros(K.MAX_SUBFLOWS), np.zeros(K.MAX_SUBFLOWS)
        a = K.subflow_signals(f, ls, sim.lb, la)
        b = K.subflow_signals.py_func(f, ls, sim.lb, lb)
        np.testing.assert_allclose(a, b, rtol=1e-12)
        np.testing.assert_allclose(la, lb, rtol=1e-12)
    out_a, out_b = np.zeros(16, dtype=np.int64), np.zeros(16, dtype=np.int64)
    for _ in range(50):
        src, dst = (int(h) for h in RNG.choice(256, 2, replace=False))
        entropy = int(RNG.integers(0, 1 << 16))
        with np.errstate(over="ignore"):
            hb = K.ecmp_path.py_func(src, dst, entropy, *sim.lb[8:13], out_b)
        ha = K.ecmp_path(src, dst, entropy, *sim.lb[8:13], out_a)
        assert ha == hb and (out_a[:ha] == out_b[:hb]).all()


def test_ecmp_path_kernel_is_the_packet_engines_hash():
    from uno.fluid.routes import ecmp_path_edges as _ecmp_path

    sim = unolb_sim()
    host_node, nh_ptr, nh_edges, edge_dst, salt = sim.lb[8:13]
    switch_index = switch_indices(sim)
    out = np.zeros(16, dtype=np.int64)
    for _ in range(200):
        src, dst = (int(h) for h in RNG.choice(len(host_node), 2, replace=False))
        entropy = int(RNG.integers(0, 1 << 16))
        hops = K.ecmp_path(src, dst, entropy, host_node, nh_ptr, nh_edges, edge_dst, salt, out)
        assert list(out[:hops]) == _ecmp_path(sim.scenario, src, dst, entropy, switch_index)


def test_ecmp_routes_of_all_flows_are_the_packet_engines_hash():
    """The fluid engine's setup routes every flow at once (array operations, hop by hop):
    each path is the one the packet engine's switches hash the flow onto."""
    from uno.fluid.balance import ecmp_routes as _ecmp_routes
    from uno.fluid.routes import ecmp_path_edges as _ecmp_path

    sim = unolb_sim()
    host_node, nh_ptr, nh_edges, edge_dst, salt = sim.lb[8:13]
    switch_index = switch_indices(sim)
    n = 300
    src = RNG.integers(0, len(host_node), n)
    dst = (src + RNG.integers(1, len(host_node), n)) % len(host_node)
    entropy = RNG.integers(0, 1 << 16, n)
    links, hops = _ecmp_routes(src, dst, entropy, 16, host_node, nh_ptr, nh_edges, edge_dst, salt)
    for i in range(n):
        expect = _ecmp_path(sim.scenario, int(src[i]), int(dst[i]), int(entropy[i]), switch_index)
        assert list(links[i, : hops[i]]) == expect
        assert (links[i, hops[i] :] == 0).all()


def test_first_uniforms_are_each_streams_first_draws():
    """RngStreams.first_uniforms computes many named streams' first draws at once: exactly the
    values their own generators give, and a stream asked for later goes on after them."""
    from uno.core.rng import RngStreams

    names = [f"lb/{i}" for i in range(200)]
    for seed in (0, 1, 7, 2**32 - 1, 2**32 + 5, 2**70 + 3):
        ahead = RngStreams(seed)
        got = ahead.first_uniforms(names, 3)
        ref = RngStreams(seed)
        expect = np.array([[ref.buffered(nm).next() for _ in range(3)] for nm in names])
        assert np.array_equal(got, expect)
        # later draws continue each stream, buffered or as a generator
        fresh = RngStreams(seed)
        assert ahead.buffered(names[5]).next() == [fresh.buffered(names[5]).next()
                                                   for _ in range(4)][3]  # fmt: skip
        assert ahead.stream(names[6]).random() == fresh.stream(names[6]).random(4)[3]
    with pytest.raises(ValueError, match="named twice"):
        RngStreams(1).first_uniforms(["a", "a"], 1)
    used = RngStreams(1)
    used.buffered("b")
    with pytest.raises(ValueError, match="already in use"):
        used.first_uniforms(["b"], 1)


def test_route_drains_add_in_route_order():
    """The delay lines' length reads each route's full-buffer drain time: the sum over its
    switch ports, added in route order as Python's sum adds."""
    from uno.fluid.routes import BYTES_PER_PS_PER_BPS as _BPS
    from uno.fluid.routes import route_drains_ps as _route_drains_ps
    from uno.scenario import is_switch_port

    sim = unolb_sim()
    routing = sim.scenario.routing
    drains = _route_drains_ps(routing, sim.rt_ptr, sim.rt_link, sim.rt_w)
    for f in range(len(sim.flows)):
        route = sim.rt_link[sim.rt_ptr[f] : sim.rt_ptr[f + 1]].tolist()
        expect = sum(
            routing.edges[e].buffer_bytes / (routing.edges[e].rate_bps * _BPS)
            for e in route
            if is_switch_port(routing, routing.edges[e])
        )
        assert drains[f] == expect


def test_a_sprayed_routes_drain_is_its_longest_paths():
    """A sprayed route lists every link of a split hop, but a byte crosses one of them: its
    full-buffer drain time (which sizes the delay lines) is that of one path, so on the default
    incast (every path of a pair crosses as many ports of the same buffer and rate) each
    sprayed flow's equals the same flow's on its ECMP path, and the delay lines are as long."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.routes import route_drains_ps as _route_drains_ps

    sims = {}
    for lb in ("spray", "ecmp"):  # (the split hops unfolded: uno.fluid.folding)
        cfg = to_run_config(uno.compose(["engine.kind=fluid", f"lb={lb}",
                                         "engine.fluid_fold_links=false"]))  # fmt: skip
        sims[lb] = build_simulation(cfg)
    spray, ecmp = sims["spray"], sims["ecmp"]
    assert (np.diff(spray.rt_ptr) > np.diff(ecmp.rt_ptr)).all()  # the split hops' links
    routing = spray.scenario.routing

    def drains(sim):  # the data's routes, then the ACKs' way back
        return [_route_drains_ps(routing, sim.rt_ptr, sim.rt_link, sim.rt_w),
                _route_drains_ps(routing, sim.rv_ptr, sim.rv_link, sim.rv_w)]  # fmt: skip

    for sprayed, hashed in zip(drains(spray), drains(ecmp), strict=True):
        np.testing.assert_allclose(sprayed, hashed, rtol=1e-12)
        assert (sprayed > 0).all()
    np.testing.assert_array_equal(spray.ring_len, ecmp.ring_len)


def test_acks_wait_in_the_reverse_paths_queues():
    """A packet receiver sends its ACKs back through the data FIFOs of the reverse path
    (hashed on (dst, src, entropy): uno.transport.receiver, uno.net.port), so the RTT and the
    completion of a flow include the queues its ACKs meet. On the dumbbell, two long flows
    s0, s1 -> r0 fill the left -> right bottleneck; a short flow r0 -> s2 sends its data over
    the empty right -> left direction and its ACKs through that full queue: it finishes about
    one full-queue delay late, not at its ideal FCT (which it did when the fluid RTT held the
    data path's queues only)."""
    from conftest import flows_override

    base = ["topo=dumbbell", "cc=dctcp", "switch=ecn", "switch.ecn.enabled=false",
            "lb=ecmp", "engine.kind=fluid", "engine.sample_interval_us=0"]  # fmt: skip
    flows = flows_override([(0, 4, 20_000_000), (1, 4, 20_000_000), (4, 2, 8_000, 1000.0)])
    cfg = uno.compose([*base, "workload=flows", flows])
    out = uno.run(cfg).flows.set_index("flow_id")
    short = out.loc[2]
    full_queue_ps = 1048576 / (100e9 / 8 / 1e12)  # the bottleneck's buffer at line rate
    assert short["fct_ps"] - short["ideal_fct_ps"] > 0.25 * full_queue_ps
    # the ACKs' route is the packet engine's reverse path: from r0's NIC to s2
    from uno.api import to_run_config
    from uno.build import build_simulation

    sim = build_simulation(to_run_config(cfg))
    edges, host_nodes = sim.scenario.routing.edges, sim.scenario.routing.host_nodes
    back = sim.rv_link[sim.rv_ptr[2] : sim.rv_ptr[3]].tolist()
    assert edges[back[0]].src == host_nodes[2] and edges[back[-1]].dst == host_nodes[4]
    ls = np.zeros_like(sim.ls)
    ls[back[1], [K.LS_CAP, K.LS_BUF]] = 0.0125, 1e6  # (100 Gb/s, bytes per ps)
    ls[back[1], [K.LS_Q, K.LS_DELAY]] = 0.0125 * 5e6, 5e6
    assert K.reverse_delay(2, 0.0, sim.rv_ptr, sim.rv_link, sim.rv_w, ls) == 5e6
    assert K.path_delay(2, sim.rt_ptr, sim.rt_link, sim.rt_w, ls) == 0.0
    # with the switches' ACK lane (switch.ack_priority) the ACKs pass the full queue
    lane = uno.compose([*base, "workload=flows", flows, "switch.ack_priority=true"])
    short = uno.run(lane).flows.set_index("flow_id").loc[2]
    assert short["fct_ps"] - short["ideal_fct_ps"] < 0.05 * full_queue_ps
    sim = build_simulation(to_run_config(lane))
    assert K.reverse_delay(2, 0.0, sim.rv_ptr, sim.rv_link, sim.rv_w, ls) == 0.0


def test_delay_lines_are_reused_and_grown_without_changing_results(delay_lines_at_end):
    """Running flows take their delay lines from a pool and give them back cleared when they
    finish; a line starts two base RTTs long, rounded up to a power of two (a long-RTT flow's:
    its base RTT and a quarter more), and grows when a delay does not fit. The ring rows
    ever touched follow the flows running at once and the delays they meet (here fewer rows
    than one first line per flow for 400 flows), every finished flow's line is back in the
    pool, all zero when the run ends, and the results are those of a run in which no line is
    ever reused or grown (each flow one line of its own length, at its longest from the
    start)."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.arrays import no_tails
    from uno.fluid.state import RingPool
    from uno.fluid.timers import far_timer_arrays

    cfg = to_run_config(uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                                     "scheme=mprdma_bbr", "workload.n_flows=400", "workload.load=0.6",
                                     "engine.kind=fluid", "engine.sample_interval_us=0"]))  # fmt: skip
    pooled = build_simulation(cfg)
    apart = build_simulation(cfg)
    n = len(apart.flows)
    # (lengths of their own, each at least the longest any flow may need: nothing to share)
    own = apart.ring_len.max() + np.arange(n, dtype=np.int64)
    apart.ring_pool = RingPool(np.full(n, -1, dtype=np.int64), own.copy(), own, np.sort(own),
                               np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64),
                               np.zeros(n, dtype=np.int64), np.zeros(1, dtype=np.int64),
                               apart.ring_pool.wide.copy(), *far_timer_arrays(n),
                               *no_tails(own))  # fmt: skip
    apart.ring = np.zeros((int(own.sum()), apart.ring.shape[1]))
    first = pooled.ring_pool.length.copy()
    base_steps = pooled.fs[:, K.FS_BASE_RTT] / pooled.dt_ps
    a, b = pooled.run(), apart.run()
    assert pooled.n_finished == n
    pool = pooled.ring_pool
    # every line ever handed out is back in the pool, and no row twice
    assert (pool.ptr == -1).all()
    assert (pool.class_len * pool.free_count).sum() == pool.top[0]
    assert (pool.length > first).any()  # grown ...
    long_rtt = base_steps > 512  # (the inter-DC flows')
    assert long_rtt.any() and (first[long_rtt] <= 2 * base_steps[long_rtt]).all()
    assert pool.top[0] < first.sum() < pooled.ring_len.sum()  # ... reused, and short
    assert apart.ring_pool.top[0] == own.sum()  # (one line per flow)
    assert delay_lines_at_end == [False, False]  # (every line back, cleared)
    flows = a.tables["flows"]
    assert flows["retransmits"].sum() > 0  # losses (and their timers) went through the lines
    import pandas as pd

    pd.testing.assert_frame_equal(flows, b.tables["flows"])


def _run_at_full_width(sim):
    """``sim`` with a ring of every ``R_*`` column (``RING_FULL``), any QCN columns after them."""
    assert sim.int_col < 0
    extra = sim.ring.shape[1] - K.RING_WIDTH[int(sim.ring_pool.wide[0])]
    sim.ring = np.zeros((len(sim.ring), K.N_R + extra))
    if sim.qcn_col >= 0:
        sim.qcn_col = K.N_R
        sim.hops.acks[K.ACKS.qcn] = K.N_R
    sim.ring_pool.wide[0] = K.RING_FULL
    return sim.run()


_MIXED = ["experiment=fig10_load", "workload=mixed_artifact", "workload.load=0.6"]
_GEAR = ["experiment=gear_fig9", "workload.n_intra=2", "workload.size_bytes=2000000",
         "engine.max_sim_time_ms=200"]  # fmt: skip


@pytest.mark.parametrize(
    ("overrides", "level"),
    [
        ([*_MIXED, "scheme=uno_ecmp", "workload.n_flows=400"], "RING_NARROW"),
        ([*_MIXED, "scheme=gemini", "workload.n_flows=300", "transport.dupack_threshold=0"],
         "RING_SAMPLES"),
        ([*_GEAR, "scheme=gear_annulus"], "RING_SAMPLES"),
        ([*_MIXED, "scheme=gemini", "workload.n_flows=300"], "RING_RETX"),
    ],
    ids=["uno_ecmp", "gemini_timeouts", "gear_annulus", "gemini"],
)  # fmt: skip
def test_narrow_ring_gives_the_results_of_the_full_ring(overrides, level):
    """Without coded or trimmed flows the delay lines keep only the columns their flows read:
    the first ``N_R_NARROW`` (what is decodable is what is acknowledged; no coding absorbs
    losses), the RTT and delivery samples up to ``N_R_SAMPLES`` where a law reads them
    (GEMINI's and Annulus's least RTT; Annulus's QCN columns after them), the bytes fast
    retransmit finds lost up to ``N_R_RETX`` (GEMINI's flows, three duplicate ACKs): the same
    flows table as with all ``N_R``."""
    import pandas as pd

    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose([*overrides, "engine.kind=fluid",
                                     "engine.sample_interval_us=0", "engine.progress=false"]))  # fmt: skip
    narrow = build_simulation(cfg)
    assert narrow.ring_pool.wide[0] == getattr(K, level)
    width = K.RING_WIDTH[getattr(K, level)]
    qcn = "annulus" in overrides[-1]
    assert narrow.qcn_col == (width if qcn else -1)  # (QCN's two columns after the level's)
    assert narrow.ring.shape[1] == width + (2 if qcn else 0)
    a, b = narrow.run(), _run_at_full_width(build_simulation(cfg))
    flows = a.tables["flows"]
    assert flows["finish_ps"].notna().all()
    pd.testing.assert_frame_equal(flows, b.tables["flows"])


@pytest.mark.parametrize("scheme", ["gear_gear", "gear_hpcc"])
def test_int_records_ride_in_a_narrow_ring(scheme, monkeypatch):
    """INT records (Gear's, HPCC's) take columns of their own after either layout of the
    delay lines: where no flow needs the wide columns their runs keep the narrow one, and
    give the flows table of a run with the wide one."""
    import pandas as pd

    import uno.fluid.engine as E
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose([
        "experiment=gear_fig9", "workload.n_intra=2", "workload.size_bytes=2000000",
        "engine.max_sim_time_ms=200", "engine.sample_interval_us=0", "engine.progress=false",
        f"scheme={scheme}", "engine.kind=fluid",
    ]))  # fmt: skip
    narrow = build_simulation(cfg)
    monkeypatch.setattr(E, "ring_level", lambda fs: K.RING_FULL)
    wide = build_simulation(cfg)
    assert narrow.int_col == K.N_R_NARROW  # (its own columns, after the narrow ones)
    extra = narrow.ring.shape[1] - K.N_R_NARROW
    assert wide.ring.shape[1] == K.N_R + extra
    assert (narrow.ring_pool.wide[0], wide.ring_pool.wide[0]) == (K.RING_NARROW, K.RING_FULL)
    a, b = narrow.run(), wide.run()
    assert a.flows["finish_ps"].notna().all()
    pd.testing.assert_frame_equal(a.tables["flows"], b.tables["flows"])


@pytest.mark.parametrize("twin", [False, True])
def test_a_line_grows_to_the_next_power_of_two_that_holds_the_delay(twin):
    """A line that starts at a length of its own (a long-RTT flow's) grows onto the powers of
    two, the lengths a start of two base RTTs rounded up to a power of two would reach, so no
    line is ever longer than from that start; its longest caps it."""
    from uno.fluid.rings import grown_length

    grow = grown_length.py_func if twin else grown_length
    pool = ring_pool(np.array([38_074, 20_000]), np.array([12_288, 4_096]))
    assert [grow(pool, 0, need) for need in (1, 13_000, 16_385, 40_000)] == [
        16_384, 16_384, 32_768, 38_074]  # fmt: skip
    assert [grow(pool, 1, need) for need in (1, 9_000, 30_000)] == [8_192, 16_384, 20_000]
    ladders = dict((tuple(lengths), count) for lengths, count in growth_ladders(
        np.array([38_074, 38_074]), np.array([12_288, 12_288])))  # fmt: skip
    assert ladders == {(12_288, 16_384, 32_768, 38_074): 2}


@pytest.mark.parametrize("twin", [False, True])
def test_ring_pool_hands_out_cleared_lines_of_the_right_length(twin):
    """``ring_take`` / ``ring_give`` (and their Python twins): a line given back is cleared,
    goes to the next flow of its length, never to a flow of another length, and fresh rows
    come after every row handed out before."""
    take = K.ring_take.py_func if twin else K.ring_take
    give = K.ring_give.py_func if twin else K.ring_give
    mark = K.mark_due.py_func if twin else K.mark_due
    length = np.array([5, 3, 5, 5, 3], dtype=np.int64)
    pool = ring_pool(length, length)  # (lines at their longest: no growth)
    ring = np.zeros((int(length.sum()), K.N_R))
    fs = np.zeros((5, K.N_FS))
    calendar = np.zeros((7, 1), dtype=np.uint64)
    ptr, top = pool.ptr, pool.top
    take(pool, 0)
    take(pool, 1)
    assert ptr[0] == 0 and ptr[1] == 5 and top[0] == 8
    # flow 0 finishes at step 10 with feedback still due at steps 11-14 (slots 1-4)
    for step in range(11, 15):
        ring[step % 5] = RNG.uniform(1, 2, K.N_R)
        mark(calendar, step, 0)
    fs[0, K.FS_DUE_LAST] = 14
    give(ring, pool, 0, 10, fs, calendar)
    assert ptr[0] == -1 and not ring.any()
    take(pool, 4)  # length 3: not flow 0's line
    assert ptr[4] == 8 and top[0] == 11
    take(pool, 2)  # length 5: flow 0's line
    assert ptr[2] == 0 and top[0] == 11
    take(pool, 3)
    assert ptr[3] == 11 and top[0] == 16


@pytest.mark.parametrize("twin", [False, True])
def test_ring_give_writes_only_the_slots_with_something_due(twin):
    """A finished flow's line is cleared where the calendar says feedback is due after the
    finishing step, up to ``FS_DUE_LAST``, and nowhere else: the slots never reached are not
    touched (no page faults for the unused part of a line sized for the timer). The slots of
    another flow due at the same steps are left alone."""
    give = K.ring_give.py_func if twin else K.ring_give
    mark = K.mark_due.py_func if twin else K.mark_due
    n = 8
    pool = ring_pool(np.array([n, n]), np.array([n, n]))
    pool.ptr[:] = (0, 8)
    pool.top[0] = 16
    ring = np.full((2 * n, K.N_R_NARROW), 7.0)  # 7: stands for "never cleared"
    fs = np.zeros((2, K.N_FS))
    calendar = np.zeros((11, 1), dtype=np.uint64)
    k = 20
    for step in (k + 2, k + 5):  # flow 0: due at two later steps
        mark(calendar, step, 0)
    mark(calendar, k + 3, 1)  # flow 1 (another line) due in between
    fs[0, K.FS_DUE_LAST] = k + 5
    give(ring, pool, 0, k, fs, calendar)
    cleared = sorted({int(r) for r in np.nonzero((ring == 0.0).all(axis=1))[0]})
    assert cleared == sorted([(k + 2) % n, (k + 5) % n])
    assert (ring[n:] == 7.0).all()
    # nothing due after the finishing step (FS_DUE_LAST not later): nothing written
    ring[:] = 7.0
    pool.ptr[0], pool.free_count[:] = 0, 0  # flow 0 holds its line again
    fs[0, K.FS_DUE_LAST] = k
    give(ring, pool, 0, k, fs, calendar)
    assert (ring == 7.0).all()


def test_per_step_state_rows_start_on_cache_lines():
    """The links', flows' and route entries' rows start on 64-byte boundaries (so a link's or
    an entry's fields that every step reads lie in one cache line; an entry's integer fields
    take half a line) and stay C-contiguous and zero where nothing was set."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.memory import zeros_aligned

    for rows, cols, dtype in ((3, 32, np.float64), (5, 8, np.int64), (7, 4, np.float64)):
        a = zeros_aligned(rows, cols, dtype)
        assert a.shape == (rows, cols) and a.dtype == dtype and not a.any()
        assert a.flags.c_contiguous and a.ctypes.data % 64 == 0
    sim = build_simulation(to_run_config(uno.compose([*DUMBBELL, "engine.kind=fluid"])))
    for a in (sim.ls, sim.fs, sim.hops[2], sim.hops[3]):
        assert a.flags.c_contiguous and a.ctypes.data % 64 == 0
    assert sim.ls.strides[0] % 64 == 0 and sim.fs.strides[0] % 64 == 0
    assert sim.hops[2].dtype == np.int32 and sim.hops[2].strides[0] == 32  # two a line


@pytest.mark.parametrize("scheme", ["uno_ecmp", "uno", "mprdma_bbr"])
def test_passing_over_flows_with_nothing_due_changes_nothing(scheme):
    """A step passes over the running flows with nothing due (no feedback in their delay
    line's slot, no timer, no loss report: ``calendar``) that could send nothing at their last
    try (``FX_QUIET``). The same run with every flow marked due and none quiet at every step
    (each flow handled every step, as before the calendar) gives the same flows table."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = to_run_config(uno.compose(["experiment=fig10_load", "workload=mixed_artifact",
                                     f"scheme={scheme}", "workload.n_flows=80",
                                     "workload.load=0.6", "engine.kind=fluid",
                                     "engine.sample_interval_us=0"]))  # fmt: skip
    fast = build_simulation(cfg)
    fast.advance(0, 10**9)
    every = build_simulation(cfg)
    rows = every.calendar.shape[0]
    passed_over = 0
    k = 0
    while every.counters[2] < len(every.flows):
        n = int(every.counters[1])
        quiet = every.fx[every.active[:n], K.FX_QUIET] > 0
        due = np.unpackbits(every.calendar[k % rows].view(np.uint8), bitorder="little")
        passed_over += int((quiet & (due[every.active[:n]] == 0)).sum())
        every.calendar[k % rows] = np.iinfo(np.uint64).max
        every.fx[:, K.FX_QUIET] = 0.0
        k = every.advance(k, k + 1)
    assert passed_over > 1000  # the fast run had flows to pass over
    assert fast.counters[2] == len(fast.flows)
    np.testing.assert_array_equal(fast.fs, every.fs)
    np.testing.assert_array_equal(fast.cs, every.cs)
    np.testing.assert_array_equal(fast.ls, every.ls)


@pytest.mark.parametrize("scheme", ["uno", "mprdma_bbr", "gemini"])
def test_coarsen_moves_each_slot_to_the_coarse_step_holding_it(scheme):
    """The step grows 4-fold mid-run (:func:`kernels.coarsen`): the kernel agrees with its
    Python twin, and each running flow's delay line holds the same feedback filed by the coarse
    steps: per flow, the bytes of every summed column unchanged (the bytes on the wire among
    them), the latest send, the last arrival and the wire's ACK frontier unchanged, the
    calendar due exactly at the coarse steps holding something (and at a pending loss
    report's), and the step fields divided by the factor. Coded UnoLB flows
    (``uno``: the wide ring), the least RTT sample and the delivered count at the latest send (``R_RTTMIN``, ``R_DSENT``)."""
    import copy

    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", f"scheme={scheme}",
                       "workload.n_flows=60", "workload.load=0.6", "engine.kind=fluid"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    k = sim.advance(0, 400)
    n_active = int(sim.counters[1])
    assert n_active > 0
    active = sim.active[:n_active].copy()
    ptr, length = sim.ring_pool[0], sim.ring_pool[1]
    rows_span = sim.calendar.shape[0]

    def lines(ring, calendar, step0, factor):
        """Per running flow: {step: its slot's row} of the steps with something due."""
        out = {}
        for f in active:
            due = {}
            for j in range(step0, step0 + length[f] // factor):
                if (int(calendar[j % rows_span, f >> 6]) >> (int(f) & 63)) & 1:
                    due[j] = ring[ptr[f] + j % length[f]].copy()
            out[int(f)] = due
        return out

    before = lines(sim.ring, sim.calendar, k, 1)
    assert sum(len(d) for d in before.values()) > n_active  # feedback on its way
    if scheme != "uno":  # inter-DC bytes on their WAN link's wire (UnoLB's subflows: none)
        assert sum(r[K.R_WIRE] for d in before.values() for r in d.values()) > 0.0
    fs_before = sim.fs.copy()
    twin = {n: copy.deepcopy(getattr(sim, n)) for n in ("fs", "ring", "calendar", "fx")}
    dt4 = 4 * sim.dt_ps
    k4 = K.coarsen(4, k, dt4, sim.fs, sim.cp, sim.ring, sim.ring_pool, sim.active, n_active,
                   sim.calendar, sim.fx)  # fmt: skip
    k4_py = K.coarsen.py_func(4, k, dt4, twin["fs"], sim.cp, twin["ring"], sim.ring_pool,
                              sim.active, n_active, twin["calendar"], twin["fx"])  # fmt: skip
    assert k4 == k4_py == k // 4
    for n in ("fs", "ring", "fx"):
        np.testing.assert_array_equal(getattr(sim, n), twin[n], err_msg=n)
    np.testing.assert_array_equal(sim.calendar, twin["calendar"])
    after = lines(sim.ring, sim.calendar, k4, 4)
    latest = (K.R_SENTMAX, K.R_ARRIVE, K.R_WIRE_ACK)  # (times: the maxima)
    summed = [c for c in range(sim.ring.shape[1]) if c not in (*latest, K.R_RTTMIN, K.R_DSENT)]
    for f in active:
        f = int(f)
        old, new = before[f], after[f]
        want_steps = {j // 4 for j, row in old.items() if row.any()}
        at = fs_before[f, K.FS_LOSS_AT]
        loss_step = max(int(np.ceil(at / dt4)), k4) if at >= 0 else None
        assert want_steps <= set(new) <= want_steps | {loss_step}, f
        for c in summed:
            assert sum(r[c] for r in new.values()) == pytest.approx(
                sum(r[c] for r in old.values()), rel=1e-12, abs=1e-9
            )
        for c in latest:
            assert max((r[c] for r in new.values()), default=0.0) == max(
                (r[c] for r in old.values()), default=0.0
            )
        for j4, row in new.items():  # each coarse slot: the maxima of its fine slots
            fine = [r for j, r in old.items() if j // 4 == j4]
            if fine:
                assert row[K.R_ARRIVE] == max(r[K.R_ARRIVE] for r in fine)
                assert row[K.R_WIRE_ACK] == max(r[K.R_WIRE_ACK] for r in fine)
    for c in (K.FS_DUE_LAST, K.FS_ACK_LAST, K.FS_WAIT_LAST):
        np.testing.assert_array_equal(sim.fs[:, c], np.floor(fs_before[:, c] / 4))
    assert (sim.fx[active, K.FX_QUIET] == 0).all()


def test_the_step_grows_once_only_long_rtt_flows_are_left():
    """On the Uno Fig. 10 traffic (300 flows) the step grows 8-fold (to the intra-DC base
    RTT, ``engine.fluid_step_max_intra_rtt``) once the last intra-DC flow finished, and
    only then: every intra-DC flow's result is that of the fixed-step run, to the bit; the
    inter-DC flows, which run on with the coarser step, all finish, with the mean and p99 FCT
    of the fixed-step run within 2% and 5% and their retransmissions within 5%, in a third
    fewer steps, and the same whether or not the run samples. A lone inter-DC flow's FCT stays
    its ideal FCT."""
    import pandas as pd

    base = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
            "workload.n_flows=300", "workload.load=0.4", "engine.kind=fluid",
            "engine.sample_interval_us=0"]  # fmt: skip
    fixed = uno.run(uno.compose([*base, "engine.fluid_step_max_intra_rtt=0.125"]))
    grown = uno.run(uno.compose(base))
    assert fixed.summary["run"]["fluid_step_last_us"] == fixed.summary["run"]["fluid_step_us"]
    assert grown.summary["run"]["fluid_step_last_us"] == pytest.approx(
        8 * grown.summary["run"]["fluid_step_us"]
    )
    assert grown.summary["run"]["fluid_steps"] < 0.67 * fixed.summary["run"]["fluid_steps"]
    a, b = fixed.flows, grown.flows
    intra = a["cls"] == "intra"
    cols = ["fct_ps", "retransmits", "timeouts", "sent_bytes"]
    np.testing.assert_array_equal(a.loc[intra, cols], b.loc[intra, cols])
    assert b["finish_ps"].notna().all()
    inter_a, inter_b = a.loc[~intra, "fct_ps"], b.loc[~intra, "fct_ps"]
    assert inter_b.mean() == pytest.approx(inter_a.mean(), rel=0.02)
    assert inter_b.quantile(0.99) == pytest.approx(inter_a.quantile(0.99), rel=0.05)
    assert b.loc[~intra, "retransmits"].sum() == pytest.approx(
        a.loc[~intra, "retransmits"].sum(), rel=0.05
    )
    # the step grows at the same steps whether or not the run samples its rates and queues
    sampled = uno.run(uno.compose([*base, "engine.sample_interval_us=10"]))
    pd.testing.assert_frame_equal(sampled.flows, grown.flows)
    times = sampled.tables["rates"]["time_ps"].unique() / 1e6  # at the interval's multiples
    off = np.abs(times - 10 * np.round(times / 10))
    assert off.max() <= grown.summary["run"]["fluid_step_last_us"]
    lone = uno.run(uno.compose(["engine.kind=fluid", "workload.n_intra=0", "workload.n_inter=1",
                                "lb=ecmp", "workload.size_bytes=20000000",
                                "engine.sample_interval_us=0"])).flows  # fmt: skip
    assert lone["fct_ps"].iloc[0] == pytest.approx(lone["ideal_fct_ps"].iloc[0], rel=0.01)


def test_a_flows_bytes_leave_a_link_in_finite_time():
    """The fluid FIFO passes each flow's bytes at a link in the link's departures / (queue +
    arrivals) share, whose tail never ends: a flow's last sliver below a byte
    (``kernels.RESIDUE_BYTES``) now leaves with the step's departures, so after every step no
    route entry holds a positive amount under a byte (before: a third of the entries walked
    on the 40%-load Fig. 10 traffic did), the link's counters take it (in = out + dropped +
    queued at every link) and every flow still delivers exactly its bytes."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    cfg = uno.compose(["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                       "workload.n_flows=300", "workload.load=0.6", "engine.kind=fluid",
                       "engine.sample_interval_us=0"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    ef = sim.hops[3]
    held_steps = 0
    k = 0
    while k < 2000:
        k = sim.advance(k, k + 1)
        q = ef[:, K.EF_Q]
        held_steps += int((q > 0).any())
        assert not ((q > 0) & (q < 1.0)).any(), k
    assert held_steps > 1000  # queues held bytes most of the time
    sim.advance(k, 10**9)
    assert sim.counters[2] == len(sim.flows)
    ls, fs = sim.ls, sim.fs
    np.testing.assert_allclose(
        ls[:, K.LS_IN], ls[:, K.LS_TX] + ls[:, K.LS_DROP] + ls[:, K.LS_Q], rtol=1e-9, atol=1e-3
    )
    np.testing.assert_allclose(fs[:, K.FS_DELIVERED], fs[:, K.FS_SIZE], rtol=1e-9)


@pytest.mark.parametrize("twin", [False, True])
def test_a_long_rtt_flow_is_held_for_its_block_and_filed_once_at_its_end(twin):
    """Feedback in blocks (``kernels.hold_for_block``): a flow whose block is a step is filed
    every step; a flow with a 4-step block leaves the step's senders, droppers and markers,
    its sends add up (bytes, their mean time, the latest send), and it returns to the lists
    once, at the block's last step: as a sender if it sent, else as a dropper if it lost
    bytes, and as a marker if it delivered. A flow that finished meanwhile files nothing."""
    hold = K.hold_for_block.py_func if twin else K.hold_for_block
    n = 4
    fs = np.zeros((n, K.N_FS))
    fx = np.zeros((n, K.N_FX))
    fs[:, K.FS_STATE] = [1.0, 1.0, 1.0, 2.0]
    fs[:, K.FS_SEND_TIME] = 100.0
    block = np.zeros((3, n + 1), dtype=np.int64)
    block[0, :n] = [1, 4, 4, 2]
    block[0, n] = 4
    lists = [np.zeros(n, dtype=np.int64) for _ in range(3)]
    n_drop, n_mark = np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64)
    dt = 1000.0
    sends = {1: [10.0, 0.0, 30.0, 0.0], 0: [5.0] * 4}
    filed = []
    for k in range(4):
        now = k * dt
        senders = [f for f in (0, 1) if sends[f][k] > 0.0]
        for f in (0, 1):
            fx[f, K.FX_SEND] = sends[f][k]
        lists[0][: len(senders)] = senders
        droppers = [2] if k == 1 else []  # flow 2 loses bytes at step 1, sends nothing
        markers = [1, 3] if k == 2 else []  # deliveries (flow 3 finished since)
        if k == 1:
            fs[2, K.FS_DROPPED], fs[2, K.FS_EXPOSED] = 4096.0, 8192.0
        if k == 2:
            fs[1, K.FS_DELIV_NEW], fs[3, K.FS_DELIV_NEW] = 10.0, 7.0
        lists[1][: len(droppers)], n_drop[0] = droppers, len(droppers)
        lists[2][: len(markers)], n_mark[0] = markers, len(markers)
        n_send = hold(k, now, lists[0], len(senders), lists[1], n_drop, lists[2], n_mark, block,
                      fs, fx)  # fmt: skip
        filed.append((list(lists[0][:n_send]), list(lists[1][: n_drop[0]]),
                      list(lists[2][: n_mark[0]])))  # fmt: skip
    assert filed[0] == ([0], [], []) and filed[1] == ([0], [], []) and filed[2] == ([0], [], [])
    # step 3 ends the 4-step blocks (and flow 3's 2-step one, which files nothing: finished)
    assert filed[3] == ([0, 1], [2], [1])
    assert fs[1, K.FS_BLOCK_BYTES] == 40.0
    mean_at = (10.0 * (0 + 50.0) + 30.0 * (2 * dt + 50.0)) / 40.0
    assert fs[1, K.FS_BLOCK_MIDW] / fs[1, K.FS_BLOCK_BYTES] == pytest.approx(mean_at)
    assert fs[1, K.FS_BLOCK_SENT] == 2 * dt and fs[1, K.FS_BLOCK_END] == 2 * dt + 100.0
    assert fs[2, K.FS_DROPPED] == 4096.0 and fs[2, K.FS_BLOCK_BYTES] == 0.0
    assert fs[3, K.FS_DELIV_NEW] == 0.0  # finished: cleared
    assert block[1, n] == 0 and not block[2, :n].any()  # nothing held after the blocks' end
    # a flow still held when its block becomes a step (were a block to span the step's
    # growth): what it sends then joins what it holds, and it is filed once, at that step's end
    fs[1, K.FS_BLOCK_BYTES], fs[1, K.FS_BLOCK_MIDW] = 40.0, 40.0 * mean_at
    block[1, 0], block[1, n], block[2, 1] = 1, 1, 1
    block[0, 1] = 1
    fx[1, K.FX_SEND] = 20.0
    lists[0][:2] = [0, 1]
    n_drop[0] = n_mark[0] = 0
    n_send = hold(4, 4 * dt, lists[0], 2, lists[1], n_drop, lists[2], n_mark, block, fs, fx)
    assert list(lists[0][:n_send]) == [0, 1] and fs[1, K.FS_BLOCK_BYTES] == 60.0
    assert block[1, n] == 0 and block[2, 1] == 0


def test_feedback_in_blocks_changes_the_long_rtt_flows_little_and_the_short_ones_less():
    """``engine.fluid_blocks_per_rtt`` (default 256): on the Uno Fig. 10 traffic (300 flows,
    the step fixed at 1/8 of the intra-DC RTT, where the inter-DC flows' blocks are 4 steps)
    every flow finishes and delivers its bytes, the intra-DC flows' mean and p99 FCT stay
    within 2% and 5% of every flow filed every step (``= 0``), the inter-DC flows' within 2%
    and 5%, and their retransmissions within 5%. A lone inter-DC flow still finishes at its
    ideal FCT, to the picosecond, whatever its block. Drops fall evenly on a full queue's
    arrivals here (``engine.fluid_phase_drops=false``): with phase drops, which flow a full
    queue locks out turns on its grids' phases, which any change of timing reshuffles, and
    the p99 of 54 flows is then a draw, not a measure of the blocks."""
    base = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
            "workload.n_flows=300", "workload.load=0.4", "engine.kind=fluid",
            "engine.sample_interval_us=0", "engine.fluid_step_max_intra_rtt=0.125",
            "engine.fluid_phase_drops=false"]  # fmt: skip
    every = uno.run(uno.compose([*base, "engine.fluid_blocks_per_rtt=0"]))
    blocks = uno.run(uno.compose(base))
    a, b = every.flows, blocks.flows
    assert b["finish_ps"].notna().all()
    np.testing.assert_array_equal(b["bytes_delivered"], b["size_bytes"])
    for cls in ("intra", "inter"):
        sel = a["cls"] == cls
        fa, fb = a.loc[sel, "fct_ps"], b.loc[sel, "fct_ps"]
        assert fb.mean() == pytest.approx(fa.mean(), rel=0.02), cls
        assert fb.quantile(0.99) == pytest.approx(fa.quantile(0.99), rel=0.05), cls
    inter = a["cls"] == "inter"
    assert b.loc[inter, "retransmits"].sum() == pytest.approx(
        a.loc[inter, "retransmits"].sum(), rel=0.05
    )
    assert (a["fct_ps"] != b["fct_ps"]).any()  # (the blocks are on)
    for per_rtt in (256, 16):  # blocks of 4 and 64 steps: the last ACK's arrival, exactly
        lone = uno.run(uno.compose(["engine.kind=fluid", "workload.n_intra=0",
                                    "workload.n_inter=1", "lb=ecmp",
                                    "workload.size_bytes=20000000",
                                    "engine.fluid_step_max_intra_rtt=0.125",
                                    f"engine.fluid_blocks_per_rtt={per_rtt}",
                                    "engine.sample_interval_us=0"])).flows  # fmt: skip
        assert lone["fct_ps"].iloc[0] == pytest.approx(lone["ideal_fct_ps"].iloc[0], rel=1e-9)


def test_link_levels_follow_the_routes():
    """Each link's level is one past the deepest link feeding it on any route (a split hop's
    links each feed every link of the next hop); the links of a cycle come after all others,
    and a link no route uses is on level 0."""
    from uno.fluid.arrays import hop_state as _hop_state

    routes = [
        ([0, 1, 2], [1.0, 1.0, 1.0]),
        ([3, 1, 4], [1.0, 1.0, 1.0]),
        ([8, 9, 10, 2], [1.0, 0.5, 0.5, 1.0]),  # 8, then 9 or 10 (a split hop), then 2
        ([5, 6], [1.0, 1.0]),
        ([6, 5], [1.0, 1.0]),  # 5 and 6 feed each other
    ]
    rt_ptr = np.cumsum([0] + [len(r[0]) for r in routes]).astype(np.int64)
    rt_link = np.array([x for r in routes for x in r[0]], dtype=np.int64)
    rt_w = np.array([x for r in routes for x in r[1]])
    n = len(routes)
    hops = _hop_state(11, rt_ptr, rt_link, rt_w, np.zeros(n, dtype=np.int64),
                      np.zeros(n, dtype=np.int64), np.zeros((n, 1, 4), dtype=np.int64))  # fmt: skip
    # 0, 3, 8: nothing before them; 1 after 0 and 3; 9, 10 after 8; 2 after 1, 9 and 10;
    # 4 after 1; 7 unused; 5 and 6: a cycle, after the deepest level (2)
    assert hops[0].tolist() == [0, 1, 2, 0, 2, 3, 3, 0, 0, 1, 1]
    assert hops[1][0] == 4


def test_concat_ranges_lists_each_range_in_order():
    from uno.core.arrays import concat_ranges

    got = concat_ranges(np.array([5, 0, 9]), np.array([2, 0, 3]))
    assert got.tolist() == [5, 6, 9, 10, 11] and got.dtype == np.int64
    assert concat_ranges(np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)).size == 0

"""transport.ack_paths: a flow's ACKs cycle over N entropies for their route while echoing the
data packet's entropy, the same way in both data planes; 0 keeps the reversed data path; in
the fluid engine a flow on subflows takes the cycled ACK routes too (its cycled ACK routes:
tests/test_fluid_acks.py)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uno
from uno.net.hashing import ack_path_entropy, flow_hash_key

SMALL = ["workload=incast", "workload.n_intra=4", "workload.n_inter=0", "workload.receiver=5",
         "workload.size_bytes=300000", "lb=ecmp", "cc=dctcp", "switch=ecn",
         "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip


def test_the_primitive_cycles_or_echoes():
    assert ack_path_entropy(77, 5, 0) == (77, 5)
    route, nxt = 11, 0
    seen = []
    for _ in range(7):
        route, nxt = ack_path_entropy(11, nxt, 3)
        seen.append(int(route))
    assert seen == [0, 1, 2, 0, 1, 2, 0]
    assert ack_path_entropy.py_func(11, 2, 3) == (2, 0)


def _acks(ack_paths: int):
    """The (entropy, hash key) of the ACKs of a run's first flow, in the order they left."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.transport.receiver import Receiver

    cfg = to_run_config(uno.compose([*SMALL, f"transport.ack_paths={ack_paths}",
                                     "engine.dataplane=python"]))  # fmt: skip
    sim = build_simulation(cfg)
    rx = sim.flows[0].receiver
    acks = []
    turn = Receiver.turn_into_ack

    def spy(self, pkt, done=False):
        turn(self, pkt, done)
        if self is rx:
            acks.append((pkt.entropy, pkt.hkey, pkt.src, pkt.dst))

    Receiver.turn_into_ack = spy
    try:
        sim.run()
    finally:
        Receiver.turn_into_ack = turn
    return acks


def test_acks_cycle_over_the_paths_and_echo_the_entropy():
    echoed = _acks(0)
    assert len({e for e, *_ in echoed}) == 1  # ECMP: one entropy per flow
    entropy, key, src, dst = echoed[0]
    assert all(k == key for _, k, *_ in echoed)  # the reversed data path
    cycled = _acks(4)
    assert len(cycled) == len(echoed)
    assert all(e == entropy for e, *_ in cycled)  # still echoed to the load balancer
    want = [flow_hash_key(src, dst, i % 4) for i in range(len(cycled))]
    assert [k for _, k, *_ in cycled] == want


@pytest.mark.slow  # (over a minute: both data planes with their own kernels)
def test_both_data_planes_route_the_acks_alike():
    runs = {
        dp: uno.run(
            uno.compose([*SMALL, "transport.ack_paths=256", f"engine.dataplane={dp}"])
        )  # fmt: skip
        for dp in ("python", "compiled")
    }
    pd.testing.assert_frame_equal(runs["python"].flows, runs["compiled"].flows)
    cols = ["port", "arrivals", "tx_packets", "tx_bytes", "drops", "ecn_marks", "max_queue_bytes"]
    pd.testing.assert_frame_equal(
        runs["python"].tables["ports"][cols], runs["compiled"].tables["ports"][cols]
    )
    assert runs["python"].tables["ports"]["tx_packets"].sum() > 0


@pytest.mark.parametrize("lb", ["ecmp", "unolb", "plb", "reps"])
def test_the_fluid_flows_acks_take_the_cycled_routes_whatever_the_balancer(lb):
    """A flow on subflows keeps no ACK hops of its own: its ACKs' route is the receiver's
    cycled one (:func:`uno.fluid.routes.cycled_ack_routes`), as a routed flow's; every flow
    finishes."""
    from uno.api import to_run_config
    from uno.build import build_simulation
    from uno.fluid.routes import cycled_ack_routes, routing_arrays, switch_index

    over = [*SMALL, "transport.ack_paths=256", "engine.kind=fluid", f"lb={lb}"]
    sim = build_simulation(to_run_config(uno.compose(over)))
    assert (sim.lb.ack_hops == 0).all() and (sim.hops.ack_hops == 0).all()
    sc = sim.scenario
    src = np.array([p.spec.src for p in sim.flows])
    dst = np.array([p.spec.dst for p in sim.flows])
    tables = routing_arrays(sc, switch_index(sc.routing), True)
    ptr, link, w = cycled_ack_routes(src, dst, 256, int(sim.lb.links.shape[2]), tables)
    assert (sim.rv_ptr == ptr).all() and (sim.rv_link == link).all() and (sim.rv_w == w).all()
    assert sim.run().flows["finish_ps"].notna().all()

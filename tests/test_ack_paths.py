"""transport.ack_paths: a flow's ACKs cycle over N entropies for their route while echoing the
data packet's entropy, the same way in both data planes; 0 keeps the reversed data path; the
fluid engine refuses it for subflows (each subflow's ACKs take its own path back there; its
cycled ACK routes: tests/test_fluid_acks.py)."""

from __future__ import annotations

import pandas as pd
import pytest

import uno
from uno.core.errors import ConfigError
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


def test_the_fluid_engine_refuses_it_for_subflows_only():
    for lb in ("unolb", "plb", "reps"):
        with pytest.raises(ConfigError, match="transport.ack_paths"):
            uno.run(uno.compose([*SMALL, "transport.ack_paths=256", "engine.kind=fluid",
                                 f"lb={lb}"]))  # fmt: skip
    run = uno.run(uno.compose([*SMALL, "transport.ack_paths=256", "engine.kind=fluid"]))
    assert run.flows["finish_ps"].notna().all()

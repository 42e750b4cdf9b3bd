"""REPS in the fluid engine (lb=reps, its Algorithm 1): a flow spreads over
``engine.fluid_reps_paths`` subflows on the entropies REPS explores first (0, 1, ...); each
round of a base RTT a subflow moves to the next entropy in turn with the chance its path marks
its bytes (a packet's place in the window takes a new entropy at a marked ACK)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TWO_PLUS_TWO_INCAST as INCAST

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid import kernels as K
from uno.fluid.balance import REPS_FREEZES, REPS_FROZEN, REPS_MOVES, REPS_NEXT, REPS_START
from uno.lb.reps import explore_packets


def test_reps_explores_one_bdp_of_packets_at_most_one_per_entropy():
    assert explore_packets(100_000, 4_160, 256) == 24
    assert explore_packets(10_000_000, 4_160, 256) == 256
    assert explore_packets(1_000, 4_160, 256) == 1


def _sim(extra):
    cfg = uno.compose([*INCAST, "engine.kind=fluid", "lb=reps", *extra])
    return build_simulation(to_run_config(cfg))


def test_subflows_start_on_the_first_entropies_and_move_on_in_turn():
    sim = _sim(["cc=dctcp", "engine.fluid_reps_paths=8"])
    n = sim.lb.n.copy()
    assert (n == 8).all()  # (every flow explores more than 8 packets)
    assert (sim.lb.entropy[:, :8] == np.arange(8)).all()
    first_next = sim.lb.reps_s[:, REPS_NEXT].copy()
    sim.run()
    moves = sim.lb.reps_s[:, REPS_MOVES]
    assert moves.sum() > 0  # the incast marks at the receiver's port: subflows move
    for f in range(len(n)):
        # the entropies taken are the next ones in turn after the explored ones
        taken = set(range(int(first_next[f]), int(first_next[f] + moves[f])))
        now = set(sim.lb.entropy[f, : n[f]].tolist())
        assert now <= set(range(8)) | taken
        assert sim.lb.reps_s[f, REPS_NEXT] == first_next[f] + moves[f]


def test_unmarked_paths_keep_their_entropies():
    sim = _sim(["cc=uno"])  # (this incast marks nothing under UnoCC)
    before = sim.lb.entropy.copy()
    sim.run()
    assert sim.lb.reps_s[:, REPS_MOVES].sum() == 0
    assert np.array_equal(sim.lb.entropy, before)


def test_a_timeout_freezes_the_buffer_then_the_subflows_start_afresh():
    """``lb.reps.freeze_us`` (the authors' code): a timeout freezes the buffer once; while
    frozen a subflow whose path marks takes the path of one that stays (the cached entropies),
    not the next entropy in turn; at the first round after the freeze every subflow takes a
    random entropy."""
    sim = _sim(["cc=dctcp", "engine.fluid_reps_paths=8", "lb.reps.freeze_us=50"])
    lb, f, rtt = sim.lb, 0, 1e7
    st = lb.reps_s
    assert st[f, REPS_FROZEN] == -1.0
    K.reps_timeout(f, 1e8, lb)
    K.reps_timeout(f, 1e8 + 1e6, lb)  # (frozen already: no new freeze)
    assert st[f, REPS_FROZEN] == 1e8 + 50e6 and st[f, REPS_FREEZES] == 1
    ls = sim.ls.copy()
    ls[:, K.LS_MARK] = 0.0
    paths = [set(lb.links[f, s, : lb.hops[f]].tolist()) for s in range(8)]
    marking = paths[0] - set().union(*paths[1:])  # links of subflow 0's path alone
    assert marking
    ls[list(marking), K.LS_MARK] = 1.0
    stays = [s for s in range(8) if not paths[s] & marking]
    assert stays and 0 not in stays
    st[f, REPS_START] = 1e8
    nxt = st[f, REPS_NEXT]
    K.reps_acks(f, 1e8 + rtt, rtt, 0.0, 0.0, ls, lb, sim.hops, sim.rt_ptr[-1])
    assert lb.entropy[f, 0] in set(lb.entropy[f, stays].tolist())
    assert st[f, REPS_NEXT] == nxt  # (no new entropy while frozen)
    before = lb.entropy[f, :8].copy()
    K.reps_acks(f, 1e8 + 60e6, rtt, 0.0, 0.0, ls, lb, sim.hops, sim.rt_ptr[-1])  # (freeze over)
    assert st[f, REPS_FROZEN] == -1.0
    assert (lb.entropy[f, :8] != before).sum() >= 6  # (random entropies: one may repeat)
    assert (lb.entropy[f, :8] < 256).all() and (lb.lost[f] == 0).all()


def test_freezes_change_a_run_with_failed_links():
    """Fig. 4's failed links on a k=4 tree: with freezes the REPS flows time out less often,
    in both engines (packet 75 against 8, fluid 61 against 27 timeouts), and every flow
    finishes."""
    over = ["experiment=reps_failures", "topo.k=4", "lb=reps", "engine.max_sim_time_ms=5",
            "engine.record_rtts=false", "engine.progress=false", "engine.kind=fluid"]  # fmt: skip
    plain = uno.run(uno.compose(over)).flows
    frozen = uno.run(uno.compose([*over, "lb.reps.freeze_us=10000"])).flows
    assert plain["fct_ps"].notna().all() and frozen["fct_ps"].notna().all()
    assert frozen["timeouts"].sum() < plain["timeouts"].sum() / 2


def test_a_subflow_carries_its_share_inversely_as_its_round_trip():
    """REPS reuses an entropy when its ACK comes back unmarked, so each subflow carries its
    part of the window once per round trip of its own path: its share of the bytes sent goes
    inversely as that RTT (uno.fluid.balance.reps_shares); the shares sum to 1."""
    sim = _sim(["cc=dctcp", "engine.fluid_reps_paths=8"])
    lb, f = sim.lb, 0
    ls = sim.ls.copy()
    ls[:, K.LS_DELAY] = 0.0
    base = 10e6
    K.reps_shares(f, base, ls, lb)
    assert np.allclose(lb.share[f, :8], 1.0 / 8)
    paths = [set(lb.links[f, s, : lb.hops[f]].tolist()) for s in range(8)]
    alone = sorted(paths[0] - set().union(*paths[1:]))  # links of subflow 0's path alone
    assert alone
    ls[alone[0], K.LS_DELAY] = base  # subflow 0's round trip twice the others'
    K.reps_shares(f, base, ls, lb)
    assert lb.share[f, :8].sum() == pytest.approx(1.0)
    assert lb.share[f, 0] == pytest.approx(lb.share[f, 1] / 2)
    assert np.allclose(lb.share[f, 1:8], lb.share[f, 1])


def test_reps_permutation_agrees_with_packets():
    """A permutation of 2-MB DCTCP flows on a k=4 fat tree, fast retransmit off (sprayed
    packets overtake one another in the packet engine, which the fluid does not model): the
    packet REPS sends each packet on a returned entropy, so a path that queues carries less.
    With as many subflows as the entropies REPS explores (28 to 42 here) and shares by their
    round trips, the fluid's mean FCT is within 10% of packets' (measured +2.0%; an even split
    over them +13.6%; the default 16 subflows by their round trips +11.4%)."""
    over = ["topo=fat_tree", "topo.k=4", "workload=permutation", "workload.size_bytes=2000000",
            "cc=dctcp", "lb=reps", "transport.dupack_threshold=0",
            "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip
    fluid = ["engine.kind=fluid", "engine.fluid_reps_paths=64"]
    fct = {
        kind: uno.run(uno.compose([*over, *extra])).flows["fct_ps"].mean()
        for kind, extra in (("packet", ["engine.kind=packet"]), ("fluid", fluid))
    }
    assert abs(fct["fluid"] / fct["packet"] - 1.0) < 0.10

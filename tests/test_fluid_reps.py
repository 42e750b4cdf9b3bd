"""REPS in the fluid engine (lb=reps, its Algorithm 1): a flow spreads over
``engine.fluid_reps_paths`` subflows on the entropies REPS explores first (0, 1, ...); each
round of a base RTT a subflow moves to the next entropy in turn with the chance its path marks
its bytes (a packet's place in the window takes a new entropy at a marked ACK)."""

from __future__ import annotations

import numpy as np
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
    K.reps_acks(f, 1e8 + rtt, rtt, ls, lb, sim.hops, sim.rt_ptr[-1])
    assert lb.entropy[f, 0] in set(lb.entropy[f, stays].tolist())
    assert st[f, REPS_NEXT] == nxt  # (no new entropy while frozen)
    before = lb.entropy[f, :8].copy()
    K.reps_acks(f, 1e8 + 60e6, rtt, ls, lb, sim.hops, sim.rt_ptr[-1])  # the freeze is over
    assert st[f, REPS_FROZEN] == -1.0
    assert (lb.entropy[f, :8] != before).sum() >= 6  # (random entropies: one may repeat)
    assert (lb.entropy[f, :8] < 256).all() and (lb.lost[f] == 0).all()


def test_freezes_change_a_run_with_failed_links():
    """Fig. 4's failed links on a k=4 tree: with freezes the REPS flows time out less often,
    in both engines (packet 75 against 8, fluid 61 against 24 timeouts), and every flow
    finishes."""
    over = ["experiment=reps_failures", "topo.k=4", "lb=reps", "engine.max_sim_time_ms=5",
            "engine.record_rtts=false", "engine.progress=false", "engine.kind=fluid"]  # fmt: skip
    plain = uno.run(uno.compose(over)).flows
    frozen = uno.run(uno.compose([*over, "lb.reps.freeze_us=10000"])).flows
    assert plain["fct_ps"].notna().all() and frozen["fct_ps"].notna().all()
    assert frozen["timeouts"].sum() < plain["timeouts"].sum() / 2

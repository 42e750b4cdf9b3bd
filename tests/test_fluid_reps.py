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
from uno.core.errors import ConfigError
from uno.fluid.balance import REPS_MOVES, REPS_NEXT
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


def test_buffer_freezes_are_refused_naming_the_field():
    with pytest.raises(ConfigError) as err:
        _sim(["lb.reps.freeze_us=50"])
    assert err.value.field == "lb.reps.freeze_us"

"""PLB in the fluid engine: one path per flow, the packet PLB's first, moved to a fresh random
entropy by PLB's own rules (uno.lb.plb: rounds of a base RTT, congested when more than the
fraction of the round's ACKs were marked; a loss repaths at most once per RTO)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import TWO_PLUS_TWO_INCAST as INCAST

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.fluid.balance import PLB_COUNT, PLB_REPATHS
from uno.lb.plb import plb_loss_repaths, plb_round_end

MIXED = ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
         "engine.progress=false"]  # fmt: skip


@pytest.mark.parametrize("rule", [plb_round_end, plb_round_end.py_func])
def test_a_round_is_congested_above_the_fraction_and_enough_of_them_repath(rule):
    assert rule(100, 25, 0, 0.25, 2) == (0, False)  # 25% is not more than 25%
    assert rule(100, 26, 0, 0.25, 2) == (1, False)
    assert rule(100, 26, 1, 0.25, 2) == (0, True)  # the second in a row: repath, count again
    assert rule(100, 10, 1, 0.25, 2) == (0, False)  # a calm round ends the streak
    assert rule(4160.0, 1040.5, 0, 0.25, 1) == (0, True)  # bytes: only the ratio matters


@pytest.mark.parametrize("rule", [plb_loss_repaths, plb_loss_repaths.py_func])
def test_a_loss_repaths_at_most_once_per_rto(rule):
    assert rule(5_000, -1, 1_000)
    assert not rule(5_000, 4_500, 1_000)
    assert rule(5_000, 3_999, 1_000)


def _sim(extra, n_flows=60):
    cfg = uno.compose([*MIXED, f"workload.n_flows={n_flows}", "engine.kind=fluid", *extra])
    return build_simulation(to_run_config(cfg))


def test_plb_flows_start_on_the_path_ecmp_hashes_them_to():
    plb, ecmp = _sim(["lb=plb"]), _sim(["lb=ecmp"])
    n = len(plb.flows)
    for f in range(n):
        hops = plb.lb.hops[f]
        route = ecmp.rt_link[ecmp.rt_ptr[f] : ecmp.rt_ptr[f + 1]]
        assert np.array_equal(plb.lb.links[f, 0, :hops], route)
    zero = _sim(["lb=plb", "lb.plb.initial_entropy=zero"])
    assert (zero.lb.entropy[:, 0] == 0).all()


def _incast(extra):
    cfg = uno.compose([*INCAST, "engine.kind=fluid", "cc=dctcp", "lb=plb", "lb.plb.repath_on_loss=false",
                       *extra])  # fmt: skip
    return build_simulation(to_run_config(cfg))


def test_congested_rounds_move_the_flow_and_calm_ones_do_not():
    """An incast marks every round at the receiver's port: a flow that repaths after each
    congested round moves many times; one whose rounds never count as congested stays."""
    eager = _incast(["lb.plb.congested_fraction=0", "lb.plb.congested_rounds=1"])
    first = eager.lb.entropy[:, 0].copy()
    eager.run()
    repaths = eager.lb.plb_s[:, PLB_REPATHS]
    moved = eager.lb.entropy[:, 0] != first
    assert (repaths >= 1).all() and (repaths[:2] >= 3).all() and moved.any()
    never = _incast(["lb.plb.congested_fraction=1"])
    first = never.lb.entropy[:, 0].copy()
    never.run()
    assert never.lb.plb_s[:, PLB_REPATHS].sum() == 0
    assert never.lb.plb_s[:, PLB_COUNT].sum() == 0
    assert np.array_equal(never.lb.entropy[:, 0], first)


def test_plb_in_fluid_keeps_the_packet_engines_fcts():
    """Per-class mean FCT within 10% of the packet engine's (the fluid validation target) on
    an incast of four intra-DC DCTCP flows whose every round is marked, so PLB keeps moving
    the flows."""
    mean = {}
    for kind in ("packet", "fluid"):
        cfg = uno.compose([*INCAST, "workload.n_intra=4", "workload.n_inter=0", "cc=dctcp",
                           "lb=plb", f"engine.kind={kind}"])  # fmt: skip
        mean[kind] = uno.run(cfg).flows.fct_ps.mean()
    assert abs(mean["fluid"] / mean["packet"] - 1) < 0.10

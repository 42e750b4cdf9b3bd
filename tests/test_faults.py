"""Faults: failed links black-hole what they carry, random and correlated (Table 1) losses
drop at their configured rates, every draw from the run's seed."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import flows_override, run

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.errors import ConfigError
from uno.core.rng import UniformBuffer
from uno.faults.models import BlockLoss, LinkDown


@pytest.mark.parametrize("probs", [[0.05, 0.02, 0.01], [3.0e-4, 7.5e-5, 1.6e-5]])
def test_block_loss_frequencies_match_the_configuration(probs):
    n_blocks = 10**6
    model = BlockLoss(probs, 10, UniformBuffer(np.random.default_rng(7)))
    lost_positions = np.zeros(10)
    for _ in range(n_blocks):
        for i in range(10):
            if model.drops(None, 0):
                lost_positions[i] += 1
    assert model.blocks == n_blocks
    for k, p in enumerate(probs, start=1):
        observed = model.losses_per_block[k] / n_blocks
        sd = (p * (1 - p) / n_blocks) ** 0.5
        assert abs(observed - p) < 5 * sd, (k, observed, p)
    total_lost = sum(k * model.losses_per_block[k] for k in range(1, len(probs) + 1))
    assert lost_positions.sum() == total_lost  # exactly k packets of a k-loss block are lost
    if probs[0] > 0.01:  # positions uniform within the block
        assert lost_positions.min() > 0.9 * lost_positions.mean()


def test_link_down_window():
    down = LinkDown(10, 20)
    assert [down.drops(None, t) for t in (9, 10, 19, 20)] == [False, True, True, False]
    assert LinkDown(10, None).drops(None, 10**15)


ECMP_PAIR = ["workload=flows", flows_override([(0, 200, 2_000_000)]), "lb=ecmp", "cc=uno"]


def wan_port_of(result):
    ports = result.tables["ports"]
    used = ports[(ports["kind"] == "wan") & (ports["tx_packets"] > 0)]
    return used["port"].tolist()


def test_a_failed_link_black_holes_its_flow_until_it_comes_back():
    base = run([*ECMP_PAIR, "engine.sample_interval_us=0"])
    (fwd, rev) = wan_port_of(base)  # data one way, ACKs the other
    fail = f"faults.link_failures=[{{ports:['{fwd}'],both_directions:true,at_us:0.0}}]"
    dead = run([*ECMP_PAIR, fail, "engine.max_sim_time_ms=30", "engine.sample_interval_us=0"])
    assert dead.flows["finish_ps"].isna().all()
    assert dead.summary["packets"]["dropped"].get("link_down/data", 0) > 0
    back = (
        f"faults.link_failures=[{{ports:['{fwd}'],both_directions:true,at_us:0.0,"
        "until_us:20000.0}]"
    )
    healed = run([*ECMP_PAIR, back, "engine.sample_interval_us=0"])
    assert healed.flows["finish_ps"].notna().all()
    assert healed.flows["finish_ps"].item() > 20_000 * 10**6


def test_losses_are_seeded_and_reported():
    loss = "faults.losses=[{ports:['dc*/border->dc*/border#*'],probability:0.01}]"
    a = run([*ECMP_PAIR, loss, "engine.sample_interval_us=0"])
    b = run([*ECMP_PAIR, loss, "engine.sample_interval_us=0"])
    c = run([*ECMP_PAIR, loss, "seed=2", "engine.sample_interval_us=0"])
    drops = a.summary["packets"]["dropped"]
    assert drops.get("random_loss/data", 0) > 0 and a.flows["finish_ps"].notna().all()
    assert drops == b.summary["packets"]["dropped"] and drops != c.summary["packets"]["dropped"]
    assert a.tables["ports"]["fault_drops"].sum() == sum(
        n for k, n in drops.items() if k.startswith("random_loss")
    )


def test_table1_presets_compose_and_reach_the_wan_ports():
    sim = build_simulation(to_run_config(uno.compose(["faults=table1_setup1"])))
    faulty = [p for p in sim.network.ports if p.fault is not None]
    assert len(faulty) == 16 and {p.kind for p in faulty} == {"wan"}
    model = faulty[0].fault.models[0]
    assert isinstance(model, BlockLoss) and model.cumulative[-1] == pytest.approx(3.91e-4)


@pytest.mark.parametrize(
    "override,field",
    [
        ("faults.link_failures=[{ports:['nosuch']}]", "faults.link_failures[0].ports[0]"),
        ("faults.link_failures=[{ports:[]}]", "faults.link_failures[0].ports"),
        (
            "faults.losses=[{ports:['*'],block_probabilities:[0.9,0.2]}]",
            "faults.losses[0].block_probabilities",
        ),
        ("faults.losses=[{ports:['*'],probability:1.5}]", "faults.losses[0].probability"),
        (
            "faults.link_failures=[{ports:['*'],at_us:5.0,until_us:2.0}]",
            "faults.link_failures[0].until_us",
        ),
    ],
)
def test_bad_fault_settings_are_refused_by_name(override, field):
    with pytest.raises(ConfigError) as err:
        build_simulation(to_run_config(uno.compose([override])))
    assert err.value.field == field

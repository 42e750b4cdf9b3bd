"""When a fluid flow's ACKs come back: an UnoLB flow's subflow by subflow, each at its own
path's RTT (``engine.fluid_subflow_rtts``), and a flow's first ACKs no earlier than their step
when a law hears a step as several batches (``engine.fluid_batch_rtt``)."""

from __future__ import annotations

import numpy as np
import pytest

import uno
import uno.api
from uno.build import build_simulation
from uno.cc.uno import S as UNO_STATE
from uno.fluid import columns as C
from uno.fluid.signals import subflow_rtt_offsets

QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]
#: one intra-DC flow across the core of a k=4 fat tree (hosts 0 and 15 sit in different pods)
ONE_FLOW = ["topo=fat_tree", "topo.k=4", "workload=flows",
            "workload.flows=[{src:0,dst:15,size_bytes:20000000,start_us:0.0}]"]  # fmt: skip


def _fluid(overrides):
    cfg = uno.api.to_run_config(uno.compose(["engine.kind=fluid", *QUIET, *overrides]))
    sim = build_simulation(cfg)
    sim.advance(0, 0)
    return sim


def _queued_subflow_link(sim):
    """A link that some but not all of flow 0's subflows cross, and how many cross it."""
    lb = sim.lb
    n, hops = int(lb.n[0]), int(lb.hops[0])
    links = lb.links[0, :n, :hops]
    for link in np.unique(links):
        crossing = int((links == link).any(axis=1).sum())
        if 0 < crossing < n:
            return int(link), crossing, n
    raise AssertionError("every subflow crosses the same links")


def test_the_offsets_are_each_subflows_queueing_less_the_mean():
    sim = _fluid([*ONE_FLOW, "scheme=uno"])
    link, crossing, n = _queued_subflow_link(sim)
    sim.ls[:, C.LS_DELAY] = 0.0
    sim.ls[link, C.LS_DELAY] = 8e6
    out = np.zeros(n)
    subflow_rtt_offsets(0, 0.0, sim.ls, sim.lb, out)
    hit = (sim.lb.links[0, :n, : int(sim.lb.hops[0])] == link).any(axis=1)
    mean = 8e6 * crossing / n
    assert out[hit] == pytest.approx(8e6 - mean)
    assert out[~hit] == pytest.approx(-mean)
    assert out.sum() == pytest.approx(0.0, abs=1e-3)


def _after_a_queue(overrides, steps=6):
    """Flow 0's latest ACK step and the bytes it has pending, after ``steps`` steps and one
    more in which a link some of its subflows cross holds a 250-kB queue."""
    sim = _fluid([*ONE_FLOW, "scheme=uno", *overrides])
    link, _crossing, _n = _queued_subflow_link(sim)
    sim.advance(0, steps)
    sim.ls[link, C.LS_Q] = 250e3
    sim.advance(steps, steps + 1)
    return sim.fs[0, C.FS_ACK_LAST] - steps, sim.fs[0, C.FS_PENDING], sim.dt_ps, link, sim


def test_a_queued_subflows_acks_come_back_at_its_own_rtt():
    """The batch sent while one path holds a queue: with the setting its subflows' ACKs come
    back as late as that queue makes them (the latest a full queue's delay after the rest),
    not all of them at the mean; the same bytes are due either way."""
    lag_mean, pending_mean, dt_ps, link, sim = _after_a_queue(["engine.fluid_subflow_rtts=false"])
    lag_own, pending_own, _dt, _link, _sim = _after_a_queue(["engine.fluid_subflow_rtts=true"])
    _link, crossing, n = _queued_subflow_link(sim)
    delay_steps = sim.ls[link, C.LS_DELAY] / dt_ps
    assert delay_steps > 4.0
    # the mean holds the queue's delay in the share of subflows that cross it
    later_steps = delay_steps * (1.0 - crossing / n)
    assert later_steps > 2.0
    assert abs((lag_own - lag_mean) - later_steps) <= 1.0
    assert pending_own == pytest.approx(pending_mean, rel=1e-9)


def test_a_flows_first_acks_start_its_laws_periods_at_their_step():
    """At steps of half the intra-DC RTT and batches of an eighth of the flow's base RTT, the
    first ACKs are heard as one batch at their step: UnoCC's epoch and Quick Adapt period
    start there, not up to a step before (which would count the ACKs of less than an RTT as
    the period's and cut the window)."""
    sim = _fluid([*ONE_FLOW, "scheme=uno_ecmp", "engine.fluid_step_intra_rtt=0.5",
                  "engine.fluid_batch_rtt=0.125"])  # fmt: skip
    assert sim.dt_ps / sim.fs[0, C.FS_BATCH_PS] >= 4.0
    k = 0
    while sim.fs[0, C.FS_ACKED] <= 0.0:
        sim.advance(k, k + 1)
        k += 1
    heard_ps = (k - 1) * sim.dt_ps
    assert sim.cs[0, UNO_STATE.qa_start_ps] == pytest.approx(heard_ps)
    assert sim.cs[0, UNO_STATE.epoch_start_ps] == pytest.approx(heard_ps)
    assert sim.cs[0, UNO_STATE.qa_events] == 0.0

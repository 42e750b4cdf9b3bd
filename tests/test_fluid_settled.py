"""The fluid step that follows the flows both ways (``engine.fluid_step_settled_rtt``): it grows
while every running flow has settled and no flow is about to start, and goes back to the first
step before the next start; :func:`uno.fluid.rings.refine` refiles the delay lines."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import flows_override

import uno
import uno.api
import uno.fluid.engine as fluid_engine
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid.cycles import TALLY
from uno.fluid.rings import coarsen, refine
from uno.fluid.state import RingPool
from uno.fluid.support import settled_step_rtt

QUIET = ["engine.sample_interval_us=0", "engine.progress=false"]
SETTLED = "engine.fluid_step_settled_rtt=0.5"


def _due_rows(sim, k):
    """Per running flow, the steps from ``k`` on whose delay-line slot holds anything."""
    pool = RingPool(*sim.ring_pool)
    out = {}
    for f in sim.active[: int(sim.counters[C.CT.running])]:
        start, n = pool.ptr[f], pool.length[f]
        rows = [j for j in range(k, k + n) if sim.ring[start + j % n].any()]
        out[int(f)] = rows
    return out


def _assert_class_means_within(flows, packet_flows, rel):
    """Each class's mean FCT within ``rel`` of the packet run's."""
    for cls in ("intra", "inter"):
        mine = flows.loc[flows.cls == cls, "fct_ps"].mean()
        theirs = packet_flows.loc[packet_flows.cls == cls, "fct_ps"].mean()
        assert mine == pytest.approx(theirs, rel=rel), cls


def test_refine_files_each_coarse_slot_at_the_first_fine_step_of_its_span():
    """Eight steps coarsened then refined: every delay line's bytes (each column's sum) are
    kept, each slot that holds anything sits at a multiple of the factor with its calendar bit
    set, and the flows' step fields are back at the fine step's scale (a multiple of it)."""
    cfg = uno.api.to_run_config(uno.compose(["engine.kind=fluid", *QUIET]))
    sim = build_simulation(cfg)
    k = sim._advance_to(0, 4000)
    assert k == 4000 and int(sim.counters[C.CT.running]) == 8
    sums = sim.ring.sum(axis=0)
    due_last = sim.fs[:, C.FS_DUE_LAST].copy()
    n_active = int(sim.counters[C.CT.running])
    args = (sim.fs, sim.ring, sim.ring_pool, sim.active, n_active, sim.calendar, sim.fx)
    k_coarse = coarsen(8, k, sim.dt_ps * 8, sim.fs, sim.cp, sim.ring, sim.ring_pool, sim.active,
                       n_active, sim.calendar, sim.fx, sim.int_col)  # fmt: skip
    assert k_coarse == 500
    k_fine = refine(8, k_coarse, sim.dt_ps, *args)
    assert k_fine == 4000
    additive = [C.R_ACK, C.R_DELIV, C.R_WIRE, C.R_MARK]
    np.testing.assert_allclose(sim.ring.sum(axis=0)[additive], sums[additive], rtol=1e-12)
    span = sim.calendar.shape[0]
    held = 0
    for f, rows in _due_rows(sim, k_fine).items():
        for j in rows:
            assert j % 8 == 0
            assert sim.calendar[j % span, f >> 6] >> np.uint64(f & 63) & np.uint64(1)
            held += 1
    assert held > 0
    assert (sim.fs[:, C.FS_DUE_LAST] % 8 == 0).all()
    assert (sim.fs[:, C.FS_DUE_LAST] <= due_last + 7).all()


def test_settled_steps_on_the_default_incast_meet_the_targets_in_a_third_of_the_steps():
    """On the default incast (4 intra- and 4 inter-DC flows of 200 MB, starting together) the
    step grows to half an intra-DC RTT once the flows have settled: a third of the default
    fluid run's steps or fewer, each class's mean FCT within the validation target (10%) of the
    compiled packet engine's."""
    settled = uno.run(uno.compose(["engine.kind=fluid", SETTLED, *QUIET]))
    fine = uno.run(uno.compose(["engine.kind=fluid", *QUIET]))
    packet = uno.run(uno.compose(["engine.kind=packet", "engine.dataplane=compiled", *QUIET]))
    assert settled.summary["run"]["fluid_steps"] <= fine.summary["run"]["fluid_steps"] / 3
    assert settled.flows["finish_ps"].notna().all()
    _assert_class_means_within(settled.flows, packet.flows, 0.10)


def test_the_step_goes_back_to_the_first_before_a_late_start(monkeypatch):
    """Two long intra-DC flows to one receiver settle and the step grows; a short flow starting
    1 ms later finds the first step back: the step is refined within the settling horizon
    before its start, not after it, and the run takes fewer steps than at the first step."""
    refined_at_ps = []

    def counted(factor, k, dt_new_ps, *args):
        refined_at_ps.append(k * factor * dt_new_ps)
        return refine(factor, k, dt_new_ps, *args)

    monkeypatch.setattr(fluid_engine, "refine", counted)
    flows = flows_override([(0, 64, 20_000_000), (8, 64, 20_000_000), (16, 64, 200_000, 1000.0)])
    base = ["engine.kind=fluid", "workload=flows", flows, "lb=ecmp", "ec=none", *QUIET]
    cfg = uno.api.to_run_config(uno.compose([*base, SETTLED]))
    sim = build_simulation(cfg)
    settled = sim.run()
    fine = uno.run(uno.compose(base))
    start_ps = 1000.0 * 1e6
    horizon_ps = cfg.engine.fluid_settle_rtts * sim.scenario.intra_ref.base_rtt_ps
    assert len(refined_at_ps) == 1
    assert start_ps - horizon_ps - sim.dt_ps <= refined_at_ps[0] <= start_ps
    assert settled.flows["finish_ps"].notna().all()
    assert settled.summary["run"]["fluid_steps"] < fine.summary["run"]["fluid_steps"] / 2


def test_the_hybrid_steps_its_fluid_flows_at_settled_steps_beside_its_packets():
    """The default incast in the hybrid as it comes (settled steps of half an RTT), its inter-DC
    flows as packets: the fluid part runs a third of the steps of the hybrid at its first step
    throughout or fewer, while the packet flows (young at first, their starts known) bound the
    step as fluid ones would; the packet flows' mean FCT stays within
    the validation target (10%) of the all-packet run's and their p99 within 20%, the fluid
    flows' mean within 10%."""
    hybrid = ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]", *QUIET]
    cfg = uno.api.to_run_config(uno.compose(hybrid))
    assert cfg.engine.fluid_step_settled_rtt is None and settled_step_rtt(cfg.engine) == 0.5
    sim = build_simulation(cfg)
    assert sim.fluid.adapts and len(sim.fluid.outside) == 4
    assert sim.fluid._wanted_factor() == 1  # every flow about to start
    settled = sim.run()
    fine = build_simulation(uno.api.to_run_config(uno.compose(
        [*hybrid, "engine.fluid_step_settled_rtt=0"])))  # fmt: skip
    fine.run()
    packet = uno.run(uno.compose(["engine.kind=packet", "engine.dataplane=compiled", *QUIET]))
    steps_run = [s.fluid.scratch.tally[TALLY.steps] for s in (sim, fine)]
    assert 0 < steps_run[0] <= steps_run[1] / 3
    assert settled.summary["run"]["fluid_steps"] == steps_run[0]
    assert settled.summary["run"]["fluid_step_last_us"] == pytest.approx(
        settled.summary["run"]["intra_base_rtt_us"] / 2
    )
    assert settled.flows["finish_ps"].notna().all()
    _assert_class_means_within(settled.flows, packet.flows, 0.10)
    p99 = [r.flows.loc[r.flows["cls"] == "inter", "fct_ps"].quantile(0.99)
           for r in (settled, packet)]  # fmt: skip
    assert p99[0] == pytest.approx(p99[1], rel=0.20)


def test_flows_whose_law_reads_int_never_settle():
    """HPCC and Gear hear each ACK's INT records of the queues, which a coarser step coarsens:
    their flows keep the first step however long they run; UnoCC's settle."""
    settled = [SETTLED, "engine.kind=fluid", *QUIET]
    gear = build_simulation(uno.api.to_run_config(
        uno.compose([*settled, "scheme=gear_hpcc", "switch.pfc.enabled=false"])))  # fmt: skip
    uno_cc = build_simulation(uno.api.to_run_config(uno.compose(settled)))
    assert not gear._may_settle.any() and uno_cc._may_settle.all()
    for sim in (gear, uno_cc):
        k = sim._advance_to(0, int(20 * sim.scenario.intra_ref.base_rtt_ps // sim.dt_ps))
        assert int(sim.counters[C.CT.running]) == 8 and k > 0
    assert gear._wanted_factor() == 1
    assert uno_cc._wanted_factor() == 4  # half an intra-DC RTT: 4 steps of 1/8


def test_the_hybrids_settled_steps_are_the_same_on_both_data_planes():
    """Two long fluid flows settle and the step grows; two short packet flows start later (the
    step goes back to the first before each): the compiled data plane, which runs the steps
    inside its kernel and stops at each start, gives the run of the Python data plane, which
    looks at every step, bit for bit."""
    flows = flows_override(
        [
            (0, 64, 20_000_000),
            (8, 64, 20_000_000),
            (16, 64, 200_000, 1000.0),
            (24, 64, 100_000, 2000.0),
        ]  # fmt: skip
    )
    base = ["engine.kind=hybrid", "engine.hybrid_packet_max_bytes=300000", "workload=flows",
            flows, "lb=ecmp", "ec=none", SETTLED, *QUIET]  # fmt: skip
    runs = [
        uno.run(uno.compose([*base, f"engine.dataplane={dp}"])) for dp in ("compiled", "python")
    ]
    fine = uno.run(uno.compose([*base, "engine.fluid_step_settled_rtt=0"]))
    assert runs[0].flows.equals(runs[1].flows)
    assert runs[0].summary["run"]["fluid_steps"] == runs[1].summary["run"]["fluid_steps"]
    assert runs[0].summary["run"]["fluid_steps"] < fine.summary["run"]["fluid_steps"] / 2
    assert runs[0].flows["finish_ps"].notna().all()


def test_a_link_paused_for_a_whole_settled_step_still_drains_in_time():
    """Eight DCTCP senders into one host of a lossless k=4 fat tree (ECN and PFC on) at
    settled steps of a whole intra-DC RTT: a link paused for all of one step is not timed as
    never served (its paused share is a mean over at least four steps), so every flow finishes
    within 15% of the run at the default steps (with the last step's share alone two flows
    stalled until 9.5 and 18.0 ms, against 0.67 ms)."""
    listed = ",".join(f"{{src:{s},dst:0,size_bytes:1000000}}" for s in range(4, 12))
    base = ["topo=fat_tree", "topo.k=4", "workload=flows", f"workload.flows=[{listed}]",
            "lb=ecmp", "cc=dctcp", "switch.pfc.enabled=true", "engine.kind=fluid", *QUIET]  # fmt: skip
    fine = uno.run(uno.compose(base))
    settled = uno.run(uno.compose([*base, "engine.fluid_step_settled_rtt=1.0"]))
    assert settled.summary["pfc"]["pause_frames"] > 0
    assert settled.summary["run"]["fluid_steps"] < fine.summary["run"]["fluid_steps"]
    assert settled.flows["fct_ps"].max() < 1.15 * fine.flows["fct_ps"].max()


def test_the_hybrid_step_grows_once_only_long_rtt_flows_are_left_packets_included(monkeypatch):
    """Without settled steps the hybrid's fluid step follows the shortest base RTT among the
    flows left, its packet flows' counted until they finish: an intra-DC packet flow keeps the
    first step while it runs; once only inter-DC flows are left (a packet one and a fluid one)
    the step grows, before the inter-DC packet flow finishes, and that flow's FCT stays within
    2% of the same run at the first step throughout."""
    grown_at_ps = []

    def counted(factor, k, dt_new_ps, *args):
        grown_at_ps.append(k * dt_new_ps / factor)
        return coarsen(factor, k, dt_new_ps, *args)

    monkeypatch.setattr(fluid_engine, "coarsen", counted)
    flows = flows_override([(0, 8, 3_000_000), (1, 200, 2_000_000), (2, 201, 20_000_000)])
    base = ["engine.kind=hybrid", "engine.hybrid_packet_max_bytes=5000000", "workload=flows",
            flows, "lb=ecmp", "ec=none", "engine.fluid_step_settled_rtt=0", *QUIET]  # fmt: skip
    sim = build_simulation(uno.api.to_run_config(uno.compose(base)))
    assert len(sim.flows) == 2 and len(sim.fluid.flows) == 1
    grown = sim.run()
    first = uno.run(uno.compose([*base, "engine.fluid_step_max_intra_rtt=0.125"]))
    finish = grown.flows.set_index("flow_id")["finish_ps"]
    assert grown_at_ps and finish[0] <= min(grown_at_ps) < finish[1]
    assert grown.summary["run"]["fluid_steps"] < first.summary["run"]["fluid_steps"] / 3
    fct = first.flows.set_index("flow_id")["fct_ps"]
    assert grown.flows.set_index("flow_id")["fct_ps"][1] == pytest.approx(fct[1], rel=0.02)

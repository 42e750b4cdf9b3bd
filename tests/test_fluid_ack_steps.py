"""A batch's ACKs count in the steps they arrive in (``engine.fluid_ack_spread``,
:func:`uno.fluid.filing.ack_steps`): a
batch whose ACKs straddle a step boundary is split there by arrival time, so a flow sending
every step hears ACKs every step, and a law that counts the bytes acknowledged over a few steps
(UnoCC's Quick Adapt) sees no hole where there is none."""

from __future__ import annotations

import pytest
from conftest import flows_override

import uno
import uno.api
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid.filing import ack_steps
from uno.fluid.state import RingPool

DT = 1e6  # ps
QUIET = ["engine.sample_interval_us=0", "engine.progress=false"]
SPREAD = "engine.fluid_ack_spread=true"


def _two_flows(extra):
    flows = ",".join(f"{{src:{h},dst:64,size_bytes:20000000,start_us:0}}" for h in (0, 8))
    return ["workload=flows", f"workload.flows=[{flows}]", "lb=ecmp", "ec=none", *QUIET, *extra]


@pytest.mark.parametrize("fn", [ack_steps, ack_steps.py_func], ids=["compiled", "python"])
def test_a_batch_is_split_at_the_boundary_its_acks_cross_by_arrival_time(fn):
    now = 5 * DT
    sent_at, sent_end = now + 0.2 * DT, now + 0.9 * DT
    middle = 0.5 * (sent_at + sent_end)
    rtt = 10.5 * DT  # the ACKs arrive over [10.7, 11.4] steps after now
    lag, late = fn(now, DT, sent_at, sent_end, middle, rtt, True)
    assert lag == 10
    assert late == pytest.approx(0.4 / 0.7)
    # filed whole where asked (a block, an INT record): the step of the mean arrival
    assert fn(now, DT, sent_at, sent_end, middle, rtt, False) == (11, 0.0)
    # within one step: whole, in that step
    assert fn(now, DT, now, now + 0.2 * DT, now + 0.1 * DT, rtt, True) == (10, 0.0)
    # sent at one instant: whole, in the step of its arrival
    assert fn(now, DT, sent_at, sent_at, sent_at, rtt, True) == (10, 0.0)


def test_two_window_capped_flows_hear_acks_every_step_of_a_round_trip():
    """Two UnoCC flows into one host, each window capped at a BDP: each sends every step, so
    each step of the next round trip holds some of its ACKs (filed whole, a batch's mean
    arrival flips between neighbouring steps, every other step empty, and the ACK-clocked
    sends with it)."""
    cfg = uno.api.to_run_config(uno.compose(_two_flows(["engine.kind=fluid", SPREAD])))
    sim = build_simulation(cfg)
    k = sim.advance(0, 1000)  # (~125 base RTTs: settled; the flows run ~800 steps more)
    pool = RingPool(*sim.ring_pool)
    running = sim.active[: int(sim.counters[C.CT.running])]
    assert len(running) == 2
    rtt_steps = int(sim.cp[running[0], C.P_BASE_RTT] // sim.dt_ps)
    for f in running:
        start, n = pool.ptr[f], pool.length[f]
        acked = [sim.ring[start + j % n, C.R_ACK] for j in range(k + 1, k + rtt_steps)]
        assert min(acked) > 0.0, f


def test_quick_adapt_at_steps_of_half_a_base_rtt_matches_packets():
    """The same two flows at settled steps of half a base RTT (Quick Adapt's window, one base
    RTT, is two steps): a step without ACKs would halve the count and cut both windows."""
    packet = uno.run(uno.compose(_two_flows([]))).flows
    fluid = uno.run(uno.compose(_two_flows(["engine.kind=fluid",
                                            "engine.fluid_step_settled_rtt=0.5", SPREAD]))).flows  # fmt: skip
    assert fluid.fct_ps.mean() == pytest.approx(packet.fct_ps.mean(), rel=0.10)


def test_the_hybrid_files_its_fluid_acks_by_arrival_on_both_data_planes_alike():
    """Two fluid flows beside two packet flows, ACKs filed by arrival: the compiled data plane
    and the Python one give the same run, bit for bit, and the setting changes it."""
    flows = flows_override(
        [(0, 64, 4_000_000), (8, 64, 4_000_000), (16, 64, 200_000, 100.0), (24, 64, 100_000, 200.0)]
    )
    base = ["engine.kind=hybrid", "engine.hybrid_packet_max_bytes=300000", "workload=flows",
            flows, "lb=ecmp", "ec=none", *QUIET]  # fmt: skip
    runs = [
        uno.run(uno.compose([*base, SPREAD, f"engine.dataplane={dp}"]))
        for dp in ("compiled", "python")
    ]
    whole = uno.run(uno.compose(base))
    assert runs[0].flows.equals(runs[1].flows)
    assert runs[0].flows["finish_ps"].notna().all()
    assert not runs[0].flows["fct_ps"].equals(whole.flows["fct_ps"])

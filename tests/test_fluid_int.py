"""INT records in the fluid engine (uno/fluid/int_records.py): each record is the state of its
link at the end of the step the flow's bytes crossed it, it comes back one RTT later, the law
reads it (HPCC's utilisation estimate), and HPCC runs as it does with packets."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.cc import hpcc
from uno.cc.law import INT_QLEN, INT_RATE, INT_TS, INT_TX
from uno.core.errors import ConfigError
from uno.fluid import kernels as K
from uno.fluid.int_records import INTS, packet_records
from uno.net.int import REPLACEMENTS

#: HPCC flows into the dumbbell's receiver through its 100 Gb/s bottleneck
DUMBBELL = ["topo=dumbbell", "workload=incast", "workload.n_inter=0", "cc=hpcc", "lb=ecmp",
            "engine.progress=false", "engine.sample_interval_us=0"]  # fmt: skip


def _fluid_sim(*overrides):
    cfg = uno.compose([*DUMBBELL, "engine.kind=fluid", *overrides])
    return build_simulation(to_run_config(cfg))


def _stamping(sim, f):
    """Flow ``f``'s stamping hops: (record index, link) in path order."""
    hops = sim.hops
    return [(int(hops.int_at[j]), int(hops.ei[j, K.EI_LINK]))
            for j in range(sim.rt_ptr[f], sim.rt_ptr[f + 1]) if hops.int_at[j] >= 0]  # fmt: skip


def test_records_are_the_links_state_at_the_end_of_the_step_the_bytes_crossed_them():
    """Two HPCC flows through the bottleneck: every record a flow holds is, exactly, the level
    and the departures of its link at the end of an earlier step (its ``ts``), taken about an
    RTT before, with the link's line rate; the bottleneck's departures grow by its line rate a
    step while it holds a queue."""
    sim = _fluid_sim("workload.n_intra=2", "workload.size_bytes=20000000")
    f = 0
    stamping = _stamping(sim, f)
    assert [sim.port_names[link] for _, link in stamping] == ["left->right", "right->r0"]
    neck = stamping[0][1]
    line = sim.ls[neck, K.LS_CAP] * sim.dt_ps
    base_rtt = sim.fs[f, K.FS_BASE_RTT]
    history = {}  # step -> {link: (level, departures)} at its end
    k = 0
    checked = 0
    queued = 0
    while k < 400:
        tx_before = sim.ls[neck, K.LS_TX]
        k = sim.advance(k, k + 1)
        history[k] = {link: (sim.ls[link, K.LS_Q], sim.ls[link, K.LS_TX]) for _, link in stamping}
        if sim.ls[neck, K.LS_Q] > 0.0:
            assert sim.ls[neck, K.LS_TX] - tx_before == pytest.approx(line, rel=1e-9)
        rec = sim.hops.int_rec[f]
        for i, link in stamping:
            if rec[i, INT_TS] == 0.0:
                continue  # (none back yet)
            step = int(round(rec[i, INT_TS] / sim.dt_ps))
            assert rec[i, INT_TS] == pytest.approx(step * sim.dt_ps, rel=1e-12)
            assert k * sim.dt_ps - rec[i, INT_TS] >= 0.5 * base_rtt  # (an RTT on the way)
            level, departures = history[step][link]
            assert (rec[i, INT_QLEN], rec[i, INT_TX]) == (level, departures)
            assert rec[i, INT_RATE] == 100e9
            checked += 1
            queued += rec[i, INT_QLEN] > 0.0
    assert checked > 300
    assert queued > 10  # (the flows' first windows queue at the bottleneck)
    assert k * sim.dt_ps - sim.hops.int_rec[f, :, INT_TS].min() < 3 * base_rtt


def test_hpccs_utilisation_from_fluid_records_is_the_bottlenecks():
    """On a steady bottleneck, HPCC's estimate U from the fluid records is the link's
    normalised inflight bytes, queue / (B T) + departure rate / B, over the flows' RTT T, and
    the law holds it at its target eta: the bottleneck runs at eta of its rate (without the
    records the windows would stay at their initial BDP each, twice the link)."""
    sim = _fluid_sim("workload.n_intra=2", "workload.size_bytes=20000000")
    neck = _stamping(sim, 0)[0][1]
    cap = sim.ls[neck, K.LS_CAP]
    t_ps = sim.cp[0, hpcc.P.base_rtt]
    warm = int(40 * t_ps / sim.dt_ps)  # (40 RTTs: past the first windows' queue)
    span = int(20 * t_ps / sim.dt_ps)
    k = sim.advance(0, warm)
    tx0 = sim.ls[neck, K.LS_TX]
    queue = 0.0
    for _ in range(span):
        k = sim.advance(k, k + 1)
        queue += sim.ls[neck, K.LS_Q] / span
    rate = (sim.ls[neck, K.LS_TX] - tx0) / (span * sim.dt_ps) / cap
    u_link = queue / (cap * t_ps) + rate
    eta = sim.cp[0, hpcc.P.eta]
    for f in (0, 1):
        assert sim.cs[f, hpcc.S.utilization] == pytest.approx(u_link, abs=0.01)
    assert u_link == pytest.approx(eta, abs=0.01)
    assert rate == pytest.approx(eta, abs=0.02)


def _engines(*overrides):
    """The packet and the fluid run's flows and bottleneck utilisation (its bytes sent over
    the span from the first start to the last finish)."""
    out = {}
    for engine in ("packet", "fluid"):
        r = uno.run(uno.compose([*DUMBBELL, f"engine.kind={engine}", *overrides]))
        ports, flows = r.tables["ports"], r.flows
        neck = ports[ports.port == "left->right"].iloc[0]
        span_ps = flows.finish_ps.max() - flows.start_ps.min()
        util = neck.tx_bytes * 8e12 / span_ps / (neck.rate_gbps * 1e9)
        out[engine] = (flows.sort_values("flow_id").mean_rate_gbps.to_numpy(), util)
    return out


@pytest.mark.parametrize(
    ("n_flows", "util_tol"),
    [
        (1, 0.005),
        # two paced flows' packets meet at the bottleneck and queue a little below its rate,
        # which HPCC's min(qlen, qlen') counts: the packet run's link runs ~3% below eta (the
        # fluid link holds no queue below its rate)
        (2, 0.05),
    ],
)
def test_hpcc_runs_as_with_packets(n_flows, util_tol):
    """HPCC's flows through the dumbbell: the fluid and the packet engine agree on each
    flow's mean rate (within 10%) and on the bottleneck's utilisation (a lone flow's within
    0.5%: the records are the port's; two flows' within 5%)."""
    runs = _engines(f"workload.n_intra={n_flows}", "workload.size_bytes=20000000")
    (p_rates, p_util), (f_rates, f_util) = runs["packet"], runs["fluid"]
    np.testing.assert_allclose(f_rates, p_rates, rtol=0.10)
    assert f_util == pytest.approx(p_util, rel=util_tol)
    assert 0.85 < p_util < 0.97


def test_a_packets_records_follow_the_replacement_rule_hop_by_hop():
    """A flow's latest records of four stamping hops become a packet's two records as the
    switches put them (uno.net.int.int_record_slot): the first two (``none``), the longest
    drain times (``gear``), the longest queues (``qlen``); none while a hop's record has
    not come back."""
    sim = _fluid_sim("workload.n_intra=1", "switch.int_telemetry.max_records=2")
    qlens = [10.0, 400.0, 30.0, 200.0]
    rec = np.zeros((1, 4, 4))
    for i, q in enumerate(qlens):
        rec[0, i] = (1000.0 + i, q, 5000.0 * i, 100e9 if i != 2 else 5e9)
    settings = sim.hops.int_set.copy()
    settings[INTS.max_records] = 2
    for rule, kept in (("none", [0, 1]), ("gear", [1, 2]), ("qlen", [1, 3])):
        settings[INTS.rule] = REPLACEMENTS.index(rule)
        hops = sim.hops._replace(int_set=settings, int_rec=rec.copy(), int_pkt=np.zeros((2, 4)))
        for fn in (packet_records, packet_records.py_func):
            hops.int_pkt[:] = 0.0
            assert fn(0, hops) == 2
            assert sorted(hops.int_pkt[:, INT_TS] - 1000.0) == kept, rule
    hops.int_rec[0, 3, INT_TS] = 0.0
    assert packet_records.py_func(0, hops) == 0


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (["lb=spray"], "lb.algo"),
        (["engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]", "lb=spray"], "lb.algo"),
    ],
)  # fmt: skip
def test_what_the_records_do_not_model_is_refused_naming_it(overrides, field):
    kind = [] if overrides[0].startswith("engine.kind") else ["engine.kind=fluid"]
    base = [o for o in DUMBBELL if not (o.startswith("lb=") and overrides[0].startswith("lb="))]
    cfg = uno.compose([*base, "workload.n_intra=2", *kind, *overrides])
    with pytest.raises(ConfigError) as err:
        uno.run(cfg)
    assert err.value.field == field

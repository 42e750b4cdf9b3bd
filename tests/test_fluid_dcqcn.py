"""DCQCN in the fluid engine: the receiver's notification point sends at most one CNP per
interval per flow, at the first marked packet after it (uno.fluid.control.np_cnps); each CNP
cuts the rate by DCQCN's law (uno/cc/dcqcn.py); the law's timers fire at their period as the
steps pass; and a small incast agrees with the packet engine."""

from __future__ import annotations

import numpy as np
import pytest
from cc_events import context

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.cc.adapter import make_cc
from uno.cc.dcqcn import DcqcnParams, S
from uno.cc.law import NO_RECORDS
from uno.cc.registry import KIND
from uno.fluid import kernels as K
from uno.metrics.analysis import bottleneck_utilisation

US = 1_000_000
MSS = 4160
#: two intra-DC flows of 4 MB into one receiver, DCQCN with its authors' configuration
INCAST = ["cc=dcqcn", "workload=incast", "workload.n_intra=2", "workload.n_inter=0",
          "workload.size_bytes=4000000", "engine.progress=false"]  # fmt: skip


def _cnp_count(dt_us: float, mark_gap_us: float, gap_us: float, steps: int, fn) -> float:
    """CNPs for a flow whose marked packets arrive every ``mark_gap_us`` (the first at that
    time), batched in steps of ``dt_us``, the notification point's interval ``gap_us``."""
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_CNP_GAP] = gap_us * US
    total = 0.0
    for k in range(1, steps + 1):
        total += fn(fs, 0, k * dt_us * US, dt_us * US, dt_us / mark_gap_us)
    assert total == fs[0, K.FS_CNPS]
    return total


@pytest.mark.parametrize("fn", [K.np_cnps, K.np_cnps.py_func], ids=["jit", "py"])
def test_a_steadily_marked_flow_gets_one_cnp_per_interval(fn):
    # marks every 4 us, interval 50 us: CNPs at 4, 56, 108, ... (the first mark after the
    # interval): 4 + 52 n <= 1050 us, n = 0..20
    assert _cnp_count(1.75, 4.0, 50.0, 600, fn) == 21
    # steps longer than the interval: several CNPs in one batch, at 4, 16, 28, ... <= 240 us
    assert _cnp_count(20.0, 4.0, 10.0, 12, fn) == 20
    # marks sparser than the interval: every marked packet carries one (every 70 us)
    assert _cnp_count(1.75, 70.0, 50.0, 600, fn) == int(1050 // 70)


def _dcqcn_flow(**params):
    """A DCQCN flow's fluid rows on a 100 Gb/s path: constants, state, flow row."""
    p = DcqcnParams(**params)
    ctrl = make_cc("dcqcn", type("Cfg", (), {"dcqcn": p})(), context(10 * US))
    cp = np.zeros((1, max(K.N_P, len(ctrl.consts))))
    cp[0, : len(ctrl.consts)] = ctrl.consts
    cp[0, K.P_KIND] = K.CC_LAW + KIND["dcqcn"]
    cs = np.zeros((1, max(K.N_C, len(ctrl.state))))
    K.cc_init(cs, cp, 0)
    fs = np.zeros((1, K.N_FS))
    fs[0, K.FS_CNP_GAP] = p.cnp_interval_us * US
    return cp, cs, fs


def test_cnps_cut_the_rate_by_dcqcns_law():
    """Batches of ACKs every 1.75 us, each with a marked packet: a cut at the first and then at
    the first batch 50 us after the last cut; R_C (1 - alpha / 2) with alpha = 1 (it stays 1:
    (1 - g) + g), R_T = R_C before the cut."""
    cp, cs, fs = _dcqcn_flow()
    ring = np.zeros((1, K.N_R))
    rng = np.ones(1, dtype=np.uint64)
    dt = 1.75 * US
    rates = []
    for k in range(1, 61):  # up to 105 us
        now = k * dt
        K.law_batch(cs, cp, fs, ring, 0, 0, KIND["dcqcn"], now, MSS, MSS, 10 * US, 0.0, rng,
                    NO_RECORDS, 0, dt, 1)  # fmt: skip
        rates.append((now, cs[0, S.current_rate_bps], cs[0, S.target_rate_bps]))
    assert fs[0, K.FS_CNPS] == 3  # at 1.75 us, ~51.75 us, ~101.75 us
    assert rates[0][1:] == (50e9, 100e9)
    # the second CNP: the first marked packet at or after 51.75 us (one a step)
    second = next(i for i, r in enumerate(rates) if r[1] < 50e9)
    assert rates[second][0] == pytest.approx(rates[0][0] + 50 * US, abs=dt)
    assert rates[second][1:] == (25e9, 50e9)
    assert rates[-1][1:] == (12.5e9, 25e9)
    assert cs[0, S.alpha] == 1.0
    # no timer fired: 50 us < K = 55 us and < T = 60 us after each cut
    assert cs[0, S.timer_stage] == 0


def test_the_fluid_senders_fire_dcqcns_timers_at_their_period():
    """A lone flow (no marks) told of one CNP at t0: R_C halves, then every T = 60 us of steps
    the rate timer's fast recovery takes R_C halfway back to R_T, each at the first step at or
    after its expiry, and the flow sends at R_C in each step; alpha decays by (1 - g) each
    K = 55 us. (No byte counter: B is out of reach.)"""
    cfg = uno.compose(["cc=dcqcn", "topo=dumbbell", "workload=incast", "workload.n_intra=1",
                       "workload.n_inter=0", "workload.size_bytes=20000000",
                       "cc.dcqcn.byte_counter_bytes=1000000000000", "engine.kind=fluid",
                       "engine.progress=false", "engine.sample_interval_us=0"])  # fmt: skip
    sim = build_simulation(to_run_config(cfg))
    dt = sim.dt_ps
    k0 = 20
    assert sim.advance(0, k0) == k0
    t0 = k0 * dt
    ring = np.zeros((1, K.N_R))
    K.law_batch(sim.cs, sim.cp, sim.fs, ring, 0, 0, KIND["dcqcn"], t0, MSS, MSS, 10 * US, 0.0,
                np.ones(1, dtype=np.uint64), NO_RECORDS, 0, dt, 1)  # fmt: skip
    line = 100e9
    rc, rt = line / 2, line
    seen = []
    for k in range(k0, k0 + int(200 * US // dt)):
        assert sim.advance(k, k + 1) == k + 1
        now = k * dt
        fired = int((now - t0) // (60 * US))  # rate-timer expiries at or before the step
        want = rt - (rt - rc) / 2**fired
        assert sim.cs[0, S.current_rate_bps] == pytest.approx(want, rel=1e-12)
        assert sim.cs[0, S.timer_stage] == fired
        sent_gbps = sim.fx[0, K.FX_SEND] * 8e12 / dt / 1e9
        assert sent_gbps == pytest.approx(want / 1e9, rel=1e-9)
        seen.append(fired)
        decays = int((now - t0) // (55 * US))
        assert sim.cs[0, S.alpha] == pytest.approx((1 - 1 / 256) ** decays, rel=1e-12)
    assert sorted(set(seen)) == [0, 1, 2, 3]


def test_cnp_settings_reach_the_fluid_flows():
    cfg = uno.compose([*INCAST, "engine.kind=fluid", "cc.dcqcn.cnp_interval_us=20"])
    sim = build_simulation(to_run_config(cfg))
    assert (sim.fs[:, K.FS_CNP_GAP] == 20 * US).all()
    assert (sim.fs[:, K.FS_LAW_TIMERS] == 1).all()


def _run(overrides: list[str]):
    """Flows table and the shared bottleneck's steady-state utilisation (rates sampled each
    10 us: uno.metrics.analysis.bottleneck_utilisation)."""
    sampled = ["engine.sample_interval_us=10", "engine.sample_cwnd=false",
               "engine.sample_queues=false"]  # fmt: skip
    law = [o for o in overrides if o.startswith("cc=")]  # (in place of INCAST's)
    base = [o for o in INCAST if not (law and o.startswith("cc="))]
    result = uno.run(uno.compose([*base, *sampled, *overrides]))
    return result, bottleneck_utilisation(result.tables, 10)


def _agree(extra: list[str]):
    """The fluid and packet engines on :data:`INCAST`: each flow's mean rate within 10%, the
    bottleneck's utilisation within 2%, the CNPs within one a flow."""
    packet, util_p = _run([*extra, "engine.kind=packet"])
    fluid, util_f = _run([*extra, "engine.kind=fluid"])
    fp, ff = packet.flows, fluid.flows
    assert fp["finish_ps"].notna().all() and ff["finish_ps"].notna().all()
    rate_p = fp["mean_rate_gbps"].to_numpy()
    rate_f = ff["mean_rate_gbps"].to_numpy()
    np.testing.assert_allclose(rate_f, rate_p, rtol=0.10)
    assert util_f == pytest.approx(util_p, rel=0.02)
    np.testing.assert_allclose(ff["ecn_acks"], fp["ecn_acks"], atol=1)
    return packet, fluid


def test_a_dcqcn_incast_agrees_with_the_packet_engine():
    _agree([])


def test_red_rises_to_pmax_at_kmax_and_marks_everything_above():
    """DCQCN's RED (``switch.ecn.pmax`` below 1): a link's marking probability at its queue
    level is 0 at Kmin, pmax x the ramp's fraction up to Kmax, 1 above it, as a packet port's
    (uno.net.red)."""
    kmin, kmax, pmax, cap, dt = 100_000.0, 500_000.0, 0.2, 0.0125, 1750.0
    levels = np.array([50_000.0, 300_000.0, 500_000.0, 600_000.0])
    ls = np.zeros((len(levels), K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    ls[:, K.LS_CAP] = cap
    ls[:, K.LS_BUF] = 1e6
    ls[:, K.LS_Q] = ls[:, K.LS_QF] = levels
    ls[:, K.LS_ARR] = cap  # as much arrives as leaves: the levels stay
    ls[:, K.LS_KMIN], ls[:, K.LS_KMAX] = kmin, kmax
    ls[:, K.LS_KSPAN] = (kmax - kmin) / pmax
    ls[:, K.LS_MODE] = K.MODE_PHYSICAL
    ls[:, K.LS_LISTED] = 1.0
    K.update_links(ls, np.arange(len(levels)), len(levels), dt)
    np.testing.assert_allclose(ls[:, K.LS_Q], levels)
    np.testing.assert_allclose(ls[:, K.LS_MARK], [0.0, 0.1, 0.2, 1.0], rtol=1e-12)


#: PFC on the links into every switch but the border switches (fed by a WAN link whose round
#: trip no buffer covers: uno/net/pfc.py)
PFC = ["switch.pfc.enabled=true", "switch.pfc.port_kinds=[host,fabric]"]


def test_pfc_pauses_upstream_and_loses_nothing_where_the_lossy_fabric_drops():
    """Four DCQCN flows of 2 MB into one receiver: the buffers overflow without PFC; with it
    the ingress queues into the receiver's switch cross Xoff, pause the links into it, and no
    byte is lost."""
    four = [*INCAST, "workload.n_intra=4", "workload.size_bytes=2000000", "engine.kind=fluid",
            "engine.sample_interval_us=0"]  # fmt: skip
    lossy = uno.run(uno.compose(four))
    assert lossy.summary["fluid"]["lost_bytes"] > 0 and lossy.summary["retransmits"] > 0
    assert "pfc" not in lossy.summary
    cfg = uno.compose([*four, *PFC])
    sim = build_simulation(to_run_config(cfg))
    result = sim.run()
    assert result.summary["fluid"]["lost_bytes"] == 0 and result.summary["retransmits"] == 0
    pfc = result.summary["pfc"]
    assert pfc["pause_frames"] > 0 and pfc["total_pause_us"] > 0
    assert pfc["lossless_violations"] == 0 and pfc["lossy_switches"] > 0
    assert result.flows["finish_ps"].notna().all()
    # the paused links lead into the receiver's ToR, which the incast congests
    from uno.fluid.pfc import PF

    routing = sim.scenario.routing
    paused = sim.pfc[sim.pfc[:, PF.pauses] > 0, PF.link].astype(int)
    receiver_tor = routing.edges[int(sim.rt_link[sim.rt_ptr[1] - 1])].src
    assert {routing.edges[e].dst for e in paused} == {receiver_tor}


def test_with_pfc_the_step_grows_to_one_intra_dc_rtt_at_most():
    """DCQCN on the Uno Fig. 10 traffic (300 flows, ECMP) with PFC: once only the inter-DC
    flows are left the step grows, but to one intra-DC RTT at most (8 steps of 1/8), not to
    the 16 asked for (``engine.fluid_step_max_intra_rtt``): a pause acts on the next step,
    and a longer step lets the paused links' ingress queues overflow their headroom (with 16:
    thousands of lossless violations). No lossless queue overflows."""
    base = ["experiment=fig10_load", "cc=dcqcn", "lb=ecmp", "workload.n_flows=300",
            "engine.kind=fluid", "engine.sample_interval_us=0",
            "engine.fluid_step_max_intra_rtt=16", *PFC]  # fmt: skip
    result = uno.run(uno.compose(base))
    run = result.summary["run"]
    assert run["all_flows_finished"]
    assert run["fluid_step_last_us"] == pytest.approx(8 * run["fluid_step_us"])
    assert result.summary["pfc"]["pause_frames"] > 0
    assert result.summary["pfc"]["lossless_violations"] == 0


def test_pfc_pauses_propagate_upstream_hop_by_hop():
    """A chain of queues: the kernel pauses the link into a switch whose ingress level is
    above Xoff for the share of the step its level takes to drain to Xon, keeps pausing until
    the level is at Xon, and the link upstream of a paused one pauses in turn once its own
    level (the bytes queued behind the pause) crosses Xoff."""
    from fluid_cases import on_routes

    from uno.fluid.pfc import PF, live_list, pfc_step

    # two ingress queues: link 0 into switch A (its bytes wait at A's egress link 1), link 1
    # into switch B (its bytes wait at B's egress link 2); one flow on links 0 -> 1 -> 2
    rt_ptr = np.array([0, 3])
    ef = np.zeros((3, K.N_EF))
    ls = np.zeros((3, K.N_LS))
    ls[:, K.LS_FOLD] = 1.0  # (each link stands for itself alone)
    pfc = np.zeros((2, PF.size))
    pfc[:, PF.link] = [0, 1]
    pfc[:, PF.xoff] = 100_000
    pfc[:, PF.xon] = 90_000
    pf_ptr, pf_row, pf_w = np.array([0, 0, 1, 2]), np.array([0, 1]), np.ones(2)
    active = np.array([0])
    fx = np.zeros((1, K.N_FX))
    pf_live = live_list(len(pfc))
    dt = 1e6
    k = [0]

    def step(q_at_a, q_at_b, sent_0, sent_1):
        ef[1, K.EF_Q], ef[2, K.EF_Q] = q_at_a, q_at_b
        fx[0, K.FX_NETQ] = q_at_a + q_at_b
        ls[[0, 1], K.LS_TX_BEFORE] = ls[[0, 1], K.LS_TX]  # (the links sent in step k)
        ls[[0, 1], K.LS_TX_AT] = k[0] * dt
        ls[0, K.LS_TX] += sent_0
        ls[1, K.LS_TX] += sent_1
        pfc_step(k[0], dt, 1, active, fx, rt_ptr, ef, ls, pfc, pf_ptr, pf_row, pf_w, pf_live,
                 *on_routes(1, 3))  # fmt: skip
        k[0] += 1
        return ls[0, K.LS_PAUSE], ls[1, K.LS_PAUSE]

    assert step(50_000, 120_000, 50_000, 120_000) == (0.0, 1.0)  # B's ingress above Xoff
    assert pfc[1, PF.pauses] == 1
    # B drained 20 kB of link 1's bytes: 10 kB above Xon take half a step
    assert step(80_000, 100_000, 30_000, 0.0) == (0.0, 0.5)
    # link 1 paused, A's queue grows past Xoff: link 0 pauses in turn (nothing drained)
    assert step(110_000, 95_000, 30_000, 0.0) == (1.0, 1.0)  # (B drained only 5 kB)
    assert step(110_000, 90_000, 0.0, 0.0) == (1.0, 0.0)  # B at Xon: link 1 resumes
    assert pfc[:, PF.pauses].tolist() == [1, 1]
    assert pfc[1, PF.pausing] == 0 and pfc[0, PF.pausing] == 1


def test_a_paused_links_bytes_wait_for_the_line_it_keeps():
    """DCQCN as HPCC's evaluation sets it (``cc=dcqcn_hpcc``: RED from Kmin 400 kB to pmax 0.2
    at Kmax 1.6 MB over 1-MiB buffers) on the sprayed incast with PFC: the links into the
    receiver's ToR are paused most of the time and hold deep queues, which drain at the line
    they keep. The flows' ACKs, timed by the queueing their bytes meet, come back after the
    bytes crossed the receiver's link: each flow finishes no earlier than the line rate allows,
    with nothing of theirs left at the links."""
    fluid, _ = _run(["cc=dcqcn_hpcc", *PFC, "engine.kind=fluid"])
    flows = fluid.flows
    total = float(flows["size_bytes"].sum())
    line_ps = total / (100e9 / 8 / 1e12)  # (the receiver's 100-Gb/s link)
    assert (flows["finish_ps"] >= line_ps).all()
    assert fluid.summary["fluid"]["queued_bytes_at_end"] == 0.0
    assert fluid.summary["pfc"]["total_pause_us"] > 1000.0
    ports = fluid.tables["ports"].set_index("port")
    assert ports.loc["dc0/tor0->dc0/h0", "tx_bytes"] >= 0.99 * total


def test_a_dcqcn_incast_with_pfc_agrees_with_the_packet_engine():
    packet, fluid = _agree(PFC)
    for run in (packet, fluid):
        assert run.summary["pfc"]["lossless_violations"] == 0

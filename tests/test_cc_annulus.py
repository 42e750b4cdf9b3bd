"""Annulus as Gear's evaluation runs it (uno/cc/annulus.py) and the QCN congestion points that
send its near-source notices (uno/net/qcn.py), from hand-worked cases.

Context: 100 Gb/s, intra-DC base RTT IRTT = 10 us, MSS 1000 B; a cross-DC flow has CRTT = 2 ms
(200 IRTT, BDP 25,000,000 B). QCN with Q_eq = 34,000 B and w = 8 caps F_b at
F_max = 34,000 x 17 = 578,000 B.
"""

from __future__ import annotations

import math

import pytest

import uno
from uno.cc.adapter import LawControl
from uno.cc.annulus import LAW, AnnulusParams
from uno.cc.base import FlowContext
from uno.cc.registry import KIND
from uno.net.qcn import CongestionPoint, qcn_level

US = 1_000_000  # ps
T = 10 * US
CRTT = 200 * T
B = 100_000_000_000
MSS = 1000


def ctx(rtt_ps: int = T, inter: bool = False) -> FlowContext:
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=B * rtt_ps / 8e12,
        bottleneck_bps=B,
        mss_bytes=MSS,
        intra_rtt_ps=T,
        intra_bdp_bytes=B * T / 8e12,
        is_inter_dc=inter,
    )


def annulus(cross: bool = False, **params) -> LawControl:
    context = ctx(CRTT, True) if cross else ctx()
    return LawControl(LAW, KIND["annulus"], AnnulusParams(**params), context)


def test_qcn_feedback_is_quantised_in_63_steps_of_its_cap():
    # F_b = (50,000 - 34,000) + 8 x (50,000 - 40,000) = 96,000; 63 x 96,000 / 578,000 = 10.46
    assert qcn_level(50_000.0, 40_000.0, 34_000.0, 8.0) == 10
    # a queue above Q_eq but draining fast: F_b = 6,000 - 8 x 10,000 < 0, no notice
    assert qcn_level(40_000.0, 50_000.0, 34_000.0, 8.0) == 0
    # at or beyond the cap: the largest level
    assert qcn_level(100_000.0, 34_000.0, 34_000.0, 8.0) == 63  # 66,000 + 528,000 = 594,000
    assert qcn_level(34_000.0, 34_000.0, 34_000.0, 8.0) == 0  # at Q_eq and steady


def test_a_congestion_point_samples_every_interval_and_keeps_q_old():
    cp = CongestionPoint(sample_bytes=15_000, qeq_bytes=34_000, w=8.0)
    assert [cp.accepted(4000, q) for q in (60_000, 64_000, 68_000)] == [0, 0, 0]
    assert cp.counted_bytes == 12_000 and cp.qold_bytes == 0
    # the fourth packet completes 15,000 B (1,000 carry over): F_b = 38,000 + 8 x 72,000 > cap
    assert cp.accepted(4000, 72_000) == 63
    assert (cp.counted_bytes, cp.qold_bytes, cp.sent) == (1000, 72_000, 1)
    # next sample: the queue fell below Q_old: F_b = (40,000 - 34,000) + 8 x (-32,000) < 0
    for q in (60_000, 50_000, 45_000):
        assert cp.accepted(4000, q) == 0
    assert cp.accepted(4000, 40_000) == 0
    assert (cp.counted_bytes, cp.qold_bytes, cp.sent) == (2000, 40_000, 1)


def test_a_notice_cuts_the_rate_by_gd_times_its_level_and_restarts_recovery():
    cc = annulus()
    assert cc.cwnd_bytes == math.inf  # an intra-DC flow has no window: DCQCN's rate alone
    assert cc.pacing_rate_bps == B
    cc.on_notify(5 * US, 63)
    assert cc.pacing_rate_bps == pytest.approx(B * (1 - 63 / 128))
    assert cc.target_rate_bps == B  # R_T = R_C before the cut
    assert cc.alpha == 1.0  # alpha is DCQCN's CNP gain: a notice leaves it
    assert cc.notices == 1
    # the timers started at the notice: after T = 60 us one fast-recovery step halves the gap
    cc.advance(5 * US + 60 * US)
    assert cc.pacing_rate_bps == pytest.approx((B + B * (1 - 63 / 128)) / 2)
    # a second notice of level 32 cuts from there by a quarter
    before = cc.pacing_rate_bps
    cc.on_notify(70 * US, 32)
    assert cc.pacing_rate_bps == pytest.approx(before * (1 - 32 / 128))


def test_ecn_echoes_cut_as_dcqcn_and_cross_dc_flows_may_ignore_them():
    cc = annulus()
    cc.on_ack_batch(10 * US, MSS, True, T, 0)  # one CNP: R_C (1 - alpha / 2), alpha = 1
    assert cc.pacing_rate_bps == pytest.approx(B / 2)
    cross = annulus(cross=True, cross_dc_ecn=False)
    cross.on_ack_batch(CRTT, MSS, True, CRTT, 0)
    assert cross.pacing_rate_bps == B


def test_cross_dc_increase_steps_are_scaled_by_min_500_crtt_over_irtt():
    intra, cross = annulus(), annulus(cross=True)
    assert intra.rate_ai_bps == 40e6 and intra.rate_hai_bps == 200e6
    assert cross.rate_ai_bps == pytest.approx(40e6 * 200)  # CRTT / IRTT = 200 < 500
    assert cross.rate_hai_bps == pytest.approx(200e6 * 200)
    far = LawControl(LAW, KIND["annulus"], AnnulusParams(), ctx(1000 * T, True))
    assert far.rate_ai_bps == pytest.approx(40e6 * 500)


def test_vegas_moves_a_cross_dc_window_one_mss_per_round():
    cc = annulus(cross=True)
    bdp = B * CRTT / 8e12
    assert cc.cwnd_bytes == bdp
    # round 1 opens at the first ACK; it ends at the first ACK of a packet sent after it began
    cc.on_ack_batch(CRTT, MSS, False, CRTT, 0)
    cc.on_ack_batch(CRTT + US, MSS, False, CRTT, 1)
    assert cc.cwnd_bytes == bdp  # (a packet sent before the round began: not the end)
    cc.on_ack_batch(2 * CRTT + US, MSS, False, CRTT, CRTT + 1)
    assert cc.cwnd_bytes == bdp + MSS  # no queueing: diff = 0 < alpha = 1
    # a round whose least RTT is CRTT + 1 us: diff = 25,001,000 x (1 us / 2,001 us) / 1000 ~ 12.5
    cc.on_ack_batch(3 * CRTT, MSS, False, CRTT + US, 2 * CRTT + 2 * US)
    assert cc.cwnd_bytes == bdp
    # a round with diff between alpha and beta leaves it: 0.1 us of queueing ~ 1.25 packets
    cc.on_ack_batch(4 * CRTT, MSS, False, CRTT + US // 10, 3 * CRTT + 1)
    assert cc.cwnd_bytes == bdp
    cc.on_timeout(4 * CRTT + US)
    assert cc.cwnd_bytes == bdp / 2  # a loss halves it, as Reno


SMALL = [
    "experiment=gear_fig9", "workload.n_intra=2", "workload.size_bytes=2000000",
    "engine.max_sim_time_ms=200", "engine.sample_interval_us=0", "engine.progress=false",
    "scheme=gear_annulus", "switch.qcn.tiers=[tor,agg,core]", "switch.qcn.port_kinds=[host,fabric]",
]  # fmt: skip


def test_switches_notify_the_sources_and_every_packet_is_accounted_for():
    """Two intra-DC flows and a cross-DC flow into one receiver, congestion points at every
    intra-DC port: notices reach the senders as packets of kind cn, every flow finishes, and
    packet conservation holds with them (the run checks it)."""
    res = uno.run(uno.compose([*SMALL, "engine.check_invariants=true",
                               "engine.dataplane=python"]))  # fmt: skip
    assert res.flows["finish_ps"].notna().all()
    packets = res.summary["packets"]
    assert packets["injected"]["cn"] > 0
    assert (
        packets["delivered"]["cn"] + packets["dropped"].get("buffer/cn", 0)
        <= packets["injected"]["cn"]
    )
    off = uno.run(uno.compose([*SMALL, "switch.qcn.enabled=false"]))
    assert off.summary["packets"]["injected"]["cn"] == 0
    assert not off.flows["fct_ps"].equals(res.flows["fct_ps"])


@pytest.mark.parametrize("pfc", [True, False])
@pytest.mark.parametrize("senders", ["python", "kernel"])
def test_the_python_and_compiled_data_planes_give_the_same_run(senders, pfc):
    """The same run in both data planes, with event ports (PFC) and lazy ones, the compiled
    one's notices made in its ports and taken by its senders or handed to Python senders:
    identical flows and packet counts."""
    over = [*SMALL, f"switch.pfc.enabled={pfc}"]
    python = uno.run(uno.compose([*over, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*over, "engine.dataplane=compiled",
                                    f"engine.compiled_senders={senders == 'kernel'}"]))  # fmt: skip
    assert python.summary["packets"]["injected"]["cn"] > 0
    assert python.flows.equals(compiled.flows)
    assert python.summary["packets"] == compiled.summary["packets"]


def test_the_fluid_engine_runs_annulus_and_max_min_needs_no_notices():
    """The fluid engine models the congestion points (tests/test_fluid_qcn.py); max-min runs no
    congestion control, so the notices have nothing to act on there."""
    fluid = uno.run(uno.compose([*SMALL, "engine.kind=fluid"]))
    assert fluid.flows["notices"].sum() > 0
    maxmin = uno.run(uno.compose([*SMALL, "engine.kind=maxmin"]))
    assert maxmin.flows["finish_ps"].notna().all()

"""Gear (uno/cc/gear.py; Han et al., IEEE/ACM ToN, §III, Algorithm 1) from hand-worked cases,
run as the Python data plane runs it (an ACK is a feedback batch of one), and INT as Gear
carries it (uno/net/int.py, uno/cc/int_estimate.py).

Context: 100 Gb/s, intra-DC base RTT IRTT = T = 10 us, MSS 1000 B: the intra-DC BDP is
125,000 B and W_AI = 125,000 x 0.05 / 125 = 50 B. A cross-DC flow has CRTT = 2 ms (200 T), a
BDP of 25,000,000 B and the additive term (CRTT/IRTT) W_AI = 10,000 B; k = 100 puts the
classification threshold at 100 T = 1 ms.

INT records are (ts_ps, qlen_bytes, tx_bytes, rate_bps). Records one T apart make the EWMA
weight tau / T = 1, so u is exactly each ACK's sample: rate share + qlen / (B T).
"""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.gear import LAW, SAMPLE, WAIT, GearParams
from uno.cc.int_estimate import path_utilization
from uno.cc.law import INT_FIELDS, LOSS_NACK, LOSS_TIMEOUT, P0
from uno.cc.registry import KIND
from uno.config.schema import IntTelemetryConfig
from uno.net.int import IntStamper

US = 1_000_000  # ps
T = 10 * US
CRTT = 200 * T
B = 100_000_000_000
MSS = 1000
BDP = 125_000.0
ETA = 0.95
W_AI = 50.0
QUEUE_PER_U = B * T / 8e12  # 125,000 B of queue add 1 to u


def ctx(rtt_ps: int = T, inter: bool = False) -> FlowContext:
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=B * rtt_ps / 8e12,
        bottleneck_bps=B,
        mss_bytes=MSS,
        intra_rtt_ps=T,
        intra_bdp_bytes=BDP,
        is_inter_dc=inter,
        int_max_records=3,
    )


def gear(params: GearParams | None = None, cross: bool = False) -> LawControl:
    context = ctx(CRTT, True) if cross else ctx()
    return LawControl(LAW, KIND["gear"], params or GearParams(), context)


class Port:
    """One switch port's INT counters, advanced by hand."""

    def __init__(self, rate_bps: float = B):
        self.rate, self.ts, self.tx = rate_bps, 1 * US, 0

    def advance(self, dt_ps: int, u: float):
        """``dt_ps`` at line rate with the queue that makes this hop's u equal ``u`` (>= 1), or
        at ``u`` x the line rate with no queue (u < 1): the new record."""
        self.ts += dt_ps
        frac = min(u, 1.0)
        self.tx += round(frac * self.rate * dt_ps / 8e12)
        qlen = (u - frac) * self.rate * T / 8e12
        return (self.ts, qlen, self.tx, self.rate)


def ack(cc, now, sent, hops, rtt=None, acked=MSS):
    rtt = rtt if rtt is not None else cc.consts[P0.base_rtt]
    cc.on_ack_batch(now, acked, False, int(rtt), sent, hops=tuple(hops))


def test_eq1_utilisation_of_one_hop_from_two_records():
    """u = txRate / bw + ql / (bw T), with the queue the new record carries (Gear eq. 1); HPCC
    takes min(ql, ql') instead."""
    s = np.zeros(3 + INT_FIELDS)
    s[0] = 1.0
    s[3 : 3 + INT_FIELDS] = (1 * US, 10_000.0, 0.0, B)  # stored record
    # 1 us later the port has sent 0.8 x 100 Gb/s x 1 us = 10,000 B; 25,000 B queued now
    rec = np.array([[2 * US, 25_000.0, 10_000.0, B]])
    ok, u, tau, bw = path_utilization(s, 0, 3, 3, rec, 1, float(T), False)
    assert ok and u == pytest.approx(0.8 + 25_000 / QUEUE_PER_U) and tau == US and bw == B
    s[3 : 3 + INT_FIELDS] = (1 * US, 10_000.0, 0.0, B)
    ok, u_hpcc, _, _ = path_utilization(s, 0, 3, 3, rec, 1, float(T), True)
    assert u_hpcc == pytest.approx(0.8 + 10_000 / QUEUE_PER_U)


def test_eq2_the_most_loaded_hop_is_the_bottleneck():
    s = np.zeros(2 + 2 * INT_FIELDS)
    s[0] = 2.0
    s[2 : 2 + 2 * INT_FIELDS] = [US, 0.0, 0.0, B, US, 0.0, 0.0, B / 2]
    # hop 0: 0.5 of 100 Gb/s; hop 1 (50 Gb/s): 0.9 of its rate and 6,250 B queued (+0.1)
    rec = np.array([[2 * US, 0.0, 6_250.0, B], [2 * US, 6_250.0, 5_625.0, B / 2]])
    ok, u, _, bw = path_utilization(s, 0, 2, 2, rec, 2, float(T), False)
    assert ok and u == pytest.approx(0.9 + 6_250 / (B / 2 * T / 8e12)) and bw == B / 2
    # another number of hops: no sample, the new records kept
    ok, *_ = path_utilization(s, 0, 2, 2, rec[:1], 1, float(T), False)
    assert not ok and s[0] == 1.0


def test_eq3_three_records_keep_the_longest_drain_times_and_cost_40_bytes():
    """Four hops through a 3-record option: the new record replaces the kept one with the
    shortest drain time ql / bw only if its own is longer (eq. 3)."""
    stamp = IntStamper(3, "gear")

    class Pkt:
        pass

    pkt = Pkt()
    for i, (qlen, rate) in enumerate([(100, B), (500, B), (300, B / 4)]):
        stamp.stamp(pkt, i, qlen, 0, int(rate))
    assert [h[1] for h in pkt.int_hops] == [100, 500, 300]
    stamp.stamp(pkt, 3, 50, 0, B)  # drain time 0.5 ns: shorter than every kept one
    assert [h[1] for h in pkt.int_hops] == [100, 500, 300]
    stamp.stamp(pkt, 4, 200, 0, B)  # 2 ns > 1 ns of the first: replaces it
    assert [h[1] for h in pkt.int_hops] == [200, 500, 300]
    cfg = IntTelemetryConfig(enabled=True, max_records=3, hop_bytes=12, header_bytes=4)
    assert cfg.overhead_bytes() == 40  # the whole TCP option (Fig. 5)


def test_max_qlen_rule_keeps_the_longest_queue_and_tosses_a_fair_coin_on_ties():
    """The rule of Fig. 13(b), one record: a longer queue replaces the kept record whatever its
    line rate (unlike eq. 3), a shorter one never does, an equal one on the coin, which is the
    same for the same (port bytes, time) and fair over many."""
    from uno.net.int import tie_coin

    class Pkt:
        pass

    stamp = IntStamper(1, "qlen", tie_salt=7)
    pkt = Pkt()
    stamp.stamp(pkt, 0, 1000, 0, B)
    stamp.stamp(pkt, 1, 900, 0, int(B / 100))  # drain time 100x longer, queue shorter: kept out
    assert pkt.int_hops == [(0, 1000, 0, B)]
    stamp.stamp(pkt, 2, 1001, 0, B)
    assert pkt.int_hops == [(2, 1001, 0, B)]
    won = 0
    for t in range(2000):
        tie = Pkt()
        stamp.stamp(tie, 10 * t, 0, 5 * t, B)
        stamp.stamp(tie, 10 * t + 1, 0, 5 * t + 3, B)
        won += tie.int_hops[0][0] == 10 * t + 1
        assert (tie.int_hops[0][0] == 10 * t + 1) == tie_coin(7, 10 * t + 1, 5 * t + 3)
    assert 900 < won < 1100  # fair: 1000 expected, sd 22


def started(params=None, cross=False, now=10 * US):
    cc = gear(params, cross)
    port = Port()
    ack(cc, now, 0, [port.advance(0, 0.0)])
    return cc, port


def test_defaults_and_constants():
    cc = gear()
    assert cc.wants_int and LAW.signals == ("int", "rtt")
    assert cc.cwnd_bytes == pytest.approx(BDP) and cc.w_ai_bytes == pytest.approx(W_AI)
    assert cc.threshold_ps == 100 * T
    x = gear(cross=True)
    assert x.cwnd_bytes == pytest.approx(25_000_000) and x.cross_ai_bytes == pytest.approx(10_000)
    assert gear(GearParams(k_unit="us")).threshold_ps == 100 * US


def test_eq4_step_one_then_eqs6_7_one_irtt_later():
    """Step I at u = 1.25: w = 125,000 x 0.95 / 1.25 + 50 = 95,050. One round later u is
    averaged over half an IRTT: 1.1. Eq. 6: w_b = 1.25 (1.1 - 0.95) / (1.25 - 0.95) = 0.625 of
    bw, so w_a = 0.625; eq. 7 from the window before Step I: 125,000 x (0.76 + (0.76 - 1) x
    0.625 / 0.625) + 50 = 65,050 (the intra-DC flows together take 0.95 - 0.625 of bw)."""
    cc, port = started()
    t0 = 10 * US
    t1 = t0 + T
    ack(cc, t1, t0, [port.advance(T, 1.25)])  # ends the first round: Step I
    assert cc.utilization == pytest.approx(1.25)
    assert cc.cwnd_bytes == pytest.approx(BDP * ETA / 1.25 + W_AI)
    assert cc.phase == WAIT and cc.ref_cwnd_bytes == pytest.approx(95_050)
    t2 = t1 + T // 2
    ack(cc, t2, t1 - 1, [port.advance(T // 2, 1.4)])  # the round after Step I: held
    assert cc.cwnd_bytes == pytest.approx(95_050)
    t3 = t2 + T // 2
    ack(cc, t3, t1, [port.advance(T // 2, 1.3)])  # its end (~ t + IRTT): start averaging
    assert cc.phase == SAMPLE and cc.sample_until_ps == t3 + T // 2
    ack(cc, t3 + T // 4, t1 + 1, [port.advance(T // 4, 1.1)])
    assert cc.phase == SAMPLE and cc.cwnd_bytes == pytest.approx(95_050)
    ack(cc, t3 + T // 2, t1 + 2, [port.advance(T // 4, 1.1)])
    assert cc.phase == 0.0
    assert cc.cross_share == pytest.approx(0.625 / 1.25)
    assert cc.cwnd_bytes == pytest.approx(BDP * (0.76 - 0.24) + W_AI)
    assert cc.ref_cwnd_bytes == cc.cwnd_bytes and cc.step2_events == 1


def test_no_cross_traffic_leaves_step_one_as_it_was():
    """If Step I brought u to eta (only intra-DC traffic), eq. 6 finds no cross-DC share and
    eq. 7 is Step I's multiplicative rule: 125,000 x 0.76 + 50."""
    cc, port = started()
    t0 = 10 * US
    ack(cc, t0 + T, t0, [port.advance(T, 1.25)])
    ack(cc, t0 + 2 * T, t0 + T, [port.advance(T, 1.0)])
    ack(cc, t0 + 2 * T + T // 2, t0 + T + 1, [port.advance(T // 2, ETA)])
    assert cc.cross_share == 0.0
    assert cc.cwnd_bytes == pytest.approx(BDP * 0.76 + W_AI)


def test_intra_ablation_is_hpcc_step_one_alone():
    cc, port = started(GearParams(intra_logic="hpcc"))
    t0 = 10 * US
    ack(cc, t0 + T, t0, [port.advance(T, 1.25)])
    assert cc.phase == 0.0 and cc.ref_cwnd_bytes == pytest.approx(95_050)
    ack(cc, t0 + 2 * T, t0 + T, [port.advance(T, 0.5)])  # additive (u < eta, incStage < 5)
    assert cc.cwnd_bytes == pytest.approx(95_050 + W_AI) and cc.inc_stage == 1


def test_eqs8_9_per_ack_and_eq10_once_per_round():
    """Cross-DC flow, w^c = 25,000,000 B. At u = 1.25: Delta = (0.76 - 1) w^c = -6,000,000 B,
    w = w^c + 2 Delta + 10,000 = 13,010,000 B; Delta as a rate: -6e6 x 8 / 2 ms = -24 Gb/s.
    The round's end: w^c = 0.95 / 1.25 x w^c = 19,000,000 (no earlier Delta to remove). Next
    round's end at u = 0.71: eq. 10 removes the -0.24 of bw the doubling took off the link,
    u = 0.95, and w^c stays 19,000,000 (the "correct rate")."""
    cc, port = started(cross=True)
    assert cc.is_cross == 1.0
    t0 = 10 * US
    ack(cc, t0 + T, t0 - 1, [port.advance(T, 1.25)])
    assert cc.cwnd_bytes == pytest.approx(13_010_000)
    assert cc.delta_bps == pytest.approx(-0.24 * B)
    ack(cc, t0 + 2 * T, t0, [port.advance(T, 1.25)])  # ends the round
    assert cc.ref_cwnd_bytes == pytest.approx(19_000_000)
    assert cc.cwnd_bytes == pytest.approx(13_010_000)
    assert cc.delta_prev_bps == pytest.approx(-0.24 * B)
    ack(cc, t0 + 3 * T, t0 + 2 * T, [port.advance(T, 0.71)])
    assert cc.ref_cwnd_bytes == pytest.approx(19_000_000)
    # per ACK: (2 x 0.95 / 0.71 - 1) x 19e6 + 10,000 = 31.85 MB, capped at the BDP
    assert cc.cwnd_bytes == pytest.approx(25_000_000)


def test_cross_ablation_uses_step_one_under_the_wan_window():
    cc, port = started(GearParams(cross_logic="hpcc"), cross=True)
    t0 = 10 * US
    ack(cc, t0 + T, t0, [port.advance(T, 1.25)])
    assert cc.cwnd_bytes == pytest.approx(25_000_000 * 0.76 + W_AI)


def test_wan_window_cuts_on_loss_and_caps_the_window():
    cc, port = started(cross=True)
    cc.on_nack(20 * US)
    assert cc.wan_cwnd_bytes == pytest.approx(0.7 * 25_000_000)
    assert cc.cwnd_bytes == pytest.approx(0.7 * 25_000_000)
    cc.on_nack(21 * US)  # the same loss episode (within a base RTT): no second cut
    assert cc.wan_cwnd_bytes == pytest.approx(0.7 * 25_000_000)
    cc._loss(22 * US + CRTT, LOSS_TIMEOUT)  # a base RTT later: a second cut
    assert cc.wan_cwnd_bytes == pytest.approx(0.49 * 25_000_000)
    # the datacenter rule would allow more: the WAN window caps it and grows 1 MSS per window
    ack(cc, 30 * US + CRTT, 10 * US, [port.advance(T, ETA)])
    assert cc.cwnd_bytes == pytest.approx(cc.wan_cwnd_bytes)
    assert cc.wan_cwnd_bytes == pytest.approx(0.49 * 25e6 + MSS * MSS / (0.49 * 25e6))
    intra, _ = started()
    intra._loss(20 * US, LOSS_NACK)
    assert intra.cwnd_bytes == pytest.approx(BDP)
    # a loss while the datacenter rule holds the window low cuts the WAN window from its own size
    low, port = started(cross=True)
    ack(low, 20 * US, 0, [port.advance(T, 2.0)])  # eq. 9 at u = 2: below zero, the floor
    assert low.cwnd_bytes == MSS
    low.on_nack(30 * US)
    assert low.wan_cwnd_bytes == pytest.approx(0.7 * 25_000_000) and low.cwnd_bytes == MSS


def test_classification_by_the_first_rtt_and_reclassification():
    # a cross-DC path whose first RTT sample is short: intra-DC
    cc = gear(cross=True)
    ack(cc, 10 * US, 0, [], rtt=5 * T)
    assert cc.is_cross == 0.0
    # a congested handshake calls an intra-DC flow cross-DC; a later short RTT corrects it once
    cc = gear()
    ack(cc, 10 * US, 0, [], rtt=150 * T)
    assert cc.is_cross == 1.0
    ack(cc, 20 * US, 1, [], rtt=99 * T)
    assert cc.is_cross == 0.0 and cc.reclassified == 1
    ack(cc, 30 * US, 2, [], rtt=300 * T)
    assert cc.is_cross == 0.0  # never back
    # the topology's answer, whatever the RTT
    cc = gear(GearParams(classify="oracle"), cross=True)
    ack(cc, 10 * US, 0, [], rtt=T)
    assert cc.is_cross == 1.0
    # an absolute threshold of 100 us
    cc = gear(GearParams(k_unit="us"))
    ack(cc, 10 * US, 0, [], rtt=120 * US)
    assert cc.is_cross == 1.0


SMALL = [
    "experiment=gear_fig9", "workload.n_intra=2", "workload.size_bytes=3000000",
    "engine.max_sim_time_ms=200", "engine.sample_interval_us=0", "engine.progress=false",
]  # fmt: skip


@pytest.mark.parametrize("scheme", ["gear_gear", "gear_hpcc"])
def test_the_python_and_compiled_data_planes_give_the_same_run(scheme):
    """Two intra-DC flows and one cross-DC flow into one receiver on Gear's topology, lossless:
    every flow finishes, nothing is dropped, and both data planes agree exactly."""
    over = [*SMALL, f"scheme={scheme}"]
    python = uno.run(uno.compose([*over, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*over, "engine.dataplane=compiled"]))
    assert python.flows["finish_ps"].notna().all()
    assert sum(python.summary["packets"]["dropped"].values()) == 0
    assert python.flows.equals(compiled.flows)


def test_max_qlen_rule_with_background_traffic_is_the_same_in_both_data_planes():
    """Fig. 13(b)'s rule (one record, the longest queue, coins on ties) under background
    traffic: the coins and the records they keep are the same in both data planes."""
    over = [
        *SMALL, "experiment=gear_fig13", "switch.int_telemetry.max_records=1",
        "switch.int_telemetry.replacement=qlen", "background.load=0.02",
        "background.duration_us=2000", "engine.max_sim_time_ms=30",
        "engine.allow_unfinished=true",
    ]  # fmt: skip
    python = uno.run(uno.compose([*over, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*over, "engine.dataplane=compiled"]))
    flows = python.flows
    assert {"intra", "inter", "background_intra"} <= set(flows["tag"])
    assert flows.loc[flows["tag"] == "background_intra", "finish_ps"].notna().mean() > 0.9
    assert flows.equals(compiled.flows)

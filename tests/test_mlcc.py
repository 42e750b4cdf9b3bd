"""MLCC (Zhao et al., ICPP 2025, §3): the credit loop (Algorithm 1), DQM's prediction and rate
(eqs. 2-5), its token smoothing (eqs. 6-9), the DCI switches' per-flow queues and Switch-INT
loop, and the law's rate (eq. 10), on hand-worked numbers and small runs."""

from __future__ import annotations

import dataclasses
from types import SimpleNamespace

import numpy as np
import pytest

import uno
from uno.cc.adapter import LawControl, ReceiverLawControl
from uno.cc.base import FlowContext
from uno.cc.hpcc import HpccParams
from uno.cc.law import BPS_PS, NO_RECORDS
from uno.cc.mlcc import LAW, RECEIVER, RP, RS, MlccParams, dqm_rate, token_step
from uno.cc.registry import KIND, LAW_BY_NAME
from uno.core.engine import Engine
from uno.core.errors import ConfigError
from uno.core.packet import ACK, CN, DATA, Packet
from uno.net.dci import DciElement, DciTap, pfq_gap_ps

US = 10**6
MS = 10**9
MSS = 1500
RTT_C = 6 * MS
RTT_D = 25 * US
LINE = 25e9


def ctx(inter: bool = True) -> FlowContext:
    rtt = RTT_C if inter else RTT_D
    return FlowContext(base_rtt_ps=rtt, bdp_bytes=LINE * rtt / BPS_PS, bottleneck_bps=int(LINE),
                       mss_bytes=MSS, intra_rtt_ps=RTT_D, intra_bdp_bytes=LINE * RTT_D / BPS_PS,
                       is_inter_dc=inter)  # fmt: skip


def receiver(params: MlccParams | None = None) -> ReceiverLawControl:
    return ReceiverLawControl(RECEIVER, params or MlccParams(), ctx(), LINE)


def test_dqm_constants_follow_section_4_1_and_table_1():
    rx = receiver()
    p = rx.consts
    assert p[RP.theta_ps] == 18 * MS and p[RP.target_delay_ps] == 1 * MS
    assert p[RP.m] == 5 and p[RP.alpha] == 0.5
    assert p[RP.n] == RTT_C // RTT_D == 240  # n = RTT_C / RTT_D (Algorithm 2 line 1)
    assert rx.state[RS.credit_rate_bps] == LINE  # a new PFQ at the host's line rate


def _dqm_state(rx, credit, credits, dqms):
    s, p = rx.state, rx.consts
    n = int(p[RP.n])
    s[RS.credit_rate_bps] = credit
    s[RS.size + n : RS.size + n + len(credits)] = credits
    s[RS.credit_held] = len(credits)
    s[RS.size : RS.size + len(dqms)] = dqms
    s[RS.dqm_held] = len(dqms)
    return s, p


def test_dqm_prediction_and_rate_on_hand_worked_numbers():
    rx = receiver()
    s, p = _dqm_state(rx, 10e9, [12e9, 8e9, 10e9, 10e9, 10e9], [8e9, 9e9, 10e9])
    # eq. 2: R_pre_eq = (8 + 9 + 10) / 3 = 9 Gb/s; eq. 3: Q_pre = (9 - 10) Gb/s x 6 ms + 4 MB
    # = -750,000 + 4,000,000 = 3,250,000 B; eq. 4: D_pre = 5 x Q_pre / (50 Gb/s) = 2.6 ms;
    # eq. 5: R_DQM = 10 Gb/s x (1 - (2.6 - 1) / 18) = 9.1111 Gb/s
    assert dqm_rate(s, p, 4_000_000.0) == pytest.approx(10e9 * (1 - 1.6 / 18), rel=1e-12)
    # a queue below the target raises the rate: Q_pre = 1,250,000 - 750,000 -> D_pre = 0.4 ms
    assert dqm_rate(s, p, 1_250_000.0) == pytest.approx(10e9 * (1 + 0.6 / 18), rel=1e-12)
    # no history yet: the enqueue rate is predicted to be R_credit (Q_pre = Q_c)
    s[RS.dqm_held] = 0
    assert dqm_rate(s, p, 2_500_000.0) == pytest.approx(10e9 * (1 - 1.0 / 18), rel=1e-12)


def test_dqm_gate_above_keeps_r_credit_below_the_target_delay():
    rx = receiver(MlccParams(dqm_gate="above"))
    s, p = _dqm_state(rx, 10e9, [10e9] * 5, [10e9])
    assert dqm_rate(s, p, 1_000_000.0) == 10e9  # D_pre = 0.8 ms < D_t
    assert dqm_rate(s, p, 4_000_000.0) == pytest.approx(10e9 * (1 - 2.2 / 18))


def _tokens(rx, ratio, steps):
    s, p = rx.state, rx.consts
    s[RS.credit_rate_bps] = 10e9
    s[RS.dqm_bps] = ratio * 10e9
    out = []
    for _ in range(steps):
        token_step(s, p)
        out.append((round(s[RS.token], 9), s[RS.dw]))
    return out


def test_token_smoothing_eqs_6_to_9():
    # R_DQM = R_credit, alpha = 0.5: +0.5 a packet; token 0.5 (< 1: dw - 1), 1.0 (= 1: consumed,
    # dw unchanged), ...
    assert _tokens(receiver(), 1.0, 4) == [(0.5, -1), (0.0, -1), (0.5, -2), (0.0, -2)]
    # R_DQM = 1.5 R_credit: +0.75; 0.75 (dw -1), 1.5 -> 0.5 (dw 0), 1.25 -> 0.25 (1), 1.0 -> 0
    # (1), 0.75 (0)
    assert _tokens(receiver(), 1.5, 5) == [(0.75, -1), (0.5, 0), (0.25, 1), (0.0, 1), (0.75, 0)]
    # the increment is capped at 1 (eq. 7): the token reaches exactly 1 each packet, which eq. 6
    # consumes and eq. 8 leaves alone, so R_DQM >= 2 R_credit holds dw where it is
    assert _tokens(receiver(), 5.0, 3) == [(0.0, 0), (0.0, 0), (0.0, 0)]
    assert _tokens(receiver(), 1.9, 2)[1][1] == 0 and _tokens(receiver(), 1.9, 20)[-1][1] > 10
    rx = receiver()
    _tokens(rx, 1.5, 4)
    step = MSS * BPS_PS / RTT_C  # eq. 9: R-bar = R_credit + dw x MTU / RTT_C
    assert rx.state[RS.dqm_avg_bps] == pytest.approx(10e9 + 1 * step)


def test_token_smoothing_stays_within_one_mtu_per_rtt_c_and_the_line_rate():
    rx = receiver()
    _tokens(rx, 0.0, 20_000)  # (5,000 steps of one MTU per RTT_C reach the floor)
    assert rx.state[RS.dqm_avg_bps] >= MSS * BPS_PS / RTT_C
    assert rx.state[RS.dqm_avg_bps] < MSS * BPS_PS / RTT_C + MSS * BPS_PS / RTT_C + 1
    _tokens(rx, 1.99, 20_000)  # (about 7,600 steps to the line rate)
    assert LINE - MSS * BPS_PS / RTT_C < rx.state[RS.dqm_avg_bps] <= LINE


def test_credit_loop_advances_only_when_the_data_carries_the_receivers_credit():
    rx = receiver()
    seen = []
    # the first packet initialises C_R = 1 (Algorithm 1 line 2); packets without a credit
    # (C_D = -1) or with an old one leave C_R; C_D = C_R starts a round (lines 9-13)
    for t, c_d in enumerate([-1, -1, -1, 1, 1, 1, 2, 1, 3, 3, 4]):
        credit, _rate, _avg = rx.on_data(t * US, c_d, 0, ())
        seen.append(credit)
    assert seen == [1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5]
    assert rx.state[RS.rounds] == 4


def _near_hops(t, tx, q=0):
    """Two near-source hops (host leaf and spine) at ``t`` having sent ``tx`` bytes."""
    return [(t, q, tx, int(100e9)), (t + US, 0, tx // 2, int(100e9))]


def test_switch_int_loop_rate_is_hpccs_law_on_the_near_source_hops():
    """R_NS is HPCC's W / T with T = RTT_D on the Switch-INT records (§3.2), and the sender
    sends at min(R_NS, R-bar_DQM) (eq. 10)."""
    mlcc = LawControl(LAW, KIND["mlcc"], MlccParams(), ctx())
    near = dataclasses.replace(ctx(), base_rtt_ps=RTT_D, bdp_bytes=LINE * RTT_D / BPS_PS)
    ref = LawControl(LAW_BY_NAME["hpcc"], KIND["hpcc"], HpccParams(), near)
    assert mlcc.pacing_rate_bps == pytest.approx(LINE)
    # 100 Gb/s port sent 12.5 GB/s x 20 us at 120 KB of queue: U > eta, a cut
    for t, tx, q in [(10 * US, 1_000_000, 0), (30 * US, 1_250_000, 120_000),
                     (50 * US, 1_500_000, 200_000)]:  # fmt: skip
        mlcc.on_report(t + 5 * US, t - 3 * US, 0.0, _near_hops(t, tx, q))
        ref.on_ack_batch(t + 5 * US, MSS, False, 8 * US, t - 3 * US, hops=_near_hops(t, tx, q))
    assert ref.pacing_rate_bps < LINE * 0.9
    assert mlcc.pacing_rate_bps == pytest.approx(ref.pacing_rate_bps, rel=1e-12)
    mlcc.on_report(60 * US, 0, 3e9)  # an ACK's R-bar_DQM below R_NS
    assert mlcc.pacing_rate_bps == 3e9
    mlcc.on_report(61 * US, 0, 40e9)  # above R_NS: R_NS
    assert mlcc.pacing_rate_bps == pytest.approx(ref.pacing_rate_bps, rel=1e-12)
    # the cross-DC window is the end-to-end BDP at line rate, whatever the near loop says
    assert mlcc.cwnd_bytes == pytest.approx(LINE * RTT_C / BPS_PS)


def test_an_intra_dc_flow_runs_hpcc_on_its_acks():
    mlcc = LawControl(LAW, KIND["mlcc"], MlccParams(), ctx(inter=False))
    ref = LawControl(LAW_BY_NAME["hpcc"], KIND["hpcc"], HpccParams(), ctx(inter=False))
    for t, tx, q in [(10 * US, 1_000_000, 0), (30 * US, 1_250_000, 150_000)]:
        for cc in (mlcc, ref):
            cc.on_ack_batch(t + 5 * US, MSS, False, 30 * US, t - 3 * US, hops=_near_hops(t, tx, q))
    mlcc.on_report(40 * US, 0, 1e9)  # (no DCI report changes an intra-DC flow's rate)
    assert mlcc.cwnd_bytes == ref.cwnd_bytes < ctx(inter=False).bdp_bytes
    assert mlcc.pacing_rate_bps == pytest.approx(ref.pacing_rate_bps, rel=1e-12)


# ---- the DCI element -------------------------------------------------------------------------
class _Switch:
    """Records what the element hands to forwarding, and when."""

    def __init__(self, engine, dc):
        self.engine, self.dc, self.name, self.ports, self.got = engine, dc, "dci", [], []

    def receive(self, pkt):
        self.got.append((self.engine.now, pkt))


def _element(per_flow=True, near=True, interval_us=0.0, rate_gbps=None, buffer_bytes=10**9):
    engine = Engine()
    sw = _Switch(engine, dc=1)
    host = SimpleNamespace(nic=SimpleNamespace(rate_bps=int(LINE)))
    net = SimpleNamespace(injected=[0] * 5, in_flight=0, hosts=[host] * 4, dropped=[],
                          drop=lambda pkt, reason, port: net.dropped.append(reason))  # fmt: skip
    cfg = SimpleNamespace(near_source=near, notice_interval_us=interval_us, notice_bytes=64,
                          per_flow_queues=per_flow, initial_rate_gbps=rate_gbps)  # fmt: skip
    # hosts 0, 1 in DC 0; hosts 2, 3 in DC 1 (the element's)
    el = DciElement(engine, net, sw, cfg, [0, 0, 1, 1], buffer_bytes)
    return engine, sw, el, DciTap(el, SimpleNamespace(name="wan"))


def _data(flow, seq, src=0, dst=2, size=MSS):
    return Packet(DATA, flow, seq, size, size - 64, src, dst, 0, 0, 0)


def test_pfq_drains_at_the_credited_rate_and_stamps_the_credit():
    engine, sw, el, tap = _element()
    for seq in range(4):
        tap.receive(_data(7, seq))
    engine.run()
    gap = pfq_gap_ps(MSS, int(LINE))  # a new PFQ: the host's line rate
    assert [t for t, _ in sw.got] == [0, gap, 2 * gap, 3 * gap]
    assert [p.credit for _, p in sw.got] == [-1] * 4  # no credit yet
    # (the first leaves as it arrives, before the others are there)
    assert [p.pfq_bytes for _, p in sw.got] == [0, 2 * MSS, MSS, 0]
    assert el.max_bytes == 3 * MSS and el.bytes == 0 and tap.pfq_packets == 4
    # the receiver's ACK passes: C_D = 5 and R_credit = 5 Gb/s from the next packet on
    ack = _data(7, 0, src=2, dst=0)
    ack.kind, ack.credit, ack.credit_rate_bps = ACK, 5, 5e9
    tap.receive(ack)
    start = engine.now
    for seq in range(4, 7):
        tap.receive(_data(7, seq))
    engine.run()
    slow = pfq_gap_ps(MSS, int(5e9))
    times = [t for t, _ in sw.got[5:]]  # (sw.got[4] is the ACK, forwarded)
    assert sw.got[4][1] is ack
    assert times == [start + gap, start + gap + slow, start + gap + 2 * slow]
    assert [p.credit for _, p in sw.got[5:]] == [5, 5, 5]
    assert pfq_gap_ps(MSS, int(5e9)) == 2400 * 1000


def test_pfqs_are_per_flow_and_share_the_switch_buffer():
    engine, sw, el, tap = _element(rate_gbps=1.0, buffer_bytes=5 * MSS)
    for seq in range(3):
        tap.receive(_data(1, seq))
        tap.receive(_data(2, seq, src=1, dst=3))
    assert el.flow_bytes() == {1: 2 * MSS, 2: 2 * MSS}  # each released its first at once
    for seq in range(3, 5):
        tap.receive(_data(1, seq))
    assert tap.pfq_drops == 1 and el.network.dropped == ["buffer_full"]
    engine.run()
    flow1 = [t for t, p in sw.got if p.flow_id == 1]
    assert flow1 == [i * pfq_gap_ps(MSS, 10**9) for i in range(4)]


def test_sender_side_dci_returns_and_clears_the_int_records():
    engine, sw, el, tap = _element()
    el.dc = 0  # the sender's datacenter: near-source loop
    pkt = _data(3, 0, src=0, dst=2)
    pkt.sent_ps = 77
    pkt.int_hops = [(1, 2, 3, 4)]
    tap.receive(pkt)
    notice, data = sw.got[0][1], sw.got[1][1]
    assert data is pkt and pkt.int_hops is None
    assert notice.kind == CN and notice.seq == 0 and notice.int_hops == [(1, 2, 3, 4)]
    assert (notice.src, notice.dst, notice.sent_ps, notice.size_bytes) == (2, 0, 77, 64)
    assert tap.notices == 1 and el.network.injected[CN] == 1
    # intra-DC data and data without records pass untouched
    tap.receive(_data(4, 0, src=0, dst=1))
    tap.receive(_data(3, 1, src=0, dst=2))
    assert tap.notices == 1


def test_switch_int_notices_at_most_one_per_flow_per_interval():
    engine, sw, el, tap = _element(interval_us=10.0)
    el.dc = 0
    for t in (0, 5 * US, 10 * US, 12 * US, 21 * US):
        engine._now = t
        pkt = _data(3, 0)
        pkt.int_hops = [(t, 0, 0, 1)]
        tap.receive(pkt)
    assert tap.notices == 3  # at 0, 10 and 21 us


# ---- runs ------------------------------------------------------------------------------------
SMALL = [
    "cc=mlcc", "topo=mlcc_two_dc", "topo.hosts_per_leaf=2", "topo.leaves=2",
    "topo.wan_delay_us=300", "workload=flows", "lb=ecmp",
    "workload.flows=[{src:0,dst:6,size_bytes:3000000},{src:4,dst:6,size_bytes:3000000}]",
    "engine.dataplane=python", "engine.check_invariants=true",
]  # fmt: skip


@pytest.fixture(scope="module")
def small_run():
    return uno.run(uno.compose(SMALL))


def test_a_small_mlcc_run_finishes_and_counts_the_dci_elements_work(small_run):
    res = small_run
    flows = res.flows
    assert flows["finish_ps"].notna().all()
    cross = flows[flows["cls"] == "inter"].iloc[0]
    dci = res.summary["dci"]
    # every cross-DC data packet went through DC 1's PFQ and had its records returned by DC 0's
    # DCI switch (one notice per packet)
    assert dci["dc1/dci"]["pfq_packets"] == cross["sent_packets"]
    assert dci["dc0/dci"]["switch_int_notices"] == cross["sent_packets"]
    assert dci["dc1/dci"]["pfq_drops"] == 0 and dci["dc1/dci"]["pfq_bytes_at_end"] == 0
    ports = res.tables["ports"]
    into = ports.set_index("port")
    assert into["pfq_packets"].sum() == cross["sent_packets"]
    assert (
        into.loc[[n for n in into.index if n.endswith("->dc0/dci")], "dci_notices"].sum()
        == (cross["sent_packets"])
    )


def test_mlcc_needs_the_dci_element_for_cross_dc_flows():
    with pytest.raises(ConfigError, match="switch.dci.enabled"):
        uno.run(uno.compose([*SMALL, "switch.dci.enabled=false"]))


def test_python_and_compiled_data_planes_give_identical_mlcc_runs():
    """The DCI element in the kernel (uno.net.compiled.dci) does what uno.net.dci does: the
    same flows, counters, per-flow queue peaks and PFC pauses, with PFC on."""
    flows = ("workload.flows=[{src:0,dst:6,size_bytes:3000000},{src:4,dst:6,size_bytes:3000000},"
             "{src:1,dst:7,size_bytes:2000000,start_us:500}]")  # fmt: skip
    over = [*SMALL[:-2], flows, "engine.check_invariants=true", "switch.pfc.enabled=true",
            "switch.pfc.port_kinds=[host,fabric,border]", "engine.sample_interval_us=100",
            "engine.queue_ports=[receivers]"]  # fmt: skip
    py = uno.run(uno.compose([*over, "engine.dataplane=python"]))
    comp = uno.run(uno.compose([*over, "engine.dataplane=compiled"]))
    assert comp.summary["dataplane"]["kind"] == "compiled"
    assert py.flows.equals(comp.flows)
    assert py.summary["dci"] == comp.summary["dci"]
    assert py.summary["pfc"] == comp.summary["pfc"]
    assert py.tables["ports"].equals(comp.tables["ports"])
    assert py.tables["queues"].equals(comp.tables["queues"])
    assert py.summary["dci"]["dc1/dci"]["pfq_max_bytes"] > 0


def test_receiver_law_is_declared_once():
    assert LAW.receiver is RECEIVER and LAW_BY_NAME["mlcc"] is LAW
    assert np.array_equal(NO_RECORDS.shape, (0, 4))


def test_credit_advances_once_per_receiver_to_dci_round_trip():
    """Algorithm 1 in a run: C_R moves on when data stamped with it comes back, so the rounds
    of a long cross-DC flow are its time at the receiver over the DCI-receiver round trip
    (2 x (5 + 5 + 1) us of propagation plus serialisations: no queue on this path)."""
    from uno.api import to_run_config
    from uno.build import build_simulation

    over = [*SMALL[:-1], "workload.flows=[{src:0,dst:6,size_bytes:20000000}]"]
    sim = build_simulation(to_run_config(uno.compose(over)))
    sim.start()
    sim.advance(2 * MS)
    rx = sim.flows[0].receiver.credit_cc.state
    first_ps = 300 * US  # (the first packet reaches the receiver after the 300 us link)
    rtt_ps = 2 * (5 + 5 + 1) * US
    rounds = rx[RS.rounds]
    assert 0.8 * (2 * MS - first_ps) / rtt_ps < rounds < (2 * MS - first_ps) / rtt_ps

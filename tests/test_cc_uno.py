"""UnoCC rules (Uno paper §4.1, Algorithm 1, Table 2) as plain arithmetic on the controller
(the law uno/cc/uno.py behind the Python data plane's adapter; its columns read as attributes)."""

from __future__ import annotations

import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.registry import KIND, LAW_BY_NAME
from uno.cc.uno import UnoParams
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000
RTT = 14 * US
BDP = 175_000.0
MSS = 4160


def ctx(base_rtt=RTT, bdp=BDP, inter=False):
    return FlowContext(
        base_rtt_ps=base_rtt,
        bdp_bytes=bdp,
        bottleneck_bps=100_000_000_000,
        mss_bytes=MSS,
        intra_rtt_ps=RTT,
        intra_bdp_bytes=BDP,
        is_inter_dc=inter,
    )


def uno_cc(flow_ctx: FlowContext, params: UnoParams) -> LawControl:
    return LawControl(LAW_BY_NAME["uno"], KIND["uno"], params, flow_ctx)


def make(**kw):
    """No cap, half a BDP, Quick Adapt effectively off unless a test sets qa_beta, and the
    fixed epoch period (intra-DC base RTT) unless a test sets epoch_period."""
    params = UnoParams(
        **{
            "max_cwnd_bdp": 0.0,
            "init_cwnd_bdp": 0.5,
            "qa_beta": 1e-9,
            "epoch_period": "intra_rtt",
            **kw,
        }
    )
    return uno_cc(ctx(), params)


def test_constants_from_table_2():
    cc = uno_cc(ctx(), UnoParams())
    assert cc.alpha_bytes == pytest.approx(0.001 * BDP)
    assert cc.k_bytes == pytest.approx(BDP / 7)
    assert cc.md_gain == pytest.approx(4 * (BDP / 7) / (BDP / 7 + BDP))  # = 0.5
    assert cc.cwnd_bytes == BDP  # starts at 1 BDP
    assert cc.pacing_rate_bps == pytest.approx(BDP * 8e12 / RTT)  # line rate at 1 BDP


def test_additive_increase_per_unmarked_ack():
    cc = make()
    cc.on_ack(RTT, MSS, False, RTT, 0)
    assert cc.cwnd_bytes == pytest.approx(87_500 + 175 * MSS / 87_500)
    before = cc.cwnd_bytes
    cc.on_ack(RTT + 1, MSS, True, RTT, 1)  # marked: no increase (and no epoch end yet)
    assert cc.cwnd_bytes == before


def test_window_grows_by_alpha_per_rtt():
    cc = make()
    w0 = cc.cwnd_bytes
    for _ in range(25):  # exactly one window of ACKs: 25 x 3500 B = 87,500 B
        cc.on_ack(RTT, 3500, False, RTT, 0)
    # alpha x acked / cwnd summed over a window is alpha, up to the window's own growth
    assert cc.cwnd_bytes - w0 == pytest.approx(0.001 * BDP, rel=0.01)


def test_epoch_activates_at_first_ack_and_ends_on_packet_sent_after_it():
    cc = make()
    cc.on_ack(RTT, MSS, False, RTT, 0)  # activates: T_epoch = 14 us
    assert cc.epoch_start_ps == RTT and cc.epochs == 0
    cc.on_ack(RTT + 5 * US, MSS, False, RTT, RTT - 1)  # sent before T_epoch: same epoch
    assert cc.epochs == 0
    cc.on_ack(2 * RTT, MSS, False, RTT, RTT)  # sent at T_epoch: the epoch ends
    assert cc.epochs == 1
    assert cc.epoch_start_ps == 2 * RTT  # advanced by one epoch period (intra RTT)


def test_epoch_start_advances_by_period_not_to_now():
    """After a stall T_epoch lags behind: each later ACK ends one epoch and advances it one
    period until it catches up (Alg. 1 and §4.1.1 say "increases T_epoch by epoch_period"; the
    artifact does the same), so a stall is followed by a burst of short epochs."""
    cc = make()
    cc.on_ack(RTT, MSS, False, RTT, 0)
    cc.on_ack(10 * RTT, MSS, False, RTT, 9 * RTT)  # a late ACK ends the epoch
    assert cc.epoch_start_ps == 2 * RTT
    cc.on_ack(10 * RTT + 1, MSS, False, RTT, 9 * RTT)  # still after T_epoch: ends another
    assert cc.epochs == 2 and cc.epoch_start_ps == 3 * RTT


def test_epoch_period_is_the_rtt_sample_scaled_to_the_intra_dc_rtt():
    """§4.1.1: T_epoch advances by "a time span proportional to the packet's RTT", the same
    (intra-DC) granularity for both classes: sample x intra-DC base RTT / the flow's base RTT."""
    intra = make(epoch_period="rtt_sample")
    intra.on_ack(RTT, MSS, False, RTT, 0)
    intra.on_ack(2 * RTT, MSS, False, RTT + 6 * US, RTT)  # queueing: a longer period
    assert intra.epoch_start_ps == RTT + (RTT + 6 * US)
    inter = uno_cc(
        ctx(base_rtt=128 * RTT, bdp=128 * BDP, inter=True),
        UnoParams(epoch_period="rtt_sample", qa_beta=1e-9),
    )
    inter.on_ack(128 * RTT, MSS, False, 128 * RTT, 0)
    inter.on_ack(129 * RTT, MSS, False, 128 * RTT, 128 * RTT)  # no queueing: one intra RTT
    assert inter.epoch_start_ps == 129 * RTT
    inter.on_ack(130 * RTT, MSS, False, 128 * RTT + 128 * US, 129 * RTT)
    assert inter.epoch_start_ps == 130 * RTT + US  # 128 us of queueing / 128


def test_inter_dc_flow_uses_the_intra_dc_epoch_period():
    inter = uno_cc(
        ctx(base_rtt=128 * RTT, bdp=128 * BDP, inter=True), UnoParams(epoch_period="intra_rtt")
    )
    assert inter.epoch_period_ps == RTT
    assert inter.qa_period_ps == 128 * RTT  # QA stays once per the flow's own RTT
    assert inter.md_gain == pytest.approx(4 * (BDP / 7) / (BDP / 7 + 128 * BDP))


def test_multiplicative_decrease_once_per_congested_epoch():
    cc = make()
    qdelay_rtt = RTT + 5 * US  # physical queueing: MD_scale = 1
    cc.on_ack(RTT, MSS, True, qdelay_rtt, 0)  # activates, marked (no AI)
    w = cc.cwnd_bytes
    cc.on_ack(2 * RTT, MSS, True, qdelay_rtt, RTT)  # ends a fully marked epoch
    e = 0.0625 * 1.0  # E = (1 - g) * 0 + g * frac
    assert cc.ecn_ewma == pytest.approx(e)
    assert cc.cwnd_bytes == pytest.approx(w * (1 - e * 0.5))
    w = cc.cwnd_bytes
    cc.on_ack(2 * RTT + 1, MSS, True, qdelay_rtt, RTT + 1)  # same epoch (T_epoch = 28 us): no MD
    assert cc.cwnd_bytes == w and cc.md_events == 1


def test_ewma_of_marked_fraction_across_epochs():
    cc = make()
    cc.on_ack(RTT, MSS, False, RTT, 0)  # the activating ACK counts in the first epoch
    # epoch 1: 1 marked of 4 ACKs (the last ACK ends the epoch)
    for i, ecn in enumerate([True, False]):
        cc.on_ack(RTT + i + 1, MSS, ecn, RTT + 5 * US, 1)
    cc.on_ack(2 * RTT, MSS, False, RTT + 5 * US, RTT)
    assert cc.ecn_ewma == pytest.approx(0.0625 * 0.25)
    # epoch 2: no marks: E decays, no MD
    md = cc.md_events
    cc.on_ack(3 * RTT, MSS, False, RTT, 2 * RTT)
    assert cc.ecn_ewma == pytest.approx((1 - 0.0625) * 0.0625 * 0.25)
    assert cc.md_events == md


def test_gentle_reduction_compounds_then_resets_on_physical_queueing():
    cc = make()
    no_queue = RTT + US // 2  # below the 1 us threshold: phantom-only congestion
    cc.on_ack(RTT, MSS, True, no_queue, 0)
    cc.on_ack(2 * RTT, MSS, True, no_queue, RTT)
    assert cc.md_scale == pytest.approx(0.3)
    w = cc.cwnd_bytes
    cc.on_ack(3 * RTT, MSS, True, no_queue, 2 * RTT)
    assert cc.md_scale == pytest.approx(0.09)
    assert cc.cwnd_bytes == pytest.approx(w * (1 - cc.ecn_ewma * 0.5 * 0.09))
    cc.on_ack(4 * RTT, MSS, True, RTT + 3 * US, 3 * RTT)  # physical queueing
    assert cc.md_scale == 1.0
    assert cc.gentle_events == 2


def test_artifact_gentle_factor_does_not_compound():
    cc = make(gentle_factor=0.35, gentle_compounds=False)
    no_queue = RTT
    cc.on_ack(RTT, MSS, True, no_queue, 0)
    cc.on_ack(2 * RTT, MSS, True, no_queue, RTT)
    cc.on_ack(3 * RTT, MSS, True, no_queue, 2 * RTT)
    assert cc.md_scale == pytest.approx(0.35)


def test_gentle_threshold_relative_to_base_rtt():
    cc = uno_cc(ctx(), UnoParams(gentle_qdelay_us=0.0, gentle_qdelay_base_rtt_frac=0.055))
    assert cc.gentle_threshold_ps == round(0.055 * RTT)


def test_quick_adapt_sets_window_to_bytes_acked_and_skips_one_rtt():
    cc = make(init_cwnd_bdp=1.0, qa_beta=0.5)
    w = cc.cwnd_bytes
    cc.on_ack(RTT, MSS, False, RTT, 0)  # first ACK: the QA period starts at 14 us
    for i in range(4):  # only 4 more packets acked in the whole RTT: far below beta x cwnd
        cc.on_ack(RTT + (i + 1) * US, MSS, False, RTT, 1)
    assert cc.qa_events == 0
    cc.on_ack(2 * RTT, MSS, False, RTT, 2)  # period over: 6 packets acked in it
    assert cc.qa_events == 1
    assert cc.cwnd_bytes == pytest.approx(6 * MSS)
    assert 6 * MSS < 0.5 * w
    # the skipped round trip: ACKs for packets sent before the QA (however late, even after
    # a base RTT) trigger neither QA nor MD, and their marks are not counted
    w_qa = cc.cwnd_bytes
    qa_time = 2 * RTT
    cc.on_ack(2 * RTT + US, MSS, True, RTT + 10 * US, qa_time - 5)
    cc.on_ack(4 * RTT, MSS, True, RTT + 10 * US, qa_time - 1)
    assert cc.cwnd_bytes == w_qa and cc.md_events == 0 and cc.qa_events == 1
    assert cc.skipping
    # the first ACK for a packet sent after the QA ends the skip: a new epoch and QA period
    cc.on_ack(4 * RTT + 1, MSS, True, RTT + 10 * US, qa_time + 1)
    assert not cc.skipping and cc.epoch_start_ps == 4 * RTT + 1 and cc.qa_start_ps == 4 * RTT + 1
    assert cc.md_events == 0
    # packets sent after that end the next epoch, and MD applies again
    cc.on_ack(5 * RTT, MSS, True, RTT + 10 * US, 4 * RTT + 2)
    assert cc.md_events == 1


def test_epochs_resume_once_the_new_window_is_sent():
    """qa_epoch_resume=window_sent (the artifact's epoch_counter): after a QA, epochs resume
    once the new window has been sent, and then count ACKs of packets sent before the QA too;
    QA stays paused until an ACK of a packet sent after it. "ack" hears no sends."""
    assert not make(qa_beta=0.5).wants_send_events
    cc = make(init_cwnd_bdp=1.0, qa_beta=0.5, qa_epoch_resume="window_sent")
    assert cc.wants_send_events
    cc.on_ack(RTT, MSS, False, RTT, 0)
    for i in range(4):
        cc.on_ack(RTT + (i + 1) * US, MSS, False, RTT, 1)
    cc.on_ack(2 * RTT, MSS, False, RTT, 2)
    assert cc.qa_events == 1 and cc.epoch_paused
    w_qa = cc.cwnd_bytes  # 6 packets
    qa_time = 2 * RTT
    for k in range(5):  # five of the six packets sent: still paused
        cc.on_send(qa_time + (k + 1) * US, MSS)
    cc.on_ack(qa_time + 6 * US, MSS, True, RTT + 10 * US, qa_time - 5)
    assert cc.epoch_paused and cc.epoch_bytes == 0 and cc.cwnd_bytes == w_qa
    cc.on_send(qa_time + 7 * US, MSS)  # the window is sent: the epoch starts at this send
    assert not cc.epoch_paused and cc.epoch_start_ps == qa_time + 7 * US
    cc.on_ack(qa_time + 8 * US, MSS, True, RTT + 10 * US, qa_time - 4)  # sent before the QA
    assert cc.epoch_bytes == MSS and cc.skipping and cc.md_events == 0
    cc.on_ack(qa_time + 9 * US, MSS, True, RTT + 10 * US, qa_time + 7 * US)  # ends the epoch
    assert cc.md_events == 1 and not cc.skipping and cc.qa_start_ps == qa_time + 9 * US


def test_quick_adapt_not_triggered_when_enough_is_acked():
    cc = make(init_cwnd_bdp=1.0, qa_beta=0.5)
    cc.on_ack(RTT, MSS, False, RTT, 0)
    t = RTT
    acked = MSS
    while acked < 0.6 * BDP:
        t += 100_000
        cc.on_ack(t, MSS, False, RTT, 0)
        acked += MSS
    cc.on_ack(2 * RTT, MSS, False, RTT, 0)
    assert cc.qa_events == 0


def test_artifact_qa_window_scale():
    cc = make(init_cwnd_bdp=1.0, qa_window_scale=0.96, qa_beta=0.5)
    cc.on_ack(RTT, MSS, False, RTT, 0)
    cc.on_ack(2 * RTT, MSS, False, RTT, 0)
    assert cc.cwnd_bytes == pytest.approx(0.96 * 2 * MSS)


def test_window_clamped_to_cap_and_floor():
    cc = uno_cc(ctx(), UnoParams())  # init 1 BDP, cap 1 BDP
    cc.on_ack(RTT, MSS, False, RTT, 0)
    assert cc.cwnd_bytes == BDP
    small = uno_cc(ctx(), UnoParams(init_cwnd_bdp=0.001, max_cwnd_bdp=1.0))
    assert small.cwnd_bytes == MSS  # at least one MSS


def test_pacing_follows_cwnd_over_base_rtt():
    cc = make()
    cc.on_ack(RTT, MSS, False, RTT, 0)
    assert cc.pacing_rate_bps == pytest.approx(cc.cwnd_bytes * 8e12 / RTT)


def test_timeout_reaction_is_configurable():
    cc = make()
    w = cc.cwnd_bytes
    cc.on_timeout(RTT)
    assert cc.cwnd_bytes == w  # default: unchanged (artifact -noRto)
    cc2 = make(timeout_cwnd_mss=1.0)
    cc2.on_timeout(RTT)
    assert cc2.cwnd_bytes == MSS


@pytest.mark.parametrize(
    "field,value",
    [
        ("qa_beta", 0.0),
        ("qa_beta", 1.5),
        ("ai_bdp_frac", 0.0),
        ("ecn_ewma_gain", 2.0),
        ("k_bytes", -1.0),
    ],
)
def test_check_rejects_bad_values(field, value):
    with pytest.raises(ConfigError) as err:
        check_fields(UnoParams(**{field: value}), "cc.uno")
    assert err.value.field == f"cc.uno.{field}"


def test_artifact_rule_increases_when_the_ewma_falls():
    cc = make(ewma_fall_increase=True, ecn_ewma_gain=0.5)
    q = RTT + 5 * US
    cc.on_ack(RTT, MSS, True, q, 0)
    cc.on_ack(2 * RTT, MSS, True, q, RTT)  # E: 0 -> 0.5 (old E was 0: a normal MD)
    assert cc.md_events == 1
    w = cc.cwnd_bytes
    # next epoch: 1 of 4 marked -> E = 0.5 * 0.5 + 0.5 * 0.25 = 0.375 < 0.5: increase, no MD
    cc.on_ack(2 * RTT + 1, MSS, True, q, RTT + 1)
    cc.on_ack(2 * RTT + 2, MSS, False, q, RTT + 2)
    cc.on_ack(2 * RTT + 3, MSS, False, q, RTT + 3)
    w_ai = cc.cwnd_bytes  # the two unmarked ACKs already added per-ACK AI
    cc.on_ack(3 * RTT, MSS, False, q, 2 * RTT)
    assert cc.ecn_ewma == pytest.approx(0.375)
    assert cc.md_events == 1
    per_ack = 175 * MSS / w_ai
    assert cc.cwnd_bytes > w_ai + per_ack  # per-ACK AI plus the epoch's increase
    assert cc.cwnd_bytes > w


def test_both_data_planes_resume_epochs_alike():
    """qa_epoch_resume=window_sent in a whole run: the kernel's senders and the Python senders
    give the same flows (Quick Adapts happen: first windows of 1 BDP into one receiver)."""
    import pandas as pd

    import uno

    base = ["experiment=artifact_check", "incast_mix=artifact_intra4_inter4",
            "workload.size_bytes=3000000", "cc.uno.qa_epoch_resume=window_sent",
            "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip
    runs = {dp: uno.run(uno.compose([*base, f"engine.dataplane={dp}"]))
            for dp in ("python", "compiled")}  # fmt: skip
    pd.testing.assert_frame_equal(runs["python"].flows, runs["compiled"].flows)
    assert runs["python"].flows["fct_ps"].notna().all()
    ack = uno.run(uno.compose([*base[:-3], *base[-2:]]))  # the round-trip skip
    assert ack.flows["fct_ps"].tolist() != runs["compiled"].flows["fct_ps"].tolist()

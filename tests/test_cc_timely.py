"""TIMELY (Algorithm 1 of the SIGCOMM 2015 paper, the HPCC authors' ns-3 settings) as plain
arithmetic on the law (uno/cc/timely.py), and end to end in the engines.

Context: a 100 Gb/s path of base RTT 10 us. Defaults: alpha 0.875, beta 0.8, T_low 50 us,
T_high 500 us, minRTT 20 us, delta 100 Mb/s, delta_HAI 500 Mb/s after 5 increases in a row,
R_min 1 Gb/s; the rate starts at the line rate."""

from __future__ import annotations

import pytest

import uno
from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.registry import KIND
from uno.cc.timely import LAW, TimelyParams
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
LINE = 100e9
MSS = 4160


def timely(**params) -> LawControl:
    ctx = FlowContext(
        base_rtt_ps=10 * US, bdp_bytes=125_000.0, bottleneck_bps=int(LINE), mss_bytes=MSS,
        intra_rtt_ps=10 * US, intra_bdp_bytes=125_000.0, is_inter_dc=False,
    )  # fmt: skip
    return LawControl(LAW, KIND["timely"], TimelyParams(**params), ctx)


class Rounds:
    """ACKs that each end a round: the packet acknowledged left after the last update."""

    def __init__(self, cc: LawControl):
        self.cc = cc
        self.now = 0

    def ack(self, rtt_us: float) -> float:
        """One ACK with RTT sample ``rtt_us`` that ends the round; the rate after it (bit/s)."""
        self.now += 1000 * US
        rtt = int(rtt_us * US)
        self.cc.on_ack_batch(self.now, MSS, False, rtt, self.now - rtt)
        return self.cc.pacing_rate_bps


def test_no_window_and_the_line_rate_at_the_start_and_after_the_first_sample():
    cc = timely()
    assert cc.cwnd_bytes == float("inf")
    assert cc.pacing_rate_bps == LINE
    assert Rounds(cc).ack(600) == LINE  # the first round only records its sample


def test_above_t_high_the_rate_falls_in_proportion_to_the_excess():
    cc = timely()
    r = Rounds(cc)
    r.ack(20)
    assert r.ack(1000) == pytest.approx(LINE * (1 - 0.8 * (1 - 500 / 1000)))


def test_between_the_thresholds_a_rising_rtt_cuts_by_beta_times_the_gradient():
    cc = timely()
    r = Rounds(cc)
    r.ack(100)
    # rtt_diff = 0.875 x (110 - 100) us (from 0); gradient = rtt_diff / 20 us = 0.4375
    assert r.ack(110) == pytest.approx(LINE * (1 - 0.8 * 0.4375))
    # next: rtt_diff = 0.125 x 8.75 + 0.875 x 4 = 4.59375 us; gradient 0.2296875
    before = cc.pacing_rate_bps
    assert r.ack(114) == pytest.approx(before * (1 - 0.8 * 4.59375 / 20))


def test_a_gradient_above_1_25_cuts_to_the_floor():
    cc = timely()
    r = Rounds(cc)
    r.ack(100)
    assert r.ack(140) == 1e9  # gradient 1.75: 1 - 0.8 x 1.75 < 0, so R_min


def test_falling_or_low_rtts_add_delta_then_delta_hai_after_five_increases():
    cc = timely()
    r = Rounds(cc)
    r.ack(100)
    r.ack(600)  # down to 100 x (1 - 0.8 x (1 - 500/600)) = 86.67 Gb/s
    rate = cc.pacing_rate_bps
    steps = []
    for rtt in (40, 40, 40, 40, 40, 40, 40):  # below T_low: increases whatever the gradient
        new = r.ack(rtt)
        steps.append(round(new - rate))
        rate = new
    assert steps == [100_000_000] * 5 + [500_000_000] * 2
    r.ack(600)  # a decrease resets the count of increases
    rate = cc.pacing_rate_bps
    assert r.ack(300) - rate == pytest.approx(100e6)  # gradient < 0 between the thresholds


def test_the_rate_never_exceeds_the_line_rate():
    cc = timely()
    r = Rounds(cc)
    for _ in range(20):
        r.ack(30)
    assert cc.pacing_rate_bps == LINE


def test_once_per_round_acks_of_packets_sent_before_the_update_change_nothing():
    cc = timely()
    r = Rounds(cc)
    r.ack(100)
    r.ack(1000)
    rate = cc.pacing_rate_bps
    # an ACK of a packet sent before the last update (the round's start)
    cc.on_ack_batch(r.now + 10 * US, MSS, False, 2000 * US, r.now - 1)
    assert cc.pacing_rate_bps == rate
    assert cc.updates == 1


def test_losses_leave_the_rate_to_the_rtt_feedback():
    cc = timely()
    r = Rounds(cc)
    r.ack(100)
    r.ack(1000)
    rate = cc.pacing_rate_bps
    cc.on_timeout(r.now + 1)
    cc.on_nack(r.now + 2)
    assert cc.pacing_rate_bps == rate


def test_thresholds_out_of_order_are_refused_naming_the_field():
    with pytest.raises(ConfigError, match="cc.timely.t_high_us"):
        check_fields(TimelyParams(t_low_us=600.0, t_high_us=500.0), "cc.timely")


SMALL = [
    "cc=timely", "workload=incast", "workload.n_intra=4", "workload.n_inter=0",
    "workload.size_bytes=1000000", "engine.progress=false",
]  # fmt: skip


def test_the_python_and_compiled_data_planes_give_the_same_run():
    python = uno.run(uno.compose([*SMALL, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*SMALL, "engine.dataplane=compiled"]))
    assert python.flows["finish_ps"].notna().all()
    assert python.flows.equals(compiled.flows)


def test_a_lossless_incast_backs_off_to_share_the_bottleneck():
    """Eight senders start at the line rate into one receiver of a k = 4 fat tree with PFC: the
    queue builds, the RTTs rise past T_high, the rates fall, and the receiver's link stays busy
    until the last flow finishes, nothing dropped."""
    r = uno.run(uno.compose([
        "experiment=hpcc_incast", "cc=timely", "workload.size_bytes=1000000",
        "engine.progress=false",
    ]))  # fmt: skip
    flows = r.flows
    assert flows["finish_ps"].notna().all()
    assert sum(r.summary["packets"]["dropped"].values()) == 0
    ideal_ps = 8 * 1_000_000 * 8e12 / LINE  # all eight flows' bytes through one 100 Gb/s link
    assert flows["fct_ps"].max() < 1.5 * ideal_ps

"""SMaRTT with Wait-to-Decrease (uno/cc/smartt.py) from hand-worked cases.

Context: 100 Gb/s, base RTT 10 us, MSS 1000 B, BDP 125,000 B; target RTT 1.5 x base = 15 us
(``target_rtt_factor=1.5``); the window starts at one BDP. With ``apply_every_mss=0`` increases
apply at every ACK, so one ACK's change is visible at once.
"""

from __future__ import annotations

import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.registry import KIND
from uno.cc.smartt import LAW, S, SmarttParams

US = 1_000_000  # ps
T = 10 * US
B = 100_000_000_000
MSS = 1000
BDP = 125_000


def smartt(**params) -> LawControl:
    params = {"target_rtt_factor": 1.5, "apply_every_mss": 0.0, **params}
    ctx = FlowContext(base_rtt_ps=T, bdp_bytes=BDP, bottleneck_bps=B, mss_bytes=MSS,
                      intra_rtt_ps=T, intra_bdp_bytes=BDP, is_inter_dc=False)  # fmt: skip
    return LawControl(LAW, KIND["smartt"], SmarttParams(**params), ctx)


def test_the_four_cases_on_ecn_and_rtt_against_the_target():
    x = 0.15 * MSS * MSS / BDP  # the fair increase at cwnd = BDP: 1.2 B
    # no ECN, below the target (10 us): + min((15-10)/10 x MSS^2/cwnd, MSS) + x = 4 + 1.2
    cc = smartt()
    cc.on_ack(T, MSS, False, 10 * US, 0)
    assert cc.cwnd_bytes == pytest.approx(BDP + 0.5 * MSS * MSS / BDP + x)
    # no ECN, above the target (20 us): the fair increase alone
    cc = smartt()
    cc.on_ack(T, MSS, False, 20 * US, 0)
    assert cc.cwnd_bytes == pytest.approx(BDP + x)
    # ECN above the target (30 us), decreases allowed (no Wait-to-Decrease):
    # - min(w (30-15)/30 MSS + cwnd/BDP z MSS, MSS) = - min(500 + 1000, 1000)
    cc = smartt(wtd=False)
    cc.on_ack(T, MSS, True, 30 * US, 0)
    assert cc.cwnd_bytes == pytest.approx(BDP - MSS)
    # at 16 us: - min(1/16 x 1000 + 1000 x 0.5, ...) with the window at half a BDP
    cc = smartt(wtd=False, init_cwnd_bdp=0.5)
    cc.on_ack(T, MSS, True, 16 * US, 0)
    assert cc.cwnd_bytes == pytest.approx(BDP / 2 - (1000 / 16 + 500))
    # ECN below the target: - cwnd/BDP z MSS = - 500 at half a BDP
    cc = smartt(wtd=False, init_cwnd_bdp=0.5)
    cc.on_ack(T, MSS, True, 12 * US, 0)
    assert cc.cwnd_bytes == pytest.approx(BDP / 2 - 500)


def test_wait_to_decrease_holds_cuts_until_a_quarter_of_the_acks_are_marked():
    """avg = 0.125 ecn + 0.875 avg: marked ACKs after unmarked ones move it 0.125, 0.234,
    0.330: the first two marks change nothing, the third (avg 0.33 >= 0.25) cuts; with the
    code's threshold 0.3 the same; a lone mark among many unmarked never cuts."""
    cc = smartt(y_gain=0.0, x_gain=0.0)  # no increases: the window moves only on cuts
    avgs, windows = [], []
    for _ in range(3):
        cc.on_ack(T, MSS, True, 12 * US, 0)
        avgs.append(cc.state[S.ecn_avg])
        windows.append(cc.cwnd_bytes)
    assert avgs == pytest.approx([0.125, 0.234375, 0.330078125])
    assert windows[:2] == [BDP, BDP] and windows[2] == pytest.approx(BDP - MSS)
    cc = smartt(y_gain=0.0, x_gain=0.0)
    for i in range(40):
        cc.on_ack(T, MSS, i % 8 == 0, 12 * US, 0)  # one ACK in eight marked
    assert cc.cwnd_bytes == BDP
    # the code's threshold: 0.3 -> the third mark (0.330) still cuts, a 0.26 average does not
    cc = smartt(y_gain=0.0, x_gain=0.0, wtd_threshold=0.3)
    cc.state[S.ecn_avg] = (0.26 - 0.125) / 0.875  # the next mark takes it to 0.26
    cc.on_ack(T, MSS, True, 12 * US, 0)
    assert cc.cwnd_bytes == BDP


def test_increases_wait_for_eight_mss_or_a_base_rtt():
    """Pending increases apply when 8 MSS have been acknowledged since the last application."""
    cc = smartt(apply_every_mss=8.0)
    step = 0.5 * MSS * MSS / BDP + 0.15 * MSS * MSS / BDP  # per ACK at 10 us, cwnd = BDP
    cc.on_ack(T, MSS, False, 10 * US, 0)  # starts the count
    for i in range(1, 7):
        cc.on_ack(T + i, MSS, False, 10 * US, 0)
    assert cc.cwnd_bytes == BDP  # 7 MSS: pending
    cc.on_ack(T + 7, MSS, False, 10 * US, 0)  # the 8th
    assert cc.cwnd_bytes == pytest.approx(BDP + 8 * step)
    cc.on_ack(T + 8, MSS, False, 10 * US, 0)
    cc.on_ack(2 * T + 8, MSS, False, 10 * US, 0)  # a base RTT later: applied with 2 MSS
    assert cc.cwnd_bytes == pytest.approx(BDP + 10 * step, rel=1e-6)


def test_quick_adapt_on_a_trim_takes_the_window_to_what_was_acknowledged():
    """40 ACKs of 1000 B over one base RTT, then a NACK: the window becomes 40,000 B; NACKs
    and marks in the next window are ignored; a NACK later than 3 base RTTs adapts again; a
    NACK without Quick Adapt takes one MSS."""
    cc = smartt(wtd=False, x_gain=0.0, y_gain=0.0)
    for i in range(40):
        cc.on_ack(i * T // 40, MSS, False, 20 * US, 0)
    cc.on_ack(T, MSS, False, 20 * US, 0)  # a new window: the last one acknowledged 40,000 B
    cc.on_nack(T + 1)
    assert cc.cwnd_bytes == 40_000
    cc.on_nack(T + 2)  # within Quick Adapt's window: ignored
    cc.on_ack(T + 3, MSS, True, 30 * US, 0)  # a mark too
    assert cc.cwnd_bytes == 40_000
    plain = smartt(quick_adapt=False)
    plain.on_nack(T)
    assert plain.cwnd_bytes == BDP - MSS
    # a timeout: one MSS (REPS reads timeouts as failures, not congestion)
    plain.on_timeout(2 * T)
    assert plain.cwnd_bytes == BDP - 2 * MSS

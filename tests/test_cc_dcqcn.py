"""DCQCN reaction point (the law :mod:`uno.cc.dcqcn`) as plain arithmetic on a flow's controller.

Context: 100 Gb/s line rate (= bottleneck), 10 us base RTT, MSS 1000 B. ``PAPER`` is a
parameter set with the DCQCN paper's timers (K = T = 55 us, F = 5, R_AI = 40 Mb/s) used where
the default 1-us alpha timer or F = 1 would make the hand computation tedious; the rates are
computed by hand below with the paper's update rules."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.dcqcn import LAW, DcqcnParams
from uno.cc.law import NEVER_PS, NO_RECORDS, Feedback
from uno.cc.registry import KIND
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
LINE = 100e9
G = 1.0 / 256.0
AI = 40e6
HAI = 200e6
PAPER = DcqcnParams(
    alpha_timer_us=55.0,
    rate_increase_timer_us=55.0,
    fast_recovery_stages=5,
    rate_ai_mbps=40.0,
    rate_hai_mbps=200.0,
    min_rate_mbps=100.0,
    clamp_target_rate=True,
)
#: the HPCC evaluation's DCQCN (conf/cc/dcqcn_hpcc.yaml); the module's defaults are the DCQCN
#: authors' ns-3 configuration
HPCC_EVAL = DcqcnParams(
    alpha_timer_us=1.0,
    rate_increase_timer_us=300.0,
    byte_counter_bytes=10_000_000,
    fast_recovery_stages=1,
    rate_ai_mbps=20.0,
    rate_hai_mbps=200.0,
    min_rate_mbps=1000.0,
    clamp_target_rate=False,
    cnp_interval_us=4.0,
)


def ctx(rate_bps: int = 100_000_000_000, rtt_ps: int = 10 * US, mss: int = 1000):
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rate_bps * rtt_ps / 8e12,
        bottleneck_bps=rate_bps,
        mss_bytes=mss,
        intra_rtt_ps=rtt_ps,
        intra_bdp_bytes=rate_bps * rtt_ps / 8e12,
        is_inter_dc=False,
    )


def make(
    params: DcqcnParams, context: FlowContext | None = None, py_func: bool = False
) -> LawControl:
    return LawControl(LAW, KIND["dcqcn"], params, context or ctx(), py_func)


def next_expiry(cc: LawControl) -> int | None:
    """The next expiry of either timer (None before the first CNP starts them)."""
    due = min(cc.alpha_next_ps, cc.rate_next_ps)
    return None if due >= NEVER_PS else int(due)


def approx(x: float):
    return pytest.approx(x, rel=1e-12)


def cnp(cc: LawControl, now_ps: int) -> None:
    cc.on_ack(now_ps, 1000, True, 10 * US, now_ps - 10 * US)


def tick(cc: LawControl, now_ps: int) -> None:
    """An unmarked ACK: only advances the timers."""
    cc.on_ack(now_ps, 1000, False, 10 * US, now_ps - 10 * US)


def test_starts_at_line_rate_without_window():
    cc = make(HPCC_EVAL)
    assert cc.pacing_rate_bps == LINE and cc.target_rate_bps == LINE
    assert cc.cwnd_bytes == float("inf")
    assert cc.wants_send_events
    assert next_expiry(cc) is None  # timers start at the first CNP
    tick(cc, 5000 * US)
    cc.on_send(5000 * US, 20_000_000)  # no byte-counter events before a CNP
    assert cc.pacing_rate_bps == LINE and cc.alpha == 1.0
    capped = make(DcqcnParams(max_cwnd_bdp=2.0))
    assert capped.cwnd_bytes == approx(250_000)


# (a)
def test_first_cnp_halves_the_rate():
    cc = make(HPCC_EVAL)
    cnp(cc, 10 * US)
    assert cc.target_rate_bps == approx(LINE)
    assert cc.pacing_rate_bps == approx(LINE * (1 - 1.0 / 2))  # alpha = 1 before the update
    assert cc.alpha == approx((1 - G) * 1.0 + G)  # = 1
    # with alpha_init 0.5 the cut is 25 % and alpha moves up towards 1
    cc = make(DcqcnParams(alpha_init=0.5))
    cnp(cc, 10 * US)
    assert cc.pacing_rate_bps == approx(75e9)
    assert cc.alpha == approx((1 - G) * 0.5 + G)


def test_rate_on_first_cnp():
    cc = make(dataclasses.replace(HPCC_EVAL, rate_on_first_cnp=0.8))
    cnp(cc, 10 * US)
    assert cc.target_rate_bps == approx(80e9)
    assert cc.pacing_rate_bps == approx(40e9)
    cnp(cc, 11 * US)  # only the first CNP: now the ordinary cut (alpha has decayed once)
    alpha = 1.0 * (1 - G)
    assert cc.pacing_rate_bps == approx(40e9 * (1 - alpha / 2))
    assert cc.target_rate_bps == approx(80e9)  # no increase event in between: not clamped


# (b)
def test_two_cnps_10us_apart_paper_timers():
    cc = make(dataclasses.replace(PAPER, alpha_init=0.5))
    cnp(cc, 100 * US)
    a1 = (1 - G) * 0.5 + G
    assert cc.pacing_rate_bps == approx(75e9)
    cnp(cc, 110 * US)  # no timer (K = T = 55 us) has fired
    assert cc.target_rate_bps == approx(75e9)  # clamp_target_rate: R_T = R_C
    assert cc.pacing_rate_bps == approx(75e9 * (1 - a1 / 2))
    assert cc.alpha == approx((1 - G) * a1 + G)


def test_two_cnps_10us_apart_hpcc_evaluation():
    cc = make(HPCC_EVAL)
    cnp(cc, 100 * US)
    cnp(cc, 110 * US)
    # ten 1-us alpha expiries (100+1 .. 100+10, the last fires before the CNP at the same time)
    a = (1 - G) ** 10
    assert cc.target_rate_bps == approx(LINE)  # no increase event since the first CNP
    assert cc.pacing_rate_bps == approx(50e9 * (1 - a / 2))
    assert cc.alpha == approx((1 - G) * a + G)
    # clamped when an increase event happened in between (a byte-counter cycle here)
    cc = make(dataclasses.replace(HPCC_EVAL, byte_counter_bytes=1000))
    cnp(cc, 100 * US)
    cc.on_send(105 * US, 1000)  # fast recovery: R_C = (100 + 50) / 2 = 75 Gb/s
    assert cc.pacing_rate_bps == approx(75e9)
    cnp(cc, 110 * US)
    assert cc.target_rate_bps == approx(75e9)
    assert cc.pacing_rate_bps == approx(75e9 * (1 - a / 2))


# (c)
def test_alpha_decays_per_period_without_cnp():
    cc = make(dataclasses.replace(PAPER, alpha_init=0.5))
    t0 = 1000 * US
    cnp(cc, t0)
    a = (1 - G) * 0.5 + G
    tick(cc, t0 + 55 * US - 1)
    assert cc.alpha == approx(a)
    tick(cc, t0 + 55 * US)
    assert cc.alpha == approx(a * (1 - G))
    tick(cc, t0 + 2 * 55 * US + 20 * US)
    assert cc.alpha == approx(a * (1 - G) * (1 - G))
    tick(cc, t0 + 3 * 55 * US)
    assert cc.alpha == approx(a * (1 - G) * (1 - G) * (1 - G))
    # a CNP restarts the alpha timer: the next decay is 55 us after it
    cnp(cc, t0 + 3 * 55 * US + 30 * US)
    a = (1 - G) * a * (1 - G) ** 3 + G
    tick(cc, t0 + 4 * 55 * US)  # would have been the 4th expiry without the CNP
    assert cc.alpha == approx(a)
    tick(cc, t0 + 4 * 55 * US + 30 * US)
    assert cc.alpha == approx(a * (1 - G))


# (d)
def test_fast_recovery_halves_distance_to_target():
    cc = make(PAPER)
    t0 = 1000 * US
    cnp(cc, t0)
    assert cc.pacing_rate_bps == approx(50e9)
    expected = [75e9, 87.5e9, 93.75e9, 96.875e9, 98.4375e9]
    for k, rate in enumerate(expected, start=1):
        tick(cc, t0 + k * 55 * US - 1)
        assert cc.timer_stage == k - 1
        tick(cc, t0 + k * 55 * US)
        assert cc.timer_stage == k
        assert cc.pacing_rate_bps == approx(rate)
        assert cc.target_rate_bps == approx(LINE)


# (e)
def test_additive_then_hyper_increase():
    p = dataclasses.replace(PAPER, byte_counter_bytes=10_000)
    cc = make(p)
    t0 = 1000 * US
    cnp(cc, t0)  # R_T = 100, R_C = 50 (Gb/s), alpha stays 1
    cnp(cc, t0 + 1 * US)  # clamp: R_T = 50, R_C = 25
    t1 = t0 + 1 * US
    rt, rc = 50e9, 25e9
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    for k in range(1, 6):  # F = 5 fast-recovery steps, R_T fixed
        tick(cc, t1 + k * 55 * US)
        rc = (rt + rc) / 2
        assert cc.pacing_rate_bps == approx(rc) and cc.target_rate_bps == approx(rt)
    tick(cc, t1 + 6 * 55 * US)  # timer stage 6 > F, byte stage 0: additive increase
    rt += AI
    rc = (rt + rc) / 2
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    now = t1 + 6 * 55 * US + 1 * US
    for b in range(1, 6):  # byte stages 1..5: still additive (only the timer stage exceeds F)
        cc.on_send(now, 10_000)
        assert cc.byte_stage == b
        rt += AI
        rc = (rt + rc) / 2
        assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    cc.on_send(now, 10_000)  # byte stage 6: both exceed F -> hyper, i = min(6, 6) - 5 = 1
    rt += 1 * HAI
    rc = (rt + rc) / 2
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    tick(cc, t1 + 7 * 55 * US)  # timer stage 7: i = min(7, 6) - 5 = 1
    rt += 1 * HAI
    rc = (rt + rc) / 2
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    cc.on_send(t1 + 7 * 55 * US, 10_000)  # byte stage 7: i = min(7, 7) - 5 = 2
    rt += 2 * HAI
    rc = (rt + rc) / 2
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)
    assert (cc.timer_stage, cc.byte_stage) == (7, 7)


def test_hpcc_evaluation_f1_sequence():
    """HPCC evaluation (F = 1, T = 300 us): one fast-recovery step, then additive increase."""
    cc = make(dataclasses.replace(HPCC_EVAL, clamp_target_rate=True))
    t0 = 1000 * US
    cnp(cc, t0)
    cnp(cc, t0 + 1 * US)  # R_T = 50, R_C = 50 x (1 - alpha/2), alpha = (1-g)^1 after 1 us
    rt = 50e9
    rc = 50e9 * (1 - (1 - G) / 2)
    assert cc.pacing_rate_bps == approx(rc)
    tick(cc, t0 + 301 * US)
    rc = (rt + rc) / 2  # fast recovery
    assert cc.pacing_rate_bps == approx(rc)
    tick(cc, t0 + 601 * US)
    rt += 20e6  # R_AI = 20 Mb/s
    rc = (rt + rc) / 2
    assert cc.target_rate_bps == approx(rt) and cc.pacing_rate_bps == approx(rc)


# (f)
def test_byte_counter_triggers_increase_without_timer():
    cc = make(dataclasses.replace(PAPER, byte_counter_bytes=15_000))
    t0 = 1000 * US
    cnp(cc, t0)
    for i in range(9):
        cc.on_send(t0 + i * 100, 1500)
        assert cc.pacing_rate_bps == approx(50e9)
    cc.on_send(t0 + 900, 1500)  # the 10th packet completes B = 15,000 B
    assert cc.byte_stage == 1 and cc.timer_stage == 0
    assert cc.pacing_rate_bps == approx(75e9)
    cc.on_send(t0 + 1000, 14_000)  # partial cycle ...
    assert cc.pacing_rate_bps == approx(75e9)
    cc.on_send(t0 + 1100, 2_000)  # ... completed; the 1,000 B beyond it carry over
    assert cc.byte_stage == 2 and cc.bytes_counted == 1000
    assert cc.pacing_rate_bps == approx(87.5e9)
    cnp(cc, t0 + 2000)  # a CNP restarts the byte counter
    assert cc.bytes_counted == 0 and cc.byte_stage == 0


# (g)
def test_rate_bounded_by_line_and_min_rate():
    cc = make(dataclasses.replace(PAPER, byte_counter_bytes=1000))
    cnp(cc, 0)
    rates = []
    for i in range(1, 400):  # a long recovery with hyper increases pushing R_T past the line
        now = i * 55 * US
        cc.on_send(now, 3000)
        rates.append(cc.pacing_rate_bps)
        assert cc.pacing_rate_bps <= LINE and cc.target_rate_bps <= LINE
    assert cc.target_rate_bps == LINE
    assert cc.pacing_rate_bps == approx(LINE)
    # a CNP burst with alpha = 1 ends at the minimum rate, not below
    cc = make(PAPER)
    for i in range(20):
        cnp(cc, i * US)
        assert cc.pacing_rate_bps >= 100e6
    assert cc.pacing_rate_bps == approx(100e6)
    cc = make(HPCC_EVAL)
    for i in range(20):
        cnp(cc, i * US)  # alpha decays only once (1 us) between them
    assert cc.pacing_rate_bps == approx(1e9)  # default min rate 1000 Mb/s
    # a line rate below the minimum rate: the floor is the line rate
    cc = make(HPCC_EVAL, ctx(rate_bps=500_000_000))
    cnp(cc, 0)
    assert cc.pacing_rate_bps == approx(500e6)


# (h)
@pytest.mark.parametrize("params", [HPCC_EVAL, PAPER])
def test_lazy_timers_equal_stepwise(params):
    late = make(params)
    step = make(params)
    t0 = 1000 * US
    for cc in (late, step):
        cnp(cc, t0)
        cnp(cc, t0 + 3 * US)
    cut = late.pacing_rate_bps
    end = t0 + 3 * US + 8 * round(params.rate_increase_timer_us * US) + 7 * US
    n = 0
    while next_expiry(step) <= end:
        tick(step, next_expiry(step))
        n += 1
    late.on_send(end, 0)
    step.on_send(end, 0)
    assert n >= 8  # K = T in PAPER: both timers expire together
    assert late.pacing_rate_bps == approx(step.pacing_rate_bps)
    assert late.target_rate_bps == approx(step.target_rate_bps)
    assert late.alpha == approx(step.alpha)
    assert late.timer_stage == step.timer_stage == 8
    assert next_expiry(late) == next_expiry(step)
    assert late.pacing_rate_bps > cut  # it did recover


def test_lazy_at_line_rate_counts_stages():
    cc = make(PAPER)
    cnp(cc, 0)
    tick(cc, 1_000_000 * US)  # one second later: back at line rate long ago
    assert cc.pacing_rate_bps == approx(LINE) and cc.target_rate_bps == LINE
    assert cc.timer_stage == 1_000_000 // 55
    assert cc.alpha == approx((1 - G) ** (1_000_000 // 55))
    assert cc.next_rate_change_ps() is None


# (i)
def test_next_timers():
    p = dataclasses.replace(PAPER, rate_increase_timer_us=100.0)
    cc = make(p)
    assert next_expiry(cc) is None and cc.next_rate_change_ps() is None
    t0 = 1000 * US
    cnp(cc, t0)
    assert next_expiry(cc) == t0 + 55 * US  # alpha timer first
    assert cc.next_rate_change_ps() == t0 + 100 * US
    tick(cc, t0 + 55 * US)
    assert next_expiry(cc) == t0 + 100 * US
    tick(cc, t0 + 100 * US)
    assert next_expiry(cc) == t0 + 110 * US
    assert cc.next_rate_change_ps() == t0 + 200 * US
    cc.on_send(t0 + 105 * US, 0)  # no expiry due: unchanged
    assert next_expiry(cc) == t0 + 110 * US
    cnp(cc, t0 + 107 * US)  # restarts both
    assert next_expiry(cc) == t0 + 162 * US
    assert cc.next_rate_change_ps() == t0 + 207 * US
    # the value is not yet applied before its time, and is at it
    r = cc.pacing_rate_bps
    tick(cc, t0 + 207 * US - 1)
    assert cc.pacing_rate_bps == r
    tick(cc, t0 + 207 * US)
    assert cc.pacing_rate_bps > r


def test_loss_reaction():
    cc = make(PAPER)
    cc.on_nack(10 * US)
    cc.on_timeout(20 * US)
    assert cc.pacing_rate_bps == LINE and next_expiry(cc) is None  # default: no reaction
    cc = make(dataclasses.replace(PAPER, loss_as_cnp=True))
    cc.on_nack(10 * US)
    assert cc.pacing_rate_bps == approx(50e9)
    cc.on_timeout(20 * US)
    assert cc.pacing_rate_bps == approx(25e9)


def test_a_batch_holding_two_cnps_is_two_cuts():
    """A feedback batch is read for its time and its whole CNPs (``mark_events``): two CNPs in
    one batch are two cuts at its time, as two CNP-carrying ACKs then."""
    one, batch = make(PAPER), make(PAPER)
    cnp(one, 100 * US)
    cnp(one, 100 * US)
    fb = Feedback(*map(float, (100 * US, 2000, 2000, 2, 2, 2, 10 * US, 10 * US, 90 * US, 0, 2000,
                               0, 0, 0, 0, 1, 0, 0)))  # fmt: skip
    LAW.on_feedback(batch.state, batch.consts, fb, NO_RECORDS)
    batch.state_written()  # (the law ran on the row directly)
    assert list(batch.state) == list(one.state)
    assert batch.pacing_rate_bps == approx(25e9) and batch.cnps == 2


@pytest.mark.parametrize(
    "params",
    [
        dataclasses.replace(PAPER, byte_counter_bytes=40_000),
        dataclasses.replace(HPCC_EVAL, byte_counter_bytes=40_000, loss_as_cnp=True),
    ],
)
def test_compiled_law_and_twin_agree_in_every_phase(params):
    """Random sends, ACKs with and without a CNP, losses and timer wakes at gaps from 0 to
    several periods, with CNPs rare enough for the byte counter to complete and both stage
    counts to pass F: the compiled law and its twin (``.py_func``) hold the same state after
    every event, through cuts, fast recovery, additive and hyper increase."""
    rng = np.random.default_rng(20261128)
    jit, twin = make(params), make(params, py_func=True)
    period = round(params.rate_increase_timer_us * US)
    seen = set()
    now = 0
    for _ in range(3000):
        gaps = [0, int(rng.integers(0, period // 4)), period, int(rng.integers(0, 3 * period))]
        now += int(rng.choice(gaps, p=[0.1, 0.7, 0.1, 0.1]))
        op = rng.random()
        for cc in (jit, twin):
            if op < 0.6:
                cc.on_send(now, 4160)
            elif op < 0.9:
                cc.on_ack(now, 4160, op < 0.605, 10 * US, now - 10 * US)
            elif op < 0.92:
                cc.on_timeout(now)
            elif op < 0.94:
                cc.on_nack(now)
            else:
                cc.advance(now)
        assert list(jit.state) == list(twin.state)
        assert jit.next_rate_change_ps() == twin.next_rate_change_ps()
        f = params.fast_recovery_stages
        seen |= {name for name, hit in (
            ("cut", jit.pacing_rate_bps < LINE), ("byte counter", jit.byte_stage > 0),
            ("additive", max(jit.timer_stage, jit.byte_stage) > f),
            ("hyper", min(jit.timer_stage, jit.byte_stage) > f),
        ) if hit}  # fmt: skip
    assert seen == {"cut", "byte counter", "additive", "hyper"}


def test_notification_point_and_signals():
    """The receiver coalesces CNPs at the interval the law gives (ps); the law reads CNPs and
    timers of its own, which the fluid engine does not compute."""
    assert make(DcqcnParams()).cnp_interval_ps == 50 * US
    assert make(HPCC_EVAL).cnp_interval_ps == 4 * US
    assert set(LAW.signals) == {"cnp", "timers"}


@pytest.mark.parametrize(
    "field,value",
    [
        ("g", 0.0),
        ("alpha_init", 1.5),
        ("alpha_timer_us", 0.0),
        ("rate_increase_timer_us", -1.0),
        ("byte_counter_bytes", 0),
        ("fast_recovery_stages", -1),
        ("rate_ai_mbps", -1.0),
        ("min_rate_mbps", 0.0),
        ("rate_on_first_cnp", 0.0),
        ("cnp_interval_us", -1.0),
        ("max_cwnd_bdp", -0.5),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(DcqcnParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.dcqcn")
    assert err.value.field == f"cc.dcqcn.{field}"


def test_check_accepts_defaults():
    check_fields(DcqcnParams(), "cc.dcqcn")
    check_fields(PAPER, "cc.dcqcn")
    assert DcqcnParams().cnp_interval_us == 50.0

"""MP-RDMA window control as plain arithmetic on the controller.

Main context: 100 Gb/s bottleneck, 10 us base RTT, MSS 1000 B -> BDP = 1e11 x 1e-5 / 8 =
125,000 B."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from uno.cc.adapter import LawControl
from uno.cc.base import FlowContext
from uno.cc.law import NO_RECORDS, Feedback
from uno.cc.mprdma import LAW, MprdmaParams
from uno.cc.registry import KIND, LAW_BY_NAME
from uno.config.validate import check_fields
from uno.core.errors import ConfigError

US = 1_000_000  # ps
MSS = 1000


def ctx(rate_bps: int = 100_000_000_000, rtt_ps: int = 10 * US, mss: int = MSS):
    return FlowContext(
        base_rtt_ps=rtt_ps,
        bdp_bytes=rate_bps * rtt_ps / 8e12,
        bottleneck_bps=rate_bps,
        mss_bytes=mss,
        intra_rtt_ps=rtt_ps,
        intra_bdp_bytes=rate_bps * rtt_ps / 8e12,
        is_inter_dc=False,
    )


def mprdma(flow: FlowContext, params: MprdmaParams) -> LawControl:
    """One flow's MP-RDMA controller (the law, as the Python data plane runs it)."""
    return LawControl(LAW_BY_NAME["mprdma"], KIND["mprdma"], params, flow)


def approx(x: float):
    return pytest.approx(x, rel=1e-12, abs=1e-9)


def test_defaults_start_at_bdp_capped_at_bdp():
    cc = mprdma(ctx(), MprdmaParams())
    assert cc.cwnd_bytes == approx(125_000)
    cc.on_ack(1 * US, 1000, False, 10 * US, 0)
    assert cc.cwnd_bytes == approx(125_000)  # +8 B would exceed the 1-BDP cap


def test_additive_increase_one_mss_per_window():
    cc = mprdma(ctx(), MprdmaParams(init_cwnd_bdp=0.5, max_cwnd_bdp=0.0))
    assert cc.cwnd_bytes == approx(62_500)
    cc.on_ack(1 * US, 1000, False, 10 * US, 0)
    w1 = 62_500 + 1000 * 1000 / 62_500  # MSS^2 / cwnd = 16 B
    assert cc.cwnd_bytes == approx(62_516)
    cc.on_ack(2 * US, 500, False, 10 * US, 0)  # partial packet: MSS x acked / cwnd
    assert cc.cwnd_bytes == approx(w1 + 1000 * 500 / w1)


def test_ecn_decrement_per_marked_ack():
    cc = mprdma(ctx(), MprdmaParams())
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.cwnd_bytes == approx(124_500)  # -0.5 MSS
    cc.on_ack(1 * US + 1, 300, True, 10 * US, 0)  # fixed per ACK, not per byte
    assert cc.cwnd_bytes == approx(124_000)
    cc.on_ack(1 * US + 2, 1000, True, 10 * US, 0)  # repeated marks keep decrementing
    assert cc.cwnd_bytes == approx(123_500)


def test_ecn_decrement_artifact_value():
    cc = mprdma(ctx(), MprdmaParams(ecn_decrease_mss=0.15))
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.cwnd_bytes == approx(125_000 - 150)


def test_min_cwnd_floor():
    # 1 Gb/s x 16 us: BDP = 2000 B.
    cc = mprdma(ctx(rate_bps=1_000_000_000, rtt_ps=16 * US), MprdmaParams())
    assert cc.cwnd_bytes == approx(2000)
    for expected in (1500, 1000, 1000):
        cc.on_ack(1 * US, 1000, True, 16 * US, 0)
        assert cc.cwnd_bytes == approx(expected)
    cc = mprdma(ctx(rate_bps=1_000_000_000, rtt_ps=16 * US), MprdmaParams(min_cwnd_mss=1.8))
    cc.on_ack(1 * US, 1000, True, 16 * US, 0)
    assert cc.cwnd_bytes == approx(1800)


def test_pacing_rate_is_cwnd_over_base_rtt():
    cc = mprdma(ctx(), MprdmaParams())
    assert cc.pacing_rate_bps == approx(125_000 * 8e12 / (10 * US))  # = 100 Gb/s
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.pacing_rate_bps == approx(124_500 * 8e12 / (10 * US))
    cc = mprdma(ctx(), MprdmaParams(pacing=False))
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    assert cc.pacing_rate_bps == 0.0


def test_timeout_reaction():
    cc = mprdma(ctx(), MprdmaParams())
    cc.on_ack(1 * US, 1000, True, 10 * US, 0)
    cc.on_timeout(50 * US)
    assert cc.cwnd_bytes == approx(124_500)  # default: unchanged (Uno artifact)
    cc = mprdma(ctx(), MprdmaParams(timeout_resets_cwnd=True))
    cc.on_timeout(50 * US)
    assert cc.cwnd_bytes == 1000
    assert cc.pacing_rate_bps == approx(1000 * 8e12 / (10 * US))
    cc.on_ack(60 * US, 1000, False, 10 * US, 55 * US)
    assert cc.cwnd_bytes == approx(2000)  # AI from 1 MSS: + MSS^2 / MSS


@pytest.mark.parametrize(
    "field,value",
    [
        ("ecn_decrease_mss", 0.0),
        ("init_cwnd_bdp", 0.0),
        ("min_cwnd_mss", -1.0),
        ("max_cwnd_bdp", -0.5),
    ],
)
def test_check_rejects_out_of_range(field, value):
    params = dataclasses.replace(MprdmaParams(), **{field: value})
    with pytest.raises(ConfigError) as err:
        check_fields(params, "cc.mprdma")
    assert err.value.field == f"cc.mprdma.{field}"


def test_check_accepts_defaults():
    check_fields(MprdmaParams(), "cc.mprdma")
    check_fields(MprdmaParams(ecn_decrease_mss=0.15, max_cwnd_bdp=0.0), "cc.mprdma")


def test_duplicate_acks_run_the_per_ack_rule_only_in_the_artifact_mode():
    paper = mprdma(ctx(), MprdmaParams(max_cwnd_bdp=0.0, init_cwnd_bdp=0.5))
    artifact = mprdma(
        ctx(), MprdmaParams(max_cwnd_bdp=0.0, init_cwnd_bdp=0.5, update_on_duplicate_ack=True)
    )
    assert not paper.wants_duplicate_acks and artifact.wants_duplicate_acks
    w = artifact.cwnd_bytes
    artifact.on_duplicate_ack(1 * US, 1000, True, 10 * US, 0)
    assert artifact.cwnd_bytes == approx(w - 500)
    assert paper.dup_acks == 0.0 and artifact.dup_acks == 1.0  # (the law's common constant)


def test_a_batch_of_many_acks_moves_the_window_by_their_sum():
    """A fluid step's batch: 10 packets' bytes of which 2.5 marked (expected, fractional) move
    the window once, by MSS x unmarked bytes / cwnd less 2.5 decrements."""
    cc = mprdma(ctx(), MprdmaParams(init_cwnd_bdp=0.5, max_cwnd_bdp=0.0))
    assert cc.ecn_decrease_bytes == 500 and cc.timeout_resets_cwnd == 0.0
    fb = Feedback(1.0 * US, 10_000.0, 2_500.0, 10.0, 2.5, 2.0, 10.0 * US, 10.0 * US, 0.0, 0.0,
                  10_000.0, 0.0, 0.0, 0.0, 0.0, 1.0, 1.0, 0.0)  # fmt: skip
    for on_feedback in (LAW.on_feedback, LAW.on_feedback.py_func):
        s = np.array(cc.state)
        on_feedback(s, cc.consts, fb, NO_RECORDS)
        assert s[0] == approx(62_500 + 1000 * 7_500 / 62_500 - 2.5 * 500)
    cc.on_nack(2 * US)  # a loss found before a timeout changes nothing
    assert cc.cwnd_bytes == approx(62_500)

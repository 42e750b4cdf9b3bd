"""The per-packet RTT distribution (``engine.record_rtts``, uno/metrics/rtts.py): one sample per
newly acknowledged packet, in 1% bins, the same in both data planes; the flow-level engines'."""

from __future__ import annotations

import pytest

import uno
from uno.metrics.rtts import RTT_BINS, RTT_MIN_PS, RTT_RATIO, bin_edges_ps, rtt_bin


def test_bins_are_one_percent_wide_from_100_ns():
    assert rtt_bin(1) == 0 and rtt_bin(RTT_MIN_PS) == 0
    assert rtt_bin(int(RTT_MIN_PS * RTT_RATIO**5 * 1.001)) == 5
    assert rtt_bin(int(RTT_MIN_PS * RTT_RATIO**5 * 0.999)) == 4
    assert rtt_bin(10**15) == RTT_BINS - 1
    edges = bin_edges_ps()
    assert len(edges) == RTT_BINS + 1 and edges[-1] > 70e12  # to about 71 s


RUN = [
    "topo=dumbbell", "topo.n_senders=4", "workload=incast", "workload.n_intra=4",
    "workload.n_inter=0", "workload.size_bytes=400000", "cc=dctcp", "lb=ecmp",
    "engine.record_rtts=true", "engine.sample_interval_us=0", "engine.progress=false",
]  # fmt: skip


def test_every_acknowledged_packet_counts_once_alike_in_both_data_planes():
    python = uno.run(uno.compose([*RUN, "engine.dataplane=python"]))
    compiled = uno.run(uno.compose([*RUN, "engine.dataplane=compiled"]))
    table = python.tables["rtts"]
    assert table.equals(compiled.tables["rtts"])
    assert table["packets"].sum() == python.flows["packets"].sum()
    rtt = python.summary["rtt_us"]
    assert rtt == compiled.summary["rtt_us"] and rtt["samples"] == table["packets"].sum()
    base_us = python.flows["base_rtt_ps"].min() / 1e6
    assert base_us * 0.99 <= rtt["p50"] <= rtt["p99"] <= rtt["max_at_most"]


def test_the_fluid_engine_counts_each_batch_at_its_mean_rtt():
    """The fluid engine counts each ACK batch's packets at the batch's mean RTT: as many
    samples as packets acknowledged (to rounding), none below the base RTT; on the 4-to-1
    incast its median within 10% of the packet run's, its 99th percentile within 20%."""
    packet = uno.run(uno.compose(RUN))
    fluid = uno.run(uno.compose([*RUN, "engine.kind=fluid"]))
    rtt, ref = fluid.summary["rtt_us"], packet.summary["rtt_us"]
    assert rtt["samples"] == pytest.approx(fluid.flows["packets"].sum(), rel=0.01)
    base_us = fluid.flows["base_rtt_ps"].min() / 1e6
    assert base_us * 0.99 <= fluid.tables["rtts"]["lo_ps"].min() / 1e6 * RTT_RATIO
    assert rtt["p50"] == pytest.approx(ref["p50"], rel=0.1)
    assert rtt["p99"] == pytest.approx(ref["p99"], rel=0.2)
    lone = uno.run(uno.compose([*RUN, "workload.n_intra=1", "engine.kind=fluid"]))
    # (alone, no queue: every sample at the base RTT, to the bins' 1%)
    assert lone.summary["rtt_us"]["p99"] == pytest.approx(base_us, rel=0.02)


def test_the_hybrid_counts_its_packets_and_its_fluid_flows():
    """Two intra-DC flows as packets, two inter-DC ones fluid: the samples of both, as many
    as the all-packet run's to rounding."""
    mixed = [
        "workload.n_intra=2", "workload.n_inter=2", "workload.size_bytes=2000000",
        "engine.record_rtts=true", "engine.sample_interval_us=0", "engine.progress=false",
    ]  # fmt: skip
    packet = uno.run(uno.compose(mixed))
    hybrid = uno.run(uno.compose([*mixed, "engine.kind=hybrid",
                                  "engine.hybrid_packet_tags=[intra]"]))  # fmt: skip
    samples = hybrid.summary["rtt_us"]["samples"]
    assert samples == pytest.approx(packet.summary["rtt_us"]["samples"], rel=0.01)
    assert samples > hybrid.flows.query("tag == 'intra'")["packets"].sum()


def test_max_min_has_no_samples_to_count():
    with pytest.raises(uno.core.errors.ConfigError, match=r"^engine\.record_rtts"):
        uno.run(uno.compose([*RUN, "engine.kind=maxmin"]))

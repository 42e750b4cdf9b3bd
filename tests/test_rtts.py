"""The per-packet RTT distribution (``engine.record_rtts``, uno/metrics/rtts.py): one sample per
newly acknowledged packet, in 1% bins, the same in both data planes."""

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


def test_the_flow_level_engines_refuse_it():
    with pytest.raises(uno.core.errors.ConfigError, match=r"^engine\.record_rtts"):
        uno.run(uno.compose([*RUN, "engine.kind=fluid"]))

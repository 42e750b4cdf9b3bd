"""Flows that leave at a set time (``workload.flows[i].stop_us``): the sender sends nothing,
new or resent, after its stop time, the flow stays unfinished unless it finished before, and
both packet data planes agree; the flow-level engines refuse it."""

from __future__ import annotations

import pytest

import uno
from uno.core.errors import ConfigError

US = 1_000_000  # ps

BASE = [
    "workload=flows", "topo=gear_two_dc", "cc=dcqcn", "engine.max_sim_time_ms=5",
    "engine.allow_unfinished=true", "engine.sample_interval_us=100", "engine.progress=false",
]  # fmt: skip
#: a long flow from 0, a second from 1 ms that stops at 3 ms, a short one that ends before its stop
FLOWS = (
    "workload.flows=[{src:8,dst:0,size_bytes:100000000},"
    "{src:16,dst:0,size_bytes:100000000,start_us:1000,stop_us:3000},"
    "{src:24,dst:1,size_bytes:100000,start_us:500,stop_us:4000}]"
)


@pytest.fixture(scope="module")
def runs():
    return {dp: uno.run(uno.compose([*BASE, FLOWS, f"engine.dataplane={dp}"]))
            for dp in ("python", "compiled")}  # fmt: skip


def test_a_stopped_sender_sends_nothing_after_its_stop_time(runs):
    res = runs["python"]
    flows = res.flows.set_index("flow_id")
    assert flows.loc[1, "stop_ps"] == 3000 * US and pd_na(flows.loc[1, "finish_ps"])
    assert pd_na(flows.loc[0, "stop_ps"])
    rates = res.tables["rates"]
    stopped = rates[rates["flow_id"] == 1]
    assert stopped["time_ps"].max() <= 3000 * US  # (no sample once it has left)
    sent = stopped.loc[stopped["time_ps"] > 1000 * US, "sent_gbps"]
    assert sent.mean() > 1.0  # it ran between its start and its stop
    # what it sent is what 2 ms at those rates carry, not more
    assert flows.loc[1, "sent_bytes"] <= 2000 * US * 100e9 / 8e12 * 1.01
    # the long flow takes the link back after the stop
    after = rates[(rates["flow_id"] == 0) & (rates["time_ps"] > 4000 * US)]
    assert after["acked_gbps"].mean() > 50.0


def test_a_flow_that_ends_before_its_stop_time_finishes(runs):
    flows = runs["python"].flows.set_index("flow_id")
    assert flows.loc[2, "finish_ps"] < 4000 * US


def test_both_data_planes_agree(runs):
    assert runs["python"].flows.equals(runs["compiled"].flows)
    assert runs["python"].tables["rates"].equals(runs["compiled"].tables["rates"])


def test_a_stop_not_after_the_start_is_refused():
    bad = "workload.flows=[{src:8,dst:0,size_bytes:1000,start_us:10,stop_us:10}]"
    with pytest.raises(ConfigError, match=r"workload.flows\[0\].stop_us"):
        uno.run(uno.compose([*BASE, bad]))


def test_the_flow_level_engines_refuse_stop_times():
    for kind in ("fluid", "maxmin"):
        with pytest.raises(ConfigError, match=r"workload.flows\[1\].stop_us"):
            uno.run(uno.compose([*BASE, FLOWS, f"engine.kind={kind}", "cc=dctcp"]))


def pd_na(value) -> bool:
    import pandas as pd

    return value is pd.NA or pd.isna(value)

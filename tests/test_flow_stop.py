"""Flows that leave at a set time (``workload.flows[i].stop_us``): the sender sends nothing,
new or resent, after its stop time, the flow stays unfinished unless it finished before (its
last ACK included), both packet data planes agree, and the fluid and max-min engines stop
their flows the same way."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.core.errors import ConfigError

US = 1_000_000  # ps

BASE = [
    "workload=flows", "topo=gear_two_dc", "cc=dcqcn", "engine.max_sim_time_ms=5",
    "engine.allow_unfinished=true", "engine.sample_interval_us=100", "engine.progress=false",
]  # fmt: skip
#: a long flow from 0, a second from 1 ms that stops at 3 ms, a short one that ends before its
#: stop, and one as short whose bytes are all sent before its stop but whose last ACK is not
#: back by then (100 kB at 100 Gb/s take 8 us, its base RTT ~26 us)
FLOWS = (
    "workload.flows=[{src:8,dst:0,size_bytes:100000000},"
    "{src:16,dst:0,size_bytes:100000000,start_us:1000,stop_us:3000},"
    "{src:24,dst:1,size_bytes:100000,start_us:500,stop_us:4000},"
    "{src:32,dst:2,size_bytes:100000,start_us:500,stop_us:530}]"
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
    # every byte delivered, the last ACK after the stop: unfinished
    assert flows.loc[3, "bytes_delivered"] == 100_000 and pd_na(flows.loc[3, "finish_ps"])


def test_both_data_planes_agree(runs):
    assert runs["python"].flows.equals(runs["compiled"].flows)
    assert runs["python"].tables["rates"].equals(runs["compiled"].tables["rates"])


def test_a_stop_not_after_the_start_is_refused():
    bad = "workload.flows=[{src:8,dst:0,size_bytes:1000,start_us:10,stop_us:10}]"
    with pytest.raises(ConfigError, match=r"workload.flows\[0\].stop_us"):
        uno.run(uno.compose([*BASE, bad]))


#: the hybrid: the two long flows fluid, the short ones packets
HYBRID = ["engine.kind=hybrid", "engine.hybrid_packet_max_bytes=1000000"]


@pytest.fixture(scope="module")
def flow_level():
    runs = {kind: uno.run(uno.compose([*BASE, FLOWS, f"engine.kind={kind}"]))
            for kind in ("fluid", "maxmin")}  # fmt: skip
    runs["hybrid"] = uno.run(uno.compose([*BASE, FLOWS, *HYBRID]))
    return runs


def test_max_min_shares_the_link_until_the_stop_then_gives_it_back(flow_level):
    """Max-min, analytically: flows 0 and 1 share host 0's 100-Gb/s link half and half from
    1 to 3 ms, flow 0 has it alone before and after: flow 1 moves 2 ms x 6.25 B/ns, flow 0
    the other 62.5 - 12.5 MB of the 5 ms; flows 1 and 3 stay unfinished, flow 2 finishes."""
    flows = flow_level["maxmin"].flows.set_index("flow_id")
    assert flows.loc[1, "sent_bytes"] == pytest.approx(12.5e6, rel=1e-6)
    assert flows.loc[0, "sent_bytes"] == pytest.approx(50e6, rel=1e-6)
    assert flows.loc[1, "stop_ps"] == 3000 * US and pd_na(flows.loc[1, "finish_ps"])
    assert flows.loc[3, "bytes_delivered"] == 100_000 and pd_na(flows.loc[3, "finish_ps"])
    assert flows.loc[2, "finish_ps"] < 4000 * US


@pytest.mark.parametrize("kind", ["fluid", "hybrid"])
def test_the_fluid_stops_a_flow_at_its_stop_time(flow_level, runs, kind):
    res = flow_level[kind]
    flows = res.flows.set_index("flow_id")
    assert flows.loc[1, "stop_ps"] == 3000 * US and pd_na(flows.loc[1, "finish_ps"])
    assert pd_na(flows.loc[0, "stop_ps"])
    rates = res.tables["rates"]
    stopped = rates[rates["flow_id"] == 1].sort_values("time_ps")
    # sampled once after its stop (as the packet recorder does), then no more
    assert (stopped["time_ps"] > 3000 * US).sum() == 1
    last, before = stopped["sent_gbps"].iloc[-1], stopped["sent_gbps"].iloc[-2]
    t_before, t_last = stopped["time_ps"].iloc[-2], stopped["time_ps"].iloc[-1]
    share_sending = (3000 * US - t_before) / (t_last - t_before)  # (of the last sample's span)
    assert before > 1.0 and last <= 2.0 * before * share_sending + 1.0
    times = np.unique(rates["time_ps"])  # (a sample's rates are over the time since the last)
    span_ps = stopped["time_ps"].map(dict(zip(times, np.diff(times, prepend=0), strict=True)))
    assert (stopped["sent_gbps"] * span_ps / 8e3).sum() == pytest.approx(
        flows.loc[1, "sent_bytes"], rel=1e-6
    )  # (nothing sent after the last sample)
    after = rates[(rates["flow_id"] == 0) & (rates["time_ps"] > 4000 * US)]
    assert after["acked_gbps"].mean() > 50.0
    if kind == "fluid":  # (in the hybrid it is a packet flow beside the fluid ones)
        assert flows.loc[2, "finish_ps"] == runs["python"].flows.loc[2, "finish_ps"]
    assert flows.loc[2, "finish_ps"] < 4000 * US
    assert flows.loc[3, "bytes_delivered"] == 100_000 and pd_na(flows.loc[3, "finish_ps"])


def pd_na(value) -> bool:
    import pandas as pd

    return value is pd.NA or pd.isna(value)

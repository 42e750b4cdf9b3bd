"""``engine.stop_when_done`` in the flow-level engines (fluid, max-min, hybrid): the run ends
once every flow with one of the tags has finished, as in the packet engine (Uno Fig. 4's RPCs
beside flows of 1 GiB), and the flows still running are reported unfinished with what they
delivered. Stopping early changes nothing before the stop: the waited-for flows finish exactly
as in the run that goes on."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import TWO_PLUS_TWO_INCAST as INCAST

import uno
from uno.core.errors import ConfigError

STOP = "engine.stop_when_done=[intra]"


def run_pair(extra: list[str]):
    full = uno.run(uno.compose([*INCAST, *extra]))
    stopped = uno.run(uno.compose([*INCAST, *extra, STOP]))
    return full, stopped


@pytest.mark.parametrize(
    "extra",
    [["engine.kind=fluid"], ["engine.kind=maxmin"],
     ["engine.kind=hybrid", "engine.hybrid_packet_tags=[intra]"],
     ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"]],
    ids=["fluid", "maxmin", "hybrid-intra-packets", "hybrid-inter-packets"],
)  # fmt: skip
def test_the_run_ends_when_the_tagged_flows_have_finished(extra):
    full, stopped = run_pair(extra)
    f, s = full.flows.set_index("flow_id"), stopped.flows.set_index("flow_id")
    intra, inter = s["tag"] == "intra", s["tag"] == "inter"
    assert full.summary["run"]["all_flows_finished"]
    # the waited-for flows: the same completions as in the run that went on
    pd.testing.assert_series_equal(s.loc[intra, "fct_ps"], f.loc[intra, "fct_ps"])
    # the others had not finished: no completion, part of their bytes at most
    assert s.loc[inter, "finish_ps"].isna().all()
    assert (f.loc[inter, "finish_ps"] > s.loc[intra, "finish_ps"].max()).all()
    assert (s.loc[inter, "bytes_delivered"] <= s.loc[inter, "size_bytes"]).all()
    assert not stopped.summary["run"]["all_flows_finished"]
    # the run's end: the last waited-for completion (the fluid model's: the end of the step
    # that counts it; its last ACK, the flow's finish, may come up to a step after that, as a
    # batch of ACKs is counted in the step of its mean arrival)
    end_ps = stopped.summary["run"]["sim_time_us"] * 1e6
    last_ps = float(s.loc[intra, "finish_ps"].max())
    run = stopped.summary["run"]
    step_ps = run.get("fluid_step_last_us", run.get("fluid_step_us", 0.0)) * 1e6
    assert last_ps - step_ps - 1.0 <= end_ps <= last_ps + step_ps + 1.0
    assert end_ps < full.summary["run"]["sim_time_us"] * 1e6


def test_the_fluid_flows_still_running_report_what_they_delivered():
    """At the intra-DC flows' end (~340 us) the inter-DC flows' first window (their whole 2 MB)
    is still crossing the WAN link's 886-us propagation: nothing delivered, as with packets.
    Stopped at 2.5 ms instead, they have delivered a part of it."""
    _, stopped = run_pair(["engine.kind=fluid"])
    packet = uno.run(uno.compose([*INCAST, STOP])).flows
    for flows in (stopped.flows, packet):
        assert (flows.loc[flows["tag"] == "inter", "bytes_delivered"] == 0).all()
    later = uno.run(uno.compose([*INCAST, "engine.kind=fluid", "engine.max_sim_time_ms=2.5"]))
    inter = later.flows[later.flows["tag"] == "inter"]
    assert inter["finish_ps"].isna().all()
    assert (inter["bytes_delivered"] > 0).all()
    assert (inter["bytes_delivered"] < inter["size_bytes"]).all()


def test_maxmin_flows_whose_last_ack_comes_after_the_end_have_not_finished():
    """Max-min on the incast: the four flows share the receiver's link and all end their
    transfer at 4 x 2 MB / 100 Gb/s = 640 us (plus the first packet's way); a flow finishes a
    base RTT later. With the run stopped at 1 ms the inter-DC flows (base RTT 1.8 ms) have moved
    all their bytes and have not finished; stopped at 0.5 ms every flow has moved the same
    part of its bytes."""
    at_1ms = uno.run(uno.compose([*INCAST, "engine.kind=maxmin", "engine.max_sim_time_ms=1"]))
    f = at_1ms.flows
    assert at_1ms.summary["run"]["sim_time_us"] == pytest.approx(1000.0)
    assert f.loc[f["tag"] == "intra", "finish_ps"].notna().all()
    assert f.loc[f["tag"] == "inter", "finish_ps"].isna().all()
    assert (f["bytes_delivered"] == f["size_bytes"]).all()
    at_half = uno.run(uno.compose([*INCAST, "engine.kind=maxmin", "engine.max_sim_time_ms=0.5"]))
    h = at_half.flows
    assert h["finish_ps"].isna().all()
    moved = h["bytes_delivered"].to_numpy()
    # a quarter of the 100 Gb/s link each for 500 us, less the flows' first packet's way
    assert np.all(moved == moved[0])
    assert 0.9 * 500e-6 * 25e9 / 8 < moved[0] <= 500e-6 * 25e9 / 8


@pytest.mark.parametrize("kind", ["fluid", "maxmin", "hybrid"])
def test_a_tag_no_flow_has_is_refused_naming_the_field(kind):
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose([*INCAST, f"engine.kind={kind}", "engine.hybrid_packet_max_bytes=1",
                             "engine.stop_when_done=[nosuchtag]"]))  # fmt: skip
    assert err.value.field == "engine.stop_when_done"

"""The fluid engine's rates / cwnd / queues tables, sampled in its step loop
(:mod:`uno.fluid.sampling`): the samples' times, their rates against the bytes sent, the queue
selection, and the same tables whether or not the arrays had to grow mid-run."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import uno
import uno.fluid.sampling as sampling

#: the default incast in the fluid engine, 2 MB a flow, samples every 20 us
BASE = ["engine.kind=fluid", "workload.size_bytes=2000000", "engine.sample_interval_us=20"]


def _tables(overrides):
    r = uno.run(uno.compose([*BASE, *overrides]))
    return r, {name: r.tables[name] for name in ("rates", "cwnd", "queues")}


def test_arrays_that_grow_mid_run_give_the_same_tables(monkeypatch):
    """Arrays of one row to start with: the step loop stops a dozen times or more before a
    sample that does not fit for them to grow (``Sampler.make_room`` doubles them), and the
    tables are those of a run whose arrays never had to."""
    _, roomy = _tables([])
    monkeypatch.setattr(sampling, "FIRST_ROWS", 1)
    _, tight = _tables([])
    for name, table in roomy.items():
        assert len(table) > 100, name
        pd.testing.assert_frame_equal(tight[name], table, check_exact=True)


def test_samples_fall_on_the_steps_nearest_each_multiple_of_the_interval():
    """With the step fixed (its cap at the first step), the samples are at the starts of the
    steps nearest 20, 40, 60, ... us, one a step, and one more where the run ends."""
    r, tables = _tables(["engine.fluid_step_max_intra_rtt=0.125"])
    dt_ps = r.summary["run"]["fluid_step_us"] * 1e6
    end_ps = r.summary["run"]["sim_time_us"] * 1e6
    times = np.unique(tables["queues"]["time_ps"].to_numpy())
    due = [int(round(m * 20e6 / dt_ps)) for m in range(1, int(end_ps / 20e6) + 2)]
    expected = sorted({k * dt_ps for k in due if k * dt_ps < end_ps - 1} | {end_ps})
    # (the summary's step and end time are in us: a ps either way)
    assert len(times) == len(expected) > 300
    np.testing.assert_allclose(times, expected, rtol=0, atol=1.5)
    assert set(tables["rates"]["time_ps"]) <= set(times.tolist())


def test_rates_add_up_to_the_bytes_sent():
    """Each flow's sampled send rates, times the spans between samples, add up to the bytes
    it has sent (all flows still running when the run stops, so each is sampled at its end);
    the windows' table has a row for each of the rates'."""
    r, tables = _tables(["engine.max_sim_time_ms=0.3", "engine.allow_unfinished=true"])
    rates = tables["rates"]
    times = np.unique(tables["queues"]["time_ps"].to_numpy())
    span_ps = dict(zip(times, np.diff(np.concatenate([[0], times])), strict=True))
    sent = rates["sent_gbps"] * rates["time_ps"].map(span_ps) / 8e3
    by_flow = sent.groupby(rates["flow_id"]).sum()
    flows = r.flows.set_index("flow_id")
    assert len(by_flow) == 8 and flows["finish_ps"].isna().all()
    # (the flows table counts whole bytes)
    np.testing.assert_allclose(by_flow, flows.loc[by_flow.index, "sent_bytes"], rtol=0, atol=1)
    assert (tables["cwnd"][["time_ps", "flow_id"]] == rates[["time_ps", "flow_id"]]).all().all()


@pytest.mark.parametrize("selection", ["receivers", "busy"])
def test_queue_rows_are_the_chosen_links_and_with_busy_every_queued_one(selection):
    """``receivers``: the same link at every sample (the incast's receiver's); ``busy``:
    those a sample finds with a queue (and the chosen ones, none here), each above 0."""
    r, tables = _tables([f"engine.queue_ports=[{selection}]"])
    queues = tables["queues"]
    per_sample = queues.groupby("time_ps")["port"].apply(frozenset)
    if selection == "receivers":
        assert per_sample.nunique() == 1 and len(per_sample.iloc[0]) == 1
    else:
        assert (queues["queue_bytes"] > 0).all() and per_sample.map(len).max() >= 1


@pytest.mark.parametrize("off", ["rates", "cwnd", "queues"])
def test_a_table_not_sampled_is_left_out_as_in_the_packet_engine(off):
    """``engine.sample_<table>=false``: the fluid run has no such table (not an empty one),
    the same tables as the packet run, and keeps the other two."""
    short = [f"engine.sample_{off}=false", "engine.max_sim_time_ms=0.2",
             "engine.allow_unfinished=true", "workload.size_bytes=2000000",
             "engine.sample_interval_us=20"]  # fmt: skip
    fluid = uno.run(uno.compose(["engine.kind=fluid", *short])).tables
    packet = uno.run(uno.compose(short)).tables
    assert off not in fluid
    assert set(fluid) == set(packet)
    assert all(len(fluid[name]) > 0 for name in {"rates", "cwnd", "queues"} - {off})

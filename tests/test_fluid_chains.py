"""Flows that start after others (a workload's ``after``) in the fluid and max-min engines: each
waits for every flow of the tag it names to finish, then its own delay, as in the packet
engine."""

from __future__ import annotations

import numpy as np
import pytest

import uno
from uno.core.errors import ConfigError

ALLREDUCE = ["workload=allreduce", "workload.iteration_bytes=4000000",
             "engine.sample_interval_us=0", "engine.progress=false"]  # fmt: skip
COMPUTE_PS = 1000 * 10**6  # (workload.compute_us)


def _iterations(flows):
    by_tag = flows.groupby("tag")
    return by_tag["start_ps"].min(), by_tag["start_ps"].max(), by_tag["finish_ps"].max()


def test_allreduce_iterations_follow_each_other_in_the_fluid():
    """Each iteration's flows start together, the compute time after the last flow of the one
    before finished; each iteration takes as long as with packets (within 10%)."""
    runs = {kind: uno.run(uno.compose([*ALLREDUCE, f"engine.kind={kind}"]))
            for kind in ("packet", "fluid")}  # fmt: skip
    fluid = runs["fluid"].flows
    assert fluid["finish_ps"].notna().all()
    first, last, ends = _iterations(fluid)
    assert (first == last).all() and first["it0"] == 0
    for i in (1, 2):
        assert first[f"it{i}"] == ends[f"it{i - 1}"] + COMPUTE_PS
    took = {}
    for kind, r in runs.items():
        starts, _, ends = _iterations(r.flows)
        took[kind] = (ends - starts).to_numpy()
    assert took["fluid"] == pytest.approx(took["packet"], rel=0.1)


def test_flows_of_an_unfinished_group_never_start():
    """The run stops before the first iteration ends: the later iterations never start, their
    start the delay after their group (as the packet engine's table has it), and the run says
    its flows did not finish."""
    r = uno.run(uno.compose([*ALLREDUCE, "engine.kind=fluid", "engine.max_sim_time_ms=0.2",
                             "engine.allow_unfinished=true"]))  # fmt: skip
    f = r.flows
    later = f[f["tag"] != "it0"]
    assert later["finish_ps"].isna().all() and (later["start_ps"] == COMPUTE_PS).all()
    assert not r.summary["run"]["all_flows_finished"]
    assert np.isnan(later["fct_ps"]).all()


def test_allreduce_iterations_follow_each_other_in_max_min():
    """Max-min starts each iteration the compute time after the last flow of the one before
    finished (its transfer at the max-min rate plus its base RTT); the ring's flows share no
    link, so each takes its ideal FCT, and the run is three iterations back to back."""
    r = uno.run(uno.compose([*ALLREDUCE, "engine.kind=maxmin"]))
    f = r.flows
    assert (f["fct_ps"] == f["ideal_fct_ps"]).all()
    first, last, ends = _iterations(f)
    assert (first == last).all() and first["it0"] == 0
    for i in (1, 2):
        assert first[f"it{i}"] == ends[f"it{i - 1}"] + COMPUTE_PS
    assert r.summary["run"]["sim_time_us"] * 10**6 == pytest.approx(ends["it2"])


def test_max_min_flows_of_an_unfinished_group_never_start():
    r = uno.run(uno.compose([*ALLREDUCE, "engine.kind=maxmin", "engine.max_sim_time_ms=0.2",
                             "engine.allow_unfinished=true"]))  # fmt: skip
    later = r.flows[r.flows["tag"] != "it0"]
    assert later["finish_ps"].isna().all() and (later["start_ps"] == COMPUTE_PS).all()
    assert not r.summary["run"]["all_flows_finished"]


def test_the_hybrid_refuses_fluid_flows_in_chains():
    # (the first iteration's flows as packets, the later ones' fluid)
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose([*ALLREDUCE, "engine.kind=hybrid", "engine.hybrid_packet_tags=[it0]"]))
    assert err.value.field == "workload" and "after" in str(err.value)

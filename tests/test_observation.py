"""Observing a run does not change it: sampling queues (which settles the sampled ports, see
uno/net/port.py) at any interval, on any set of ports, leaves every flow and every port
counter exactly as in the run without sampling.

Ports decide ECN lazily, when next touched, so this holds only because every port draws from a
random stream of its own (uno/net/network.py): with one stream shared by all ports, the order in
which a sampler touches ports decides which port gets which number, and these runs differ."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import run

#: A reduced mixed incast (4 intra-DC + 4 inter-DC senders of 2 MB to one receiver) on a k=4
#: two-DC topology with a 20 us WAN link, so a run takes well under a second. Marking happens in
#: the RED ramps (the physical queue's for dctcp and gemini, the phantom queue's for uno), where
#: every decision draws a random number.
INCAST = ["topo.k=4", "topo.wan_delay_us=20", "workload.size_bytes=2000000"]

#: How the run is observed; "off" is the reference.
SAMPLING = {
    "off": ["engine.sample_interval_us=0"],
    "all_1us": ["engine.sample_interval_us=1", "engine.queue_ports=[all]"],
    "all_100us": ["engine.sample_interval_us=100", "engine.queue_ports=[all]"],
    "tor_1us": ["engine.sample_interval_us=1", "engine.queue_ports=['*tor*']"],
    "busy_3us": ["engine.sample_interval_us=3", "engine.queue_ports=[busy]"],
}

#: Per-port counters that marking and settling touch (ports_table settles before reading).
PORT_COLUMNS = ["port", "arrivals", "tx_packets", "tx_bytes", "drops", "ecn_marks"]


def observed_runs(overrides: list[str], tmp_path) -> dict[str, tuple[pd.DataFrame, object]]:
    """Run ``overrides`` under every SAMPLING setting: name -> (flows.parquet as read, result)."""
    out = {}
    for name, sampling in SAMPLING.items():
        result = run(overrides + sampling, out_dir=tmp_path / name)
        out[name] = (pd.read_parquet(tmp_path / name / "flows.parquet"), result)
    return out


def assert_observation_changes_nothing(runs: dict) -> None:
    ref_flows, ref = runs["off"]
    for name, (flows, result) in runs.items():
        if name == "off":
            continue
        assert len(result.tables["queues"]) > 0, f"{name}: nothing was sampled"
        pd.testing.assert_frame_equal(flows, ref_flows, obj=f"flows.parquet ({name})")
        pd.testing.assert_frame_equal(
            result.tables["ports"][PORT_COLUMNS],
            ref.tables["ports"][PORT_COLUMNS],
            obj=f"ports table ({name})",
        )


@pytest.mark.parametrize("cc", ["dctcp", "uno", "gemini"])
def test_sampling_queues_does_not_change_the_run(cc, tmp_path):
    runs = observed_runs(INCAST + [f"cc={cc}"], tmp_path)
    ref_flows, ref = runs["off"]
    # marks reach the senders, so the random draws behind them matter
    assert ref_flows["ecn_acks"].sum() > 0
    assert ref.tables["ports"]["ecn_marks"].sum() > 0
    assert ref_flows["finish_ps"].notna().all()
    assert_observation_changes_nothing(runs)


def test_sampling_does_not_change_a_run_cut_short(tmp_path):
    # Stopped at max_sim_time with packets still queued: the port counters read at the end
    # must not depend on whether a sampler settled the port since its last packet left.
    runs = observed_runs(INCAST + ["cc=dctcp", "engine.max_sim_time_ms=0.3001"], tmp_path)
    ref_flows, ref = runs["off"]
    assert ref_flows["finish_ps"].isna().any()
    assert ref_flows["ecn_acks"].sum() > 0
    assert_observation_changes_nothing(runs)
    for _, result in runs.values():
        pd.testing.assert_frame_equal(result.tables["ports"], ref.tables["ports"])

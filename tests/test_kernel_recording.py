"""The packet recorder's samples read in the kernel (:mod:`uno.net.compiled.recording`) against
the same samples read from Python, sender by sender and port by port: the same tables, row for
row and value for value, and the same flows and ports."""

from __future__ import annotations

import pandas as pd
import pytest

import uno
import uno.api
import uno.net.compiled.recording as recording
from uno.build import build_simulation

#: the default incast, 2 MB a flow (its flows finish at different times), every 20 us
INCAST = ["workload.size_bytes=2000000", "engine.sample_interval_us=20"]
#: flows that start one after the other (Fig. 10's traffic, 60 flows, its first 2 ms)
STAGGERED = ["experiment=fig10_load", "workload.n_flows=60", "engine.max_sim_time_ms=2",
             "engine.allow_unfinished=true", "engine.sample_interval_us=50"]  # fmt: skip

CASES = {
    "incast, receivers' ports": INCAST,
    "incast, busy ports and a pattern": [*INCAST, "engine.queue_ports=[busy,*core*]"],
    "incast, no rates": [*INCAST, "engine.sample_rates=false"],
    "staggered starts, busy ports": [*STAGGERED, "engine.queue_ports=[receivers,busy]"],
    "PFC's event ports, busy ports": [
        "experiment=pfc_spreading",
        "engine.queue_ports=[busy]",
        "engine.sample_interval_us=20",
    ],
    "hybrid, inter-DC flows as packets": [
        *INCAST,
        "engine.kind=hybrid",
        "engine.hybrid_packet_tags=[inter]",
    ],
}


def _tables(overrides):
    return uno.run(uno.compose(overrides)).tables


@pytest.mark.parametrize("case", list(CASES))
def test_kernel_samples_equal_the_python_recorders(case, monkeypatch):
    overrides = CASES[case]
    in_kernel = _tables(overrides)
    monkeypatch.setattr(recording, "kernel_samples_fit", lambda *args: False)
    from_python = _tables(overrides)
    sampled = {"rates", "cwnd", "queues"}
    assert set(in_kernel) == set(from_python)
    assert sampled & set(in_kernel), "nothing sampled"
    for name in sampled & set(in_kernel):
        assert len(in_kernel[name]) > 20, name
    for name in in_kernel:  # (the samples, and the flows and ports: a reading changes nothing)
        pd.testing.assert_frame_equal(in_kernel[name], from_python[name], check_exact=True)


def test_the_default_run_samples_in_the_kernel_and_a_dci_run_from_python():
    """The compiled data plane's runs read their samples in the kernel; a run with DCI switches
    (whose per-flow queues the recorder reads from Python) does not."""
    sim = build_simulation(uno.api.to_run_config(uno.compose(INCAST)))
    assert sim.recorder.kernel is not None
    dci = ["experiment=mlcc_fig9", "engine.dataplane=compiled"]
    dci_sim = build_simulation(uno.api.to_run_config(uno.compose(dci)))
    assert dci_sim.network.dataplane is not None
    assert dci_sim.recorder is not None and dci_sim.recorder.kernel is None


#: the hybrid's samples inside its kernel's calls (4 MB a flow: its fluid intra-DC flows run
#: for about 3 ms): at its first step throughout (eight a sample's interval), with settled
#: steps that grow past the interval (several samples between two steps), and with PFC (its
#: pauses' signals take event ids after the steps); each case's overrides and the tag of its
#: fluid flows
HYBRID = {
    "hybrid at its first step, receivers' and busy ports": (
        [*INCAST, "workload.size_bytes=4000000", "engine.kind=hybrid",
         "engine.fluid_step_settled_rtt=0", "engine.hybrid_packet_tags=[inter]",
         "engine.queue_ports=[receivers,busy]"], "intra"),
    "hybrid, settled steps past the interval": (
        [*INCAST, "workload.size_bytes=4000000", "engine.kind=hybrid",
         "engine.hybrid_packet_tags=[inter]", "engine.sample_interval_us=5"], "intra"),
    "hybrid with PFC": (
        ["experiment=pfc_spreading", "engine.kind=hybrid", "engine.hybrid_packet_tags=[victim]",
         "engine.sample_interval_us=5", "engine.queue_ports=[receivers,busy]"], "incast"),
}  # fmt: skip


def _hybrid_run(overrides, in_kernel: bool):
    """The run's result and how many samples Python took (the rest: the kernel's calls)."""
    sim = build_simulation(uno.api.to_run_config(uno.compose(overrides)))
    assert sim._samples_in_kernel
    sim._samples_in_kernel = in_kernel
    rec = sim.recorder
    taken = []
    sample = rec.sample
    rec.sample = lambda: (taken.append(rec.engine.now), sample())[1]
    return sim.run(), len(taken), rec.interval_ps


@pytest.mark.parametrize("case", list(HYBRID))
def test_hybrid_samples_in_its_kernel_equal_its_python_events(case):
    """The hybrid's kernel takes the recorder's samples where their events come, the fluid
    model's with them, and hands the next one's key back: the same tables and flows as the
    same samples taken by the recorder's events in Python, and the same run."""
    overrides, fluid_tag = HYBRID[case]
    kernel, n_python_k, interval_ps = _hybrid_run(overrides, True)
    python, n_python_p, _ = _hybrid_run(overrides, False)
    fluid_end_ps = kernel.flows.loc[kernel.flows.tag == fluid_tag, "finish_ps"].max()
    while_fluid = fluid_end_ps // interval_ps  # (the samples while the fluid flows run)
    assert n_python_p >= while_fluid > 100
    # the kernel took those, but for a few whose arrays had no room
    assert n_python_k < n_python_p - 0.9 * while_fluid
    assert set(kernel.tables) == set(python.tables) >= {"rates", "cwnd", "queues"}
    for name in kernel.tables:
        pd.testing.assert_frame_equal(kernel.tables[name], python.tables[name], check_exact=True)
    pd.testing.assert_frame_equal(kernel.flows, python.flows, check_exact=True)

"""What a coarse fluid step need not coarsen: a law's batches of feedback
(``engine.fluid_batch_rtt``: at most a fraction of the flow's base RTT each, so GEMINI's
once-per-RTT cut keeps its timing) and a link's marks (``engine.fluid_mark_step_mean``: the
physical queue's RED averaged over the step's path, not read at the level it ends at)."""

from __future__ import annotations

import numpy as np
import pytest

import uno
import uno.api
from uno.build import build_simulation
from uno.fluid import columns as C
from uno.fluid.links import ramp_mean_over_step
from uno.net.red import red_probability

QUIET = ["engine.progress=false", "engine.sample_interval_us=0"]


@pytest.mark.parametrize(
    ("q0", "net", "buf", "expected"),
    [
        (0.0, 200.0, 1000.0, 0.5),  # rises through K = 100 halfway
        (200.0, -200.0, 1000.0, 0.5),  # falls through K halfway
        (200.0, -400.0, 1000.0, 0.25),  # above K a quarter of the step, then empty
        (0.0, 800.0, 400.0, 0.875),  # above K from 1/8 of the step, full (marking) from 1/2
        (150.0, 0.0, 1000.0, 1.0),  # a steady level above K
        (50.0, 0.5, 1000.0, 0.0),  # a steady level below K
    ],
)
def test_a_step_threshold_marks_the_share_of_the_step_above_it(q0, net, buf, expected):
    assert ramp_mean_over_step(q0, net, buf, 100.0, 100.0, 0.0) == pytest.approx(expected)


def test_the_mean_over_a_step_is_the_path_integral_of_red():
    """Random levels, steps and ramps (with and without pmax < 1): the closed form against
    the mean of the RED probability over 20,000 points of the step's clipped path."""
    rng = np.random.default_rng(7)
    u = (np.arange(20_000) + 0.5) / 20_000
    for _ in range(200):
        buf = rng.uniform(1e4, 1e6)
        kmin = rng.uniform(0.0, buf)
        kmax = rng.uniform(kmin, buf)
        pmax = rng.choice([1.0, 0.2])
        span = (kmax - kmin) / pmax
        q0 = rng.uniform(0.0, buf)
        net = rng.uniform(-2.0 * buf, 2.0 * buf)
        path = np.clip(q0 + net * u, 0.0, buf)
        want = np.mean([red_probability(q, kmin, kmax, span) for q in path])
        got = ramp_mean_over_step(q0, net, buf, kmin, kmax, span)
        assert got == pytest.approx(want, abs=2e-3)


def _fluid(overrides):
    cfg = uno.api.to_run_config(uno.compose(["engine.kind=fluid", *QUIET, *overrides]))
    return build_simulation(cfg)


def test_only_the_physical_markers_mark_at_the_step_mean():
    """The setting flags the links whose physical queue marks; the phantom-only ones (UnoCC's
    default switch) and the default run are left as they were."""
    plain = _fluid(["cc=dctcp", "switch=ecn"]).ls[:, C.LS_MODE]
    mean = _fluid(["cc=dctcp", "switch=ecn", "engine.fluid_mark_step_mean=true"]).ls[:, C.LS_MODE]
    physical = (plain == C.MODE_PHYSICAL) | (plain == C.MODE_EITHER)
    assert physical.any()
    assert (mean[physical] == plain[physical] + C.MODE_STEP_MEAN).all()
    assert (mean[~physical] == plain[~physical]).all()
    phantom = _fluid(["engine.fluid_mark_step_mean=true"]).ls[:, C.LS_MODE]
    assert not (phantom.astype(int) & C.MODE_STEP_MEAN).any()


def test_a_law_hears_batches_of_a_share_of_its_base_rtt():
    """At steps of half the intra-DC RTT each flow's batch spans at most an eighth of its own
    base RTT (a step is four or more batches); without the setting, the step's (up to one
    intra-DC RTT)."""
    over = ["workload=incast", "engine.fluid_step_intra_rtt=0.5"]
    plain = _fluid(over)
    fine = _fluid([*over, "engine.fluid_batch_rtt=0.125"])
    base = fine.fs[:, C.FS_BASE_RTT]
    assert (plain.fs[:, C.FS_BATCH_PS] >= plain.dt_first_ps).all()
    assert fine.fs[:, C.FS_BATCH_PS] == pytest.approx(
        np.minimum(plain.fs[:, C.FS_BATCH_PS], 0.125 * base)
    )
    intra = base < 2.0 * base.min()
    assert (plain.dt_first_ps / fine.fs[intra, C.FS_BATCH_PS] >= 4.0 - 1e-9).all()


def _mean_fct_ps(overrides) -> float:
    cfg = uno.compose(["topo=fat_tree", "topo.k=4", "workload=permutation", "scheme=gemini",
                       *QUIET, *overrides])  # fmt: skip
    return float(uno.run(cfg).flows["fct_ps"].mean())


def test_gemini_at_coarse_steps_keeps_its_cut_timing():
    """A k=4 GEMINI permutation: at steps of half the intra-DC RTT, one batch a step lets
    each flow cut every 1.5 RTTs, and its flows finish early against packets; batches of an
    eighth of an RTT and marks at the step's mean bring the mean FCT back towards them."""
    packet = _mean_fct_ps(["engine.kind=packet"])
    coarse = ["engine.kind=fluid", "engine.fluid_step_intra_rtt=0.5"]
    plain = _mean_fct_ps(coarse) / packet - 1.0
    timed = _mean_fct_ps([*coarse, "engine.fluid_batch_rtt=0.125",
                          "engine.fluid_mark_step_mean=true"]) / packet - 1.0  # fmt: skip
    assert plain < 0.0
    assert abs(timed) < abs(plain)

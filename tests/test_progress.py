"""Progress: a bar on stderr when asked (or on a terminal), none in batch runs; progress lines
in the run's log; watching never changes the run."""

from __future__ import annotations

import logging
import subprocess
import sys

import pandas as pd
from conftest import SMALL_INCAST

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.metrics.progress import Progress, progress_wanted

SMALL = SMALL_INCAST


def run_cli(args, cwd, env=None):
    return subprocess.run(
        [sys.executable, "-m", "uno.cli", *SMALL, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
    )


def test_bar_when_asked_and_none_in_batch(tmp_path):
    proc = run_cli(["engine.progress=true", f"out_dir={tmp_path / 'a'}"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (
        "simulated" in proc.stderr and "flows 4/4" in proc.stderr and "packet-hops/s" in proc.stderr
    )
    # captured output is not a terminal: no bar by default
    proc = run_cli([f"out_dir={tmp_path / 'b'}"], tmp_path)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr


def test_auto_detection(monkeypatch):
    assert progress_wanted(True) and not progress_wanted(False)
    monkeypatch.setenv("CI", "true")
    assert not progress_wanted(None)
    monkeypatch.delenv("CI")
    monkeypatch.delenv("SLURM_JOB_ID", raising=False)
    monkeypatch.setattr(sys.stderr, "isatty", lambda: True, raising=False)
    assert progress_wanted(None)


def test_progress_lines_go_to_the_log_and_do_not_change_the_run(caplog):
    cfg = to_run_config(uno.compose([*SMALL, "engine.sample_interval_us=0"]))
    alone = build_simulation(cfg).run().flows
    sim = build_simulation(cfg)
    log = logging.getLogger("uno.test_progress")
    watcher = Progress(sim, show_bar=True, logger=log, log_every_s=0.0)
    watcher.attach()
    with caplog.at_level(logging.INFO, logger="uno.test_progress"):
        watched_result = sim.run()
        watcher.close()
    watched = watched_result.flows
    lines = [r.getMessage() for r in caplog.records]
    assert lines and all(line.startswith("progress: simulated") for line in lines)
    assert "flows 4/4" in lines[-1]
    pd.testing.assert_frame_equal(alone, watched)
    # its ticks (as many as wall time dictates) are not the run's events
    assert sim.observer_events > 1
    unwatched = build_simulation(cfg).run()
    assert watched_result.summary["run"]["events"] == unwatched.summary["run"]["events"]


def test_a_flow_level_run_is_freed_when_it_returns():
    """The watcher's hook on a flow-level engine (``progress_hook``) made a reference cycle
    (simulation -> hook -> watcher -> simulation), so a fluid run's arrays (its delay lines:
    ~100 MiB on the 5000-flow Fig. 10 traffic) stayed alive after ``uno.run`` returned, until
    the cycle collector ran: ``close`` lets go of it, and reference counting frees the run."""
    import gc

    from uno.fluid.engine import FluidSimulation

    cfg = uno.compose(["engine.kind=fluid", "workload.n_intra=2", "workload.n_inter=0",
                       "workload.size_bytes=200000", "engine.sample_interval_us=0"])  # fmt: skip
    gc.collect()
    gc.disable()
    try:
        for progress in (False, True):
            uno.run(cfg, progress=progress)
            # (type(), not isinstance: a dead weak proxy among the objects raises on the latter)
            alive = [o for o in gc.get_objects() if type(o) is FluidSimulation]
            assert not alive, progress
    finally:
        gc.enable()

"""experiments/fluid_validation's scripts: compare.py's ``--fluid`` overrides reach the fluid runs
only, and sweep.py refuses an unknown case naming it."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "experiments" / "fluid_validation"


def load(name: str):
    spec = importlib.util.spec_from_file_location(
        f"fluid_validation_{name}", SCRIPTS / f"{name}.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_compare_applies_fluid_overrides_to_the_fluid_runs_only(monkeypatch):
    compare = load("compare")
    _, default, _, _ = compare.run("dumbbell", "fluid")
    monkeypatch.setattr(compare, "FLUID_OVERRIDES", ["engine.fluid_step_intra_rtt=0.25"])
    _, coarse, _, _ = compare.run("dumbbell", "fluid")
    step = coarse["run"]["fluid_step_us"] / default["run"]["fluid_step_us"]
    assert step == pytest.approx(2.0)  # the default step is 1/8 of the intra-DC RTT
    composed: list[str] = []

    def compose_only(overrides):
        composed.extend(overrides)
        raise Composed

    monkeypatch.setattr(compare.uno, "compose", compose_only)
    with pytest.raises(Composed):
        compare.run("dumbbell", "packet")
    assert "engine.kind=packet" in composed
    assert "engine.fluid_step_intra_rtt=0.25" not in composed


class Composed(Exception):
    """What the packet run was composed from has been seen."""


def test_sweep_refuses_an_unknown_case(monkeypatch, capsys):
    sweep = load("sweep")
    monkeypatch.setattr(sys, "argv", ["sweep.py", "--cases", "load0.2,nosuch"])
    with pytest.raises(SystemExit):
        sweep.main()
    assert "nosuch" in capsys.readouterr().err
    assert set(sweep.DEFAULT_CASES) < set(sweep.CASES)

"""Run folders cannot collide or lie: concurrent runs get distinct complete folders, a killed
run leaves nothing that looks complete, a refused config leaves no folder, a complete run is
never overwritten unless asked, and every summary carries its provenance."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
import yaml
from conftest import SMALL_INCAST, uno_cli
from omegaconf import OmegaConf

import uno
from uno.core.errors import ConfigError
from uno.metrics.provenance import config_hash, git_state
from uno.metrics.rundir import is_complete

SMALL = [*SMALL_INCAST, "engine.sample_interval_us=50"]


def visible_dirs(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_dir() and not p.name.startswith("."))


def assert_consistent(run_dir: Path) -> dict:
    """A complete folder agrees with itself: seed, name and config hash in config.yaml,
    summary.json and flows.parquet."""
    assert is_complete(run_dir), run_dir
    cfg = yaml.safe_load((run_dir / "config.yaml").read_text())
    summary = json.loads((run_dir / "summary.json").read_text())
    flows = pd.read_parquet(run_dir / "flows.parquet")
    assert summary["run"]["seed"] == cfg["seed"]
    assert set(flows["seed"]) == {cfg["seed"]}
    # config.yaml is the config that was run: its hash is the one the summary records
    assert summary["provenance"]["config_hash"] == config_hash(
        OmegaConf.load(run_dir / "config.yaml")
    )
    assert (run_dir / "run.log").read_text().strip()
    return summary


def test_concurrent_runs_get_distinct_complete_consistent_folders(tmp_path):
    procs = [uno_cli([*SMALL, f"seed={s}"], tmp_path) for s in range(1, 5)]
    outs = [p.communicate(timeout=600) for p in procs]
    for p, (_out, err) in zip(procs, outs, strict=True):
        assert p.returncode == 0, err
    printed = {
        line.split("results: ", 1)[1]
        for out, _ in outs
        for line in out.splitlines()
        if line.startswith("results: ")
    }
    assert len(printed) == 4
    runs = [p for p in (tmp_path / "results" / "default").iterdir()]
    assert len(runs) == 4 and {str(p) for p in runs} == printed
    seeds = sorted(assert_consistent(p)["run"]["seed"] for p in runs)
    assert seeds == list(range(1, 5))


def test_summary_carries_provenance(tmp_path):
    result = uno.run(uno.compose(SMALL), out_dir=tmp_path / "r")
    prov = json.loads((tmp_path / "r" / "summary.json").read_text())["provenance"]
    assert prov["uno_version"] == uno.__version__
    assert prov["config_hash"] == config_hash(uno.compose(SMALL)) and len(prov["config_hash"]) == 64
    assert prov["python"].count(".") == 2 and prov["host"]
    assert {"numpy", "pandas", "simpy", "hydra-core"} <= set(prov["libraries"])
    assert prov["wall_s"] >= result.summary["run"]["wall_s"] > 0
    assert prov["started_at"] <= prov["finished_at"]
    # run from this checkout: the commit is recorded (None only for an install without git)
    if (Path(uno.__file__).parent.parent / ".git").exists():
        assert len(prov["git"]["commit"]) == 40 and isinstance(prov["git"]["dirty"], bool)
    # the API writes the resolved config too
    cfg = yaml.safe_load((tmp_path / "r" / "config.yaml").read_text())
    assert cfg["workload"]["size_bytes"] == 4_000_000 and cfg["topo"]["k"] == 4


def test_git_state_is_what_git_reports():
    """The one ``git status`` call reads the same commit and dirtiness as asking git for each."""
    root = Path(uno.__file__).resolve().parent.parent
    if not (root / ".git").exists():
        pytest.skip("uno is not imported from a git checkout")

    def git(*args):
        return subprocess.run(
            ["git", "-C", str(root), *args], capture_output=True, text=True, check=True
        ).stdout.strip()

    state = git_state()
    assert state["commit"] == git("rev-parse", "HEAD")
    assert state["dirty"] == bool(git("status", "--porcelain", "--untracked-files=no"))


def test_config_hash_ignores_where_and_how_but_not_what():
    base = config_hash(uno.compose(SMALL))
    assert base == config_hash(uno.compose([*SMALL, "out_dir=/x", "overwrite=true"]))
    assert base == config_hash(uno.compose([*SMALL, "engine.progress=true"]))
    assert base != config_hash(uno.compose([*SMALL, "seed=2"]))
    assert base != config_hash(uno.compose([*SMALL, "cc.uno.qa_beta=0.4"]))


@pytest.mark.parametrize("overrides", [
    SMALL, ["experiment=fig10_load", "scheme=uno", "workload.load=0.7"],
    ["experiment=fig4_phantom", "seed=5"], ["experiment=gemini_k_sweep", "engine.kind=fluid"],
    ["experiment=hpcc_incast"], ["experiment=pfc_spreading", "out_dir=/x"],
])  # fmt: skip
def test_composed_config_and_its_dataclass_hash_alike(overrides):
    """uno.run hashes the composed DictConfig when it has one (the dataclass must first be
    turned back into a DictConfig, 20-50x slower): both give the same hash, so results stored
    by either path are found again by the other."""
    from uno.api import to_run_config

    cfg = uno.compose(overrides)
    assert config_hash(cfg) == config_hash(to_run_config(cfg))


def _staging(root: Path) -> list[Path]:
    return [p for p in root.iterdir() if p.name.startswith(".run.partial-")]


KILL_POINTS = {
    "starting": lambda root: True,
    "running": lambda root: bool(_staging(root)),
    "writing": lambda root: any(list(p.glob("*.parquet")) for p in _staging(root)),
    "done": lambda root: (root / "run" / "summary.json").exists(),
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_a_killed_run_leaves_nothing_that_looks_complete(tmp_path, point):
    out = tmp_path / "run"
    # a longer run with large sampled tables, so that the kill lands inside each phase (a
    # kill after the end needs none)
    args = SMALL
    if point in ("running", "writing"):
        args = [*SMALL, "workload.size_bytes=20000000", "engine.sample_interval_us=1"]
    proc = uno_cli([*args, "engine.queue_ports=[all]", f"out_dir={out}"], tmp_path)
    reached = KILL_POINTS[point]
    deadline = time.monotonic() + 120
    while not reached(tmp_path) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    assert reached(tmp_path), f"the run ended before reaching {point!r}"
    proc.send_signal(signal.SIGKILL)
    proc.communicate()
    for d in [tmp_path, *visible_dirs(tmp_path)]:
        if (d / "summary.json").exists():
            assert d == out
            assert_consistent(d)  # killed after completing: complete and consistent
        else:
            # nothing half-written under a run's name: only an empty folder at most
            assert not list(d.glob("*.parquet")) and not (d / "config.yaml").exists(), d


def test_refused_config_leaves_no_folder(tmp_path):
    out = tmp_path / "new"
    proc = uno_cli([*SMALL, "workload.size_bytes=-5", f"out_dir={out}"], tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 2 and "workload.size_bytes" in err
    assert list(tmp_path.iterdir()) == []


def _snapshot(folder: Path) -> dict[str, tuple[bytes, int]]:
    return {p.name: (p.read_bytes(), p.stat().st_mtime_ns) for p in folder.iterdir()}


def test_complete_run_is_never_overwritten_unless_asked(tmp_path):
    out = tmp_path / "run"
    uno.run(uno.compose(SMALL), out_dir=out)
    before = _snapshot(out)
    for args in (
        [*SMALL, f"out_dir={out}"],
        [*SMALL, "seed=2", f"out_dir={out}"],
        [*SMALL, "workload.size_bytes=-5", f"out_dir={out}"],
    ):
        proc = uno_cli(args, tmp_path)
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 2, err
        assert "out_dir" in err or "size_bytes" in err
        assert _snapshot(out) == before
    with pytest.raises(ConfigError):
        uno.run(uno.compose([*SMALL, "seed=2"]), out_dir=out)
    assert _snapshot(out) == before
    # asked: replaced by a complete run of the new config
    proc = uno_cli([*SMALL, "seed=2", f"out_dir={out}", "overwrite=true"], tmp_path)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert assert_consistent(out)["run"]["seed"] == 2
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")], "staging left behind"


def test_folder_holding_other_files_is_refused(tmp_path):
    (tmp_path / "notes.txt").write_text("mine")
    with pytest.raises(ConfigError) as err:
        uno.run(uno.compose(SMALL), out_dir=tmp_path)
    assert "not a uno run" in str(err.value)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]


def test_a_failing_run_removes_its_staging_folder(tmp_path, monkeypatch):
    from uno import simulation as sim_module

    def boom(self, *a, **k):
        raise RuntimeError("injected failure")

    monkeypatch.setattr(sim_module.Simulation, "run", boom)
    with pytest.raises(RuntimeError):
        uno.run(uno.compose(SMALL), out_dir=tmp_path / "run")
    assert list(tmp_path.iterdir()) == []


def test_multirun_out_dir_is_the_sweep_directory(tmp_path):
    proc = uno_cli(["-m", *SMALL, "seed=1,2", f"out_dir={tmp_path / 'sw'}"], tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert [assert_consistent(tmp_path / "sw" / str(j))["run"]["seed"] for j in (0, 1)] == [1, 2]


def test_run_log_and_header(tmp_path):
    proc = uno_cli([*SMALL, f"out_dir={tmp_path / 'r'}", "engine.progress=false"], tmp_path)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    first = out.splitlines()[0]
    assert first.startswith("uno run 'default' seed=1:") and str(tmp_path / "r") in first
    log = (tmp_path / "r" / "run.log").read_text()
    assert "uno run 'default' seed=1:" in log and "mean FCT us" in log and "run complete" in log
    assert os.path.getsize(tmp_path / "r" / "run.log") > 200

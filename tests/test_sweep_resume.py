"""Resumable sweeps: a multirun re-run into the same sweep directory skips the jobs whose folder
holds a complete run of the same config and runs the rest, with the basic, joblib and submitit
(local) launchers; ``overwrite=true`` redoes them; the collected table of a resumed sweep equals
an uninterrupted one's."""

from __future__ import annotations

import signal
import subprocess
import time
from pathlib import Path

import pandas as pd
import pytest
from conftest import SMALL_INCAST, uno_cli

from uno.metrics.sweep import collect_flows, collect_summaries, sweep_status
from uno.metrics.sweep import main as collect_main

SMALL = [*SMALL_INCAST, "engine.sample_interval_us=0"]


def sweep(args, cwd) -> subprocess.Popen:
    return uno_cli(["-m", *SMALL, *args], cwd)


def finish(proc) -> str:
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    return out


def finished_summaries(sweep_dir: Path) -> list[Path]:
    """summary.json of the job folders in place (not of a staging folder, ``.<job>.partial-*``,
    that holds its summary for the instant before its rename)."""
    return [p for p in sweep_dir.glob("*/summary.json") if not p.parent.name.startswith(".")]


def complete_jobs(sweep_dir: Path) -> set[int]:
    return {int(p.parent.name) for p in finished_summaries(sweep_dir)}


def summary_mtimes(sweep_dir: Path) -> dict[int, int]:
    return {int(p.parent.name): p.stat().st_mtime_ns for p in finished_summaries(sweep_dir)}


def ran_and_skipped(out: str) -> tuple[set[int], set[int]]:
    ran = {int(line.rsplit("/", 1)[1]) for line in out.splitlines() if line.startswith("results: ")}
    skipped = {int(line.split()[1].rstrip(":")) for line in out.splitlines() if "skipped" in line}
    return ran, skipped


def test_interrupted_sweep_resumes_only_the_missing_jobs(tmp_path):
    sw = tmp_path / "sw"
    seeds = "seed=1,2,3,4"
    proc = sweep([seeds, f"hydra.sweep.dir={sw}"], tmp_path)
    while len(complete_jobs(sw)) < 2 and proc.poll() is None:
        time.sleep(0.01)
    proc.send_signal(signal.SIGKILL)  # the basic launcher runs jobs one after the other
    proc.communicate()
    done_before = summary_mtimes(sw)
    assert 2 <= len(done_before) < 4, done_before
    out = finish(sweep([seeds, f"hydra.sweep.dir={sw}"], tmp_path))
    ran, skipped = ran_and_skipped(out)
    assert skipped == set(done_before) and ran == {0, 1, 2, 3} - set(done_before)
    after = summary_mtimes(sw)
    assert all(after[j] == done_before[j] for j in done_before), "a complete job ran again"
    assert not [p for p in sw.iterdir() if p.name.startswith(".")], "staging left behind"
    # the same sweep, uninterrupted
    ref = tmp_path / "ref"
    finish(sweep([seeds, f"hydra.sweep.dir={ref}"], tmp_path))
    pd.testing.assert_frame_equal(collect_flows(sw), collect_flows(ref))
    flows = collect_flows(sw)
    assert sorted(flows["seed"].unique()) == [1, 2, 3, 4] and "job" in flows
    summaries = collect_summaries(sw)
    assert list(summaries["job"]) == [0, 1, 2, 3] and list(summaries["seed"]) == [
        "1",
        "2",
        "3",
        "4",
    ]


@pytest.mark.slow  # (half a minute; the submitit and interrupted sweeps resume in the default run)
def test_joblib_sweep_resumes_and_overwrite_redoes(tmp_path):
    sw = tmp_path / "sw"
    args = ["hydra/launcher=joblib", "hydra.launcher.n_jobs=2", "seed=1,2", f"hydra.sweep.dir={sw}"]
    finish(sweep(args, tmp_path))
    first = summary_mtimes(sw)
    assert set(first) == {0, 1}
    ran, skipped = ran_and_skipped(finish(sweep(args, tmp_path)))
    assert ran == set() and skipped == {0, 1} and summary_mtimes(sw) == first
    for p in (sw / "1").iterdir():
        p.unlink()
    (sw / "1").rmdir()
    ran, skipped = ran_and_skipped(finish(sweep(args, tmp_path)))
    assert ran == {1} and skipped == {0}
    ran, skipped = ran_and_skipped(finish(sweep([*args, "overwrite=true"], tmp_path)))
    assert ran == {0, 1} and skipped == set()


def test_submitit_local_sweep_resumes(tmp_path):
    sw = tmp_path / "sw"
    args = ["hydra/launcher=submitit_local", "seed=1,2", f"hydra.sweep.dir={sw}"]
    finish(sweep(args, tmp_path))
    assert complete_jobs(sw) == {0, 1}
    (sw / "0" / "summary.json").unlink()  # as if job 0 had been killed before completing
    before = summary_mtimes(sw)
    finish(sweep(args, tmp_path))
    after = summary_mtimes(sw)
    assert set(after) == {0, 1} and after[1] == before[1]


def test_a_changed_sweep_into_the_same_directory_is_refused(tmp_path):
    sw = tmp_path / "sw"
    finish(sweep(["seed=1", f"hydra.sweep.dir={sw}"], tmp_path))
    before = summary_mtimes(sw)
    proc = sweep(["seed=5", f"hydra.sweep.dir={sw}"], tmp_path)
    _, err = proc.communicate(timeout=300)
    assert proc.returncode == 2 and "different config" in err and err.count("\n") == 1, err
    assert summary_mtimes(sw) == before


def test_collect_command(tmp_path, capsys):
    sw = tmp_path / "sw"
    finish(sweep(["seed=1,2", f"hydra.sweep.dir={sw}"], tmp_path))
    (sw / "1" / "summary.json").unlink()
    assert collect_main([str(sw), "--out", str(tmp_path / "all.parquet")]) == 0
    out = capsys.readouterr().out
    assert "2 job folders, 1 complete" in out and "incomplete" in out and "[1]" in out
    assert list(sweep_status(sw)["complete"]) == [True, False]
    assert set(pd.read_parquet(tmp_path / "all.parquet")["job"]) == {0}

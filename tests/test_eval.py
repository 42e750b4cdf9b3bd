"""``uno-eval``: the evaluation's sweeps have the artifact's repetition counts, select by presets
and figure, list as uno-run commands, run with one progress line, resume, and end with
figures, a timing file and a ledger table measured on their runs."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from uno.claims.eval_cli import jobs_of, timing
from uno.claims.evaluation import EVALUATION, select_sweeps
from uno.runs import Job, JobOutcome


def _jobs(presets, figures=()):
    return jobs_of(select_sweeps(presets, figures), "out")


def test_the_artifact_counts():
    counts = {}
    for sweep, _ in _jobs(("artifact",)):
        counts[sweep.figure] = counts.get(sweep.figure, 0) + 1
    # its scripts: 9 incasts (Figs. 3 and 8), 8 permutations, 3 loads x 4 schemes, 4 RTT
    # ratios x 4, 4 buffer runs, 6 variants x 100, 100 and 10 seeds (Figs. 13 A, B, C)
    assert counts == {"fig3_fig8": 9, "fig4": 2, "fig9": 8, "fig10": 12, "fig11": 16,
                      "fig12": 4, "fig13a": 600, "fig13b": 600, "fig13c": 60}  # fmt: skip
    seeds = {o for s, j in _jobs(("artifact",), ("fig13a",)) for o in j.overrides if "seed" in o}
    assert seeds == {f"seed={s}" for s in range(111, 211)}


def test_selection_and_folders():
    pairs = _jobs(("paper",), ("fig13",))
    assert {s.figure for s, _ in pairs} == {"fig13a", "fig13b", "fig13c"}
    assert pairs[0][1].folder == "out/paper/fig13a/linkfail/0"
    assert len({j.folder for _, j in _jobs(("artifact", "paper"))}) == len(
        _jobs(("artifact", "paper"))
    )
    with pytest.raises(ValueError, match="presets"):
        select_sweeps(("nope",))
    with pytest.raises(ValueError, match="fig99"):
        select_sweeps(("artifact",), ("fig99",))
    assert all(s.presets in ("artifact", "paper") for s in EVALUATION)


def test_timing_counts_each_figure_and_the_time_beyond_the_engine():
    pairs = _jobs(("artifact",), ("fig12",))[:2]
    outcomes = [
        JobOutcome(Job((), "a"), "complete", False, engine_s=1.0, job_s=1.5, started_at=100.0),
        JobOutcome(Job((), "b"), "complete", False, engine_s=2.0, job_s=2.1, started_at=101.0),
    ]
    t = timing(pairs, outcomes, wall_s=3.2, workers=2)
    fig = t["figures"]["artifact/fig12"]
    assert fig["wall_s"] == pytest.approx(3.1) and fig["core_s"] == pytest.approx(3.6)
    assert t["wall_s"] == pytest.approx(3.1) and t["command_wall_s"] == 3.2
    assert t["beyond_engine_s"]["mean"] == pytest.approx(0.3)


def test_a_figure_runs_resumes_and_ends_with_figures_and_the_ledger(tmp_path):
    cmd = [sys.executable, "-m", "uno.claims.eval_cli", "--figures", "fig4", "--jobs", "2",
           "--out", str(tmp_path)]  # fmt: skip
    first = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert "2/2 runs (0 reused, 0 failed)" in first.stderr
    base = tmp_path / "artifact"
    stats = json.loads((base / "timing.json").read_text())
    assert stats["ran"] == 2 and stats["figures"]["artifact/fig4"]["engine_core_s"] > 0
    assert (base / "fig4" / "class_bars.png").exists()
    assert sorted(p.name for p in (base / "fig4" / "phantom").iterdir()) == ["0", "1"]
    ledger = (base / "claims.md").read_text()
    assert "not run" in ledger  # the claims of other figures
    again = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    assert again.returncode == 0 and "2/2 runs (2 reused, 0 failed)" in again.stderr
    listed = subprocess.run([*cmd, "--list"], capture_output=True, text=True, timeout=300)
    lines = listed.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("uno-run experiment=artifact_check_fig4")
    assert lines[0].endswith(f"out_dir={base}/fig4/phantom/0")

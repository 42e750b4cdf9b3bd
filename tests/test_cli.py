"""The ``uno-run`` command line: results on disk, readable summary, clear config errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pandas as pd

SMALL = ["workload.size_bytes=200000", "engine.sample_interval_us=20"]


def uno_run(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "uno.cli", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_run_writes_tables_and_prints_summary(tmp_path):
    out = tmp_path / "run"
    proc = uno_run([*SMALL, f"out_dir={out}"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "mean FCT us" in proc.stdout and "intra" in proc.stdout and "inter" in proc.stdout
    for name in (
        "flows.parquet",
        "rates.parquet",
        "cwnd.parquet",
        "queues.parquet",
        "summary.json",
        "config.yaml",
    ):
        assert (out / name).exists(), name
    flows = pd.read_parquet(out / "flows.parquet")
    assert len(flows) == 8 and set(flows.cls) == {"intra", "inter"}
    expected = {
        "flow_id",
        "src",
        "dst",
        "cls",
        "size_bytes",
        "start_ps",
        "finish_ps",
        "fct_ps",
        "ideal_fct_ps",
        "slowdown",
        "retransmits",
        "cc",
        "lb",
        "seed",
    }
    assert expected <= set(flows.columns)
    summary = json.loads((out / "summary.json").read_text())
    assert summary["classes"]["all"]["finished"] == 8
    assert summary["run"]["all_flows_finished"] is True


def test_hydra_run_dir_by_default(tmp_path):
    proc = uno_run([*SMALL, "engine.sample_interval_us=0", "name=clitest"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    runs = list((tmp_path / "results" / "clitest").glob("*/summary.json"))
    assert len(runs) == 1


def test_config_error_exits_with_one_clear_message(tmp_path):
    proc = uno_run(["switch.ecn.kmin_frac=0.9", "switch.ecn.kmax_frac=0.5"], tmp_path)
    assert proc.returncode == 2
    assert "switch.ecn.kmin_frac" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_misspelt_key_is_refused_by_the_cli(tmp_path):
    proc = uno_run(["cc.dctcp.gamma=3"], tmp_path)
    assert proc.returncode != 0
    assert "gamma" in proc.stderr
    assert not (tmp_path / "results").exists() or not list(
        (tmp_path / "results").rglob("summary.json")
    )

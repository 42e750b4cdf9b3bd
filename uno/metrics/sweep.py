"""Collecting a sweep (a Hydra multirun directory, one folder per job) into one table.

    uno-collect results/fig3_fairness/multirun-...            # prints one line per job
    uno-collect SWEEP_DIR --out sweep_flows.parquet            # writes the combined flows

:func:`collect_flows` concatenates the jobs' ``flows.parquet`` with a ``job`` column and one
column per override the jobs were given (``cc``, ``seed``, ``topo.wan_links``, ...), so a sweep
is one tidy table; :func:`collect_summaries` gives one row per job. Only complete job folders
(with ``summary.json``) are read; :func:`sweep_status` lists the others, and
:func:`incomplete_jobs_text` the complete folders of runs that did not do their job (flows they
waited for unfinished at the stop time: ``run.status`` "incomplete").
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import pandas as pd

from uno.config.schema import RUN_CONTROL_KEYS
from uno.core.console import quiet_broken_pipes
from uno.metrics.io import read_run
from uno.metrics.rundir import SUMMARY_FILE, is_complete


def job_dirs(sweep_dir: str | Path) -> list[Path]:
    """Job folders of a sweep (named by job number), in job order; hidden staging folders of
    unfinished runs are not jobs."""
    root = Path(sweep_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"{root} is not a directory")
    dirs = [p for p in root.iterdir() if p.is_dir() and p.name.isdigit()]
    return sorted(dirs, key=lambda p: int(p.name))


def sweep_status(sweep_dir: str | Path) -> pd.DataFrame:
    """One row per job folder: job number, complete or not, config hash."""
    rows = []
    for d in job_dirs(sweep_dir):
        complete = is_complete(d)
        cfg_hash = None
        if complete:
            summary = json.loads((d / SUMMARY_FILE).read_text())
            cfg_hash = (summary.get("provenance") or {}).get("config_hash")
        rows.append({"job": int(d.name), "complete": complete, "config_hash": cfg_hash})
    return pd.DataFrame(rows, columns=["job", "complete", "config_hash"])


def _override_columns(summary: dict) -> dict[str, str]:
    out = {}
    for item in summary.get("run", {}).get("overrides", []) or []:
        key, _, value = item.partition("=")
        key = key.lstrip("+~")
        if key not in RUN_CONTROL_KEYS:
            out[key] = value
    return out


def collect_flows(sweep_dir: str | Path) -> pd.DataFrame:
    """Every complete job's flows, with ``job`` and one column per override."""
    frames = []
    for d in job_dirs(sweep_dir):
        if not is_complete(d):
            continue
        run = read_run(d)
        flows = run["flows"].copy()
        flows.insert(0, "job", int(d.name))
        for key, value in _override_columns(run["summary"]).items():
            if key not in flows.columns:
                flows[key] = value
        frames.append(flows)
    if not frames:
        return pd.DataFrame()
    return pd.concat(frames, ignore_index=True)


def collect_summaries(sweep_dir: str | Path) -> pd.DataFrame:
    """One row per complete job: overrides, per-class FCT statistics, run facts."""
    rows = []
    for d in job_dirs(sweep_dir):
        if not is_complete(d):
            continue
        summary = json.loads((d / SUMMARY_FILE).read_text())
        row = {"job": int(d.name), **_override_columns(summary)}
        run = summary.get("run", {})
        for key in ("cc", "lb", "seed", "sim_time_us", "wall_s", "all_flows_finished", "status"):
            row[f"run.{key}"] = run.get(key)
        for cls, stats in summary.get("classes", {}).items():
            if isinstance(stats, dict):
                for key, value in stats.items():
                    row[f"{cls}.{key}"] = value
        row["config_hash"] = (summary.get("provenance") or {}).get("config_hash")
        rows.append(row)
    return pd.DataFrame(rows)


def incomplete_jobs_text(sweep_dir: str | Path) -> str | None:
    """One line naming the jobs of a sweep whose run was incomplete (with the overrides that
    tell the jobs apart, and their unfinished flows), or None if there are none."""
    runs = {}
    for d in job_dirs(sweep_dir):
        if is_complete(d):
            runs[d.name] = json.loads((d / SUMMARY_FILE).read_text()).get("run", {})
    overrides = {job: _override_columns({"run": run}) for job, run in runs.items()}
    keys = {k for o in overrides.values() for k in o}
    swept = [k for k in sorted(keys) if len({o.get(k) for o in overrides.values()}) > 1]
    found = []
    for job, run in runs.items():
        if run.get("status") == "incomplete":
            which = " ".join(f"{k}={overrides[job].get(k)}" for k in swept)
            found.append(
                f"job {job}{f' ({which})' if which else ''}: "
                f"{run.get('required_flows_unfinished')} of {run.get('required_flows')} "
                "required flows unfinished"
            )
    if not found:
        return None
    return (
        f"{len(found)} of {len(runs)} runs incomplete at the stop time (set "
        f"engine.allow_unfinished=true if time-bounded runs are intended): " + "; ".join(found)
    )


def main(argv: list[str] | None = None) -> int:
    with quiet_broken_pipes():
        return _main(argv)


def _main(argv: list[str] | None) -> int:
    parser = argparse.ArgumentParser(
        prog="uno-collect", description="Collect a sweep's job folders into one table."
    )
    parser.add_argument("sweep_dir", help="a multirun directory (one folder per job number)")
    parser.add_argument("--out", help="write the combined flows table here (.parquet or .csv)")
    args = parser.parse_args(argv)
    try:
        status = sweep_status(args.sweep_dir)
    except FileNotFoundError as exc:
        print(f"uno-collect: {exc}", file=sys.stderr)
        return 2
    summaries = collect_summaries(args.sweep_dir)
    n_done = int(status["complete"].sum()) if len(status) else 0
    print(f"{args.sweep_dir}: {len(status)} job folders, {n_done} complete")
    missing = status.loc[~status["complete"], "job"].tolist() if len(status) else []
    if missing:
        print(f"incomplete (re-run the sweep into the same directory to finish): {missing}")
    incomplete = incomplete_jobs_text(args.sweep_dir)
    if incomplete:
        print(incomplete)
    if len(summaries):
        cols = [c for c in summaries.columns if not c.startswith(("intra.", "inter.", "config"))]
        keep = [c for c in cols if c.startswith(("job", "all.fct_mean", "all.fct_p99"))] + [
            c for c in cols if "." not in c and c != "job"
        ]
        with pd.option_context("display.width", 160, "display.max_columns", 20):
            print(summaries[list(dict.fromkeys(keep))].to_string(index=False))
    if args.out:
        flows = collect_flows(args.sweep_dir)
        out = Path(args.out)
        if out.suffix == ".csv":
            flows.to_csv(out, index=False)
        else:
            flows.to_parquet(out, index=False)
        print(f"wrote {len(flows)} flow rows to {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

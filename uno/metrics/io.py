"""Writing results so that nothing half-written looks complete: every table is written to a
temporary file and renamed into place, and ``summary.json`` (the marker of a complete run) is
written last. A run that fails midway leaves no ``summary.json``."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd

SUMMARY_FILE = "summary.json"


def _atomic_replace(tmp: Path, final: Path) -> None:
    os.replace(tmp, final)


def write_table(df: pd.DataFrame, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    df.to_parquet(tmp, index=False)
    _atomic_replace(tmp, path)


def write_json(obj: dict, path: Path) -> None:
    tmp = path.with_name(path.name + ".tmp")
    with open(tmp, "w") as fh:
        json.dump(obj, fh, indent=2, sort_keys=False, default=_json_default)
        fh.write("\n")
    _atomic_replace(tmp, path)


def _json_default(obj):
    if hasattr(obj, "item"):
        return obj.item()
    raise TypeError(f"not JSON serialisable: {type(obj)}")


def write_results(out_dir: Path, tables: dict[str, pd.DataFrame], summary: dict) -> None:
    """Write ``<name>.parquet`` for each table, then ``summary.json``."""
    out_dir.mkdir(parents=True, exist_ok=True)
    stale = out_dir / SUMMARY_FILE
    if stale.exists():
        stale.unlink()  # a re-run into the same directory must not look complete until it is
    for name, df in tables.items():
        write_table(df, out_dir / f"{name}.parquet")
    write_json(summary, out_dir / SUMMARY_FILE)


def read_run(run_dir: str | Path) -> dict[str, object]:
    """Load a complete run directory: its tables (DataFrames) and ``summary`` (dict)."""
    run_dir = Path(run_dir)
    summary_path = run_dir / SUMMARY_FILE
    if not summary_path.exists():
        raise FileNotFoundError(
            f"{run_dir} has no {SUMMARY_FILE}: the run is missing or incomplete"
        )
    out: dict[str, object] = {"summary": json.loads(summary_path.read_text())}
    for path in sorted(run_dir.glob("*.parquet")):
        out[path.stem] = pd.read_parquet(path)
    return out

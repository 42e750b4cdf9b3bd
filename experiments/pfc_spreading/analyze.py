"""PFC congestion spreading, from run tables: the victim flows' completion times with the
incast and PFC, with the incast and no PFC (lossy), and alone, and the pauses per tier.

    python experiments/pfc_spreading/analyze.py RUN_OR_SWEEP_DIR [MORE_DIRS...] [--out DIR]

Give the three runs' directories (or one directory holding them). Prints a table per run and
writes ``pfc_spreading.json``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd

from uno.metrics.analysis import load_runs, write_json

PS_PER_US = 10**6


def analyse_run(run: dict) -> dict:
    flows = run["flows"]
    summary = run["summary"]
    cfg = run.get("config") or {}
    pfc_on = bool(((cfg.get("switch") or {}).get("pfc") or {}).get("enabled", "pfc" in summary))
    victims = flows[flows["tag"] == "victim"]
    incast = flows[flows["tag"] == "incast"]
    pauses = run.get("pauses")
    by_port = {}
    if pauses is not None and len(pauses):
        # the tier of the paused port's owner: hosts (NICs), ToRs, aggregation, core switches
        owner = pauses["port"].str.split("->").str[0].str.rstrip("0123456789")
        by_port = pauses.groupby(owner)["duration_us"].sum().round(1).to_dict()
    return {
        "run": summary["run"]["name"],
        "pfc": pfc_on,
        "incast_flows": int(len(incast)),
        "victim_fct_us": [round(float(x) / PS_PER_US, 1) for x in victims["fct_ps"]],
        "victim_mean_gbps": [round(float(x), 2) for x in victims["mean_rate_gbps"]],
        # pauses of the victims' own NICs: their ToR's ingress queue from them, which only their
        # packets fill, crossed Xoff because the ToR's uplinks were paused
        "victim_nic_pause_us": [
            round(
                float(pauses.loc[pauses["port"].str.startswith(f"h{src}->"), "duration_us"].sum()),
                1,
            )
            if pauses is not None and len(pauses)
            else 0.0
            for src in victims["src"]
        ],
        "incast_mean_fct_us": float(incast["fct_ps"].mean()) / PS_PER_US if len(incast) else None,
        "drops": int(sum(summary["packets"]["dropped"].values())),
        "pause_us_by_owner": by_port,
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("paths", nargs="+", help="run or sweep directories")
    ap.add_argument("--out", help="where to write the JSON (default: the first path)")
    args = ap.parse_args()
    rows = [analyse_run(run) for path in args.paths for run in load_runs(path)]
    if not rows:
        raise SystemExit(f"no complete runs under {args.paths}")
    with pd.option_context("display.width", 200, "display.max_colwidth", 80):
        print(pd.DataFrame(rows).to_string(index=False))
    out = Path(args.out or args.paths[0])
    out.mkdir(parents=True, exist_ok=True)
    write_json(rows, out / "pfc_spreading.json")


if __name__ == "__main__":
    main()

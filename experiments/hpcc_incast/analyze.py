"""HPCC vs DCQCN on a lossless incast, from run tables: per scheme, the flows' completion times,
the receiver port's queue (sampled every ``engine.sample_interval_us``) and the PFC pauses.

    python experiments/hpcc_incast/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

Prints a table and writes ``hpcc_incast.json``. The claims checked (HPCC, Li et al., SIGCOMM
2019, §5): HPCC keeps the bottleneck queue near zero where DCQCN builds one, and PFC pauses
appear under DCQCN.
"""

from __future__ import annotations

import pandas as pd

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, scheme_label, write_json

PS_PER_US = 10**6


def analyse_run(run: dict) -> dict:
    flows = run["flows"]
    summary = run["summary"]
    fct_us = flows["fct_ps"].astype("float64") / PS_PER_US
    queues = run.get("queues")
    q = queues["queue_bytes"] if queues is not None and len(queues) else pd.Series([0.0])
    pfc = summary.get("pfc", {})
    return {
        "scheme": scheme_label(run),
        "flows": int(len(flows)),
        "finished": int(flows["finish_ps"].notna().sum()),
        "mean_fct_us": float(fct_us.mean()),
        "max_fct_us": float(fct_us.max()),
        "receiver_queue_median_kb": float(q.median()) / 1e3,
        "receiver_queue_p99_kb": float(q.quantile(0.99)) / 1e3,
        "receiver_queue_max_kb": float(q.max()) / 1e3,
        "pause_frames": int(pfc.get("pause_frames", 0)),
        "ports_paused": int(pfc.get("ports_paused", 0)),
        "pause_us": float(pfc.get("total_pause_us", 0.0)),
        "drops": int(sum(summary["packets"]["dropped"].values())),
        "retransmits": int(summary.get("retransmits", 0)),
    }


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    rows = [analyse_run(run) for run in load_runs(args.path)]
    if not rows:
        raise SystemExit(f"no complete runs under {args.path}")
    table = pd.DataFrame(rows).sort_values("scheme")
    with pd.option_context("display.width", 200, "display.max_columns", 20):
        print(table.to_string(index=False, float_format=lambda x: f"{x:.1f}"))
    write_json(rows, output_dir(args) / "hpcc_incast.json")


if __name__ == "__main__":
    main()

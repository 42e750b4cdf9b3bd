"""Uno paper Fig. 13 C from a sweep of experiment=fig13_ai: each iteration's collective
completion time (the last flow of the iteration's all-reduce to finish, from the iteration's
start) and its ratio to the ideal (the slowest flow's ideal FCT, all flows in parallel), per
variant over seeds. The paper plots the runtime relative to the ideal.

    python experiments/fig13_ai/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

import pandas as pd

from uno.metrics.analysis import (
    analysis_parser,
    collective_times,
    load_runs,
    output_dir,
    write_json,
)

PS_PER_MS = 10**9


def iteration_rows(path) -> pd.DataFrame:
    rows = []
    for run in load_runs(path):
        cfg = run["config"]
        variant = cfg["lb"]["algo"] + ("+EC" if cfg["ec"]["kind"] != "none" else "")
        for it in collective_times(run["flows"]).itertuples():
            finished = pd.notna(it.cct_ps)  # (NaN when a flow did not finish)
            rows.append(
                {
                    "variant": variant,
                    "seed": cfg["seed"],
                    "iteration": int(it.tag[2:]),
                    "cct_ms": it.cct_ps / PS_PER_MS if finished else None,
                    "ideal_ms": it.ideal_ps / PS_PER_MS,
                    "ratio": it.ratio if finished else None,
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    rows = iteration_rows(args.path)
    order = ["spray", "spray+EC", "plb", "plb+EC", "unolb", "unolb+EC"]
    g = rows.groupby("variant")
    table = pd.DataFrame(
        {
            "iterations": g.size(),
            "unfinished": g["cct_ms"].apply(lambda s: int(s.isna().sum())),
            "cct_ms (mean)": g["cct_ms"].mean(),
            "ratio (mean)": g["ratio"].mean(),
            "ratio (median)": g["ratio"].median(),
            "ratio (max)": g["ratio"].max(),
        }
    )
    table = table.loc[[v for v in order if v in table.index]]
    print("collective completion time per iteration, ratio = CCT / ideal")
    print(table.round(3).to_string())
    write_json(
        {"iterations": rows.to_dict("records"), "table": table.reset_index().to_dict("records")},
        out / "fig13_ai.json",
    )


if __name__ == "__main__":
    main()

"""The Uno paper's Figs. 10-12 as its authors' artifact runs them, from a sweep of
experiment=artifact_fig10, artifact_fig11 or artifact_fig12: per connection matrix, WAN delay,
buffers, scheme and flow class (and all flows), the finished flows' mean and p99 FCT (µs) and
FCT slowdown (FCT / the flow's ideal FCT alone on its path; Fig. 11's measure), the unfinished
flows,
and with several seeds the spread over seeds. With ``--artifact CSV`` (columns ``scheme,cls,
mean_fct_us,p99_fct_us``: the artifact's own runs of the same settings) each row also shows
ours / artifact.

    python experiments/artifact_fig10/analyze.py SWEEP_DIR [--artifact CSV] [--out DIR]
"""

from __future__ import annotations

import pandas as pd

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, write_json

PS_PER_US = 1_000_000


def run_rows(path) -> pd.DataFrame:
    """One row per run and class: its settings and FCT statistics."""
    rows = []
    for run in load_runs(path):
        cfg = run["config"]
        choices = run["summary"]["run"].get("choices") or {}
        flows = run["flows"]
        for cls, group in [*flows.groupby("cls"), ("all", flows)]:
            fct = group["fct_ps"].dropna().astype(float) / PS_PER_US
            slowdown = group["slowdown"].dropna().astype(float)
            rows.append(
                {
                    "matrix": str(cfg["workload"].get("path", "")).removeprefix(
                        "websearchIntra_AlibabaInter_"
                    ),
                    "wan_delay_us": cfg["topo"]["wan_delay_us"],
                    "intra_buffer": cfg["topo"].get("intra_buffer_bytes")
                    or cfg["topo"]["buffer_bytes"],
                    "scheme": str(choices.get("scheme", "")).removeprefix("artifact_"),
                    "cls": cls,
                    "seed": cfg["seed"],
                    "flows": len(group),
                    "unfinished": int(group["fct_ps"].isna().sum()),
                    "mean_fct_us": fct.mean(),
                    "p99_fct_us": fct.quantile(0.99),
                    "mean_slowdown": slowdown.mean(),
                    "p99_slowdown": slowdown.quantile(0.99),
                }
            )
    return pd.DataFrame(rows)


def main() -> None:
    ap = analysis_parser(__doc__)
    ap.add_argument("--artifact", help="CSV of the artifact's per-class FCTs (see above)")
    args = ap.parse_args()
    out = output_dir(args)
    rows = run_rows(args.path)
    keys = ["matrix", "wan_delay_us", "intra_buffer", "scheme", "cls"]
    g = rows.groupby(keys)
    table = g[["flows", "unfinished", "mean_fct_us", "p99_fct_us", "mean_slowdown",
               "p99_slowdown"]].mean()  # fmt: skip
    table["seeds"] = g.size()
    if (table["seeds"] > 1).any():
        table["mean_min"], table["mean_max"] = g["mean_fct_us"].min(), g["mean_fct_us"].max()
        table["p99_min"], table["p99_max"] = g["p99_fct_us"].min(), g["p99_fct_us"].max()
    if args.artifact:
        art = pd.read_csv(args.artifact).set_index(["scheme", "cls"])
        ref = table.reset_index().join(art, on=["scheme", "cls"], rsuffix="_artifact")
        table["mean_vs_artifact"] = (ref["mean_fct_us"] / ref["mean_fct_us_artifact"]).to_numpy()
        table["p99_vs_artifact"] = (ref["p99_fct_us"] / ref["p99_fct_us_artifact"]).to_numpy()
    print("FCT (µs) of the finished flows, mean over seeds")
    print(table.round(3).to_string())
    write_json({"runs": rows.to_dict("records"), "table": table.reset_index().to_dict("records")},
               out / "artifact_figs.json")  # fmt: skip


if __name__ == "__main__":
    main()

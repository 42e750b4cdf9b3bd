"""Uno paper Fig. 13 A from a sweep of experiment=fig13_linkfail (or of the artifact's runs of
Fig. 13, experiment=artifact_fig13_*): per variant (spray, PLB, UnoLB, each without and with
erasure coding), the distribution over seeds of each run's mean and p99 FCT; the paper's claim:
UnoLB + EC has the lowest mean and p99, and EC improves each load balancer's p99.
``--ideal-ms X`` adds each run's (mean FCT - X) / X per variant, the quantity the artifact's
Fig. 13 C script plots (X = 10.4).

    python experiments/fig13_linkfail/analyze.py SWEEP_DIR [--out DIR] [--ideal-ms X]

Writes <experiment>.png (violins of each run's mean and p99 FCT per variant) and
<experiment>.json next to the runs, <experiment> being the runs' experiment name.
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.fig13 import over_ideal_table, run_rows, variant_table, violin


def claim(table) -> dict:
    mean = table["mean_fct_ms (mean)"]
    p99 = table["p99_fct_ms (mean)"]
    out = {
        "lowest_mean": mean.idxmin(),
        "lowest_p99": p99.idxmin(),
        "unolb_ec_lowest_mean_and_p99": mean.idxmin() == "unolb+EC" == p99.idxmin(),
    }
    for lb in ("spray", "plb", "unolb"):
        if lb in p99 and f"{lb}+EC" in p99:
            out[f"ec_improves_{lb}_p99"] = bool(p99[f"{lb}+EC"] < p99[lb])
    return out


def main() -> None:
    ap = analysis_parser(__doc__)
    ap.add_argument(
        "--ideal-ms",
        type=float,
        default=None,
        help="also give each run's (mean FCT - X) / X per variant (the artifact's Fig. 13 C: 10.4)",
    )
    args = ap.parse_args()
    out = output_dir(args)
    rows = run_rows(args.path)
    name = "+".join(sorted(set(rows["experiment"])))
    table = variant_table(rows)
    result = claim(table)
    print("FCTs in ms, statistics over the runs (seeds) of each variant")
    print(table.round(3).to_string())
    report = {"runs": rows.to_dict("records"), "table": table.reset_index().to_dict("records")}
    if args.ideal_ms is not None:
        over = over_ideal_table(rows, args.ideal_ms)
        print(f"each run's (mean FCT - {args.ideal_ms} ms) / {args.ideal_ms} ms")
        print(over.round(3).to_string())
        report["over_ideal"] = {"ideal_ms": args.ideal_ms} | {
            "table": over.reset_index().to_dict("records")
        }
    print(result)
    report["claim"] = result
    violin(rows, out / f"{name}.png", f"{name}: {len(rows)} runs")
    write_json(report, out / f"{name}.json")


if __name__ == "__main__":
    main()

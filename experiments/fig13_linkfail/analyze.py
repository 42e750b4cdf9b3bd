"""Uno paper Fig. 13 A from a sweep of experiment=fig13_linkfail: per variant (spray, PLB,
UnoLB, each without and with erasure coding), the distribution over seeds of each run's mean and
p99 FCT; the paper's claim: UnoLB + EC has the lowest mean and p99, and EC improves each load
balancer's p99.

    python experiments/fig13_linkfail/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.fig13 import run_rows, variant_table, violin


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
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    rows = run_rows(args.path)
    table = variant_table(rows)
    result = claim(table)
    print("FCTs in ms, statistics over the runs (seeds) of each variant")
    print(table.round(3).to_string())
    print(result)
    violin(rows, out / "fig13_linkfail.png", "Fig. 13 A: a failed border link, 8 x 5 MiB flows")
    write_json(
        {
            "runs": rows.to_dict("records"),
            "table": table.reset_index().to_dict("records"),
            "claim": result,
        },
        out / "fig13_linkfail.json",
    )


if __name__ == "__main__":
    main()

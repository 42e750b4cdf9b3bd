"""Uno paper Fig. 13 B from a sweep of experiment=fig13_random_loss: per variant, the
distribution over seeds of the flow's FCT under the Table 1 correlated loss, and the check that
no coded flow waits for a timeout when no link block lost more than y (= 2) packets.

    python experiments/fig13_random_loss/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.fig13 import run_rows, variant_table, violin


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    rows = run_rows(args.path)
    table = variant_table(rows)
    coded = rows[rows["ec"] & (rows["blocks_over_y"] == 0)]
    check = {
        "coded_runs_with_at_most_y_losses_per_block": len(coded),
        "of_them_with_a_timeout": int((coded["timeouts"] > 0).sum()),
        "holds": bool((coded["timeouts"] == 0).all()),
        "runs_with_a_loss": int((rows["retransmits"] + rows["nacks"] > 0).sum()),
    }
    print("FCTs in ms, statistics over the runs (seeds) of each variant")
    print(table.round(3).to_string())
    print(check)
    violin(
        rows, out / "fig13_random_loss.png", "Fig. 13 B: Table 1 correlated loss, one 5 MiB flow"
    )
    write_json(
        {
            "runs": rows.to_dict("records"),
            "table": table.reset_index().to_dict("records"),
            "check": check,
        },
        out / "fig13_random_loss.json",
    )


if __name__ == "__main__":
    main()

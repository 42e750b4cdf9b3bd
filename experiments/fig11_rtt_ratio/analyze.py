"""Uno paper Fig. 11 from a sweep of experiment=fig11_rtt_ratio: per inter/intra RTT ratio and
scheme, the tail (p99) FCT slowdown of each flow class, and the mean and p99 FCT.

    python experiments/fig11_rtt_ratio/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.plots import class_table, plot_lines, run_flows


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    flows = run_flows(args.path)
    table = class_table(flows, ["rtt_ratio", "label"])
    print("per RTT ratio, scheme and class (FCT in µs)")
    print(table.round(2).to_string())
    slow = table["p99_slowdown"].unstack("label")
    print("p99 slowdown (columns: schemes)")
    print(slow.round(2).to_string())
    done = flows[flows["finish_ps"].notna()]
    overall = done.groupby(["rtt_ratio", "label"])["slowdown"].quantile(0.99).unstack("label")
    print("p99 slowdown over all flows (columns: schemes)")
    print(overall.round(2).to_string())
    for cls in slow.index.get_level_values("cls").unique():
        plot_lines(slow.xs(cls, level="cls"), out / f"fig11_rtt_ratio_{cls}.png",
                   "inter/intra base-RTT ratio", "p99 FCT slowdown", f"{cls}-DC flows, 40% load")  # fmt: skip
    plot_lines(overall, out / "fig11_rtt_ratio_all.png", "inter/intra base-RTT ratio",
               "p99 FCT slowdown", "all flows, 40% load")  # fmt: skip
    write_json(
        {
            "table": table.reset_index().to_dict("records"),
            "p99_slowdown_all": overall.reset_index().to_dict("records"),
        },
        out / "fig11_rtt_ratio.json",
    )


if __name__ == "__main__":
    main()

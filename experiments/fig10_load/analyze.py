"""Uno paper Fig. 10 from a sweep of experiment=fig10_load: per load, scheme and flow class the
mean and p99 FCT, and the paper's 40%-load claim: Uno (UnoCC + UnoRC) cuts the p99 FCT of
intra-DC flows by 4.4x vs MPRDMA+BBR and 5.3x vs Gemini, and of inter-DC flows by 1.7x and 2.1x.

    python experiments/fig10_load/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.plots import (
    class_table,
    p99_ratios,
    plot_class_bars,
    run_flows,
    slowdown_by_size,
)

PAPER = {("intra", "mprdma_bbr"): 4.4, ("intra", "gemini"): 5.3, ("inter", "mprdma_bbr"): 1.7,
         ("inter", "gemini"): 2.1}  # fmt: skip


def claim(table, load: float = 0.4) -> dict:
    if load not in set(table.index.get_level_values("load")):
        return {}
    return p99_ratios(table.xs(load, level="load"), PAPER)


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    flows = run_flows(args.path)
    table = class_table(flows, ["load", "label"])
    print("FCT in µs per load, scheme and class")
    print(table.round(1).to_string())
    result = claim(table)
    print("claim at 40% load (p99 FCT ratio, baseline / Uno):", result)
    for load in sorted(set(flows["load"])):
        sub = flows[flows["load"] == load]
        plot_class_bars(
            class_table(sub, ["label"]), out / f"fig10_load_{load:g}.png", f"load {load:g}"
        )
    sizes = slowdown_by_size(flows, ["load", "label"])
    write_json({"table": table.reset_index().to_dict("records"),
                "slowdown_by_size": sizes.reset_index().astype({"size_bucket": str}).to_dict("records"),
                "claim": result}, out / "fig10_load.json")  # fmt: skip


if __name__ == "__main__":
    main()

"""Uno paper Fig. 12 from a sweep of experiment=fig12_buffers: per scheme and flow class the mean
and p99 FCT with shallow intra-DC (~175 KiB) and deeper border (~2.2 MiB) queues, and the paper's
claim: Uno cuts the tail FCT vs Gemini by 3.1x (intra) and 1.7x (inter), vs MPRDMA+BBR by 3.6x
(intra) and 1.8x (inter).

    python experiments/fig12_buffers/analyze.py SWEEP_DIR [--out DIR]
"""

from __future__ import annotations

from uno.metrics.analysis import analysis_parser, output_dir, write_json
from uno.metrics.plots import class_table, p99_ratios, plot_class_bars, run_flows

PAPER = {("intra", "gemini"): 3.1, ("inter", "gemini"): 1.7, ("intra", "mprdma_bbr"): 3.6,
         ("inter", "mprdma_bbr"): 1.8}  # fmt: skip


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    out = output_dir(args)
    flows = run_flows(args.path)
    table = class_table(flows, ["label"])
    print("FCT in µs per scheme and class")
    print(table.round(1).to_string())
    result = p99_ratios(table, PAPER)
    print("claim (p99 FCT ratio, baseline / Uno):", result)
    plot_class_bars(table, out / "fig12_buffers.png", "175 KiB intra-DC, 2.2 MiB border queues")
    write_json(
        {"table": table.reset_index().to_dict("records"), "claim": result},
        out / "fig12_buffers.json",
    )


if __name__ == "__main__":
    main()

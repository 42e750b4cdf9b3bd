"""Figs. 10 and 11 of the Gear paper from run tables: flows joining and leaving a 100 Gb/s
bottleneck, per scheme.

    python experiments/gear_fig10/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

For every run and every phase between the flows' start and stop times: each flow's
acknowledged throughput over the phase's second half, how far the flows are from equal shares
(the largest |x / mean - 1|; 0: equal) and, with a cross-DC flow, its share of the total. Writes
gear_fig10.png (each flow's throughput against time, one panel per run) and gear_fig10.json
into --out (default: the given directory).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.core.units import PS_PER_MS  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    flow_throughput,
    largest_share_deviation,
    load_runs,
    output_dir,
    phase_windows_ps,
    scheme_label,
    write_json,
)


def analyse_run(run: dict) -> dict:
    flows, rates = run["flows"], run["rates"]
    end_ps = int(run["summary"]["run"]["sim_time_us"] * 1_000_000)
    inter = set(flows.loc[flows["cls"] == "inter", "flow_id"])
    phases = []
    for start_ps, stop_ps in phase_windows_ps(flows, end_ps):
        gbps = flow_throughput(rates, flows, start_ps, stop_ps)
        if gbps.empty:
            continue
        cross = gbps[gbps.index.isin(inter)].sum()
        phases.append({
            "window_ms": [start_ps / PS_PER_MS, stop_ps / PS_PER_MS],
            "gbps": {int(f): float(x) for f, x in gbps.items()},
            "deviation": largest_share_deviation(gbps),
            "cross_share": float(cross / gbps.sum()) if inter and gbps.sum() > 0 else None,
        })  # fmt: skip
    return {"scheme": scheme_label(run), "experiment": run["config"]["name"], "phases": phases}


def _plot(runs: list[dict], out) -> None:
    fig, axes = plt.subplots(len(runs), 1, figsize=(7, 1.8 * len(runs)), sharex=True)
    for ax, run in zip(np.atleast_1d(axes), runs, strict=True):
        rates = run["rates"]
        for fid, df in rates.groupby("flow_id"):
            cls = run["flows"].set_index("flow_id").loc[fid, "cls"]
            ax.plot(df["time_ps"] / PS_PER_MS / 1000, df["acked_gbps"], lw=0.7,
                    label=f"{fid} {cls}")  # fmt: skip
        ax.set_title(f"{run['config']['name']}: {scheme_label(run)}", fontsize=9)
        ax.set_ylabel("Gb/s")
    np.atleast_1d(axes)[0].legend(fontsize=7)
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(out / "gear_fig10.png", dpi=120)


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    runs = load_runs(args.path)
    rows = [analyse_run(run) for run in runs]
    out = output_dir(args)
    _plot(runs, out)
    print(f"{'experiment':<11}{'scheme':<9}{'window s':>11}  {'flows Gb/s':<30}{'deviation':>10}"
          f"{'cross share':>12}")  # fmt: skip
    for row in rows:
        for ph in row["phases"]:
            lo, hi = (t / 1000 for t in ph["window_ms"])
            rates = " ".join(f"{x:.1f}" for x in ph["gbps"].values())
            share = "" if ph["cross_share"] is None else f"{ph['cross_share']:.2f}"
            print(f"{row['experiment']:<11}{row['scheme']:<9}{lo:>5.1f}-{hi:<5.1f}  {rates:<30}"
                  f"{ph['deviation']:>10.2f}{share:>12}")  # fmt: skip
    write_json(rows, out / "gear_fig10.json")


if __name__ == "__main__":
    main()

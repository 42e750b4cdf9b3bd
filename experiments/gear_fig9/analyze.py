"""Fig. 9 of the Gear paper from run tables: one intra-DC and one cross-DC flow on one 100 Gb/s
bottleneck, per scheme.

    python experiments/gear_fig9/analyze.py RUN_OR_SWEEP_DIR [--out DIR] [--from-ms T]

For every run: each class's acknowledged throughput (of the workload's flows; background
traffic, Fig. 13's, left out) over the whole run and over the window
from --from-ms (default: half the run) to the end, their ratio intra / cross (the figure's
subtitles; the paper's claim is that Gear's is within [0.9, 1.1]), the ratio's range over
100-ms windows, and the bottleneck's use. Writes gear_fig9.png (throughput against time, one
panel per scheme) and gear_fig9.json into --out (default: the given directory).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.core.units import PS_PER_MS  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    class_throughput,
    load_runs,
    output_dir,
    scheme_label,
    steady_state_window_ps,
    write_json,
)

WINDOW_PS = 100 * PS_PER_MS
#: the claim of §IV-C1: Gear's intra/cross throughput ratio within this range
FAIR = (0.9, 1.1)


def _ratio(intra: float, inter: float) -> float:
    return intra / inter if inter > 0 else float("inf")


def run_label(run: dict) -> str:
    """The scheme, and for a run with INT records other than its scheme's (Fig. 13) the rule:
    ``gear int 1 qlen`` = one record, the longest queue's."""
    label = scheme_label(run)
    if run["config"].get("name") == "gear_fig13":
        int_cfg = run["config"]["switch"]["int_telemetry"]
        label += f" int {int_cfg['max_records']} {int_cfg['replacement']}"
    return label


def analyse_run(run: dict, from_ms: float | None) -> dict:
    per_class = class_throughput(run["rates"], run["flows"], foreground_only=True)
    start_ps, end_ps = steady_state_window_ps(run["summary"], from_ms)
    late = per_class[per_class.index > start_ps]
    windows = late.groupby((late.index - start_ps - 1) // WINDOW_PS).mean()
    win_ratio = (windows["intra"] / windows["inter"]).replace([np.inf, -np.inf], np.nan).dropna()
    whole = per_class.mean()
    tail = late.mean()
    return {
        "scheme": run_label(run),
        "intra_gbps": float(whole["intra"]),
        "inter_gbps": float(whole["inter"]),
        "ratio": _ratio(float(whole["intra"]), float(whole["inter"])),
        "window_ms": [start_ps / PS_PER_MS, end_ps / PS_PER_MS],
        "late_intra_gbps": float(tail["intra"]),
        "late_inter_gbps": float(tail["inter"]),
        "late_ratio": _ratio(float(tail["intra"]), float(tail["inter"])),
        "late_ratio_range": [float(win_ratio.min()), float(win_ratio.max())]
        if len(win_ratio)
        else None,
        "load": float((whole["intra"] + whole["inter"]) / 100.0),
        "series": per_class,
    }


def main() -> None:
    args = analysis_parser(__doc__, steady_state=True).parse_args()
    runs = load_runs(args.path)
    rows = [analyse_run(run, args.from_ms) for run in runs]
    out = output_dir(args)
    fig, axes = plt.subplots(len(rows), 1, figsize=(7, 1.8 * len(rows)), sharex=True)
    for ax, row in zip(np.atleast_1d(axes), rows, strict=True):
        s = row["series"]
        for cls, color in (("intra", "tab:blue"), ("inter", "tab:red")):
            ax.plot(s.index / PS_PER_MS / 1000, s[cls], color=color, lw=0.8, label=cls)
        ax.set_title(f"{row['scheme']}: intra/cross {row['ratio']:.2f}", fontsize=9)
        ax.set_ylabel("Gb/s")
    np.atleast_1d(axes)[0].legend(fontsize=8)
    np.atleast_1d(axes)[-1].set_xlabel("time (s)")
    fig.tight_layout()
    fig.savefig(out / "gear_fig9.png", dpi=120)
    width = max(12, *(len(r["scheme"]) + 1 for r in rows))
    head = f"{'scheme':<{width}}{'intra Gb/s':>11}{'cross Gb/s':>11}{'ratio':>8}"
    head += f"{'late window ms':>16}{'late ratio':>11}{'100ms range':>20}{'in [0.9,1.1]':>14}"
    print(head)
    for row in rows:
        rng = row["late_ratio_range"]
        rng_s = f"{rng[0]:.2f}-{rng[1]:.2f}" if rng else "-"
        w = row["window_ms"]
        fair = FAIR[0] <= row["ratio"] <= FAIR[1]
        print(
            f"{row['scheme']:<{width}}{row['intra_gbps']:>11.2f}{row['inter_gbps']:>11.2f}"
            f"{row['ratio']:>8.2f}{f'{w[0]:.0f}-{w[1]:.0f}':>16}{row['late_ratio']:>11.2f}"
            f"{rng_s:>20}{'yes' if fair else 'no':>14}"
        )
    write_json(
        [{k: v for k, v in r.items() if k != "series"} for r in rows], out / "gear_fig9.json"
    )


if __name__ == "__main__":
    main()

"""Table I and Fig. 8 of the Gear paper from run tables: PFC pause duration per scheme
(normalised to Gear's) and the FCT slowdown of intra-DC flows, the smaller and the larger half.

    python experiments/gear_fig8/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

Pause duration: the summed time every paused port spent paused (``summary.json`` pfc
total_pause_us). Slowdown: FCT / ideal FCT of the intra-DC flows; "small" are the flows at or
below the median intra-DC size, "large" the others (§IV-B4: "the bottom 50% of flow sizes as
small flows and the top 50% as large flows"). Writes gear_fig8.png and gear_fig8.json into
--out (default: the given directory).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    output_dir,
    scheme_label,
    write_json,
)

#: Table I of the paper (pause duration normalised to Gear's)
PAPER_PAUSE = {"gear": 1.0, "hpcc": 1.87, "dctcp": 3.22, "gemini": 5.82, "annulus": 0.0}
STATS = (("avg", None), ("p95", 0.95), ("p99", 0.99))


def slowdown_stats(flows) -> dict:
    intra = flows[(flows["cls"] == "intra") & flows["finish_ps"].notna()]
    median = intra["size_bytes"].median()
    out = {}
    for half, part in (("small", intra[intra["size_bytes"] <= median]),
                       ("large", intra[intra["size_bytes"] > median])):  # fmt: skip
        s = part["slowdown"]
        for name, q in STATS:
            out[f"{half}_{name}"] = float(s.mean() if q is None else s.quantile(q))
    return out


def analyse_run(run: dict) -> dict:
    flows, summary = run["flows"], run["summary"]
    pfc = summary.get("pfc") or {}
    row = {
        "scheme": scheme_label(run),
        "pause_us": float(pfc.get("total_pause_us", 0.0)),
        "unfinished": int(flows["finish_ps"].isna().sum()),
        "dropped": int(sum(summary["packets"]["dropped"].values())),
    }
    row.update(slowdown_stats(flows))
    return row


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    rows = [analyse_run(run) for run in load_runs(args.path)]
    out = output_dir(args)
    gear = next((r["pause_us"] for r in rows if r["scheme"] == "gear"), None)
    for r in rows:
        r["pause_vs_gear"] = r["pause_us"] / gear if gear else None
        r["paper_pause_vs_gear"] = PAPER_PAUSE.get(r["scheme"])
    head = f"{'scheme':<10}{'pause us':>11}{'vs Gear':>9}{'paper':>7}"
    for half in ("small", "large"):
        head += "".join(f"{half + ' ' + n:>11}" for n, _ in STATS)
    print(head + f"{'unfinished':>11}{'dropped':>9}")
    for r in rows:
        rel = f"{r['pause_vs_gear']:.2f}" if r["pause_vs_gear"] is not None else "-"
        paper = r["paper_pause_vs_gear"]
        line = f"{r['scheme']:<10}{r['pause_us']:>11.1f}{rel:>9}{paper if paper is not None else '-':>7}"
        for half in ("small", "large"):
            line += "".join(f"{r[f'{half}_{n}']:>11.2f}" for n, _ in STATS)
        print(line + f"{r['unfinished']:>11}{r['dropped']:>9}")
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.2))
    x = np.arange(len(STATS))
    width = 0.8 / max(1, len(rows))
    for ax, half in zip(axes, ("small", "large"), strict=True):
        for i, r in enumerate(rows):
            ax.bar(x + i * width, [r[f"{half}_{n}"] for n, _ in STATS], width, label=r["scheme"])
        ax.set_xticks(x + width * (len(rows) - 1) / 2, [n for n, _ in STATS])
        ax.set_title(f"{half} intra-DC flows")
        ax.set_ylabel("FCT slowdown")
    axes[0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "gear_fig8.png", dpi=120)
    write_json(rows, out / "gear_fig8.json")


if __name__ == "__main__":
    main()

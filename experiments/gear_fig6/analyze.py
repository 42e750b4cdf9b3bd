"""Figs. 6-7 of the Gear paper from run tables: the normalised throughput ratio per scheme and
generated intra:cross traffic ratio.

    python experiments/gear_fig6/analyze.py SWEEP_DIR [--out DIR] [--from-ms T]

For every run, over the window from --from-ms (default: one cross-DC base RTT, when the first
cross-DC ACKs return) to the last arrival: each class's acknowledged throughput (the sampled
per-flow rates, summed), and the bytes each class's flows generated
(:func:`uno.metrics.analysis.normalised_throughput_ratio`). The normalised throughput
ratio (§IV-B1) is (intra / cross throughput) / (intra / cross bytes generated): 1 when each
class gets through what it offers at the rate it offers it. Writes gear_fig6.png (the ratio
against the generated ratio, one line per scheme, the ideal 1 dotted) and gear_fig6.json.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from uno.core.units import PS_PER_MS  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    normalised_throughput_ratio,
    output_dir,
    scheme_label,
    write_json,
)


def analyse_run(run: dict, from_ms: float | None) -> dict:
    workload = (run.get("config") or {}).get("workload", {})
    start = from_ms * PS_PER_MS if from_ms is not None else None
    r = normalised_throughput_ratio(run["rates"], run["flows"], start)
    return {
        "scheme": scheme_label(run),
        "intra_fraction": workload.get("intra_fraction"),
        "cdf": workload.get("intra_cdf"),
        "window_ms": [r["start_ps"] / PS_PER_MS, r["end_ps"] / PS_PER_MS],
        "intra_gbps": r["intra_gbps"],
        "inter_gbps": r["inter_gbps"],
        "generated_ratio": r["generated_ratio"],
        "normalised_ratio": r["normalised_ratio"],
        "unfinished": int(run["flows"]["finish_ps"].isna().sum()),
    }


def main() -> None:
    args = analysis_parser(__doc__, steady_state=True).parse_args()
    rows = sorted((analyse_run(r, args.from_ms) for r in load_runs(args.path)),
                  key=lambda r: (r["cdf"], r["scheme"], r["intra_fraction"]))  # fmt: skip
    out = output_dir(args)
    print(f"{'workload':<12}{'scheme':<9}{'intra:cross':>12}{'window ms':>12}{'intra Gb/s':>11}"
          f"{'cross Gb/s':>11}{'gen ratio':>10}{'normalised':>11}{'unfinished':>11}")  # fmt: skip
    for r in rows:
        f = r["intra_fraction"]
        w = r["window_ms"]
        print(f"{r['cdf']:<12}{r['scheme']:<9}{f'{f:.2f}':>12}{f'{w[0]:.0f}-{w[1]:.0f}':>12}"
              f"{r['intra_gbps']:>11.1f}{r['inter_gbps']:>11.1f}{r['generated_ratio']:>10.3f}"
              f"{r['normalised_ratio']:>11.3f}{r['unfinished']:>11}")  # fmt: skip
    fig, ax = plt.subplots(figsize=(5, 3.2))
    for scheme in sorted({r["scheme"] for r in rows}):
        pts = [(r["intra_fraction"], r["normalised_ratio"]) for r in rows if r["scheme"] == scheme]
        xs = [f / (1 - f) for f, _ in pts]
        ax.plot(xs, [v for _, v in pts], marker="o", label=scheme)
    ax.axhline(1.0, color="red", ls=":")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("generated intra:cross")
    ax.set_ylabel("normalised throughput ratio")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out / "gear_fig6.png", dpi=120)
    write_json(rows, out / "gear_fig6.json")


if __name__ == "__main__":
    main()

"""Fig. 3 of the Uno paper from run tables: per-flow sending rates over time for each scheme
(panels B, C, D), Jain's fairness index over 10 ms windows, and the convergence figures.

    python experiments/fig3_fairness/analyze.py RUN_OR_SWEEP_DIR [--out DIR] [--window-ms 10] [--skip-ms 10]

Prints, per scheme: the time Jain's index over 10 ms windows first reaches 0.9 after the start-up
window (--skip-ms, default 10: every sender starts at line rate, so the first window looks
fair) or "never",
whether it stays >= 0.85 from then until the first flow finishes, the per-class mean sending
rate after 100 ms, and the receiver-link load (acknowledged bytes of all flows / line rate)
once converged. Writes fig3_fairness.png and fig3_fairness.json into --out (default: the
given directory).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    class_mean_rates,
    first_time_at_or_above,
    jain_over_windows,
    load_runs,
    output_dir,
    scheme_label,
    write_json,
)

PS_PER_MS = 10**9
LINE_RATE_GBPS = 100.0


def analyse_run(run: dict, window_ps: int, skip_ps: int) -> dict:
    flows, rates = run["flows"], run["rates"]
    first_finish = (
        int(flows["finish_ps"].dropna().min()) if flows["finish_ps"].notna().any() else None
    )
    jain = jain_over_windows(rates, flows, window_ps, until_ps=first_finish)
    # Start-up windows are skipped: every sender starts at line rate (1 BDP), so the first
    # window is "fair" only because all eight overload the receiver alike.
    settled = jain[jain["window_start_ps"] >= skip_ps]
    t90 = first_time_at_or_above(settled["window_end_ps"], settled["jain"], 0.9)
    stays = None
    load = None
    if t90 is not None:
        after = jain[jain["window_end_ps"] >= t90]
        stays = bool((after["jain"] >= 0.85).all())
        acked = jain_over_windows(
            rates, flows, window_ps, until_ps=first_finish, value="acked_gbps"
        )
        acked = acked[acked["window_end_ps"] >= t90]
        load = float(acked["total_gbps"].mean() / LINE_RATE_GBPS) if len(acked) else None
    return {
        "scheme": scheme_label(run),
        "dir": str(run["dir"]),
        "all_finished": bool(flows["finish_ps"].notna().all()),
        "first_finish_ms": first_finish / PS_PER_MS if first_finish else None,
        "jain_0.9_at_ms": t90 / PS_PER_MS if t90 is not None else None,
        "jain_stays_ge_0.85_until_first_finish": stays,
        "max_jain": float(jain["jain"].max()) if len(jain) else None,
        "class_rate_after_100ms_gbps": class_mean_rates(
            rates, flows, 100 * PS_PER_MS, first_finish
        ),
        "receiver_load_after_convergence": load,
        "fct_ms": {
            int(r.flow_id): (None if pd.isna(r.fct_ps) else r.fct_ps / PS_PER_MS)
            for r in flows.itertuples()
        },
        "_jain": jain,
    }


def plot(results: list[dict], runs: list[dict], out: Path) -> None:
    n = len(results)
    fig, axes = plt.subplots(2, n, figsize=(5 * n, 6), sharex=True, squeeze=False)
    for col, (res, run) in enumerate(zip(results, runs, strict=True)):
        ax = axes[0][col]
        flows = run["flows"].set_index("flow_id")
        for fid, g in run["rates"].groupby("flow_id"):
            cls = flows.loc[fid, "cls"]
            ax.plot(
                g["time_ps"] / PS_PER_MS,
                g["sent_gbps"],
                lw=0.8,
                color="tab:green" if cls == "intra" else "tab:red",
                label=cls if fid == flows[flows.cls == cls].index[0] else None,
            )
        ax.axhline(LINE_RATE_GBPS / len(flows), color="k", ls=":", lw=0.8, label="fair share")
        ax.set_title(res["scheme"])
        ax.set_ylabel("sending rate (Gb/s)")
        ax.legend(loc="upper right", fontsize=8)
        jain = res["_jain"]
        ax2 = axes[1][col]
        ax2.plot(jain["window_end_ps"] / PS_PER_MS, jain["jain"], color="tab:blue")
        ax2.axhline(0.9, color="k", ls=":", lw=0.8)
        ax2.set_ylim(0, 1.05)
        ax2.set_xlabel("time (ms)")
        ax2.set_ylabel("Jain's index (10 ms windows)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = analysis_parser(__doc__)
    ap.add_argument("--window-ms", type=float, default=10.0)
    ap.add_argument(
        "--skip-ms",
        type=float,
        default=10.0,
        help="ignore windows starting earlier when looking for Jain >= 0.9 (start-up)",
    )
    args = ap.parse_args()
    runs = load_runs(args.path)
    window_ps = int(args.window_ms * PS_PER_MS)
    results = [analyse_run(r, window_ps, int(args.skip_ms * PS_PER_MS)) for r in runs]
    out = output_dir(args)
    plot(results, runs, out / "fig3_fairness.png")
    print(
        f"{'scheme':<22} {'finished':>8} {'Jain>=0.9 at':>13} {'stays>=0.85':>11} "
        f"{'intra Gb/s':>10} {'inter Gb/s':>10} {'load':>6} {'first done':>10}"
    )
    for r in results:
        t90 = f"{r['jain_0.9_at_ms']:.0f} ms" if r["jain_0.9_at_ms"] is not None else "never"
        rates = r["class_rate_after_100ms_gbps"]
        load = (
            f"{r['receiver_load_after_convergence']:.3f}"
            if r["receiver_load_after_convergence"]
            else "-"
        )
        first = f"{r['first_finish_ms']:.0f} ms" if r["first_finish_ms"] else "-"
        print(
            f"{r['scheme']:<22} {str(r['all_finished']):>8} {t90:>13} {str(r['jain_stays_ge_0.85_until_first_finish']):>11} "
            f"{rates.get('intra', float('nan')):>10.2f} {rates.get('inter', float('nan')):>10.2f} {load:>6} {first:>10}"
        )
    write_json(
        [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        out / "fig3_fairness.json",
    )
    print(f"wrote {out / 'fig3_fairness.png'} and {out / 'fig3_fairness.json'}")


if __name__ == "__main__":
    main()

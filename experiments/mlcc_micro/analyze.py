"""MLCC's Figs. 7-10 from run tables: convergence with the bottleneck in the sender's or the
receiver's datacenter, and the receiver-side DCI switch's per-flow queues.

    python experiments/mlcc_micro/analyze.py RUN_OR_SWEEP_DIR [--out DIR] [--from-ms T]

For every run: the mean acknowledged rate of an intra-DC and of a cross-DC flow over the window
from --from-ms (default: half the run) to the end, and their ratio (1: fair, the papers'
claim for Figs. 7-8); the receiver-side DCI switch's per-flow queues (peak and settled, all
flows together and per flow: Figs. 9-10) and the PFC pauses. Writes mlcc_micro.png (per-class
throughput and the DCI queue against time, one column per run) and mlcc_micro.json.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from uno.core.units import PS_PER_MS  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    output_dir,
    steady_state_window_ps,
    write_json,
)
from uno.metrics.dci import pfq_levels  # noqa: E402

#: the receiver-side DCI switch of every run here (flows go to DC 1)
DCI = "dc1/dci"
MB = 1e6


def run_label(run: dict) -> str:
    cfg = run["config"]
    label = f"{cfg['name']} {run['summary']['run']['cc']}"
    mlcc = cfg["cc"].get("mlcc")
    if run["summary"]["run"]["cc"] == "mlcc" and mlcc is not None:
        label += f" theta {mlcc['theta_ms']:g}"
        if mlcc.get("credit_step", "per_round") != "per_round":
            label += f" {mlcc['credit_step']}"
    return label


def per_flow_rates(run: dict, start_ps: int) -> tuple[float, float, float, float]:
    """Mean acknowledged rate (Gb/s) per intra-DC and per cross-DC flow after ``start_ps``, and
    the least and greatest flow's."""
    rates = run["rates"]
    late = rates[rates["time_ps"] > start_ps]
    per_flow = late.groupby("flow_id")["acked_gbps"].mean()
    cls = run["flows"].set_index("flow_id")["cls"]
    intra = per_flow[cls.reindex(per_flow.index) == "intra"]
    inter = per_flow[cls.reindex(per_flow.index) == "inter"]
    return float(intra.mean()), float(inter.mean()), float(per_flow.min()), float(per_flow.max())


def analyse_run(run: dict, from_ms: float | None) -> dict:
    start_ps, end_ps = steady_state_window_ps(run["summary"], from_ms)
    intra, inter, lo, hi = per_flow_rates(run, start_ps)
    out = {
        "run": run_label(run),
        "window_ms": [start_ps / PS_PER_MS, end_ps / PS_PER_MS],
        "intra_gbps": intra,
        "cross_gbps": inter,
        "ratio": intra / inter if inter > 0 else float("inf"),
        "flow_range_gbps": [lo, hi],
        "pfc_pauses": (run["summary"].get("pfc") or {}).get("pause_frames", 0),
    }
    if "dci" in run["summary"]:
        out["pfq"] = pfq_levels(run["queues"], DCI, start_ps)
    return out


def plot(runs: list[dict], rows: list[dict], path) -> None:
    fig, axes = plt.subplots(2, len(runs), figsize=(4.5 * len(runs), 6), squeeze=False)
    for j, (run, row) in enumerate(zip(runs, rows, strict=True)):
        rates = run["rates"].merge(run["flows"][["flow_id", "cls"]], on="flow_id")
        for cls, g in rates.groupby("cls"):
            mean = g.groupby("time_ps")["acked_gbps"].mean()
            axes[0][j].plot(mean.index / PS_PER_MS, mean.values, label=f"per {cls}-DC flow")
        axes[0][j].set_title(row["run"], fontsize=9)
        axes[0][j].set_ylabel("Gb/s")
        axes[0][j].legend(fontsize=7)
        q = run["queues"]
        total = q[q["port"] == f"{DCI}/pfq"].sort_values("time_ps")
        axes[1][j].plot(total["time_ps"] / PS_PER_MS, total["queue_bytes"] / MB, label="total")
        flows = q[q["port"].str.startswith(f"{DCI}/pfq/flow")]
        for _port, g in flows.groupby("port"):
            axes[1][j].plot(g["time_ps"] / PS_PER_MS, g["queue_bytes"] / MB, lw=0.6)
        axes[1][j].set_xlabel("time (ms)")
        axes[1][j].set_ylabel("DCI per-flow queues (MB)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    ap = analysis_parser(__doc__, steady_state=True)
    args = ap.parse_args()
    runs = load_runs(args.path)
    rows = [analyse_run(r, args.from_ms) for r in runs]
    out = output_dir(args)
    head = (f"{'run':34s} {'window ms':>11s} {'intra Gb/s':>10s} {'cross Gb/s':>10s} "
            f"{'ratio':>6s} {'flows Gb/s':>11s} {'PFQ peak MB':>11s} {'settled':>7s} "
            f"{'per flow':>8s} {'settled':>7s} {'peak ms':>7s} {'settle ms':>9s} "
            f"{'pauses':>6s}")  # fmt: skip
    print(head)
    for r in rows:
        q = r.get("pfq") or dict.fromkeys(
            ("peak_total_bytes", "settled_total_bytes", "peak_flow_bytes", "settled_flow_bytes",
             "peak_ms"),
            0.0,
        )  # fmt: skip
        settle = q.get("settle_ms")
        w = r["window_ms"]
        print(f"{r['run']:34s} {w[0]:5.0f}-{w[1]:<5.0f} {r['intra_gbps']:10.2f} "
              f"{r['cross_gbps']:10.2f} {r['ratio']:6.2f} "
              f"{r['flow_range_gbps'][0]:5.1f}-{r['flow_range_gbps'][1]:<5.1f} "
              f"{q['peak_total_bytes'] / MB:11.2f} {q['settled_total_bytes'] / MB:7.2f} "
              f"{q['peak_flow_bytes'] / MB:8.2f} {q['settled_flow_bytes'] / MB:7.2f} "
              f"{q['peak_ms']:7.1f} {settle if settle is not None else float('nan'):9.1f} "
              f"{r['pfc_pauses']:6d}")  # fmt: skip
    write_json(rows, out / "mlcc_micro.json")
    plot(runs, rows, out / "mlcc_micro.png")


if __name__ == "__main__":
    main()

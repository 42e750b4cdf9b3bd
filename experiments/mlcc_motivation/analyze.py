"""MLCC's motivation, Figs. 2-4, from run tables: receiver-side congestion and PFC (Fig. 2),
intra-DC flows losing their share to cross-DC ones in the sender's datacenter (Fig. 3), and the
receiver-side DCI switch's queue (Fig. 4), per scheme.

    python experiments/mlcc_motivation/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

For every run: the mean acknowledged rate per intra-DC and per cross-DC flow in the last
third of the run, the PFC pauses (frames, paused time), the peak queue of the sampled receiver
leaf ports and of the DCI switch (its egress ports, with per-flow queues their total), and the
DCI queue's coefficient of variation over the last two thirds (its oscillation, Fig. 4). Writes
mlcc_motivation.png (throughput per class and the queues against time, a column per run) and
mlcc_motivation.json.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402

from uno.core.units import PS_PER_MS, PS_PER_US  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    output_dir,
    scheme_label,
    write_json,
)

DCI = "dc1/dci"
MB = 1e6


def dci_queue(queues: pd.DataFrame) -> pd.Series:
    """The receiver-side DCI switch's queue against time: its per-flow queues when it has them,
    else its egress ports' queues (bytes, summed)."""
    pfq = queues[queues["port"] == f"{DCI}/pfq"]
    if not pfq.empty:
        return pfq.set_index("time_ps")["queue_bytes"].sort_index()
    ports = queues[queues["port"].str.startswith(f"{DCI}->")]
    return ports.groupby("time_ps")["queue_bytes"].sum()


def leaf_queue(queues: pd.DataFrame) -> pd.Series:
    ports = queues[queues["port"].str.contains("leaf") & queues["port"].str.contains("->")]
    return ports.groupby("time_ps")["queue_bytes"].max()


def analyse_run(run: dict) -> dict:
    end_ps = run["summary"]["run"]["sim_time_us"] * PS_PER_US
    rates = run["rates"].merge(run["flows"][["flow_id", "cls"]], on="flow_id")
    late = rates[rates["time_ps"] > end_ps * 2 / 3]
    per_cls = late.groupby(["cls", "flow_id"])["acked_gbps"].mean().groupby("cls").mean()
    pfc = run["summary"].get("pfc") or {}
    dci = dci_queue(run["queues"])
    settled = dci[dci.index > end_ps / 3]
    leaf = leaf_queue(run["queues"])
    return {
        "experiment": run["config"]["name"],
        "scheme": scheme_label(run),
        "intra_gbps": float(per_cls.get("intra", float("nan"))),
        "cross_gbps": float(per_cls.get("inter", float("nan"))),
        "pause_frames": int(pfc.get("pause_frames", 0)),
        "paused_us": float(pfc.get("total_pause_us", 0.0)),
        "leaf_peak_bytes": float(leaf.max()) if not leaf.empty else 0.0,
        "dci_peak_bytes": float(dci.max()) if not dci.empty else 0.0,
        "dci_cv": float(settled.std() / settled.mean()) if settled.mean() > 0 else 0.0,
    }


def plot(runs: list[dict], rows: list[dict], path) -> None:
    fig, axes = plt.subplots(2, len(runs), figsize=(4 * len(runs), 6), squeeze=False)
    for j, (run, row) in enumerate(zip(runs, rows, strict=True)):
        rates = run["rates"].merge(run["flows"][["flow_id", "cls"]], on="flow_id")
        for _flow, g in rates.groupby("flow_id"):
            style = "-" if g["cls"].iloc[0] == "intra" else "--"
            axes[0][j].plot(g["time_ps"] / PS_PER_MS, g["acked_gbps"], style, lw=0.7)
        axes[0][j].set_title(f"{row['experiment']} {row['scheme']}", fontsize=9)
        axes[0][j].set_ylabel("Gb/s (dashed: cross-DC)")
        dci = dci_queue(run["queues"])
        leaf = leaf_queue(run["queues"])
        axes[1][j].plot(dci.index / PS_PER_MS, dci.values / MB, label="DCI")
        axes[1][j].plot(leaf.index / PS_PER_MS, leaf.values / MB, label="leaf (max port)")
        axes[1][j].set_xlabel("time (ms)")
        axes[1][j].set_ylabel("queue (MB)")
        axes[1][j].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    runs = sorted(load_runs(args.path), key=lambda r: (r["config"]["name"], scheme_label(r)))
    rows = [analyse_run(r) for r in runs]
    out = output_dir(args)
    print(f"{'experiment':11s} {'scheme':11s} {'intra Gb/s':>10s} {'cross Gb/s':>10s} "
          f"{'pauses':>7s} {'paused ms':>9s} {'leaf MB':>8s} {'DCI MB':>7s} {'DCI cv':>6s}")  # fmt: skip
    for r in rows:
        print(f"{r['experiment']:11s} {r['scheme']:11s} {r['intra_gbps']:10.2f} "
              f"{r['cross_gbps']:10.2f} {r['pause_frames']:7d} {r['paused_us'] / 1e3:9.2f} "
              f"{r['leaf_peak_bytes'] / MB:8.2f} {r['dci_peak_bytes'] / MB:7.2f} "
              f"{r['dci_cv']:6.2f}")  # fmt: skip
    write_json(rows, out / "mlcc_motivation.json")
    plot(runs, rows, out / "mlcc_motivation.png")


if __name__ == "__main__":
    main()

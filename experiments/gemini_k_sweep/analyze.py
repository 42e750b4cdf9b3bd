"""Fig. 8 of the Gemini paper from run tables: aggregate throughput of many-to-one inter-DC long
flows bottlenecked at a DC link, against the ECN marking threshold K, per scheme.

    python experiments/gemini_k_sweep/analyze.py RUN_OR_SWEEP_DIR [--out DIR] [--from-ms T]

For every run, over the steady-state window (from --from-ms, default half the simulated time,
to the end): the aggregate acknowledged throughput of the inter-DC flows (wire bytes, Mb/s), the
goodput (payload only, Mb/s; the paper's iperf-style number), the bottleneck utilisation, the
mean and minimum sampled bottleneck queue (packets), the fraction of samples with an empty
queue, Jain's index of the per-flow rates, and the run's drops and timeouts. K is read from the
run's config (switch.ecn.kmin_bytes / packet size). Writes gemini_k_sweep.png and
gemini_k_sweep.json into --out (default: the given directory).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from uno.core.units import PS_PER_MS  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    load_runs,
    output_dir,
    scheme_label,
    steady_state_window_ps,
    write_json,
)
from uno.metrics.summary import jain_index  # noqa: E402


def analyse_run(run: dict, from_ms: float | None) -> dict:
    flows, rates, summary = run["flows"], run["rates"], run["summary"]
    cfg = run.get("config")
    if not cfg:
        raise FileNotFoundError(f"{run['dir']}: no config.yaml; K is read from it")
    tp = cfg["transport"]
    pkt_bytes = int(tp["mtu_bytes"]) + int(tp["header_bytes"])
    k_pkts = float(cfg["switch"]["ecn"]["kmin_bytes"]) / pkt_bytes
    start_ps, end_ps = steady_state_window_ps(summary, from_ms)
    win = rates[rates["time_ps"] > start_ps]
    inter_ids = flows.loc[flows["cls"] == "inter", "flow_id"]
    win = win[win["flow_id"].isin(inter_ids)]
    total = win.groupby("time_ps")["acked_gbps"].sum()
    agg_gbps = float(total.mean())
    per_flow = win.groupby("flow_id")["acked_gbps"].mean().reindex(inter_ids).fillna(0.0)
    line_gbps = float(run["ports"]["rate_gbps"].min())
    queues = run.get("queues")
    q_mean = q_min = empty = None
    if queues is not None and len(queues):
        q = queues[queues["time_ps"] > start_ps]
        # the receiver's port: the sampled port with the largest mean queue
        port = q.groupby("port")["queue_bytes"].mean().idxmax()
        qb = q.loc[q["port"] == port, "queue_bytes"]
        q_mean = float(qb.mean()) / pkt_bytes
        q_min = float(qb.min()) / pkt_bytes
        empty = float((qb == 0).mean())
    ports = run["ports"]
    return {
        "scheme": scheme_label(run),
        "dir": str(run["dir"]),
        "k_pkts": k_pkts,
        "n_inter_flows": int(len(inter_ids)),
        "inter_base_rtt_ms": float(flows["base_rtt_ps"].mean() / PS_PER_MS),
        "window_ms": [start_ps / PS_PER_MS, end_ps / PS_PER_MS],
        "throughput_mbps": agg_gbps * 1000,
        "goodput_mbps": agg_gbps * 1000 * int(tp["mtu_bytes"]) / pkt_bytes,
        "line_goodput_mbps": line_gbps * 1000 * int(tp["mtu_bytes"]) / pkt_bytes,
        "utilisation": agg_gbps / line_gbps,
        "mean_queue_pkts": q_mean,
        "min_queue_pkts": q_min,
        "empty_queue_frac": empty,
        "jain_per_flow": jain_index(per_flow.to_numpy()),
        "marking_ports": sorted(ports.loc[ports["ecn_marks"] > 0, "port"].tolist()),
        "drops": int(ports["drops"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
    }


def plot(results: list[dict], out: Path) -> None:
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    ks = sorted({r["k_pkts"] for r in results})
    for scheme in sorted({r["scheme"] for r in results}):
        rs = sorted((r for r in results if r["scheme"] == scheme), key=lambda r: r["k_pkts"])
        x = [r["k_pkts"] for r in rs]
        axes[0].plot(x, [r["goodput_mbps"] for r in rs], marker="o", label=scheme)
        if all(r["mean_queue_pkts"] is not None for r in rs):
            axes[1].plot(x, [r["mean_queue_pkts"] for r in rs], marker="o", label=scheme)
    line = max(r["line_goodput_mbps"] for r in results)
    low = min(r["goodput_mbps"] for r in results)
    axes[0].axhline(line, color="k", ls=":", lw=0.8, label="line rate (payload)")
    # a fixed scale (not autoscaled): a few Mb/s must not look like a collapse
    axes[0].set_ylim(min(0.8 * line, 0.95 * low), 1.02 * line)
    for ax in axes:
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks)
        ax.set_xticklabels([f"{k:g}" for k in ks])
        ax.set_xlabel("ECN marking threshold K (packets)")
        ax.legend(fontsize=8)
    axes[0].set_ylabel("aggregate inter-DC goodput (Mb/s)")
    axes[0].set_title("inter-DC flows bottlenecked at a DC link")
    axes[1].set_ylabel("mean bottleneck queue (packets)")
    axes[1].set_title("queue (latency proxy)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = analysis_parser(__doc__, steady_state=True)
    args = ap.parse_args()
    runs = load_runs(args.path)
    results = sorted(
        (analyse_run(r, args.from_ms) for r in runs), key=lambda r: (r["scheme"], r["k_pkts"])
    )
    out = output_dir(args)
    plot(results, out / "gemini_k_sweep.png")
    print(
        f"{'scheme':<8} {'K pkts':>6} {'flows':>5} {'window s':>9} {'wire Mb/s':>9} "
        f"{'goodput Mb/s':>12} {'util':>6} {'queue mean/min pkt':>18} {'empty':>6} "
        f"{'Jain':>6} {'drops':>6} {'TOs':>4}"
    )
    for r in results:
        w = f"{r['window_ms'][0] / 1000:.0f}-{r['window_ms'][1] / 1000:.0f}"
        q = (
            f"{r['mean_queue_pkts']:.1f}/{r['min_queue_pkts']:.0f}"
            if r["mean_queue_pkts"] is not None
            else "-"
        )
        empty = f"{r['empty_queue_frac']:.3f}" if r["empty_queue_frac"] is not None else "-"
        print(
            f"{r['scheme']:<8} {r['k_pkts']:>6g} {r['n_inter_flows']:>5} {w:>9} "
            f"{r['throughput_mbps']:>9.1f} {r['goodput_mbps']:>12.1f} {r['utilisation']:>6.3f} "
            f"{q:>18} {empty:>6} {r['jain_per_flow']:>6.3f} {r['drops']:>6} {r['timeouts']:>4}"
        )
    write_json(results, out / "gemini_k_sweep.json")
    print(f"wrote {out / 'gemini_k_sweep.png'} and {out / 'gemini_k_sweep.json'}")


if __name__ == "__main__":
    main()

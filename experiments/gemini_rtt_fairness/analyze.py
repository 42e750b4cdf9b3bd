"""Fig. 11 of the Gemini paper from run tables: the bandwidth share of four intra-DC and four
inter-DC long flows on one DC bottleneck, against the inter/intra base-RTT ratio, per scheme.

    python experiments/gemini_rtt_fairness/analyze.py RUN_OR_SWEEP_DIR [--out DIR] [--from-ms T]

For every run, over the steady-state window (from --from-ms, default half the simulated time,
to the end of the run): the aggregate acknowledged throughput of each class (intra, inter), the
share ratio intra/inter (1 = equal bandwidth per class, i.e. per flow here: 4 flows each), its
range over 1 s sub-windows (stability), Jain's index of the eight per-flow rates, the bottleneck
load, the mean bottleneck queue and, for reference, the share that "proportional RTT-fairness"
(rate proportional to 1/RTT with the queueing delay included) would give. Writes
gemini_rtt_fairness.png and gemini_rtt_fairness.json into --out (default: the given directory).
"""

from __future__ import annotations

import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from uno.core.units import PS_PER_MS, PS_PER_US  # noqa: E402
from uno.metrics.analysis import (  # noqa: E402
    analysis_parser,
    class_throughput,
    load_runs,
    output_dir,
    scheme_label,
    steady_state_window_ps,
    write_json,
)
from uno.metrics.summary import jain_index  # noqa: E402

SUB_WINDOW_PS = 1000 * PS_PER_MS  # 1 s sub-windows for the stability range


def analyse_run(run: dict, from_ms: float | None) -> dict:
    flows, rates, summary = run["flows"], run["rates"], run["summary"]
    start_ps, end_ps = steady_state_window_ps(summary, from_ms)
    per_class = class_throughput(rates, flows, start_ps)
    intra = float(per_class["intra"].mean())
    inter = float(per_class["inter"].mean())
    # stability: the share ratio over consecutive 1 s sub-windows of the steady window
    sub = per_class.groupby((per_class.index - start_ps - 1) // SUB_WINDOW_PS).mean()
    sub_ratio = (sub["intra"] / sub["inter"]).replace([np.inf, -np.inf], np.nan).dropna()
    per_flow = (
        rates[rates["time_ps"] > start_ps]
        .groupby("flow_id")["acked_gbps"]
        .mean()
        .reindex(flows["flow_id"])
        .fillna(0.0)
    )
    rtt = flows.groupby("cls")["base_rtt_ps"].mean()
    ratio_measured = float(rtt["inter"] / rtt["intra"])
    cfg_ratio = (run.get("config") or {}).get("topo", {}).get("inter_rtt_ratio")
    # bottleneck: the switch port into the receiver (sampled in queues.parquet)
    queues = run.get("queues")
    mean_queue_pkts = None
    qdelay_ps = 0.0
    line_gbps = float(run["ports"]["rate_gbps"].min())
    cfg = run.get("config") or {}
    pkt_bytes = cfg.get("transport", {}).get("mtu_bytes", 1460) + cfg.get("transport", {}).get(
        "header_bytes", 40
    )
    if queues is not None and len(queues):
        q = queues[queues["time_ps"] > start_ps]
        mean_q_bytes = float(q.groupby("port")["queue_bytes"].mean().max())
        mean_queue_pkts = mean_q_bytes / pkt_bytes
        qdelay_ps = mean_q_bytes * 8 / (line_gbps * 1e9) * 1e12
    # "proportional RTT-fairness": per-flow rate ~ 1/(base RTT + mean queueing delay)
    proportional = (rtt["inter"] + qdelay_ps) / (rtt["intra"] + qdelay_ps)
    ports = run["ports"]
    marking = ports[ports["ecn_marks"] > 0]
    cwnd_pkts = {}
    cw = run.get("cwnd")
    if cw is not None and len(cw):
        cw = cw[cw["time_ps"] > start_ps].merge(flows[["flow_id", "cls"]], on="flow_id")
        cwnd_pkts = (cw.groupby("cls")["cwnd_bytes"].mean() / pkt_bytes).to_dict()
    by_cls = flows.groupby("cls")[["ecn_acks", "sent_packets"]].sum()
    marked = (by_cls["ecn_acks"] / by_cls["sent_packets"]).to_dict()
    return {
        "scheme": scheme_label(run),
        "dir": str(run["dir"]),
        "rtt_ratio": float(cfg_ratio) if cfg_ratio is not None else round(ratio_measured, 2),
        "rtt_ratio_measured": ratio_measured,
        "intra_base_rtt_us": float(rtt["intra"] / PS_PER_US),
        "inter_base_rtt_us": float(rtt["inter"] / PS_PER_US),
        "window_ms": [start_ps / PS_PER_MS, end_ps / PS_PER_MS],
        "intra_mbps": intra * 1000,
        "inter_mbps": inter * 1000,
        "share_intra_over_inter": intra / inter if inter > 0 else math.inf,
        "share_1s_min": float(sub_ratio.min()) if len(sub_ratio) else None,
        "share_1s_max": float(sub_ratio.max()) if len(sub_ratio) else None,
        "proportional_share": float(proportional),
        "jain_per_flow": jain_index(per_flow.to_numpy()),
        "per_flow_mbps": {int(k): float(v) * 1000 for k, v in per_flow.items()},
        "load": (intra + inter) / line_gbps,
        "mean_queue_pkts": mean_queue_pkts,
        "mean_cwnd_pkts": {k: float(v) for k, v in cwnd_pkts.items()},
        "ecn_marked_frac_whole_run": {k: float(v) for k, v in marked.items()},
        "marking_ports": sorted(marking["port"].tolist()),
        "drops": int(ports["drops"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
        "_series": sub_ratio,
    }


def plot(results: list[dict], out: Path) -> None:
    fig, axes = plt.subplots(1, 3, figsize=(16, 4.5))
    colors = {}
    for scheme in sorted({r["scheme"] for r in results}):
        rs = sorted((r for r in results if r["scheme"] == scheme), key=lambda r: r["rtt_ratio"])
        x = [r["rtt_ratio"] for r in rs]
        (line,) = axes[0].plot(
            x, [r["share_intra_over_inter"] for r in rs], marker="o", label=scheme
        )
        colors[scheme] = line.get_color()
        lo = [r["share_intra_over_inter"] - (r["share_1s_min"] or 0) for r in rs]
        hi = [(r["share_1s_max"] or 0) - r["share_intra_over_inter"] for r in rs]
        axes[0].errorbar(
            x,
            [r["share_intra_over_inter"] for r in rs],
            yerr=[np.maximum(lo, 0), np.maximum(hi, 0)],
            fmt="none",
            ecolor=line.get_color(),
            capsize=3,
        )
        axes[1].plot(x, [r["intra_mbps"] for r in rs], marker="o", color=line.get_color())
        axes[1].plot(x, [r["inter_mbps"] for r in rs], marker="s", ls="--", color=line.get_color())
    ratios = sorted({r["rtt_ratio"] for r in results})
    prop = (
        pd.DataFrame([(r["rtt_ratio"], r["proportional_share"]) for r in results])
        .groupby(0)[1]
        .mean()
    )
    axes[0].plot(prop.index, prop.values, color="gray", ls=":", label="rate ~ 1/RTT (with queue)")
    axes[0].axhline(1.0, color="k", lw=0.8, ls="--", label="equal share")
    for ax in axes[:2]:
        ax.set_xscale("log", base=2)
        ax.set_xticks(ratios)
        ax.set_xticklabels([f"{r:g}" for r in ratios])
        ax.set_xlabel("RTT2 / RTT1 (inter / intra base RTT)")
    axes[0].set_yscale("log", base=2)
    axes[0].set_ylabel("share intra : inter (aggregate throughput)")
    axes[0].set_title("bandwidth share (bars: range over 1 s windows)")
    axes[0].legend(fontsize=8)
    axes[1].set_ylabel("aggregate throughput (Mb/s)")
    axes[1].set_title("per class: intra (solid), inter (dashed)")
    for r in results:
        s = r["_series"]
        axes[2].plot(
            s.index.to_numpy() + 1,
            s.to_numpy(),
            color=colors[r["scheme"]],
            alpha=0.3 + 0.7 * (ratios.index(r["rtt_ratio"]) + 1) / len(ratios),
            lw=1,
        )
    axes[2].set_yscale("log", base=2)
    axes[2].axhline(1.0, color="k", lw=0.8, ls="--")
    axes[2].set_xlabel("1 s sub-window of the steady-state window")
    axes[2].set_ylabel("share intra : inter")
    axes[2].set_title("stability (darker: larger RTT ratio)")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = analysis_parser(__doc__, steady_state=True)
    args = ap.parse_args()
    runs = load_runs(args.path)
    results = sorted(
        (analyse_run(r, args.from_ms) for r in runs), key=lambda r: (r["scheme"], r["rtt_ratio"])
    )
    out = output_dir(args)
    plot(results, out / "gemini_rtt_fairness.png")
    print(
        f"{'scheme':<8} {'RTT2/RTT1':>9} {'window s':>11} {'intra Mb/s':>10} {'inter Mb/s':>10} "
        f"{'intra:inter':>11} {'1s range':>13} {'~1/RTT':>7} {'Jain':>6} {'load':>6} "
        f"{'queue pkt':>9} {'cwnd pkt intra/inter':>20} {'TOs':>4}"
    )
    for r in results:
        w = f"{r['window_ms'][0] / 1000:.0f}-{r['window_ms'][1] / 1000:.0f}"
        rng = (
            f"{r['share_1s_min']:.2f}-{r['share_1s_max']:.2f}"
            if r["share_1s_min"] is not None
            else "-"
        )
        q = f"{r['mean_queue_pkts']:.0f}" if r["mean_queue_pkts"] is not None else "-"
        cw = r["mean_cwnd_pkts"]
        cw = f"{cw.get('intra', math.nan):.1f}/{cw.get('inter', math.nan):.1f}"
        print(
            f"{r['scheme']:<8} {r['rtt_ratio']:>9g} {w:>11} {r['intra_mbps']:>10.1f} "
            f"{r['inter_mbps']:>10.1f} {r['share_intra_over_inter']:>11.2f} {rng:>13} "
            f"{r['proportional_share']:>7.2f} {r['jain_per_flow']:>6.3f} {r['load']:>6.3f} "
            f"{q:>9} {cw:>20} {r['timeouts']:>4}"
        )
    write_json(
        [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
        out / "gemini_rtt_fairness.json",
    )
    print(f"wrote {out / 'gemini_rtt_fairness.png'} and {out / 'gemini_rtt_fairness.json'}")


if __name__ == "__main__":
    main()

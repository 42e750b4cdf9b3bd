"""Figs. 1-4 of the REPS paper from run tables: a 4 MiB permutation on a 1,024-host fat tree,
per balancer, tree and failure setting.

    python experiments/reps_permutation/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

For every run: the balancer, the tree (1:1 or its oversubscription), the failed links, whether
Wait-to-Decrease is on; the flows' mean, p99 and max FCT (the job's completion time), the flows
that did not finish, the packets trimmed, resent and timed out, and the median and 99th
percentile of the per-packet RTT (``engine.record_rtts``). Writes reps_permutation.png (the FCT
and RTT distributions of each run) and reps_permutation.json into --out (default: the given
directory).
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, write_json  # noqa: E402


def run_label(cfg: dict) -> str:
    """balancer, tree, failures and Wait-to-Decrease of a run's config."""
    topo = cfg["topo"]
    half = topo["k"] // 2
    ratio = (half / (topo["tor_uplinks"] or half)) * (half / (topo["agg_uplinks"] or half))
    failed = ",".join(p for f in cfg["faults"]["link_failures"] for p in f["ports"])
    wtd = cfg["cc"]["smartt"]["wtd"]
    label = f"{cfg['lb']['algo']} {ratio:g}:1"
    if failed:
        label += f" failed {failed}"
    if not wtd:
        label += " no-WTD"
    return label


def analyse_run(run: dict) -> dict:
    flows = run["flows"]
    fct_us = flows["fct_ps"].astype("float64") / 1e6
    done = fct_us.dropna()
    return {
        "run": run_label(run["config"]),
        "flows": len(flows),
        "unfinished": int(fct_us.isna().sum()),
        "mean_fct_us": float(done.mean()) if len(done) else None,
        "p99_fct_us": float(done.quantile(0.99)) if len(done) else None,
        "max_fct_us": float(done.max()) if len(done) else None,
        "trims": int(flows["trims"].sum()),
        "retransmits": int(flows["retransmits"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
        "rtt_p50_us": run["summary"].get("rtt_us", {}).get("p50"),
        "rtt_p99_us": run["summary"].get("rtt_us", {}).get("p99"),
        "fct_us": done.to_numpy(),
        "rtts": run.get("rtts"),
    }


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    rows = sorted((analyse_run(r) for r in load_runs(args.path)), key=lambda r: r["run"])
    out = output_dir(args)
    fig, (ax, ax_rtt) = plt.subplots(1, 2, figsize=(11, 4))
    for row in rows:
        x = np.sort(row["fct_us"])
        if len(x):
            ax.plot(x, np.arange(1, len(x) + 1) / row["flows"], label=row["run"])
        rtts = row["rtts"]
        if rtts is not None and len(rtts):
            cum = rtts["packets"].cumsum() / rtts["packets"].sum()
            ax_rtt.plot(rtts["hi_ps"] / 1e6, cum, label=row["run"])
    ax.set_xlabel("FCT (us)")
    ax.set_ylabel("fraction of flows")
    ax_rtt.set_xlabel("packet RTT (us)")
    ax_rtt.set_ylabel("fraction of packets")
    ax_rtt.set_xscale("log")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "reps_permutation.png", dpi=120)
    width = max(12, *(len(r["run"]) + 1 for r in rows))
    print(f"{'run':<{width}}{'mean us':>9}{'p99 us':>9}{'max us':>9}{'unfinished':>11}"
          f"{'trims':>8}{'resent':>8}{'timeouts':>9}{'RTT p50':>9}{'RTT p99':>9}")  # fmt: skip
    for r in rows:
        cells = [f"{r[k]:>9.1f}" if r[k] is not None else f"{'-':>9}"
                 for k in ("mean_fct_us", "p99_fct_us", "max_fct_us")]  # fmt: skip
        rtt = [f"{r[k]:>9.2f}" if r[k] is not None else f"{'-':>9}"
               for k in ("rtt_p50_us", "rtt_p99_us")]  # fmt: skip
        print(f"{r['run']:<{width}}{''.join(cells)}{r['unfinished']:>11}{r['trims']:>8}"
              f"{r['retransmits']:>8}{r['timeouts']:>9}{''.join(rtt)}")  # fmt: skip
    write_json([{k: v for k, v in r.items() if k not in ("fct_us", "rtts")} for r in rows],
               out / "reps_permutation.json")  # fmt: skip


if __name__ == "__main__":
    main()

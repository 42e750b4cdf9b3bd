"""Fig. 4 of the Uno paper from run tables: the receiver's queue with and without phantom queues
while eight long inter-DC flows share its link, and the completion times of small RPCs sent to
the same receiver from its rack.

    python experiments/fig4_phantom/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

For each run (phantom queues on or off, read from the run's config, its ``switch`` option or,
failing both, from whether a phantom level was ever sampled): RPC count, mean / median / p99 FCT
and slowdown of the RPCs (all, and those below 100 KB as the artifact's plot script filters),
the receiver port's physical queue (mean, p99, max, share of empty samples) and phantom level
over the RPC window (first RPC start to the run's end), and the receiver link's delivered load in
that window. With one run of each kind it checks the paper's claim (§3.2: phantom queues cut the
RPCs' mean FCT 2x and p99 FCT 8x): the check is p99(no phantom) >= 2 x p99(phantom)
and a lower mean physical queue with phantom queues.

Writes ``fig4_phantom.png`` (A: queue without phantom queues, B: with, phantom level on the right
axis; top: the whole run, middle: the RPC window; C: RPC mean/p99 FCT bars and FCT CDFs) and
``fig4_phantom.json`` into --out (default: the given directory), and prints a table.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, write_json  # noqa: E402

PS_PER_US = 10**6
PS_PER_MS = 10**9
SMALL_RPC_BYTES = 100_000  # the artifact's fig4_barplot.py keeps flows below this size
P99_FACTOR = 2.0  # the claim holds if p99 without phantom queues >= 2 x p99 with them


def phantom_enabled(run: dict) -> bool:
    cfg = run.get("config") or {}
    try:
        return bool(cfg["switch"]["phantom"]["enabled"])
    except (KeyError, TypeError):
        pass
    choice = (run["summary"]["run"].get("choices") or {}).get("switch")
    if choice is not None:
        return str(choice).startswith("phantom")
    q = run.get("queues")
    return bool(q is not None and len(q) and q["phantom_bytes"].max() > 0)


def run_label(run: dict) -> str:
    on = phantom_enabled(run)
    choice = (run["summary"]["run"].get("choices") or {}).get("switch")
    base = "with phantom queues" if on else "no phantom queues"
    return f"{base} (switch={choice})" if choice else base


def receiver_port(run: dict) -> str:
    """The sampled switch port into the RPCs' receiver (the ToR -> receiver host port)."""
    q = run["queues"]
    names = list(dict.fromkeys(q["port"]))
    if len(names) == 1:
        return names[0]
    ports = run.get("ports")
    if ports is not None:
        host = ports[(ports["kind"] == "host") & ports["port"].isin(names)]
        if len(host):
            return str(host.sort_values("tx_bytes", ascending=False)["port"].iloc[0])
    return str(q.groupby("port")["queue_bytes"].mean().idxmax())


def _pct(values, p) -> float | None:
    return float(np.percentile(values, p)) if len(values) else None


def _fct_stats(rpc) -> dict:
    done = rpc[rpc["fct_ps"].notna()]
    fct_us = done["fct_ps"].astype("float64").to_numpy() / PS_PER_US
    slow = done["slowdown"].astype("float64").to_numpy()
    return {
        "n": int(len(rpc)),
        "finished": int(len(done)),
        "mean_fct_us": float(fct_us.mean()) if len(fct_us) else None,
        "p50_fct_us": _pct(fct_us, 50),
        "p99_fct_us": _pct(fct_us, 99),
        "max_fct_us": float(fct_us.max()) if len(fct_us) else None,
        "mean_slowdown": float(slow.mean()) if len(slow) else None,
        "p99_slowdown": _pct(slow, 99),
    }


def analyse_run(run: dict) -> dict:
    flows, summary = run["flows"], run["summary"]
    rpc = flows[flows["tag"] == "rpc"]
    long = flows[flows["tag"] != "rpc"]
    end_ps = int(round(summary["run"]["sim_time_us"] * PS_PER_US))
    t0 = int(rpc["start_ps"].min()) if len(rpc) else 0
    port = receiver_port(run)
    q = run["queues"]
    q = q[q["port"] == port]
    qw = q[(q["time_ps"] >= t0) & (q["time_ps"] <= end_ps)]
    rates = run["rates"]
    rw = rates[(rates["time_ps"] > t0) & (rates["time_ps"] <= end_ps)]
    load = rw.groupby("time_ps")["acked_gbps"].sum()
    long_rates = rw[rw["flow_id"].isin(long["flow_id"])].groupby("time_ps")["sent_gbps"].sum()
    packets = summary.get("packets") or {}
    dropped = packets.get("dropped") or {}
    return {
        "label": run_label(run),
        "phantom": phantom_enabled(run),
        "dir": str(run["dir"]),
        "receiver_port": port,
        "rpc_window_ms": [t0 / PS_PER_MS, end_ps / PS_PER_MS],
        "rpc_all_finished": bool(rpc["fct_ps"].notna().all()),
        "long_flows": int(len(long)),
        "long_flows_finished": int(long["fct_ps"].notna().sum()),
        "rpc": _fct_stats(rpc),
        "rpc_small": _fct_stats(rpc[rpc["size_bytes"] < SMALL_RPC_BYTES]),
        "rpc_size_bytes": {
            "mean": float(rpc["size_bytes"].mean()) if len(rpc) else None,
            "p50": _pct(rpc["size_bytes"], 50),
            "p99": _pct(rpc["size_bytes"], 99),
            "max": int(rpc["size_bytes"].max()) if len(rpc) else None,
        },
        "queue_in_rpc_window": {
            "mean_bytes": float(qw["queue_bytes"].mean()) if len(qw) else None,
            "p99_bytes": _pct(qw["queue_bytes"], 99),
            "max_bytes": int(qw["queue_bytes"].max()) if len(qw) else None,
            "empty_share": float((qw["queue_bytes"] == 0).mean()) if len(qw) else None,
            "mean_phantom_bytes": float(qw["phantom_bytes"].mean()) if len(qw) else None,
            "max_phantom_bytes": float(qw["phantom_bytes"].max()) if len(qw) else None,
        },
        "queue_whole_run_mean_bytes": float(q["queue_bytes"].mean()) if len(q) else None,
        "receiver_load_gbps_in_rpc_window": float(load.mean()) if len(load) else None,
        "long_flows_sent_gbps_in_rpc_window": float(long_rates.mean()) if len(long_rates) else None,
        "drops": int(sum(dropped.values())),
        "timeouts": int(summary.get("timeouts", 0)),
        "sim_time_ms": end_ps / PS_PER_MS,
        "wall_s": summary["run"].get("wall_s"),
        "_rpc_fct_us": np.sort(rpc["fct_ps"].dropna().astype("float64").to_numpy() / PS_PER_US),
        "_queue": q,
    }


def check_claim(results: list[dict]) -> dict | None:
    """Compare the first run with phantom queues against the first without."""
    on = next((r for r in results if r["phantom"]), None)
    off = next((r for r in results if not r["phantom"]), None)
    if on is None or off is None:
        return None

    def ratio(a, b):
        return a / b if a is not None and b not in (None, 0) else None

    p99_ratio = ratio(off["rpc"]["p99_fct_us"], on["rpc"]["p99_fct_us"])
    mean_ratio = ratio(off["rpc"]["mean_fct_us"], on["rpc"]["mean_fct_us"])
    q_on = on["queue_in_rpc_window"]["mean_bytes"]
    q_off = off["queue_in_rpc_window"]["mean_bytes"]
    p99_ok = p99_ratio is not None and p99_ratio >= P99_FACTOR
    q_ok = q_on is not None and q_off is not None and q_on < q_off
    return {
        "p99_fct_ratio_no_phantom_over_phantom": p99_ratio,
        "mean_fct_ratio_no_phantom_over_phantom": mean_ratio,
        "small_rpc_p99_fct_ratio": ratio(
            off["rpc_small"]["p99_fct_us"], on["rpc_small"]["p99_fct_us"]
        ),
        "small_rpc_mean_fct_ratio": ratio(
            off["rpc_small"]["mean_fct_us"], on["rpc_small"]["mean_fct_us"]
        ),
        "mean_queue_bytes_phantom": q_on,
        "mean_queue_bytes_no_phantom": q_off,
        "p99_at_least_2x_lower_with_phantom": p99_ok,
        "mean_queue_lower_with_phantom": q_ok,
        "all_rpcs_finished": on["rpc_all_finished"] and off["rpc_all_finished"],
        "holds": bool(p99_ok and q_ok and on["rpc_all_finished"] and off["rpc_all_finished"]),
        "paper": "2x lower mean and 8x lower p99 RPC FCT with phantom queues (§3.2, Fig. 4)",
    }


def plot(results: list[dict], out: Path) -> None:
    fig, axes = plt.subplots(2, 3, figsize=(16, 7.5))
    ordered = sorted(results, key=lambda r: r["phantom"])  # no phantom first (panel A)
    for col, res in enumerate(ordered[:2]):
        q = res["_queue"]
        t0, t1 = res["rpc_window_ms"]
        for row, lo in enumerate((None, t0)):
            ax = axes[row][col]
            qq = q if lo is None else q[(q["time_ps"] >= lo * PS_PER_MS)]
            t_ms = qq["time_ps"] / PS_PER_MS
            ax.plot(t_ms, qq["queue_bytes"] / 1e3, lw=0.6, color="tab:blue", label="physical")
            ax.set_ylabel("physical queue (KB)")
            if lo is None:
                ax.axvspan(t0, t1, color="tab:orange", alpha=0.15, label="RPC window")
                ax.set_title(f"{'AB'[col]}: {res['label']}")
            else:
                ax.set_title(
                    f"{'AB'[col]}: RPC window, mean queue "
                    f"{res['queue_in_rpc_window']['mean_bytes'] / 1e3:.1f} KB"
                )
            ax.set_xlabel("time (ms)")
            if res["phantom"]:
                ax2 = ax.twinx()
                ax2.plot(t_ms, qq["phantom_bytes"] / 1e6, lw=0.6, color="tab:purple", alpha=0.7)
                ax2.set_ylabel("phantom queue (MB)", color="tab:purple")
            if lo is None:
                ax.legend(loc="upper right", fontsize=8)
    ax = axes[0][2]
    x = np.arange(len(ordered))
    means = [r["rpc"]["mean_fct_us"] or 0.0 for r in ordered]
    p99s = [r["rpc"]["p99_fct_us"] or 0.0 for r in ordered]
    ax.bar(x - 0.2, means, width=0.4, label="mean", color="tab:blue")
    ax.bar(x + 0.2, p99s, width=0.4, label="p99", color="tab:red")
    ax.set_xticks(x, ["phantom" if r["phantom"] else "no phantom" for r in ordered])
    ax.set_ylabel("RPC FCT (µs)")
    ax.set_title("C: RPC completion times")
    ax.legend(fontsize=8)
    ax = axes[1][2]
    for r in ordered:
        f = r["_rpc_fct_us"]
        if len(f):
            ax.plot(f, np.arange(1, len(f) + 1) / len(f), label=r["label"])
    ax.set_xscale("log")
    ax.set_xlabel("RPC FCT (µs)")
    ax.set_ylabel("CDF")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def format_table(results: list[dict], claim: dict | None) -> str:
    def f(v, w, p=1):
        return f"{v:>{w}.{p}f}" if v is not None else f"{'-':>{w}}"

    w = max([36, *(len(r["label"]) for r in results)])
    lines = [
        f"{'run':<{w}} {'RPCs':>9} {'mean FCT':>9} {'p50':>7} {'p99':>8} {'p99<100KB':>9} "
        f"{'mean q KB':>9} {'p99 q KB':>8} {'empty':>6} {'phantom MB':>10} {'load Gb/s':>9}",
        "(FCTs in µs; queue = receiver ToR port, sampled in the RPC window)",
    ]
    for r in results:
        s, qw = r["rpc"], r["queue_in_rpc_window"]
        ph = qw["mean_phantom_bytes"] / 1e6 if qw["mean_phantom_bytes"] is not None else None
        done = f"{s['finished']}/{s['n']}"
        lines.append(
            f"{r['label']:<{w}} {done:>9} {f(s['mean_fct_us'], 9)} {f(s['p50_fct_us'], 7)} "
            f"{f(s['p99_fct_us'], 8)} {f(r['rpc_small']['p99_fct_us'], 9)} "
            f"{f(qw['mean_bytes'] / 1e3 if qw['mean_bytes'] is not None else None, 9)} "
            f"{f(qw['p99_bytes'] / 1e3 if qw['p99_bytes'] is not None else None, 8)} "
            f"{f(qw['empty_share'], 6, 2)} {f(ph, 10, 2)} "
            f"{f(r['receiver_load_gbps_in_rpc_window'], 9)}"
        )
    if claim is None:
        lines.append("claim: needs one run with and one without phantom queues")
    else:
        lines.append(
            f"claim (p99 >= {P99_FACTOR:g}x lower and lower mean queue with phantom queues): "
            f"{'HOLDS' if claim['holds'] else 'DOES NOT HOLD'} — p99 ratio "
            f"{f(claim['p99_fct_ratio_no_phantom_over_phantom'], 0, 2).strip()}x, mean ratio "
            f"{f(claim['mean_fct_ratio_no_phantom_over_phantom'], 0, 2).strip()}x (paper: 8x, 2x), "
            f"mean queue {f(claim['mean_queue_bytes_phantom'] / 1e3, 0).strip()} KB vs "
            f"{f(claim['mean_queue_bytes_no_phantom'] / 1e3, 0).strip()} KB"
        )
    return "\n".join(lines)


def analyse(path: str | Path, out: str | Path | None = None) -> tuple[list[dict], dict | None]:
    """Analyse every run under ``path``; write the figure and JSON into ``out`` (default:
    ``path``); return (per-run results, claim check or None)."""
    runs = load_runs(path)
    results = [analyse_run(r) for r in runs]
    claim = check_claim(results)
    out = Path(out or path)
    out.mkdir(parents=True, exist_ok=True)
    plot(results, out / "fig4_phantom.png")
    write_json(
        {
            "runs": [{k: v for k, v in r.items() if not k.startswith("_")} for r in results],
            "claim": claim,
        },
        out / "fig4_phantom.json",
    )
    return results, claim


def main(argv: list[str] | None = None) -> None:
    ap = analysis_parser(__doc__)
    args = ap.parse_args(argv)
    results, claim = analyse(args.path, args.out)
    out = output_dir(args)
    print(format_table(results, claim))
    print(f"wrote {out / 'fig4_phantom.png'} and {out / 'fig4_phantom.json'}")


if __name__ == "__main__":
    main()

"""Fig. 9 of the Uno paper from run tables: mean and 99th-percentile flow completion time of a
permutation workload per scheme, with 8 border (WAN) links and with fully provisioned ones.

    python experiments/fig9_permutation/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

Also reads the runs of experiment=artifact_fig9 (the artifact's own permutation). A run's
scheme is its ``cc`` option, followed by ``+<lb option>`` when it ran without ECMP (e.g.
``uno_artifact+unolb_artifact``, the artifact's "Uno" bar).

For every run (scheme x number of WAN links): flows finished, mean and p99 FCT (ms) of all
flows and of each class (intra-DC, inter-DC), mean slowdown (FCT / ideal FCT), drops and
timeouts. Statistics are over finished flows; a run with unfinished flows is flagged. Writes
fig9_permutation.png (bars like the paper's Fig. 9) and fig9_permutation.json into --out
(default: the given directory).
"""

from __future__ import annotations

from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, scheme_label, write_json  # noqa: E402

PS_PER_MS = 10**9
CLASSES = ("all", "intra", "inter")
#: the paper's order of schemes in Fig. 9 (others are appended alphabetically)
ORDER = (
    "uno",
    "uno_artifact",
    "uno+unolb",
    "uno_artifact+unolb_artifact",
    "gemini",
    "gemini_artifact",
    "mprdma_bbr",
    "mprdma+bbr",
    "mprdma_bbr_artifact",
)


def run_scheme(run: dict) -> str:
    """The run's ``cc`` option, with ``+<lb option>`` when its load balancer is not ECMP."""
    lb = (run["summary"]["run"].get("choices") or {}).get("lb")
    label = scheme_label(run)
    return label if lb in (None, "ecmp") else f"{label}+{lb}"


def fct_stats(flows) -> dict:
    done = flows[flows["finish_ps"].notna()]
    fct_ms = done["fct_ps"].to_numpy(dtype=float) / PS_PER_MS
    out = {"flows": int(len(flows)), "finished": int(len(done))}
    if len(done):
        out.update(
            {
                "mean_fct_ms": float(np.mean(fct_ms)),
                "p50_fct_ms": float(np.percentile(fct_ms, 50)),
                "p99_fct_ms": float(np.percentile(fct_ms, 99)),
                "max_fct_ms": float(np.max(fct_ms)),
                "mean_slowdown": float(done["slowdown"].astype(float).mean()),
                "p99_slowdown": float(np.percentile(done["slowdown"].astype(float), 99)),
            }
        )
    return out


def analyse_run(run: dict) -> dict:
    flows = run["flows"]
    cfg = run.get("config") or {}
    wan_links = cfg.get("topo", {}).get("wan_links")
    per_class = {"all": fct_stats(flows)}
    for cls in ("intra", "inter"):
        per_class[cls] = fct_stats(flows[flows["cls"] == cls])
    done = flows[flows["finish_ps"].notna()]
    # uno's ideal FCT (base RTT + serialisation of every byte at the bottleneck) counts the
    # first packet's serialisation twice (the base RTT holds it too), so an unqueued flow can
    # finish up to one packet time below it; more than that would be an error
    tp = cfg.get("transport", {})
    pkt_bytes = int(tp.get("mtu_bytes", 4096)) + int(tp.get("header_bytes", 64))
    one_pkt_ps = pkt_bytes * done["base_rtt_ps"] / done["bdp_bytes"]
    ports = run["ports"]
    wan = ports[ports["kind"] == "wan"]
    return {
        "scheme": run_scheme(run),
        "dir": str(run["dir"]),
        "wan_links": int(wan_links) if wan_links is not None else None,
        "all_finished": bool(flows["finish_ps"].notna().all()),
        "fct_below_ideal": int((done["fct_ps"] < done["ideal_fct_ps"]).sum()),
        "fct_below_ideal_minus_one_packet": int(
            (done["fct_ps"] < done["ideal_fct_ps"] - one_pkt_ps).sum()
        ),
        "classes": per_class,
        "drops": int(ports["drops"].sum()),
        "wan_drops": int(wan["drops"].sum()),
        "retransmits": int(flows["retransmits"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
        "sim_time_ms": run["summary"]["run"]["sim_time_us"] / 1000,
    }


def _scheme_order(schemes) -> list[str]:
    known = [s for s in ORDER if s in schemes]
    return known + sorted(s for s in schemes if s not in ORDER)


def plot(results: list[dict], out: Path) -> None:
    provisionings = sorted({r["wan_links"] for r in results}, key=lambda x: (x is None, x))
    schemes = _scheme_order({r["scheme"] for r in results})
    fig, axes = plt.subplots(
        len(provisionings), 2, figsize=(11, 3.6 * len(provisionings)), squeeze=False
    )
    width = 0.8 / max(1, len(schemes))
    x = np.arange(len(CLASSES))
    for row, links in enumerate(provisionings):
        for col, (key, label) in enumerate((("mean_fct_ms", "mean"), ("p99_fct_ms", "p99"))):
            ax = axes[row][col]
            for i, scheme in enumerate(schemes):
                match = [r for r in results if r["scheme"] == scheme and r["wan_links"] == links]
                if not match:
                    continue
                vals = [match[0]["classes"][c].get(key, np.nan) for c in CLASSES]
                bars = ax.bar(x + (i - (len(schemes) - 1) / 2) * width, vals, width, label=scheme)
                ax.bar_label(bars, fmt="%.1f", fontsize=7)
            ax.set_xticks(x)
            ax.set_xticklabels(["all flows", "intra-DC", "inter-DC"])
            ax.set_ylabel(f"{label} FCT (ms)")
            ax.set_title(f"{label} FCT, {links} WAN links")
            ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main() -> None:
    ap = analysis_parser(__doc__)
    args = ap.parse_args()
    runs = load_runs(args.path)
    results = [analyse_run(r) for r in runs]
    order = _scheme_order({r["scheme"] for r in results})
    results.sort(key=lambda r: (r["wan_links"] or 0, order.index(r["scheme"])))
    out = output_dir(args)
    plot(results, out / "fig9_permutation.png")
    print(
        f"{'WAN links':>9} {'scheme':<27} {'done':>7} "
        + " ".join(f"{c + ' mean/p99 ms':>20}" for c in CLASSES)
        + f" {'slowdown':>8} {'drops':>6} {'TOs':>5}"
    )
    for r in results:
        cells = []
        for c in CLASSES:
            s = r["classes"][c]
            cells.append(
                f"{s['mean_fct_ms']:>9.2f}/{s['p99_fct_ms']:<10.2f}" if "mean_fct_ms" in s else "-"
            )
        all_ = r["classes"]["all"]
        print(
            f"{r['wan_links'] if r['wan_links'] is not None else '?':>9} {r['scheme']:<27} "
            f"{all_['finished']:>3}/{all_['flows']:<3} "
            + " ".join(f"{c:>20}" for c in cells)
            + f" {all_.get('mean_slowdown', float('nan')):>8.2f} {r['drops']:>6} "
            f"{r['timeouts']:>5}"
        )
    below = [r for r in results if r["fct_below_ideal"]]
    if below:
        print(
            "FCT below ideal FCT (by less than one packet time, see analyse_run): "
            + ", ".join(f"{r['scheme']}/{r['wan_links']}: {r['fct_below_ideal']}" for r in below)
        )
    bad = [r for r in results if r["fct_below_ideal_minus_one_packet"]]
    if bad:
        print("ERROR: FCT more than one packet time below ideal in " + str([r["dir"] for r in bad]))
    write_json(results, out / "fig9_permutation.json")
    print(f"wrote {out / 'fig9_permutation.png'} and {out / 'fig9_permutation.json'}")


if __name__ == "__main__":
    main()

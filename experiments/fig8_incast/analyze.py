"""Fig. 8 of the Uno paper from run tables: for each incast mix (8 intra-DC, 8 inter-DC, 4 + 4
senders) and each scheme, the per-flow completion times and sending-rate traces.

    python experiments/fig8_incast/analyze.py RUN_OR_SWEEP_DIR [--out DIR]

The mix of a run is read from its flows (how many intra- and inter-DC senders), so runs launched
with or without ``incast_mix=...`` are both recognised; the scheme is the ``cc`` option it was
launched with (``uno.metrics.analysis.scheme_label``).

Figure (``fig8_incast.png``): top row, UnoCC's per-flow sending rates for each mix (green
intra-DC, red inter-DC, dotted: fair share); bottom row, mean (bar) and maximum (black tick) FCT
of each scheme for each mix, with two references: the incast ideal (all flows' bytes through the
receiver link at line rate, plus the longest base RTT; dashed) and one flow alone (base RTT +
its bytes at line rate; dotted). Writes ``fig8_incast.json`` too, and prints a table.
"""

from __future__ import annotations

from pathlib import Path

import matplotlib
import pandas as pd

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from uno.metrics.analysis import analysis_parser, load_runs, output_dir, scheme_label, write_json  # noqa: E402

PS_PER_MS = 10**9
LINE_RATE_GBPS = 100.0
MIX_ORDER = ("intra8", "inter8", "intra4_inter4")
SCHEME_ORDER = ("uno", "uno_artifact", "gemini", "gemini_artifact", "mprdma_bbr")


def mix_label(flows) -> str:
    """The incast_mix option name matching the run's senders: intra8, inter8, intra4_inter4..."""
    n_intra = int((flows["cls"] == "intra").sum())
    n_inter = int((flows["cls"] == "inter").sum())
    if n_inter == 0:
        return f"intra{n_intra}"
    if n_intra == 0:
        return f"inter{n_inter}"
    return f"intra{n_intra}_inter{n_inter}"


def mix_title(mix: str, flows) -> str:
    n_intra = int((flows["cls"] == "intra").sum())
    n_inter = int((flows["cls"] == "inter").sum())
    return f"{n_inter} inter / {n_intra} intra"


def _ms(ps) -> float | None:
    return None if ps is None or ps != ps else float(ps) / PS_PER_MS


def analyse_run(run: dict) -> dict:
    flows = run["flows"]
    summary = run["summary"]
    fct = flows["fct_ps"].astype("float64")
    ideal = flows["ideal_fct_ps"].astype("float64")
    base = flows["base_rtt_ps"].astype("float64")
    # incast ideal: the receiver link carries every flow's bytes at line rate; the slowest flow
    # also waits for its base RTT
    incast_ideal_ps = float(base.max() + (ideal - base).sum())
    done = fct.notna()
    per_flow = [
        {
            "flow_id": int(r.flow_id),
            "src": int(r.src),
            "cls": r.cls,
            "size_bytes": int(r.size_bytes),
            "fct_ms": _ms(r.fct_ps),
            "ideal_fct_ms": _ms(r.ideal_fct_ps),
            "slowdown": None if pd.isna(r.slowdown) else float(r.slowdown),
            "retransmits": int(r.retransmits),
            "timeouts": int(r.timeouts),
        }
        for r in flows.itertuples()
    ]
    by_class = {}
    for cls, g in flows.groupby("cls"):
        f = g["fct_ps"].astype("float64").dropna()
        by_class[cls] = {
            "n": int(len(g)),
            "finished": int(len(f)),
            "mean_fct_ms": float(f.mean()) / PS_PER_MS if len(f) else None,
            "max_fct_ms": float(f.max()) / PS_PER_MS if len(f) else None,
        }
    packets = summary.get("packets") or {}
    return {
        "mix": mix_label(flows),
        "mix_title": mix_title(mix_label(flows), flows),
        "scheme": scheme_label(run),
        "dir": str(run["dir"]),
        "n_flows": int(len(flows)),
        "all_finished": bool(done.all()),
        "mean_fct_ms": float(fct[done].mean()) / PS_PER_MS if done.any() else None,
        "max_fct_ms": float(fct[done].max()) / PS_PER_MS if done.any() else None,
        "min_fct_ms": float(fct[done].min()) / PS_PER_MS if done.any() else None,
        "ideal_single_flow_fct_ms": float(ideal.max()) / PS_PER_MS,
        "ideal_incast_fct_ms": incast_ideal_ps / PS_PER_MS,
        "max_over_incast_ideal": (
            float(fct[done].max()) / incast_ideal_ps if done.all() and done.any() else None
        ),
        "fct_ge_ideal": bool((fct[done] >= ideal[done]).all()),
        "by_class": by_class,
        "flows": per_flow,
        "drops": int(sum((packets.get("dropped") or {}).values())),
        "retransmits": int(summary.get("retransmits", 0)),
        "timeouts": int(summary.get("timeouts", 0)),
        "sim_time_ms": summary["run"]["sim_time_us"] / 1000.0,
        "wall_s": summary["run"].get("wall_s"),
    }


def _sort_key(res: dict) -> tuple:
    mix = MIX_ORDER.index(res["mix"]) if res["mix"] in MIX_ORDER else len(MIX_ORDER)
    sch = SCHEME_ORDER.index(res["scheme"]) if res["scheme"] in SCHEME_ORDER else len(SCHEME_ORDER)
    return (mix, res["mix"], sch, res["scheme"])


def _uno_run(runs_of_mix: list[tuple[dict, dict]]):
    """The UnoCC run of a mix for the rate panel: option 'uno' first, then any uno variant."""
    for want in ("uno", None):
        for res, run in runs_of_mix:
            if res["scheme"] == want or (want is None and res["scheme"].startswith("uno")):
                return res, run
    return None


def plot(results: list[dict], runs: list[dict], out: Path) -> None:
    mixes = []
    for r in results:
        if r["mix"] not in mixes:
            mixes.append(r["mix"])
    n = len(mixes)
    fig, axes = plt.subplots(2, n, figsize=(5 * n, 7), squeeze=False)
    for col, mix in enumerate(mixes):
        pairs = [(r, run) for r, run in zip(results, runs, strict=True) if r["mix"] == mix]
        ax = axes[0][col]
        chosen = _uno_run(pairs)
        if chosen is not None:
            res, run = chosen
            flows = run["flows"].set_index("flow_id")
            seen = set()
            for fid, g in run["rates"].groupby("flow_id"):
                cls = flows.loc[fid, "cls"]
                ax.plot(
                    g["time_ps"] / PS_PER_MS,
                    g["sent_gbps"],
                    lw=0.8,
                    color="tab:green" if cls == "intra" else "tab:red",
                    label=f"{cls}-DC" if cls not in seen else None,
                )
                seen.add(cls)
            ax.axhline(LINE_RATE_GBPS / len(flows), color="k", ls=":", lw=0.8, label="fair share")
            ax.set_title(f"{res['mix_title']} — {res['scheme']}")
            ax.legend(loc="upper right", fontsize=8)
        else:
            ax.set_title(f"{pairs[0][0]['mix_title']} — no UnoCC run")
        ax.set_xlabel("time (ms)")
        ax.set_ylabel("sending rate (Gb/s)")
        ax2 = axes[1][col]
        names = [r["scheme"] for r, _ in pairs]
        x = np.arange(len(pairs))
        means = [r["mean_fct_ms"] or 0.0 for r, _ in pairs]
        maxes = [r["max_fct_ms"] or 0.0 for r, _ in pairs]
        ax2.bar(x, means, color="tab:blue", width=0.6, label="mean FCT")
        ax2.scatter(x, maxes, marker="_", s=600, color="k", zorder=3, label="max FCT")
        for xi, (r, _) in zip(x, pairs, strict=True):
            if not r["all_finished"]:
                ax2.annotate("unfinished", (xi, maxes[xi]), ha="center", va="bottom", fontsize=8)
        ideal = pairs[0][0]["ideal_incast_fct_ms"]
        ax2.axhline(ideal, color="tab:green", ls="--", lw=1.2, label="ideal (incast)")
        ax2.axhline(
            pairs[0][0]["ideal_single_flow_fct_ms"],
            color="tab:gray",
            ls=":",
            lw=1.0,
            label="ideal (one flow alone)",
        )
        ax2.set_xticks(x, names, rotation=15)
        ax2.set_ylabel("FCT (ms)")
        ax2.set_ylim(0, 1.35 * max([*maxes, ideal]))
        ax2.legend(loc="upper center", ncol=2, fontsize=7, framealpha=0.8)
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def format_table(results: list[dict]) -> str:
    head = (
        f"{'mix':<14} {'scheme':<16} {'done':>5} {'mean FCT':>9} {'max FCT':>9} {'min FCT':>9} "
        f"{'ideal':>8} {'max/ideal':>9} {'intra mean':>10} {'inter mean':>10} {'drops':>7} "
        f"{'RTOs':>5}"
    )
    lines = [head, "(FCTs in ms; ideal = incast ideal: all bytes at line rate + longest base RTT)"]

    def f(v, w, p=1):
        return f"{v:>{w}.{p}f}" if v is not None else f"{'-':>{w}}"

    for r in results:
        cls = r["by_class"]
        done = f"{sum(c['finished'] for c in cls.values())}/{r['n_flows']}"
        lines.append(
            f"{r['mix']:<14} {r['scheme']:<16} {done:>5} "
            f"{f(r['mean_fct_ms'], 9)} {f(r['max_fct_ms'], 9)} {f(r['min_fct_ms'], 9)} "
            f"{f(r['ideal_incast_fct_ms'], 8)} {f(r['max_over_incast_ideal'], 9, 3)} "
            f"{f(cls.get('intra', {}).get('mean_fct_ms'), 10)} "
            f"{f(cls.get('inter', {}).get('mean_fct_ms'), 10)} {r['drops']:>7} {r['timeouts']:>5}"
        )
    lines.append("per-flow FCT (ms), flow order (sender host: i = intra-DC, e = inter-DC):")
    for r in results:
        cells = " ".join(
            f"{fl['src']}{'i' if fl['cls'] == 'intra' else 'e'}:"
            + (f"{fl['fct_ms']:.1f}" if fl["fct_ms"] is not None else "unfinished")
            for fl in r["flows"]
        )
        lines.append(f"  {r['mix']:<14} {r['scheme']:<16} {cells}")
    return "\n".join(lines)


def analyse(path: str | Path, out: str | Path | None = None) -> list[dict]:
    """Analyse every run under ``path``; write the figure and JSON into ``out`` (default:
    ``path``); return the per-run results (sorted by mix, then scheme)."""
    runs = load_runs(path)
    results = [analyse_run(r) for r in runs]
    order = sorted(range(len(runs)), key=lambda i: _sort_key(results[i]))
    results = [results[i] for i in order]
    runs = [runs[i] for i in order]
    out = Path(out or path)
    out.mkdir(parents=True, exist_ok=True)
    plot(results, runs, out / "fig8_incast.png")
    by_mix: dict[str, dict] = {}
    for r in results:
        by_mix.setdefault(r["mix"], {})[r["scheme"]] = {
            k: r[k]
            for k in (
                "all_finished",
                "mean_fct_ms",
                "max_fct_ms",
                "ideal_incast_fct_ms",
                "ideal_single_flow_fct_ms",
            )
        }
    write_json({"runs": results, "by_mix": by_mix}, out / "fig8_incast.json")
    return results


def main(argv: list[str] | None = None) -> None:
    ap = analysis_parser(__doc__)
    args = ap.parse_args(argv)
    results = analyse(args.path, args.out)
    out = output_dir(args)
    print(format_table(results))
    print(f"wrote {out / 'fig8_incast.png'} and {out / 'fig8_incast.json'}")


if __name__ == "__main__":
    main()

"""Shared analysis of the Uno paper's Fig. 13 experiments: one row per run (load balancer,
erasure coding, seed, per-run mean and p99 FCT, losses and recoveries), and the variants'
statistics across seeds (the paper plots the distribution over 100 runs of each variant's
per-run mean and p99 FCT as violins)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from uno.metrics.analysis import load_runs

PS_PER_MS = 10**9
VARIANT_ORDER = ("spray", "spray+EC", "plb", "plb+EC", "unolb", "unolb+EC")


def run_rows(path) -> pd.DataFrame:
    rows = []
    for run in load_runs(path):
        cfg = run["config"]
        flows = run["flows"]
        done = flows[flows["finish_ps"].notna()]
        fct_ms = done["fct_ps"].to_numpy(dtype=float) / PS_PER_MS
        ec = cfg["ec"]["kind"] != "none"
        summary = run["summary"]
        block_losses = (summary.get("faults") or {}).get("block_losses") or []
        rows.append(
            {
                "experiment": cfg["name"],
                "variant": cfg["lb"]["algo"] + ("+EC" if ec else ""),
                "lb": cfg["lb"]["algo"],
                "ec": ec,
                "seed": cfg["seed"],
                "flows": len(flows),
                "finished": len(done),
                "mean_fct_ms": float(fct_ms.mean()) if len(fct_ms) else np.nan,
                "p99_fct_ms": float(np.percentile(fct_ms, 99)) if len(fct_ms) else np.nan,
                "max_slowdown": float(done["slowdown"].max()) if len(done) else np.nan,
                "timeouts": int(flows["timeouts"].sum()),
                "retransmits": int(flows["retransmits"].sum()),
                "nacks": int(flows["nacks"].sum()) if "nacks" in flows else 0,
                # link blocks that lost more packets than a code block can lose
                "blocks_over_y": int(sum(block_losses[3:])) if block_losses else 0,
                "wire_overhead": (summary.get("ec") or {}).get("wire_overhead"),
            }
        )
    return pd.DataFrame(rows)


def variant_table(rows: pd.DataFrame) -> pd.DataFrame:
    """Per variant across runs: median and mean of the per-run mean and p99 FCT, worst p99,
    runs with timeouts."""
    g = rows.groupby("variant")
    table = pd.DataFrame(
        {
            "runs": g.size(),
            "finished": g["finished"].sum().astype(str) + "/" + g["flows"].sum().astype(str),
            "mean_fct_ms (mean)": g["mean_fct_ms"].mean(),
            "mean_fct_ms (median)": g["mean_fct_ms"].median(),
            "p99_fct_ms (mean)": g["p99_fct_ms"].mean(),
            "p99_fct_ms (median)": g["p99_fct_ms"].median(),
            "p99_fct_ms (max)": g["p99_fct_ms"].max(),
            "runs_with_timeouts": g["timeouts"].apply(lambda t: int((t > 0).sum())),
            "nacks": g["nacks"].sum(),
        }
    )
    return _in_variant_order(table)


def _in_variant_order(table: pd.DataFrame) -> pd.DataFrame:
    order = [v for v in VARIANT_ORDER if v in table.index] + [
        v for v in table.index if v not in VARIANT_ORDER
    ]
    return table.loc[order]


def over_ideal_table(rows: pd.DataFrame, ideal_ms: float) -> pd.DataFrame:
    """Per variant across runs: each run's (mean FCT - ``ideal_ms``) / ``ideal_ms``, the
    quantity the Uno artifact's Fig. 13 C script plots ("runtime over ideal time", with an
    ideal of 10.4 ms)."""
    over = (rows["mean_fct_ms"] - ideal_ms) / ideal_ms
    g = over.groupby(rows["variant"])
    table = pd.DataFrame(
        {
            "over_ideal (mean)": g.mean(),
            "over_ideal (median)": g.median(),
            "over_ideal (max)": g.max(),
        }
    )
    return _in_variant_order(table)


def violin(rows: pd.DataFrame, out_png, title: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    variants = [v for v in VARIANT_ORDER if v in set(rows["variant"])]
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8))
    for ax, col in zip(axes, ("mean_fct_ms", "p99_fct_ms"), strict=True):
        data = [rows.loc[rows["variant"] == v, col].dropna().to_numpy() for v in variants]
        ax.violinplot([d if len(d) else [np.nan] for d in data], showmedians=True)
        ax.set_xticks(range(1, len(variants) + 1), variants, rotation=20)
        ax.set_ylabel(col.replace("_", " "))
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out_png, dpi=120)
    plt.close(fig)

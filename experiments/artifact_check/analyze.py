"""The artifact presets on the Uno artifact's own scenarios: per-class outcome of each incast,
and the RPC completion times of its Fig. 4 run over time.

    python experiments/artifact_check/analyze.py results/artifact_check/<sweep> [--out DIR]
    python experiments/artifact_check/analyze.py results/artifact_check_fig4/<sweep>

Incasts (``experiment=artifact_check``): one row per mix and scheme: flows finished by 2.86 s
(the artifact's end time) and by the end of the run, per-class mean FCT, which class finished
first (the mean start-to-finish time of each class), the time Jain's index over 10 ms windows
first reaches 0.9 after the first 10 ms, retransmissions and timeouts. Fig. 4
(``experiment=artifact_check_fig4``): mean, p50 and p99 RPC FCT per 2.5 ms bin of RPC start
time, with and without phantom queues. Writes artifact_check.json next to the runs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from uno.metrics.analysis import (
    analysis_parser,
    first_time_at_or_above,
    jain_over_windows,
    load_runs,
    output_dir,
    scheme_label,
    write_json,
)

PS_PER_MS = 10**9
PS_PER_US = 10**6
ARTIFACT_END_PS = 2860 * PS_PER_MS


def mix_label(flows: pd.DataFrame) -> str:
    n_intra = int((flows["cls"] == "intra").sum())
    n_inter = int((flows["cls"] == "inter").sum())
    return f"{n_intra}+{n_inter}"


def incast_row(run: dict) -> dict:
    flows = run["flows"]
    done = flows[flows["finish_ps"].notna()]
    row = {
        "mix": mix_label(flows),
        "scheme": scheme_label(run),
        "finished": f"{len(done)}/{len(flows)}",
        "finished_by_2860ms": int((done["finish_ps"] <= ARTIFACT_END_PS).sum()),
        "mean_fct_ms": float(done["fct_ps"].mean() / PS_PER_MS) if len(done) else None,
        "retransmits": int(flows["retransmits"].sum()),
        "timeouts": int(flows["timeouts"].sum()),
    }
    for cls in ("intra", "inter"):
        c = done[done["cls"] == cls]
        row[f"{cls}_mean_fct_ms"] = float(c["fct_ps"].mean() / PS_PER_MS) if len(c) else None
    classes = [c for c in ("intra", "inter") if row[f"{c}_mean_fct_ms"] is not None]
    row["first_class"] = (
        min(classes, key=lambda c: row[f"{c}_mean_fct_ms"]) if len(classes) == 2 else "-"
    )
    if "rates" in run and len(done):
        first_finish = int(done["finish_ps"].min())
        jain = jain_over_windows(run["rates"], flows, 10 * PS_PER_MS, until_ps=first_finish)
        settled = jain[jain["window_start_ps"] >= 10 * PS_PER_MS]
        t90 = first_time_at_or_above(settled["window_end_ps"], settled["jain"], 0.9)
        row["jain_0.9_at_ms"] = t90 / PS_PER_MS if t90 is not None else None
    return row


def fig4_rows(run: dict) -> list[dict]:
    flows = run["flows"]
    rpc = flows[(flows["tag"] == "rpc") & flows["finish_ps"].notna()]
    label = "phantom" if run["config"]["switch"]["phantom"]["enabled"] else "no phantom"
    start = rpc["start_ps"].min()
    rows = []
    for i in range(8):
        lo, hi = start + i * 2500 * PS_PER_US, start + (i + 1) * 2500 * PS_PER_US
        b = rpc[(rpc["start_ps"] >= lo) & (rpc["start_ps"] < hi)]
        if not len(b):
            continue
        fct_us = b["fct_ps"].to_numpy(dtype=float) / PS_PER_US
        rows.append(
            {
                "switch": label,
                "from_ms": float(lo / PS_PER_MS),
                "rpcs": len(b),
                "mean_fct_us": float(fct_us.mean()),
                "p50_fct_us": float(np.percentile(fct_us, 50)),
                "p99_fct_us": float(np.percentile(fct_us, 99)),
                "max_fct_us": float(fct_us.max()),
                "retransmitted_rpcs": int((b["retransmits"] > 0).sum()),
            }
        )
    return rows


def fmt(value, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def main() -> None:
    args = analysis_parser(__doc__).parse_args()
    runs = load_runs(args.path)
    out = output_dir(args)
    fig4 = [r for r in runs if (r["flows"]["tag"] == "rpc").any()]
    incasts = [r for r in runs if not (r["flows"]["tag"] == "rpc").any()]
    result: dict = {}
    if incasts:
        rows = sorted((incast_row(r) for r in incasts), key=lambda r: (r["mix"], r["scheme"]))
        result["incasts"] = rows
        print(
            f"{'mix':<6} {'scheme':<20} {'done':>5} {'by 2.86s':>8} {'mean ms':>8} "
            f"{'intra ms':>9} {'inter ms':>9} {'first':>6} {'Jain0.9':>8} {'retx':>7} {'TOs':>5}"
        )
        for r in rows:
            print(
                f"{r['mix']:<6} {r['scheme']:<20} {r['finished']:>5} {r['finished_by_2860ms']:>8} "
                f"{fmt(r['mean_fct_ms'], '8.1f')} {fmt(r['intra_mean_fct_ms'], '9.1f')} "
                f"{fmt(r['inter_mean_fct_ms'], '9.1f')} {r['first_class']:>6} "
                f"{fmt(r.get('jain_0.9_at_ms'), '8.0f')} {r['retransmits']:>7} {r['timeouts']:>5}"
            )
    if fig4:
        rows = [row for r in fig4 for row in fig4_rows(r)]
        result["fig4"] = rows
        print(
            f"{'switch':<11} {'from ms':>7} {'RPCs':>5} {'mean us':>8} {'p50 us':>7} "
            f"{'p99 us':>8} {'max us':>8} {'retx':>5}"
        )
        for r in rows:
            print(
                f"{r['switch']:<11} {r['from_ms']:>7.1f} {r['rpcs']:>5} {r['mean_fct_us']:>8.2f} "
                f"{r['p50_fct_us']:>7.2f} {r['p99_fct_us']:>8.2f} {r['max_fct_us']:>8.1f} "
                f"{r['retransmitted_rpcs']:>5}"
            )
    write_json(result, out / "artifact_check.json")
    print(f"wrote {out / 'artifact_check.json'}")


if __name__ == "__main__":
    main()

"""Fluid engine vs packet engine (and the max-min baseline) on the same scenarios and seed:
per-class mean and p99 FCT, mean rates of long flows, bottleneck utilisation, wall times, and the
relative differences to the packet run.

    python experiments/fluid_validation/compare.py [--scenarios dumbbell,incast,mixed40] [--out DIR]

Scenarios: ``dumbbell`` (4 long DCTCP flows through one 100 Gb/s bottleneck), ``incast`` (the
default run: UnoCC 4 intra + 4 inter-DC 200 MB flows into one receiver), ``mixed40`` (fig10_load
at 40% load, the artifact's traffic, UnoCC + ECMP, 5000 flows).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

import uno
from uno.metrics.plots import class_table

SCENARIOS = {
    "dumbbell": ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0", "cc=dctcp",
                 "switch=ecn", "lb=ecmp", "workload.size_bytes=20000000"],
    "incast": [],
    "mixed40": ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                "workload.load=0.4"],
}  # fmt: skip
ENGINES = ("packet", "fluid", "maxmin")


def run(name: str, engine: str) -> tuple[pd.DataFrame, dict, float]:
    cfg = uno.compose([*SCENARIOS[name], f"engine.kind={engine}", "engine.progress=false",
                       "engine.sample_interval_us=0"])  # fmt: skip
    t0 = time.perf_counter()
    result = uno.run(cfg)
    return result.flows, result.summary, time.perf_counter() - t0


def compare(name: str) -> dict:
    rows = {}
    tables = []
    for engine in ENGINES:
        flows, summary, wall = run(name, engine)
        flows = flows.assign(label=engine)
        tables.append(flows)
        rows[engine] = {"wall_s": round(wall, 2), "sim_time_us": summary["run"]["sim_time_us"]}
    flows = pd.concat(tables, ignore_index=True)
    table = class_table(flows, ["label"])
    done = flows[flows["finish_ps"].notna()]
    rate = done.groupby(["label", "cls"])["mean_rate_gbps"].mean().unstack("cls")
    print(f"== {name}: per-class FCT (µs) and mean flow rate (Gb/s)")
    print(table[["flows", "mean_fct_us", "p99_fct_us", "unfinished"]].round(1).to_string())
    print(rate.round(2).to_string())
    diffs = {}
    for engine in ("fluid", "maxmin"):
        for cls in sorted(set(table.index.get_level_values("cls"))):
            for col in ("mean_fct_us", "p99_fct_us"):
                ref = table.loc[("packet", cls), col]
                val = table.loc[(engine, cls), col]
                diffs[f"{engine} {cls} {col}"] = round(100.0 * (val - ref) / ref, 1)
            ref = rate.loc["packet", cls]
            diffs[f"{engine} {cls} mean_rate"] = round(
                100.0 * (rate.loc[engine, cls] - ref) / ref, 1
            )
    print("difference to packet, %:", json.dumps(diffs))
    print("wall s:", {e: rows[e]["wall_s"] for e in ENGINES},
          "speed-up fluid:", round(rows["packet"]["wall_s"] / rows["fluid"]["wall_s"], 1))  # fmt: skip
    return {"runs": rows, "diff_pct": diffs}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    args = ap.parse_args()
    out = {name: compare(name) for name in args.scenarios.split(",")}
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "fluid_validation.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

"""The target cells of the 40%-load mixed workload (compare.py's ``mixed40``) over several
seeds: per seed and class, the fluid engine's mean and p99 FCT against the packet engine's (in %,
targets 10% and 20%), and how many flows of each class timed out in each engine (the intra-DC
p99 sits on the flows that waited for a timer). A p99 of ~1,000 flows is a draw: one seed is
not a verdict.

    python experiments/fluid_validation/seeds.py [--seeds 1-8] [--scheme uno_ecmp]
        [--fluid OVERRIDE ...]   # e.g. --fluid engine.fluid_phase_drops=false

About 20 s a seed on a 2-core laptop-class machine (the packet engine on its compiled data plane).
"""

from __future__ import annotations

import argparse

import pandas as pd
from compare import SCENARIOS  # this folder's script: the scenarios it compares

import uno

TARGETS = {"mean": 10.0, "p99": 20.0}


def seed_list(text: str) -> list[int]:
    """``1-8`` or ``1,3,5``."""
    if "-" in text:
        lo, hi = text.split("-")
        return list(range(int(lo), int(hi) + 1))
    return [int(s) for s in text.split(",")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", default="1-8", help="a range (1-8) or a list (1,3,5)")
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--fluid", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of the fluid runs only (repeatable)")  # fmt: skip
    args = ap.parse_args()
    try:
        seeds = seed_list(args.seeds)
    except ValueError:
        ap.error(f"--seeds: {args.seeds!r} is not a range like 1-8 or a list like 1,3,5")
    base = [s for s in SCENARIOS["mixed40"] if not s.startswith("scheme=")]
    base += [f"scheme={args.scheme}", "engine.progress=false", "engine.sample_interval_us=0"]
    rows = []
    for seed in seeds:
        flows = {
            engine: uno.run(uno.compose([*base, f"seed={seed}", f"engine.kind={engine}",
                                         *(args.fluid if engine == "fluid" else [])])).flows
            for engine in ("packet", "fluid")
        }  # fmt: skip
        row = {"seed": seed}
        for cls in ("inter", "intra"):
            p, f = (flows[e][flows[e]["cls"] == cls] for e in ("packet", "fluid"))
            for stat, fn in (("mean", pd.Series.mean), ("p99", lambda s: s.quantile(0.99))):
                ref = fn(p["fct_ps"])
                row[f"{cls} {stat} %"] = round(100.0 * (fn(f["fct_ps"]) - ref) / ref, 1)
            row[f"{cls} timed out p/f"] = (
                f"{int((p['timeouts'] > 0).sum())}/{int((f['timeouts'] > 0).sum())}"
            )
        rows.append(row)
        print(" ".join(f"{k}: {v}" for k, v in row.items()), flush=True)
    table = pd.DataFrame(rows).set_index("seed")
    cells = [c for c in table.columns if c.endswith(" %")]
    within = sum(
        int((table[c].abs() <= TARGETS[c.split()[1]]).sum()) for c in cells
    )  # fmt: skip
    print(table.to_string())
    print("mean over seeds, %:", table[cells].mean().round(1).to_dict())
    print(f"cells within target: {within} of {len(cells) * len(table)}")


if __name__ == "__main__":
    main()

"""The fluid engine's settled steps (``engine.fluid_step_settled_rtt``) against its default steps
and the packet engine: per case and setting, the fluid run's wall time and steps, and per class
the mean and p99 FCT differences in % to the packet run and to the default steps' run.

    python experiments/fluid_validation/settled.py [--cases qa2,qa3,...] [--settled 0.25,0.5,1.0]
        [--fluid OVERRIDE]

Cases: ``qa2`` / ``qa3``, two / three ECMP UnoCC flows of 20 MB into one host (each flow's
window capped at a BDP, so two of them acknowledge half their window an RTT: Uno's Quick
Adapt threshold); ``pfc_spreading``; ``dcqcn_pfc``, the Fig. 10 traffic with DCQCN and PFC on
host and fabric links (300 flows); ``gear_incast``, the default incast with Gear over HPCC
(its flows never settle); ``mixed40``, the artifact's traffic at 40% load (5,000 flows,
``uno_ecmp``); ``plb`` and ``uno``, the paper's Fig. 10 traffic (1,000 flows; not in the
default list, their packet runs take minutes). About 2 minutes for the default cases at one
setting on a 2-core laptop-class machine.
"""

from __future__ import annotations

import argparse
import time

from sweep import case_names  # (beside this script)

import uno
import uno.api
from uno.build import build_simulation

BASE = ["engine.progress=false", "engine.sample_interval_us=0"]
_HOSTS = (0, 8, 16)
_PFC = ["switch.pfc.enabled=true", "switch.pfc.port_kinds=[host,fabric]"]


def _ecmp_flows(n: int) -> list[str]:
    flows = ",".join(f"{{src:{h},dst:64,size_bytes:20000000,start_us:0}}" for h in _HOSTS[:n])
    return ["workload=flows", f"workload.flows=[{flows}]", "lb=ecmp", "ec=none"]


CASES = {
    "qa2": _ecmp_flows(2),
    "qa3": _ecmp_flows(3),
    "pfc_spreading": ["experiment=pfc_spreading"],
    "dcqcn_pfc": [
        "experiment=fig10_load",
        "cc=dcqcn",
        *_PFC,
        "lb=ecmp",
        "ec=none",
        "workload.n_flows=300",
    ],  # fmt: skip
    "gear_incast": ["scheme=gear_hpcc", "switch.pfc.enabled=false"],
    "mixed40": [
        "experiment=fig10_load",
        "workload=mixed_artifact",
        "workload.load=0.4",
        "scheme=uno_ecmp",
    ],  # fmt: skip
    "plb": ["experiment=fig10_load", "scheme=uno_ecmp", "lb=plb", "workload.n_flows=1000"],
    "uno": ["experiment=fig10_load", "workload.n_flows=1000"],
}
DEFAULT_CASES = tuple(c for c in CASES if c not in ("plb", "uno"))


def run(overrides: list[str]) -> tuple[float, int, dict[str, tuple[float, float]]]:
    """One run: (engine wall s, fluid steps or 0, per class (mean, p99) FCT in µs)."""
    sim = build_simulation(uno.api.to_run_config(uno.compose([*BASE, *overrides])))
    t0 = time.perf_counter()
    result = sim.run()
    wall = time.perf_counter() - t0
    fct = {
        cls: (g["fct_ps"].mean() / 1e6, g["fct_ps"].quantile(0.99) / 1e6)
        for cls, g in result.flows.groupby("cls")
    }
    return wall, int(result.summary["run"].get("fluid_steps", 0)), fct


def gaps(mine: dict, theirs: dict) -> str:
    """Per class: mean / p99 difference in %."""
    return " | ".join(
        f"{cls} {100 * (m[0] / theirs[cls][0] - 1):+.1f} / {100 * (m[1] / theirs[cls][1] - 1):+.1f}"
        for cls, m in sorted(mine.items())
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(DEFAULT_CASES),
                    help=f"comma-separated, of {', '.join(CASES)}")  # fmt: skip
    ap.add_argument("--settled", default="0.5",
                    help="comma-separated values of engine.fluid_step_settled_rtt")  # fmt: skip
    ap.add_argument("--fluid", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of the fluid runs only (repeatable)")  # fmt: skip
    args = ap.parse_args()
    names = case_names(ap, args.cases, CASES)
    try:
        values = [float(v) for v in args.settled.split(",")]
    except ValueError:
        ap.error(f"--settled: numbers separated by commas, not {args.settled!r}")
    print("fluid against packet and against the default steps, %: mean / p99 FCT per class")
    for name in names:
        p_wall, _, packet = run([*CASES[name], "engine.kind=packet"])
        d_wall, d_steps, default = run([*CASES[name], "engine.kind=fluid", *args.fluid])
        print(f"{name}: packet {p_wall:.2f} s; default steps {d_wall:.2f} s, {d_steps:,} steps, "
              f"vs packet {gaps(default, packet)}", flush=True)  # fmt: skip
        for value in values:
            settled = f"engine.fluid_step_settled_rtt={value}"
            wall, steps, fct = run([*CASES[name], "engine.kind=fluid", *args.fluid, settled])
            print(f"  settled {value}: {wall:.2f} s, {steps:,} steps, vs packet {gaps(fct, packet)}; "
                  f"vs default steps {gaps(fct, default)}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

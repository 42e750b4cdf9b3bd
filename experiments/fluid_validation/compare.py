"""Fluid engine vs packet engine (and the max-min baseline and the packet/fluid hybrid) on the
same scenarios and seed: per-class mean and p99 FCT, mean rates of long flows, bottleneck
utilisation, how evenly the losses fall on the flows (retransmissions per packet, quantiles
over the flows of at least 100 packets), wall times, and the relative differences to the packet
run. The hybrid runs as
packets the flows under study (``HYBRID``: the intra-DC flows of the incast, the flows of at most
100 kB at 40% load) and is also compared on those flows alone.

    python experiments/fluid_validation/compare.py [--scenarios dumbbell,incast,mixed40] [--seed N]
        [--scheme uno_ecmp|uno|gemini|mprdma_bbr] [--override KEY=VALUE ...] [--out DIR]
    python experiments/fluid_validation/compare.py --scenarios mixed40_paper   # ~6 min
    # HPCC as Gear runs it, without PFC (which the fluid engine refuses), in both engines:
    python experiments/fluid_validation/compare.py --scenarios incast --override scheme=gear_hpcc \
        --override switch.pfc.enabled=false

Scenarios: ``dumbbell`` (4 long DCTCP flows through one 100 Gb/s bottleneck), ``incast`` (the
default run: UnoCC 4 intra + 4 inter-DC 200 MB flows into one receiver), ``mixed40`` (fig10_load
at 40% load, the artifact's traffic, 5000 flows; UnoCC + ECMP unless ``--scheme``), and, only
when asked, ``mixed40_paper`` (the same with the Uno paper's own traffic, ``workload=mixed``:
71 GB, about half a second simulated).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import pandas as pd

import uno
from uno.core.errors import ConfigError
from uno.metrics.analysis import bottleneck_utilisation
from uno.metrics.plots import class_table

SCENARIOS = {
    "dumbbell": ["topo=dumbbell", "workload=incast", "workload.n_intra=4", "workload.n_inter=0", "cc=dctcp",
                 "switch=ecn", "lb=ecmp", "workload.size_bytes=20000000"],
    "incast": [],
    "mixed40": ["experiment=fig10_load", "workload=mixed_artifact", "scheme=uno_ecmp",
                "workload.load=0.4"],
    # the Uno paper's own traffic (71 GB, ~0.5 s simulated): not in the default list
    "mixed40_paper": ["experiment=fig10_load", "workload=mixed", "scheme=uno_ecmp",
                      "workload.load=0.4"],
}  # fmt: skip
#: what runs without --scenarios
DEFAULT_SCENARIOS = ("dumbbell", "incast", "mixed40")
#: the hybrid's packet flows, per scenario (no hybrid run where absent)
HYBRID = {
    "incast": ["engine.hybrid_packet_tags=[intra]"],
    "mixed40": ["engine.hybrid_packet_max_bytes=100000"],
}
ENGINES = ("packet", "fluid", "maxmin", "hybrid")
#: extra overrides of the fluid and hybrid runs (``--fluid``), e.g. their step
FLUID_OVERRIDES: list[str] = []
#: the scenarios whose flows all share one bottleneck, sampled (every so many µs) for its
#: steady-state utilisation
SAMPLED_US = {"dumbbell": 50, "incast": 500}


def run(name: str, engine: str) -> tuple[pd.DataFrame, dict, float, float | None]:
    extra = HYBRID[name] if engine == "hybrid" else []
    if engine in ("fluid", "hybrid"):
        extra = [*extra, *FLUID_OVERRIDES]
    sampling = [f"engine.sample_interval_us={SAMPLED_US.get(name, 0)}",
                "engine.sample_cwnd=false", "engine.sample_queues=false"]  # fmt: skip
    cfg = uno.compose([*SCENARIOS[name], f"engine.kind={engine}", "engine.progress=false",
                       *sampling, *extra])  # fmt: skip
    t0 = time.perf_counter()
    result = uno.run(cfg)
    wall = time.perf_counter() - t0
    util = bottleneck_utilisation(result.tables, SAMPLED_US[name]) if name in SAMPLED_US else None
    return result.flows, result.summary, wall, util


def compare(name: str) -> dict:
    rows = {}
    tables = []
    engines = [e for e in ENGINES if e != "hybrid" or name in HYBRID]
    studied = None
    utilisation = {}
    for engine in list(engines):
        try:
            flows, summary, wall, util = run(name, engine)
        except ConfigError as err:  # (an engine that does not model the scenario: left out)
            print(f"-- {name}: {engine} refuses it: {err}")
            engines.remove(engine)
            continue
        if engine == "hybrid":
            studied = _packet_flow_ids(name, flows)
        flows = flows.assign(label=engine)
        tables.append(flows)
        rows[engine] = {"wall_s": round(wall, 2), "sim_time_us": summary["run"]["sim_time_us"]}
        if util is not None:
            utilisation[engine] = util
    flows = pd.concat(tables, ignore_index=True)
    table = class_table(flows, ["label"])
    done = flows[flows["finish_ps"].notna()]
    rate = done.groupby(["label", "cls"])["mean_rate_gbps"].mean().unstack("cls")
    print(f"== {name}: per-class FCT (µs) and mean flow rate (Gb/s)")
    print(table[["flows", "mean_fct_us", "p99_fct_us", "unfinished"]].round(1).to_string())
    print(rate.round(2).to_string())
    print(_resend_spread(flows).to_string())
    diffs = {}
    if utilisation:
        print("steady-state bottleneck utilisation:",
              {e: round(u, 4) for e, u in utilisation.items()})  # fmt: skip
        for engine, util in utilisation.items():
            if engine != "packet" and "packet" in utilisation:
                ref = utilisation["packet"]
                diffs[f"{engine} utilisation"] = round(100.0 * (util - ref) / ref, 1)
    if studied is not None and "hybrid" in engines:
        sub = flows[flows["flow_id"].isin(studied)]
        sub_table = class_table(sub, ["label"])
        print(f"-- the hybrid's packet flows ({len(studied)}): FCT (µs)")
        print(sub_table[["flows", "mean_fct_us", "p99_fct_us"]].round(1).to_string())
        for cls in sorted(set(sub_table.index.get_level_values("cls"))):
            for col in ("mean_fct_us", "p99_fct_us"):
                ref = sub_table.loc[("packet", cls), col]
                for engine in ("fluid", "hybrid"):
                    val = sub_table.loc[(engine, cls), col]
                    diffs[f"studied {engine} {cls} {col}"] = round(100.0 * (val - ref) / ref, 1)
    for engine in [e for e in engines if e != "packet"]:
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
    print("wall s:", {e: rows[e]["wall_s"] for e in engines},
          "speed-up:", {e: round(rows["packet"]["wall_s"] / rows[e]["wall_s"], 1)
                        for e in engines if e != "packet"})  # fmt: skip
    return {"runs": rows, "diff_pct": diffs}


def _resend_spread(flows: pd.DataFrame, min_packets: int = 100) -> pd.DataFrame:
    """Per engine and class, the quantiles of each flow's retransmissions per packet (flows of at
    least ``min_packets`` packets): how evenly the losses fall on the flows. A packet queue that
    overflows drops some flows' packets far more than others' (drop-tail lock-out); the fluid
    links give every flow at a link the same drop fraction."""
    big = flows[flows["packets"] >= min_packets]
    ratio = (big["retransmits"] / big["packets"]).rename("resent_per_packet")
    q = ratio.groupby([big["label"], big["cls"]]).quantile([0.1, 0.5, 0.9, 1.0]).unstack()
    q.columns = [f"resent/pkt p{int(c * 100)}" for c in q.columns]
    return q.round(2)


def _packet_flow_ids(name: str, flows: pd.DataFrame) -> set[int]:
    """The flows the hybrid ran as packets in scenario ``name``."""
    from uno.api import to_run_config
    from uno.fluid.hybrid import packet_selection

    cfg = to_run_config(uno.compose([*SCENARIOS[name], "engine.kind=hybrid", *HYBRID[name]]))
    chosen = packet_selection(cfg.engine, flows["size_bytes"], flows["tag"])
    return set(flows.loc[chosen, "flow_id"])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scenarios", default=",".join(DEFAULT_SCENARIOS),
                    help=f"comma-separated, of {', '.join(SCENARIOS)}")  # fmt: skip
    ap.add_argument("--out", default=None, help="write the figures as JSON here")
    ap.add_argument("--scheme", default="uno_ecmp", help="the scheme of the fig10_load scenarios")
    ap.add_argument("--seed", type=int, default=None, help="the run seed (default: the config's)")
    ap.add_argument("--override", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of every scenario's runs in every engine, after "
                         "the scenario's own, e.g. workload.n_flows=1000 (repeatable)")  # fmt: skip
    ap.add_argument("--fluid", action="append", default=[], metavar="OVERRIDE",
                    help="a config override of the fluid and hybrid runs only, e.g. "
                         "engine.fluid_step_intra_rtt=0.25 (repeatable)")  # fmt: skip
    args = ap.parse_args()
    FLUID_OVERRIDES.extend(args.fluid)
    names = args.scenarios.split(",")
    unknown = set(names) - set(SCENARIOS)
    if unknown:
        ap.error(f"--scenarios: unknown {sorted(unknown)}; known: {', '.join(SCENARIOS)}")
    for name in ("mixed40", "mixed40_paper"):
        SCENARIOS[name] = [s for s in SCENARIOS[name] if not s.startswith("scheme=")]
        SCENARIOS[name].append(f"scheme={args.scheme}")
    for overrides in SCENARIOS.values():
        overrides.extend(args.override)
    if args.seed is not None:
        for overrides in SCENARIOS.values():
            overrides.append(f"seed={args.seed}")
    out = {name: compare(name) for name in names}
    if args.out:
        Path(args.out).mkdir(parents=True, exist_ok=True)
        Path(args.out, "fluid_validation.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()

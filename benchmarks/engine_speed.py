"""Packet-engine speed on a fixed scenario: the 4 intra-DC + 4 inter-DC incast with 100 MB
flows on the two-datacenter topology, DCTCP, ECMP.

Prints packet-hops per wall-second (a packet-hop is one packet, data or control, entering one
queue), wall time and peak memory (resident set size of this process) for each repetition.

    python benchmarks/engine_speed.py [--size-bytes 100000000] [--repeat 3] [overrides ...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation

SCENARIO = [
    "topo=two_dc",
    "workload=mixed_incast",
    "workload.n_intra=4",
    "workload.n_inter=4",
    "cc=dctcp",
    "lb=ecmp",
    "switch=ecn",
    "engine.sample_interval_us=0",
    "seed=1",
]


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size-bytes", type=int, default=100_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = ap.parse_args()
    overrides = SCENARIO + [f"workload.size_bytes={args.size_bytes}"] + args.overrides
    rates = []
    for i in range(args.repeat):
        sim = build_simulation(to_run_config(uno.compose(overrides)))
        t0 = time.perf_counter()
        result = sim.run()
        wall = time.perf_counter() - t0
        run = result.summary["run"]
        hops = run["packet_hops"]
        rates.append(hops / wall)
        peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        print(
            f"run {i + 1}: {hops:,} packet-hops in {wall:.2f} s wall -> {hops / wall:,.0f} packet-hops/s; "
            f"simulated {run['sim_time_us'] / 1000:.1f} ms; events {run['events']:,}; "
            f"peak RSS {peak_mib:,.0f} MiB; all flows finished: {run['all_flows_finished']}"
        )
    print(
        f"engine_speed: best {max(rates):,.0f} packet-hops/s, median {statistics.median(rates):,.0f} "
        f"over {len(rates)} runs; peak RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:,.0f} MiB"
    )


if __name__ == "__main__":
    main()

"""Wall time and peak memory of one fig10_load run at 40% load (5000 flows), packet engine.

    python benchmarks/fig10_speed.py [--workload mixed_artifact|mixed] [--scheme uno] [overrides ...]

The artifact's traffic (``mixed_artifact``, the default: 1.9 GB, 90 % of it across the 800 Gb/s
border) simulates a few tens of ms, about half a minute of wall time. The paper's (``mixed``: web
search inside the DC, Alibaba WAN across, 71 GB in all, most of it across the border) simulates
about a second of heavy overload, over an hour of wall time; add ``engine.max_sim_time_ms=2`` to
measure its rate on a slice.
"""

from __future__ import annotations

import argparse
import resource
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--workload", default="mixed_artifact")
    ap.add_argument("--scheme", default="uno")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    overrides = [
        "experiment=fig10_load",
        f"workload={args.workload}",
        f"scheme={args.scheme}",
        "workload.load=0.4",
        "engine.progress=false",
        *args.overrides,
    ]
    t0 = time.perf_counter()
    sim = build_simulation(to_run_config(uno.compose(overrides)))
    built = time.perf_counter() - t0
    result = sim.run()
    total = time.perf_counter() - t0
    run = result.summary["run"]
    rss_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    done = int(result.flows["finish_ps"].notna().sum())
    print(
        f"fig10_speed workload={args.workload} scheme={args.scheme} load=0.4: {len(result.flows)} "
        f"flows ({done} finished), simulated {run['sim_time_us'] / 1000:.1f} ms in {total:.1f} s "
        f"wall (build {built:.1f} s, engine {run['wall_s']:.1f} s), {run['packet_hops']:,} "
        f"packet-hops ({run['packet_hops_per_s']:,.0f}/s), peak RSS {rss_mib:.0f} MiB"
    )


if __name__ == "__main__":
    main()

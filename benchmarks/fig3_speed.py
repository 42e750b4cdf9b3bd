"""Speed of the fig3_fairness experiment (Uno Fig. 3: 4 intra + 4 inter flows to one receiver,
packet spraying, UnoCC with phantom queues on every switch port).

Prints wall time, packet-hops per wall-second, simulated time and peak memory, and a check
that phantom queues cost no events: the same run with phantom queues on every switch port
versus on none schedules the same kinds of events (one per packet-hop plus host timers), so
events per packet-hop stay the same.

    python benchmarks/fig3_speed.py [--size-bytes 1073741824] [--cc uno] [overrides ...]
"""

from __future__ import annotations

import argparse
import resource
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation


def run_once(overrides: list[str]) -> dict:
    sim = build_simulation(to_run_config(uno.compose(overrides)))
    n_phantom = sum(1 for p in sim.network.ports if p.phantom is not None)
    t0 = time.perf_counter()
    result = sim.run()
    wall = time.perf_counter() - t0
    run = result.summary["run"]
    return {
        "wall_s": wall,
        "hops": run["packet_hops"],
        "events": run["events"],
        "sim_ms": run["sim_time_us"] / 1000,
        "phantom_ports": n_phantom,
        "finished": run["all_flows_finished"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size-bytes", type=int, default=1 << 30)
    ap.add_argument("--cc", default="uno")
    ap.add_argument(
        "--phantom-check-bytes",
        type=int,
        default=20_000_000,
        help="flow size of the with/without phantom comparison (0 skips it)",
    )
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    base = [
        "experiment=fig3_fairness",
        f"cc={args.cc}",
        "engine.sample_interval_us=500",
        *args.overrides,
    ]
    r = run_once(base + [f"workload.size_bytes={args.size_bytes}"])
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(
        f"fig3_fairness cc={args.cc} size={args.size_bytes:,} B/flow: wall {r['wall_s']:.1f} s, "
        f"{r['hops']:,} packet-hops -> {r['hops'] / r['wall_s']:,.0f} packet-hops/s, "
        f"simulated {r['sim_ms']:.1f} ms, {r['events'] / r['hops']:.3f} events per packet-hop, "
        f"phantom queues on {r['phantom_ports']} ports, all finished: {r['finished']}, peak RSS {peak:,.0f} MiB"
    )
    if args.phantom_check_bytes:
        small = [*base, f"workload.size_bytes={args.phantom_check_bytes}"]
        for label, extra in (
            ("phantom on every switch port", []),
            ("no phantom queue", ["switch=ecn"]),
        ):
            c = run_once(small + extra)
            print(
                f"  {label:<30} ({c['phantom_ports']:4d} ports): {c['events'] / c['hops']:.3f} events "
                f"per packet-hop, {c['wall_s'] / c['hops'] * 1e6:.2f} us wall per packet-hop"
            )


if __name__ == "__main__":
    main()

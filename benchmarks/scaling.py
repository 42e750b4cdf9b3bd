"""How the packet engine's wall time grows with hosts, ports and flows: the baseline for showing
that cost grows with packet-hops, not with the number of ports or of idle flows.

Two series, DCTCP and ECMP, no sampling (``engine.sample_interval_us=0``):

1. ``fat_tree``: permutation traffic (``workload=permutation workload.scope=all``, every host
   sends one flow of ``--size-bytes``, default 200 kB) on fat trees of k = 4, 8, 12, 16
   (``--ks``): k^3/4 = 16, 128, 432, 1024 hosts and flows, 3k^3/2 = 96 ... 6144 ports (every
   port of the network, host NICs included). Packet-hops grow with the hosts; so do ports and idle state.
2. ``two_dc``: the two-datacenter topology (``topo=two_dc topo.k=8``, ``--dc-k``; 256 hosts, its
   ports fixed) with 8, 32, 128, 256 flows (``--flows``) of ``workload=mixed workload.load=0.4``:
   Poisson arrivals, uniform sources and destinations, 4:1 intra:inter by count, web-search
   sizes inside the DC and Alibaba WAN sizes across (``--size-bytes`` does not apply). Hosts and
   ports stay the same; flows and packet-hops grow (the sizes are drawn, so packet-hops per flow
   vary from point to point).

One line per run, then a table per series: hosts, ports, flows, packet-hops, events, build s
(``build_simulation``, after the config is composed and resolved), run s (the engine loop:
``summary["run"]["wall_s"]``), packet-hops/s and run ns per packet-hop. A packet-hop is one
packet, data or control, entering one queue. Each point is the fastest of its runs
(``--repeat``, default 3, for the fat trees, whose runs take seconds; ``--dc-repeat``, default 1,
for the two-DC runs, which take up to a minute or more): the shortest run is the one least
disturbed by other work on the machine. The closing fit gives, per series and for both, the
range of ns per packet-hop (min, max, max/min), how much packet-hops, ports and run time grew
from the first point to the last, and the slope of log(run s) against log(packet-hops): 1 and a
flat ns/hop mean the cost tracks packet-hops; ns/hop rising with the ports means it does not.

Unless ``engine.dataplane=python`` is among the overrides (the compiled data plane is the
default), a small warm-up run first loads (or compiles) the kernels, so the first timed point
does not pay for it. Pass ``engine.dataplane=python`` for the Python data plane's scaling.

Default run (all four k, k=16 included, and all four flow counts): about 2.5 minutes on a slow
2-core machine, a little more when it is busy; the two-DC series is three quarters of it, its
256-flow point alone over a minute. ``--quick``: k = 4, 8 and 8, 16 flows, one run each,
well under a minute (a smoke test).

    python benchmarks/scaling.py [--ks 4,8,12,16] [--flows 8,32,128,256] [--size-bytes 200000]
        [--dc-k 8] [--repeat 3] [--dc-repeat 1] [--quick] [overrides ...]
"""

from __future__ import annotations

import argparse
import math
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.config.validate import check_config
from uno.core.errors import ConfigError, InvariantError

COMMON = ["cc=dctcp", "lb=ecmp", "engine.sample_interval_us=0", "engine.progress=false", "seed=1"]

DEFAULTS = {
    "ks": "4,8,12,16",
    "flows": "8,32,128,256",
    "size_bytes": 200_000,
    "repeat": 3,
    "dc_repeat": 1,
}
QUICK = {"ks": "4,8", "flows": "8,16", "size_bytes": 100_000, "repeat": 1, "dc_repeat": 1}


def fat_tree_overrides(k: int, size_bytes: int) -> list[str]:
    return [
        "topo=fat_tree",
        f"topo.k={k}",
        "workload=permutation",
        "workload.scope=all",
        f"workload.size_bytes={size_bytes}",
        *COMMON,
    ]


def two_dc_overrides(dc_k: int, n_flows: int) -> list[str]:
    return [
        "topo=two_dc",
        f"topo.k={dc_k}",
        "workload=mixed",
        f"workload.n_flows={n_flows}",
        "workload.load=0.4",
        *COMMON,
    ]


def measure(label: str, overrides: list[str], repeat: int) -> dict:
    """Run ``overrides`` ``repeat`` times, print one line each; return the fastest run's figures
    (by engine wall time), or the error that stopped it."""
    best = None
    for i in range(repeat):
        sim = None
        t0 = time.perf_counter()
        try:
            run_cfg = to_run_config(uno.compose(overrides))
            check_config(run_cfg)
            t1 = time.perf_counter()
            sim = build_simulation(run_cfg)
            t2 = time.perf_counter()
            ports = len(sim.network.ports)
            result = sim.run()
        except (ConfigError, InvariantError) as e:
            return {"error": f"{type(e).__name__}: {e}"}
        run = result.summary["run"]
        hops, wall = run["packet_hops"], run["wall_s"]
        point = {
            "hosts": run["n_hosts"],
            "ports": ports,
            "flows": run["n_flows"],
            "hops": hops,
            "events": run["events"],
            "build_s": t2 - t1,
            "wall_s": wall,
        }
        print(
            f"{label} run {i + 1}: {run['n_hosts']} hosts, {ports:,} ports, {run['n_flows']} flows: "
            f"{hops:,} packet-hops, {run['events']:,} events in {wall:.2f} s wall "
            f"({hops / wall:,.0f} packet-hops/s, {wall / hops * 1e9:,.0f} ns/hop); config "
            f"{t1 - t0:.2f} s, build {t2 - t1:.2f} s; simulated {run['sim_time_us'] / 1000:.2f} ms; "
            f"all flows finished: {run['all_flows_finished']}",
            flush=True,
        )
        if best is None or wall < best["wall_s"]:
            best = point
        del sim, result
    return best


def print_table(title: str, points: list[tuple[str, dict]]) -> None:
    print(f"{title} (fastest run of each point):")
    print(
        f"  {'point':>6} {'hosts':>6} {'ports':>7} {'flows':>6} {'packet-hops':>12} {'events':>12} "
        f"{'build s':>8} {'run s':>8} {'hops/s':>10} {'ns/hop':>7}"
    )
    for name, p in points:
        if "error" in p:
            print(f"  {name:>6} skipped: {p['error']}")
            continue
        print(
            f"  {name:>6} {p['hosts']:>6} {p['ports']:>7,} {p['flows']:>6} {p['hops']:>12,} "
            f"{p['events']:>12,} {p['build_s']:>8.2f} {p['wall_s']:>8.2f} "
            f"{p['hops'] / p['wall_s']:>10,.0f} {p['wall_s'] / p['hops'] * 1e9:>7,.0f}"
        )


def loglog_slope(xs: list[float], ys: list[float]) -> float | None:
    """Least-squares slope of log(y) against log(x); None with fewer than two distinct x."""
    lx, ly = [math.log(x) for x in xs], [math.log(y) for y in ys]
    mx, my = sum(lx) / len(lx), sum(ly) / len(ly)
    sxx = sum((x - mx) ** 2 for x in lx)
    if len(xs) < 2 or sxx == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(lx, ly, strict=True)) / sxx


def print_fit(name: str, points: list[dict]) -> None:
    ok = [p for p in points if "error" not in p]
    if not ok:
        print(f"  {name:<8} no points")
        return
    ns = [p["wall_s"] / p["hops"] * 1e9 for p in ok]
    line = f"  {name:<8} ns/hop min {min(ns):,.0f}  max {max(ns):,.0f}  max/min {max(ns) / min(ns):.2f}"
    if len(ok) > 1:
        first, last = ok[0], ok[-1]
        slope = loglog_slope([p["hops"] for p in ok], [p["wall_s"] for p in ok])
        line += (
            f"  | first->last: packet-hops x{last['hops'] / first['hops']:.1f}, ports "
            f"x{last['ports'] / first['ports']:.1f}, run s x{last['wall_s'] / first['wall_s']:.1f}"
        )
        if slope is not None:
            line += f"; slope log(run s) vs log(packet-hops) {slope:.2f}"
    print(line)


def _ints(text: str, flag: str, ap: argparse.ArgumentParser) -> list[int]:
    try:
        values = [int(v) for v in text.split(",") if v.strip()]
    except ValueError:
        ap.error(f"{flag}: comma-separated integers, got {text!r}")
    return values


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--ks", default=None, help=f"fat-tree k values (default {DEFAULTS['ks']})")
    ap.add_argument(
        "--flows", default=None, help=f"two-DC flow counts (default {DEFAULTS['flows']})"
    )
    ap.add_argument(
        "--size-bytes",
        type=int,
        default=None,
        help=f"bytes per permutation flow (default {DEFAULTS['size_bytes']})",
    )
    ap.add_argument("--dc-k", type=int, default=8, help="k of each two-DC fat tree (default 8)")
    ap.add_argument("--repeat", type=int, default=None, help="runs per fat-tree point (default 3)")
    ap.add_argument("--dc-repeat", type=int, default=None, help="runs per two-DC point (default 1)")
    ap.add_argument(
        "--quick",
        action="store_true",
        help=f"smoke test: --ks {QUICK['ks']} --flows {QUICK['flows']} --size-bytes "
        f"{QUICK['size_bytes']}, one run each (explicit flags still win)",
    )
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides (both series)")
    args = ap.parse_args()
    base = QUICK if args.quick else DEFAULTS
    for field, value in base.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    ks = _ints(args.ks, "--ks", ap)
    flows = _ints(args.flows, "--flows", ap)
    if args.repeat < 1 or args.dc_repeat < 1:
        ap.error("--repeat and --dc-repeat must be at least 1")

    t_start = time.perf_counter()
    if "engine.dataplane=python" not in args.overrides:
        # load (or compile) the data plane's kernels before the first timed point
        t0 = time.perf_counter()
        warm = fat_tree_overrides(4, 10_000) + args.overrides
        build_simulation(to_run_config(uno.compose(warm))).run()
        print(f"compiled data plane warm-up: {time.perf_counter() - t0:.2f} s", flush=True)
    fat = [
        (
            f"k={k}",
            measure(
                f"fat_tree k={k}",
                fat_tree_overrides(k, args.size_bytes) + args.overrides,
                args.repeat,
            ),
        )
        for k in ks
    ]
    dc = [
        (
            f"n={n}",
            measure(
                f"two_dc k={args.dc_k} flows={n}",
                two_dc_overrides(args.dc_k, n) + args.overrides,
                args.dc_repeat,
            ),
        )
        for n in flows
    ]
    print()
    print_table(f"fat_tree permutation, {args.size_bytes:,} B per flow, cc=dctcp lb=ecmp", fat)
    print_table(f"two_dc k={args.dc_k} mixed load 0.4, cc=dctcp lb=ecmp", dc)
    print("fit: run time per packet-hop across each series")
    fat_points, dc_points = [p for _, p in fat], [p for _, p in dc]
    print_fit("fat_tree", fat_points)
    print_fit("two_dc", dc_points)
    both = [p for p in fat_points + dc_points if "error" not in p]
    if both:
        ns = [p["wall_s"] / p["hops"] * 1e9 for p in both]
        print(
            f"  {'both':<8} ns/hop min {min(ns):,.0f}  max {max(ns):,.0f}  max/min "
            f"{max(ns) / min(ns):.2f}"
        )
    print(f"scaling: total {time.perf_counter() - t_start:.1f} s wall")


if __name__ == "__main__":
    main()

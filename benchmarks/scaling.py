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

The first two series grow packet-hops with hosts, ports or flows together. Three more hold
packet-hops still and grow one thing at a time (16 flows of 12.8 MB from hosts spread over the
tree to their mirror images in other pods, tagged ``active``; ``engine.stop_when_done=[active]``):

3. ``ports``: the same 16 flows on fat trees of every ``--ks`` (96 ... 6144 ports).
4. ``idle``: the 16 flows on a k = 8 fat tree beside 0, 256, 1024, 4096 (``--idle``) one-packet
   flows that start at 900 ms, after the run has ended: flows the engine builds and holds but
   never runs.
5. ``in_flight``: 16 x 12.8 MB on the last fat tree, split over 16, 64, 256, 1024
   (``--concurrent``) flows that all start at t = 0 (at 1024, 200 kB each, the k = 16
   permutation's flows between other hosts): the same packet-hops with more packets in
   the network at once. This is what separates the ``fat_tree`` series' points besides size:
   every flow of a permutation starts at once with a BDP-sized window, so the k = 16 point holds
   about a thousand times the packets of the k = 4 one in its queues. The event heap and the packet
   pool grow with them, and so does their share of cache misses; ``pool rows`` (the compiled
   packet pool, which doubles when full: at least the most packets ever in the network) shows it.

One line per run, then a table per series: hosts, ports, flows, packet-hops, events, build s
(``build_simulation``, after the config is composed and resolved), run s (the engine loop:
``summary["run"]["wall_s"]``), packet-hops/s, run ns per packet-hop and pool rows. A packet-hop is one
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

Default run (all five series, k=16 included): about 2 minutes on a 2-core laptop-class machine
when nothing else runs, more when it is busy; building the k = 16 tree (2-3 s a run)
is a good part of it. ``--quick``: k = 4, 8, 8 and 16 two-DC flows, 0 and 512 idle flows, 16
and 128 flows at once, one run each, well under a minute (a smoke test); ``--series`` picks
some.

    python benchmarks/scaling.py [--ks 4,8,12,16] [--flows 8,32,128,256] [--size-bytes 200000]
        [--dc-k 8] [--repeat 3] [--dc-repeat 1] [--idle 0,256,1024,4096]
        [--concurrent 16,64,256,1024] [--series fat_tree,two_dc,ports,idle,in_flight]
        [--quick] [overrides ...]
"""

from __future__ import annotations

import argparse
import math
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.config.schema import FlowEntry
from uno.config.validate import check_config
from uno.core.errors import ConfigError, InvariantError

COMMON = ["cc=dctcp", "lb=ecmp", "engine.sample_interval_us=0", "engine.progress=false", "seed=1"]

DEFAULTS = {
    "ks": "4,8,12,16",
    "flows": "8,32,128,256",
    "size_bytes": 200_000,
    "repeat": 3,
    "dc_repeat": 1,
    "idle": "0,256,1024,4096",
    "concurrent": "16,64,256,1024",
}
QUICK = {
    "ks": "4,8",
    "flows": "8,16",
    "size_bytes": 100_000,
    "repeat": 1,
    "dc_repeat": 1,
    "idle": "0,512",
    "concurrent": "16,128",
}
SERIES = ("fat_tree", "two_dc", "ports", "idle", "in_flight")
#: the ports, idle and in_flight series' active traffic: 16 flows of 12.8 MB (in_flight splits
#: these bytes over more flows; at 1024 flows, 200 kB each, as in the k = 16 permutation)
ACTIVE_FLOWS, ACTIVE_BYTES = 16, 12_800_000
IDLE_K = 8


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


def fixed_flows_overrides(k: int) -> list[str]:
    """A fat tree of ``k`` with an explicit flow list (set by :func:`measure`); the run ends
    when the flows tagged ``active`` are done."""
    return [
        "topo=fat_tree",
        f"topo.k={k}",
        "workload=flows",
        "engine.stop_when_done=[active]",
        *COMMON,
    ]


def spread_flows(n_hosts: int, n_flows: int, size_bytes: int) -> list[FlowEntry]:
    """``n_flows`` flows from hosts spread evenly over the tree to their mirror images (host
    i -> n_hosts - 1 - i: other pods), all starting at t = 0, tagged ``active``."""
    step = n_hosts // n_flows
    return [
        FlowEntry(src=i * step, dst=n_hosts - 1 - i * step, size_bytes=size_bytes, tag="active")
        for i in range(n_flows)
    ]


def idle_flows(n_hosts: int, n_flows: int) -> list[FlowEntry]:
    """``n_flows`` one-packet flows that start at 900 ms, long after the active flows end the
    run: flows the engine holds but never runs."""
    return [
        FlowEntry(
            src=i % n_hosts, dst=(i + 1) % n_hosts, size_bytes=1000, start_us=900_000.0, tag="idle"
        )
        for i in range(n_flows)
    ]


def measure(
    label: str, overrides: list[str], repeat: int, flows: list[FlowEntry] | None = None
) -> dict:
    """Run ``overrides`` (with ``workload.flows`` set to ``flows`` if given: a long list is
    quicker to set than to parse) ``repeat`` times, print one line each; return the fastest
    run's figures (by engine wall time), or the error that stopped it."""
    best = None
    for i in range(repeat):
        sim = None
        t0 = time.perf_counter()
        try:
            cfg = uno.compose(overrides)
            if flows is not None:
                cfg.workload.flows = flows
            run_cfg = to_run_config(cfg)
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
            # rows of the compiled packet pool: it grows to the most packets ever in the network
            "pool_rows": len(sim.network.dataplane.PK) if sim.network.dataplane else None,
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
        f"{'build s':>8} {'run s':>8} {'hops/s':>10} {'ns/hop':>7} {'pool rows':>10}"
    )
    for name, p in points:
        if "error" in p:
            print(f"  {name:>6} skipped: {p['error']}")
            continue
        pool = "-" if p["pool_rows"] is None else f"{p['pool_rows']:,}"
        print(
            f"  {name:>6} {p['hosts']:>6} {p['ports']:>7,} {p['flows']:>6} {p['hops']:>12,} "
            f"{p['events']:>12,} {p['build_s']:>8.2f} {p['wall_s']:>8.2f} "
            f"{p['hops'] / p['wall_s']:>10,.0f} {p['wall_s'] / p['hops'] * 1e9:>7,.0f} "
            f"{pool:>10}"
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
        print(f"  {name:<9} no points")
        return
    ns = [p["wall_s"] / p["hops"] * 1e9 for p in ok]
    line = f"  {name:<9} ns/hop min {min(ns):,.0f}  max {max(ns):,.0f}  max/min {max(ns) / min(ns):.2f}"
    if len(ok) > 1:
        first, last = ok[0], ok[-1]
        slope = loglog_slope([p["hops"] for p in ok], [p["wall_s"] for p in ok])
        line += (
            f"  | first->last: packet-hops x{last['hops'] / first['hops']:.1f}, ports "
            f"x{last['ports'] / first['ports']:.1f}, run s x{last['wall_s'] / first['wall_s']:.1f}"
        )
        if slope is not None and last["hops"] > 1.5 * first["hops"]:
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
    ap.add_argument(
        "--series",
        default=",".join(SERIES),
        help=f"comma-separated subset of {', '.join(SERIES)} (default all)",
    )
    ap.add_argument("--idle", default=None, help=f"idle flow counts (default {DEFAULTS['idle']})")
    ap.add_argument(
        "--concurrent",
        default=None,
        help=f"flows at once in the in_flight series (default {DEFAULTS['concurrent']})",
    )
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides (every series)")
    args = ap.parse_args()
    base = QUICK if args.quick else DEFAULTS
    for field, value in base.items():
        if getattr(args, field) is None:
            setattr(args, field, value)
    ks = _ints(args.ks, "--ks", ap)
    flows = _ints(args.flows, "--flows", ap)
    idle = _ints(args.idle, "--idle", ap)
    concurrent = _ints(args.concurrent, "--concurrent", ap)
    chosen = [name.strip() for name in args.series.split(",") if name.strip()]
    unknown = [name for name in chosen if name not in SERIES]
    if unknown:
        ap.error(f"--series: unknown {', '.join(unknown)}; choose from {', '.join(SERIES)}")
    if ks and ks[-1] ** 3 // 4 < max(concurrent + [ACTIVE_FLOWS]):
        ap.error("--concurrent: more flows than the last fat tree (--ks) has hosts")
    if args.repeat < 1 or args.dc_repeat < 1:
        ap.error("--repeat and --dc-repeat must be at least 1")

    t_start = time.perf_counter()
    if "engine.dataplane=python" not in args.overrides:
        # load (or compile) the data plane's kernels before the first timed point
        t0 = time.perf_counter()
        warm = fat_tree_overrides(4, 10_000) + args.overrides
        build_simulation(to_run_config(uno.compose(warm))).run()
        print(f"compiled data plane warm-up: {time.perf_counter() - t0:.2f} s", flush=True)
    series = {name: [] for name in SERIES}
    for k in ks if "fat_tree" in chosen else []:
        ov = fat_tree_overrides(k, args.size_bytes) + args.overrides
        series["fat_tree"].append((f"k={k}", measure(f"fat_tree k={k}", ov, args.repeat)))
    for n in flows if "two_dc" in chosen else []:
        ov = two_dc_overrides(args.dc_k, n) + args.overrides
        point = measure(f"two_dc k={args.dc_k} flows={n}", ov, args.dc_repeat)
        series["two_dc"].append((f"n={n}", point))
    for k in ks if "ports" in chosen else []:
        ov = fixed_flows_overrides(k) + args.overrides
        active = spread_flows(k**3 // 4, ACTIVE_FLOWS, ACTIVE_BYTES)
        point = measure(f"ports k={k}", ov, args.repeat, active)
        series["ports"].append((f"k={k}", point))
    for n in idle if "idle" in chosen else []:
        ov = fixed_flows_overrides(IDLE_K) + args.overrides
        hosts = IDLE_K**3 // 4
        fl = spread_flows(hosts, ACTIVE_FLOWS, ACTIVE_BYTES) + idle_flows(hosts, n)
        series["idle"].append((f"i={n}", measure(f"idle k={IDLE_K} idle={n}", ov, args.repeat, fl)))
    for n in concurrent if "in_flight" in chosen else []:
        ov = fixed_flows_overrides(ks[-1]) + args.overrides
        fl = spread_flows(ks[-1] ** 3 // 4, n, ACTIVE_FLOWS * ACTIVE_BYTES // n)
        point = measure(f"in_flight k={ks[-1]} flows={n}", ov, args.repeat, fl)
        series["in_flight"].append((f"n={n}", point))
    print()
    titles = {
        "fat_tree": f"fat_tree permutation, {args.size_bytes:,} B per flow",
        "two_dc": f"two_dc k={args.dc_k} mixed load 0.4",
        "ports": f"ports: the same {ACTIVE_FLOWS} flows of {ACTIVE_BYTES:,} B on bigger fat trees",
        "idle": f"idle: {ACTIVE_FLOWS} active flows of {ACTIVE_BYTES:,} B on k={IDLE_K} beside "
        "flows that never start",
        "in_flight": f"in_flight: {ACTIVE_FLOWS * ACTIVE_BYTES:,} B in all on k={ks[-1]}, "
        "split over more flows at once",
    }
    for name in chosen:
        print_table(f"{titles[name]}, cc=dctcp lb=ecmp", series[name])
    print("fit: run time per packet-hop across each series")
    for name in chosen:
        print_fit(name, [p for _, p in series[name]])
    both = [p for name in ("fat_tree", "two_dc") for _, p in series[name] if "error" not in p]
    if len(both) > 1:
        ns = [p["wall_s"] / p["hops"] * 1e9 for p in both]
        print(
            f"  {'fat_tree+two_dc':<9} ns/hop min {min(ns):,.0f}  max {max(ns):,.0f}  max/min "
            f"{max(ns) / min(ns):.2f}"
        )
    print(f"scaling: total {time.perf_counter() - t_start:.1f} s wall")


if __name__ == "__main__":
    main()

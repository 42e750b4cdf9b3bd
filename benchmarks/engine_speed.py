"""Packet-engine speed on a fixed scenario: the 4 intra-DC + 4 inter-DC incast with 100 MB
flows on the two-datacenter topology, DCTCP, ECMP.

Prints packet-hops per wall-second (a packet-hop is one packet, data or control, entering one
queue), wall time and peak memory (resident set size of this process) for each repetition.

The same scenario runs with each data plane and port model (``--models``; default all):
first ``lazy`` (the Python data plane, uno/net/port.py, ``engine.dataplane=python``), then
``compiled`` (the same ports, links and switches in Numba kernels, uno/net/compiled/: the
data plane the default ``engine.dataplane=auto`` runs for this scenario; its kernels are
compiled, or loaded from Numba's cache, by a short warm-up run first, whose wall time is
printed), then ``event`` (uno/net/event_port.py) and the event port with PFC on (lossless DC
links: ``switch.pfc.port_kinds=[host,fabric]``, the border and WAN links stay lossy), and the
compiled data plane with the same PFC (its kernel's event ports, ``compiled+pfc``, with
``compiled`` in ``--models``). A last table puts them side by side: packet-hops/s (best,
median), median wall time, events scheduled per packet-hop, peak RSS after the model's runs,
and the ratio to ``lazy``. A model the scenario refuses (configuration or invariant error) is reported
as skipped with the error. Peak RSS is the process's peak so far (so it can only grow from one
model to the next).

    python benchmarks/engine_speed.py [--size-bytes 100000000] [--repeat 3]
        [--models lazy,compiled,event] [--event-repeat 3] [--pfc-repeat 1] [overrides ...]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import uno
from uno.api import to_run_config
from uno.build import build_simulation
from uno.core.errors import ConfigError, InvariantError

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

MODELS = ("lazy", "compiled", "event")
#: the overrides of each model
MODEL_OVERRIDES = {
    "lazy": ["engine.dataplane=python", "engine.port_model=lazy"],
    "compiled": ["engine.dataplane=compiled"],
    "event": ["engine.dataplane=python", "engine.port_model=event"],
}
#: the event port with priority flow control on the DC links (uno/net/pfc.py)
PFC = ["switch.pfc.enabled=true", "switch.pfc.port_kinds=[host,fabric]"]


def _peak_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(overrides: list[str], repeat: int, prefix: str = "") -> dict:
    """Run the scenario ``repeat`` times; print one ``run i:`` line each (after ``prefix``).
    Returns the rates, wall times and events per packet-hop, or the error that stopped it."""
    rates, walls, per_hop = [], [], []
    for i in range(repeat):
        sim = None
        try:
            sim = build_simulation(to_run_config(uno.compose(overrides)))
            t0 = time.perf_counter()
            result = sim.run()
        except (ConfigError, InvariantError) as e:
            error = f"{type(e).__name__}: {e}"
            if sim is not None and getattr(sim, "network", None) is not None:  # it ran
                hops = sim.network.packet_hops()
                error += (
                    f" (raised after {time.perf_counter() - t0:.2f} s wall, {hops:,} packet-hops, "
                    f"{sim.engine.events_scheduled / max(hops, 1):.3f} events per packet-hop)"
                )
            return {"error": error}
        wall = time.perf_counter() - t0
        run = result.summary["run"]
        hops = run["packet_hops"]
        rates.append(hops / wall)
        walls.append(wall)
        per_hop.append(run["events"] / hops)
        print(
            f"{prefix}run {i + 1}: {hops:,} packet-hops in {wall:.2f} s wall -> {hops / wall:,.0f} packet-hops/s; "
            f"simulated {run['sim_time_us'] / 1000:.1f} ms; events {run['events']:,}; "
            f"peak RSS {_peak_mib():,.0f} MiB; all flows finished: {run['all_flows_finished']}",
            flush=True,
        )
        del sim, result
    return {"rates": rates, "walls": walls, "per_hop": per_hop}


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--size-bytes", type=int, default=100_000_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of the lazy model")
    ap.add_argument(
        "--models",
        default="lazy,compiled,event",
        help="comma-separated models to measure: lazy, compiled, event (default: all); with "
        "event and compiled, also each with PFC on (see --pfc-repeat)",
    )
    ap.add_argument(
        "--event-repeat",
        type=int,
        default=None,
        help="runs of the event model (default: --repeat)",
    )
    ap.add_argument(
        "--compiled-repeat",
        type=int,
        default=None,
        help="runs of the compiled data plane (default: --repeat)",
    )
    ap.add_argument(
        "--pfc-repeat",
        type=int,
        default=1,
        help="runs of the event model and of the compiled data plane with PFC on (0: none)",
    )
    ap.add_argument("overrides", nargs="*", help="extra Hydra overrides")
    args = ap.parse_args()
    models = [m.strip() for m in args.models.split(",") if m.strip()]
    bad = [m for m in models if m not in MODELS]
    if bad or not models:
        ap.error(f"--models: choose from {', '.join(MODELS)}, got {args.models!r}")
    repeats = {
        "lazy": args.repeat,
        "compiled": args.compiled_repeat if args.compiled_repeat is not None else args.repeat,
        "event": args.event_repeat if args.event_repeat is not None else args.repeat,
        "event+pfc": min(args.pfc_repeat, args.repeat),
    }
    base = SCENARIO + [f"workload.size_bytes={args.size_bytes}"] + args.overrides
    runs = [(m, MODEL_OVERRIDES[m]) for m in MODELS if m in models]
    if "event" in models and repeats["event+pfc"] > 0:
        runs.append(("event+pfc", ["engine.dataplane=python", "engine.port_model=event", *PFC]))
    repeats["compiled+pfc"] = min(args.pfc_repeat, repeats["compiled"])
    if "compiled" in models and repeats["compiled+pfc"] > 0:
        runs.append(("compiled+pfc", ["engine.dataplane=compiled", *PFC]))

    results = {}
    peaks = {}
    for label, extra in runs:
        if label == "compiled" or (label == "compiled+pfc" and "compiled" not in results):
            t0 = time.perf_counter()
            warm = SCENARIO + ["workload.size_bytes=100000", *extra]
            build_simulation(to_run_config(uno.compose(warm))).run()
            print(
                f"compiled warm-up (kernels compiled or loaded from Numba's cache, one small "
                f"run): {time.perf_counter() - t0:.2f} s",
                flush=True,
            )
        # the lazy model's lines keep their earlier format (no prefix)
        res = measure(base + extra, repeats[label], "" if label == "lazy" else f"{label} ")
        results[label] = res
        peaks[label] = _peak_mib()
        if "error" in res:
            print(f"{label}: skipped: {res['error']}", flush=True)
        elif label == "lazy":
            rates = res["rates"]
            print(
                f"engine_speed: best {max(rates):,.0f} packet-hops/s, median {statistics.median(rates):,.0f} "
                f"over {len(rates)} runs; peak RSS {_peak_mib():,.0f} MiB",
                flush=True,
            )

    print(
        "engine_speed by data plane and port model (packet-hops/s best / median, median wall, "
        "events per packet-hop, peak RSS so far):"
    )
    lazy = results.get("lazy")
    for label, res in results.items():
        if "error" in res:
            print(f"  {label:<12} skipped: {res['error']}")
            continue
        best, med = max(res["rates"]), statistics.median(res["rates"])
        wall, per_hop = statistics.median(res["walls"]), statistics.median(res["per_hop"])
        line = (
            f"  {label:<12} best {best:>11,.0f}  median {med:>11,.0f}  wall {wall:7.2f} s  "
            f"events/hop {per_hop:.3f}  RSS {peaks[label]:,.0f} MiB  runs {len(res['rates'])}"
        )
        if label != "lazy" and lazy is not None and "error" not in lazy:
            line += (
                f"  | {label}/lazy: best {best / max(lazy['rates']):.2f}x, median "
                f"{med / statistics.median(lazy['rates']):.2f}x, wall "
                f"{wall / statistics.median(lazy['walls']):.2f}x, events/hop "
                f"{per_hop / statistics.median(lazy['per_hop']):.2f}x"
            )
        event_pfc = results.get("event+pfc")
        if label == "compiled+pfc" and event_pfc is not None and "error" not in event_pfc:
            line += (
                f"  | compiled+pfc/event+pfc: best {best / max(event_pfc['rates']):.2f}x, wall "
                f"{wall / statistics.median(event_pfc['walls']):.2f}x"
            )
        print(line)
    print(f"  peak RSS {_peak_mib():,.0f} MiB")


if __name__ == "__main__":
    main()

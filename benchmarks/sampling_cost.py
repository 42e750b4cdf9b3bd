"""What sampling costs a run: wall time of one scenario in each engine, unsampled and sampled
every ``engine.sample_interval_us`` with the default queue selection (the receivers' ports) and
with every busy port (``engine.queue_ports=[busy]``), and the rows each sampled table got.

    python benchmarks/sampling_cost.py                       # the default incast, 10 us
    python benchmarks/sampling_cost.py --interval-us 1 --repeats 3 topo.k=4

Each figure is ``uno.run``'s wall time (build, run, tables), the least of ``--repeats`` runs,
after a short run of the same engine has loaded its compiled kernels.
"""

from __future__ import annotations

import argparse
import time

import uno

ENGINES = {
    "packet-c": [],
    "fluid": ["engine.kind=fluid"],
    "hybrid": ["engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"],
}
SAMPLING = {
    "unsampled": ["engine.sample_interval_us=0"],
    "receivers": ["engine.queue_ports=[receivers]"],
    "busy": ["engine.queue_ports=[busy]"],
}


def timed(overrides: list[str], repeats: int) -> tuple[float, dict[str, int]]:
    best, rows = float("inf"), {}
    for _ in range(repeats):
        t0 = time.perf_counter()
        result = uno.run(uno.compose(overrides))
        best = min(best, time.perf_counter() - t0)
        rows = {name: len(t) for name, t in result.tables.items() if name != "flows"}
    return best, rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("overrides", nargs="*", help="config overrides for every run")
    ap.add_argument("--interval-us", type=float, default=10.0)
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--engines", default=",".join(ENGINES))
    args = ap.parse_args()
    base = ["engine.progress=false", *args.overrides]
    for engine in args.engines.split(","):
        over = [*base, *ENGINES[engine]]
        uno.run(uno.compose([*over, "engine.max_sim_time_ms=0.1", "engine.allow_unfinished=true"]))
        for name, sampling in SAMPLING.items():
            every = [] if name == "unsampled" else [f"engine.sample_interval_us={args.interval_us}"]
            wall, rows = timed([*over, *every, *sampling], args.repeats)
            print(f"sampling_cost {engine:8s} {name:9s}: {wall:6.2f} s (least of {args.repeats}); "
                  f"rows {rows}", flush=True)  # fmt: skip


if __name__ == "__main__":
    main()

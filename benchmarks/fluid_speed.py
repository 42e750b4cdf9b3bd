"""Wall time of the 40%-load fig10_load scenario (5000 flows, the artifact's traffic) in the
fluid, max-min, hybrid and packet engines, and the ratios; then a fig10_load sweep of schemes x
loads in fluid mode (the schemes the fluid engine models). The hybrid runs the flows of at most
``--hybrid-packet-max-bytes`` (100 kB: 87% of the flows, 3.0% of the bytes) as packets. The
packet engine runs with both data planes: ``packet`` the Python one (``engine.dataplane=python``,
the reference) and ``packet-c`` the compiled one
(``engine.dataplane=compiled``, the default: ports, switches and, for UnoCC/GEMINI/DCTCP over
ECMP, the senders in Numba kernels).

Each engine runs ``--repeat`` times (the packet engine ``--packet-repeat`` times: a run takes
a minute and a half), one after the other in this process, after a short warm-up run that loads
the compiled kernels (the cost of a process's first run, ~1 s, is not the engine's). Every run
is printed; then per engine the best and the median wall time, and the packet engine's ratios
to the others, of the best times (the runs least disturbed by other work on a shared machine)
and of the medians.

    python benchmarks/fluid_speed.py [--scheme uno_ecmp] [--repeat 3] [--packet-repeat 2]
        [--skip-packet] [--skip-sweep]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import uno

BASE = ["experiment=fig10_load", "workload=mixed_artifact", "engine.progress=false",
        "engine.sample_interval_us=0"]  # fmt: skip


def timed(overrides: list[str]) -> tuple[float, dict]:
    cfg = uno.compose([*BASE, *overrides])
    t0 = time.perf_counter()
    result = uno.run(cfg)
    return time.perf_counter() - t0, result.summary["run"]


def steps(run: dict) -> str:
    """The fluid engine's steps and their size (first and last: the step grows once only
    long-RTT flows are left, ``engine.fluid_step_max_intra_rtt``); nothing for the others."""
    if not run.get("fluid_steps"):
        return ""
    last = run.get("fluid_step_last_us", run["fluid_step_us"])
    return f", {run['fluid_steps']:,} steps of {run['fluid_step_us']:.2f} -> {last:.2f} us"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--skip-packet", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--n-flows", type=int, default=5000)
    ap.add_argument("--hybrid-packet-max-bytes", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3, help="runs of each flow-level engine")
    ap.add_argument("--packet-repeat", type=int, default=2, help="runs of the packet engine")
    args = ap.parse_args()
    if args.repeat < 1 or args.packet_repeat < 1:
        ap.error("--repeat and --packet-repeat must be >= 1")
    BASE.append(f"workload.n_flows={args.n_flows}")
    timed(["engine.kind=fluid", "engine.max_sim_time_ms=0.1"])  # load the compiled kernels
    timed(["engine.kind=maxmin", "engine.max_sim_time_ms=0.1"])
    walls: dict[str, list[float]] = {}
    engines = ["fluid", "maxmin", "hybrid"] + ([] if args.skip_packet else ["packet", "packet-c"])
    if not args.skip_packet:  # the compiled data plane's kernels, loaded or compiled
        timed(["engine.dataplane=compiled", "engine.max_sim_time_ms=0.1"])
    for engine in engines:
        extra = {
            "hybrid": [f"engine.hybrid_packet_max_bytes={args.hybrid_packet_max_bytes}"],
            "packet": ["engine.dataplane=python"],
            "packet-c": ["engine.dataplane=compiled"],
        }.get(engine, [])
        kind = engine.split("-")[0]
        for i in range(args.packet_repeat if kind == "packet" else args.repeat):
            wall, run = timed([f"scheme={args.scheme}", "workload.load=0.4",
                               f"engine.kind={kind}", *extra])  # fmt: skip
            walls.setdefault(engine, []).append(wall)
            print(f"fluid_speed {engine:8s} scheme={args.scheme} load=0.4 run {i + 1}: "
                  f"{run['n_flows']} flows, simulated {run['sim_time_us'] / 1000:.1f} ms in "
                  f"{wall:.2f} s wall (engine {run['wall_s']:.2f} s), peak RSS "
                  f"{run['peak_rss_mib']:.0f} MiB{steps(run)}", flush=True)  # fmt: skip
    best = {e: min(w) for e, w in walls.items()}
    median = {e: statistics.median(w) for e, w in walls.items()}
    for engine, w in walls.items():
        print(f"fluid_speed {engine:8s} wall: best {best[engine]:.2f} s, median "
              f"{median[engine]:.2f} s over {len(w)} runs")  # fmt: skip
    for packet in ("packet", "packet-c"):
        if packet not in walls:
            continue
        for name, t in (("best", best), ("median", median)):
            print(f"fluid_speed ratios ({name}): {packet}/fluid {t[packet] / t['fluid']:.1f}x, "
                  f"{packet}/maxmin {t[packet] / t['maxmin']:.1f}x, "
                  f"{packet}/hybrid {t[packet] / t['hybrid']:.1f}x")  # fmt: skip
    if not args.skip_sweep:
        sweep(args.n_flows)


def sweep(n_flows: int) -> None:
    """The fig10_load sweep of the four schemes x four loads in fluid mode, as a researcher
    runs it: one Hydra multirun through the joblib launcher (both cores), result folders and
    all, in a fresh directory."""
    import subprocess
    import sys
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        cmd = [sys.executable, "-m", "uno.cli", "-m", "hydra/launcher=joblib",
               "hydra.launcher.n_jobs=2", "experiment=fig10_load", "workload=mixed_artifact",
               f"workload.n_flows={n_flows}", "engine.kind=fluid", "engine.progress=false",
               "scheme=uno,uno_ecmp,gemini,mprdma_bbr", "workload.load=0.2,0.4,0.6,0.8",
               f"hydra.sweep.dir={tmp}/sweep"]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        wall = time.perf_counter() - t0
        runs = len(list(Path(tmp, "sweep").glob("*/summary.json")))
    print(
        f"fluid_speed sweep: fig10_load, 4 schemes x 4 loads in fluid mode ({runs} runs, "
        f"Hydra multirun, joblib 2 jobs) in {wall:.1f} s"
    )


if __name__ == "__main__":
    main()

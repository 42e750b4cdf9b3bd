"""Wall time of the 40%-load fig10_load scenario (5000 flows, the artifact's traffic) in the
fluid, max-min, hybrid and packet engines, and the ratios; then a fig10_load sweep of schemes x
loads in fluid mode (the schemes the fluid engine models). The hybrid runs the flows of at most
``--hybrid-packet-max-bytes`` (100 kB: 87% of the flows, 3.0% of the bytes) as packets.

    python benchmarks/fluid_speed.py [--scheme uno_ecmp] [--skip-packet] [--skip-sweep]
"""

from __future__ import annotations

import argparse
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", default="uno_ecmp")
    ap.add_argument("--skip-packet", action="store_true")
    ap.add_argument("--skip-sweep", action="store_true")
    ap.add_argument("--n-flows", type=int, default=5000)
    ap.add_argument("--hybrid-packet-max-bytes", type=int, default=100_000)
    args = ap.parse_args()
    BASE.append(f"workload.n_flows={args.n_flows}")
    timed(["engine.kind=fluid", "engine.max_sim_time_ms=0.1"])  # load the compiled kernels
    timed(["engine.kind=maxmin", "engine.max_sim_time_ms=0.1"])
    walls = {}
    engines = ["fluid", "maxmin", "hybrid"] + ([] if args.skip_packet else ["packet"])
    for engine in engines:
        extra = [f"engine.hybrid_packet_max_bytes={args.hybrid_packet_max_bytes}"]
        wall, run = timed([f"scheme={args.scheme}", "workload.load=0.4", f"engine.kind={engine}",
                           *(extra if engine == "hybrid" else [])])  # fmt: skip
        walls[engine] = wall
        print(f"fluid_speed {engine:6s} scheme={args.scheme} load=0.4: {run['n_flows']} flows, "
              f"simulated {run['sim_time_us'] / 1000:.1f} ms in {wall:.2f} s wall "
              f"(engine {run['wall_s']:.2f} s), peak RSS {run['peak_rss_mib']:.0f} MiB")  # fmt: skip
    if "packet" in walls:
        print(f"fluid_speed ratios: packet/fluid {walls['packet'] / walls['fluid']:.1f}x, "
              f"packet/maxmin {walls['packet'] / walls['maxmin']:.1f}x, "
              f"packet/hybrid {walls['packet'] / walls['hybrid']:.1f}x")  # fmt: skip
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

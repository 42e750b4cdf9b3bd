"""What a fluid run's delay lines hold, and the process's peak memory.

Each case runs in a process of its own (peak memory is a process's), built and run as
``uno-run`` does it; printed per case: the flows, the engine time, the peak resident memory,
the ring's rows handed out and its columns, and how many long-RTT flows (a base RTT of more
than 64 steps) ended with lines of each length.

    python benchmarks/fluid_memory.py                      # the cases below
    python benchmarks/fluid_memory.py --case "experiment=gear_fig8 scheme=gear_hpcc"
"""

from __future__ import annotations

import argparse
import resource
import shlex
import subprocess
import sys
import time

import numpy as np

BASE = ["engine.kind=fluid", "engine.progress=false"]
#: Gear's Fig. 8 traffic (cross-DC flows of a 50 ms base RTT) under Annulus and under Gear
CASES = ["experiment=gear_fig8 scheme=gear_annulus", "experiment=gear_fig8 scheme=gear_gear"]


def measure(overrides: list[str]) -> None:
    """One case, in this process."""
    import uno
    import uno.api
    from uno.build import build_simulation
    from uno.fluid import columns as C

    sim = build_simulation(uno.api.to_run_config(uno.compose([*BASE, *overrides])))
    columns = sim.ring.shape[1]
    base_steps = sim.fs[:, C.FS_BASE_RTT] / sim.dt_ps
    t0 = time.perf_counter()
    sim.run()
    wall = time.perf_counter() - t0
    peak_gib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # (KiB on Linux)
    pool = sim.ring_pool
    lengths, counts = np.unique(pool.length[base_steps > 64], return_counts=True)
    by_length = ", ".join(f"{n:,} at {length:,}" for length, n in zip(lengths, counts, strict=True))
    print(f"{' '.join(overrides)}: {len(sim.flows):,} flows, engine {wall:.1f} s, peak memory "
          f"{peak_gib:.2f} GiB, ring {int(pool.top[0]):,} rows x {columns} columns handed out; "
          f"long-RTT flows' lines: {by_length or 'none'}", flush=True)  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--case", action="append", help="overrides of one case (quoted)")
    ap.add_argument("--here", action="store_true", help="run the one --case in this process")
    args = ap.parse_args()
    if args.here:
        measure(shlex.split(args.case[0]))
        return
    for case in args.case or CASES:
        subprocess.run([sys.executable, __file__, "--here", "--case", case], check=True)


if __name__ == "__main__":
    main()

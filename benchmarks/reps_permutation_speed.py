"""Speed of the REPS paper's 4 MiB permutation on the 1,024-host fat tree
(``experiment=reps_permutation``: SMaRTT, trimming) on the compiled data plane.

One run per balancer, each in a process of its own (``python -m uno.cli``), whose summary
gives its peak memory. Prints, per run: wall time of the process and of the engine loop (summary
``run.wall_s``), packet-hops and packet-hops per second of engine loop, where the senders ran
(the kernel's for ECMP and spraying; Python's for REPS, whose balancer hears every ACK), peak
resident memory, packets trimmed and the permutation's completion time.

    python benchmarks/reps_permutation_speed.py [--lbs spray,ecmp,reps] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def run_once(lb: str, overrides: list[str]) -> dict:
    with tempfile.TemporaryDirectory() as out:
        cmd = [sys.executable, "-m", "uno.cli", "experiment=reps_permutation", f"lb={lb}",
               "engine.dataplane=compiled", "engine.progress=false", f"out_dir={out}",
               *overrides]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        summary = json.loads((Path(out) / "summary.json").read_text())
    run = summary["run"]
    return {
        "wall_s": wall,
        "loop_s": run["wall_s"],
        "hops": run["packet_hops"],
        "peak_mib": run["peak_rss_mib"],  # the run's process's own peak
        "senders": summary["dataplane"]["senders"],
        "trims": summary.get("trims", 0),
        "sim_us": run["sim_time_us"],
    }


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--lbs", default="spray,ecmp,reps")
    ap.add_argument("overrides", nargs="*")
    args = ap.parse_args()
    for lb in args.lbs.split(","):
        r = run_once(lb, args.overrides)
        print(
            f"reps_permutation lb={lb}: process {r['wall_s']:.1f} s, engine loop "
            f"{r['loop_s']:.1f} s, {r['hops']:,} packet-hops -> "
            f"{r['hops'] / r['loop_s']:,.0f} packet-hops/s, peak RSS {r['peak_mib']:,.0f} MiB, "
            f"trimmed {r['trims']:,}, simulated {r['sim_us']:.1f} us; senders {r['senders']}"
        )


if __name__ == "__main__":
    main()

"""What the real Reed–Solomon payload costs a run: the Fig. 13 A run (``experiment=fig13_linkfail``,
eight 5 MiB inter-DC flows, UnoLB) uncoded (``ec=none``), coded counting only
(``ec=mds ec.payload=false``) and coded with symbols encoded, decoded and checked per block
(``ec=mds ec.payload=true``, the default).

Each run is ``uno-run`` in a fresh process (``python -m uno.cli``), so its wall time includes
everything a user waits for: interpreter start, imports, Hydra, building the network, loading
the compiled kernels from Numba's on-disk cache, the engine, writing the tables. The engine time
is the run's own ``run.wall_s`` (summary.json). The variants run interleaved, ``--repeat`` times
each; the best (least disturbed) run is reported, as other processes sharing the CPU only ever
add time. A first, untimed payload run fills Numba's cache for the current sources (kernels
compile once per version of the package's sources, :mod:`uno.core.jit_cache`, not per
process); its wall time is printed apart, and a change of the sources during the measurement
(which would make a timed run compile again) is reported. The payload and count-only runs must give identical flow and port tables
(symbols change no decision); the script checks that.

    python benchmarks/ec_payload_speed.py [--repeat 3] [--dataplane compiled|python] [overrides ...]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

import uno
from uno.core.jit_cache import source_hash

VARIANTS = {
    "uncoded": ["ec=none"],
    "count-only": ["ec=mds", "ec.payload=false"],
    "payload": ["ec=mds", "ec.payload=true"],
}


def run_once(out: Path, overrides: list[str]) -> tuple[float, float]:
    """One ``uno-run`` in a fresh process writing to ``out``: (wall s, engine s)."""
    cmd = [sys.executable, "-m", "uno.cli", *overrides, f"hydra.run.dir={out}"]
    t0 = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    wall = time.perf_counter() - t0
    engine = json.loads((out / "summary.json").read_text())["run"]["wall_s"]
    return wall, float(engine)


def same_tables(a: Path, b: Path) -> bool:
    """Whether two runs wrote equal flow and port tables."""
    return all(
        pd.read_parquet(a / f"{t}.parquet").equals(pd.read_parquet(b / f"{t}.parquet"))
        for t in ("flows", "ports")
    )


def main() -> None:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--repeat", type=int, default=3, help="timed runs of each variant")
    ap.add_argument("--dataplane", default="compiled", choices=("compiled", "python"))
    ap.add_argument("overrides", nargs="*", help="more uno-run overrides for every variant")
    args = ap.parse_args()
    base = [
        "experiment=fig13_linkfail",
        f"engine.dataplane={args.dataplane}",
        "engine.progress=false",
        *args.overrides,
    ]
    package = Path(uno.__file__).parent
    with tempfile.TemporaryDirectory(prefix="ec_payload_speed-") as tmp:
        root = Path(tmp)
        sources = source_hash(package)
        warm_wall, _ = run_once(root / "warm", [*base, *VARIANTS["payload"]])
        times: dict[str, list[tuple[float, float]]] = {name: [] for name in VARIANTS}
        for i in range(args.repeat):
            for name, extra in VARIANTS.items():
                times[name].append(run_once(root / f"{name}-{i}", [*base, *extra]))
        identical = all(
            same_tables(root / f"payload-{i}", root / f"count-only-{i}") for i in range(args.repeat)
        )
        stable = source_hash(package) == sources

    best = {name: (min(w for w, _ in ts), min(e for _, e in ts)) for name, ts in times.items()}
    print(
        f"ec_payload_speed: fig13_linkfail, engine.dataplane={args.dataplane}, a fresh process "
        f"per run, best of {args.repeat}"
        + (f", overrides {' '.join(args.overrides)}" if args.overrides else "")
    )
    print(f"first payload run (fills Numba's cache for these sources): {warm_wall:6.2f} s wall")
    for name, extra in VARIANTS.items():
        wall, engine = best[name]
        runs = ", ".join(f"{w:.2f}" for w, _ in times[name])
        print(
            f"{name:>10} ({' '.join(extra):<23}): {wall:6.2f} s wall, engine {engine:5.2f} s  "
            f"(wall of each run: {runs})"
        )
    pw, pe = best["payload"]
    for ref in ("count-only", "uncoded"):
        rw, re_ = best[ref]
        print(f"ratio payload / {ref:<10}: wall {pw / rw:.2f}x, engine {pe / re_:.2f}x")
    print(f"payload and count-only tables identical: {'yes' if identical else 'NO'}")
    if not stable:
        print("the package's sources changed during the measurement: some runs compiled kernels")
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()

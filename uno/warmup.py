"""Compile uno's kernels into Numba's cache ahead of the runs that need them.

A kernel compiles the first time a process calls it and its code is not in the cache
(:mod:`uno.core.jit_cache`: a folder per version of the sources). Processes that start together
on a cold cache (a sweep's workers, the test suite's workers) each compile the same kernels, for
minutes. ``python -m uno.warmup`` compiles them once, before such runs: it runs a small scenario
of each engine and feature in two processes at once (the packet engine's kernels in one, the
flow-level engines' in the other), then leaves a mark in the cache folder so that a later call
for the same copy of the sources returns at once.

    python -m uno.warmup            # compile what is not cached yet
    python -m uno.warmup --force    # run the scenarios even if the folder is marked warm
"""

from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

#: a small two-datacenter incast: 2 intra-DC and 1 inter-DC sender of 200 kB
SMALL = [
    "workload=incast",
    "workload.n_intra=2",
    "workload.n_inter=1",
    "workload.size_bytes=200000",
    "engine.progress=false",
]

#: the scenarios of each group: the packet engine's kernels (both data planes, coding, faults,
#: PFC, INT, the DCI switches), and the flow-level engines' (fluid, hybrid, max-min). The
#: hybrid comes last in its group: its loop calls the packet kernels, which by then the other
#: group has cached.
GROUPS: dict[str, list[list[str]]] = {
    "packet": [
        [*SMALL],
        [*SMALL, "cc=dctcp", "lb=ecmp", "engine.dataplane=python"],
        [*SMALL, "cc=hpcc", "lb=ecmp"],
        [*SMALL, "cc=dcqcn", "lb=ecmp"],
        [*SMALL, "ec=mds", "lb=unolb"],
        [*SMALL, "lb=plb"],
        [*SMALL, "lb=reps"],
        [*SMALL, "faults=artifact_multiple_failures"],
        [*SMALL, "scheme=mlcc_mlcc"],
    ],
    "flow": [
        [*SMALL, "engine.kind=fluid"],
        [*SMALL, "engine.kind=fluid", "cc=hpcc", "lb=ecmp"],
        [*SMALL, "engine.kind=fluid", "cc=dcqcn", "lb=ecmp"],
        [*SMALL, "engine.kind=fluid", "ec=mds", "lb=unolb"],
        [*SMALL, "engine.kind=fluid", "lb=plb"],
        [*SMALL, "engine.kind=fluid", "lb=reps"],
        [*SMALL, "engine.kind=fluid", "faults=artifact_multiple_failures"],
        [*SMALL, "engine.kind=fluid", "scheme=mlcc_mlcc"],
        [*SMALL, "engine=fluid_fast"],
        [*SMALL, "engine.kind=maxmin"],
        [*SMALL, "engine.kind=hybrid", "engine.hybrid_packet_tags=[inter]"],
    ],
}


def mark_name() -> str:
    """The file in the cache folder that says a warm-up compiled its kernels for this copy of
    the package: Numba keeps each source folder's kernels apart (it names them after the
    folder's path), so two copies of the same sources share the cache folder, not its
    kernels."""
    package = Path(__file__).resolve().parent
    return f"warm-{hashlib.sha256(str(package).encode()).hexdigest()[:16]}"


def cache_folder() -> Path | None:
    """This source version's folder of Numba's cache, or None when Numba uses its default
    places (:func:`uno.core.jit_cache.configure` found no writable folder)."""
    import numba

    import uno  # noqa: F401  (sets Numba's cache folder)

    folder = Path(numba.config.CACHE_DIR) if numba.config.CACHE_DIR else None
    return folder if folder is not None and folder.name.startswith("uno-") else None


def run_group(name: str) -> None:
    """Run the scenarios of group ``name`` in this process (their kernels load or compile)."""
    import uno

    for overrides in GROUPS[name]:
        uno.run(uno.compose(overrides))


def warm(force: bool = False, say: Callable[[str], None] = print) -> bool:
    """Compile the kernels of every group, each group in a process of its own, all at once;
    mark the cache folder when every group succeeded; ``say`` prints the lines that tell
    what it does. Returns whether the folder is warm (False: a group failed, or there is no
    cache folder of uno's to mark)."""
    folder = cache_folder()
    if folder is None:
        return False
    if (folder / mark_name()).exists() and not force:
        return True
    t0 = time.perf_counter()
    say(f"uno warm-up: compiling the kernels into {folder} ({', '.join(GROUPS)} at once)")
    procs = {
        name: subprocess.Popen([sys.executable, "-m", "uno.warmup", "--group", name],
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        for name in GROUPS
    }  # fmt: skip
    ok = True
    for name, proc in procs.items():
        _, err = proc.communicate()
        if proc.returncode != 0:
            ok = False
            tail = err.strip().splitlines()[-1:] or ["(no output)"]
            say(f"uno warm-up: group {name} failed (exit {proc.returncode}): {tail[0]}")
    if not ok:
        return False
    (folder / mark_name()).write_text(f"{time.perf_counter() - t0:.1f} s\n")
    say(f"uno warm-up: done in {time.perf_counter() - t0:.1f} s")
    return True


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--force", action="store_true", help="run even if the cache is marked warm")
    ap.add_argument("--group", choices=sorted(GROUPS), help="run one group in this process")
    args = ap.parse_args(argv)
    if args.group:
        run_group(args.group)
        return
    sys.exit(0 if warm(force=args.force) else 1)


if __name__ == "__main__":
    main()

"""Wall time of the Uno paper's whole evaluation (``uno-eval``) and the fixed cost of a sweep job.

Prints, for ``uno-eval --presets P`` run into a fresh folder (``--figures`` to time part of
it): the total wall time, each figure's wall time (its first job's start to its last job's end;
figures overlap, as every job shares one pool of workers) and core-seconds, the time a job
takes beyond its engine (mean and median), and the peak memory of a worker. Then, unless
``--no-sweep``, a ``uno-run -m`` sweep of ``--sweep-jobs`` Fig. 13 A runs in one process (the
default launcher) and the wall time per job beyond its engine: (sweep wall time - the
sweep's start-up, measured by a one-job sweep - the engines' time) / (jobs - 1).

    python benchmarks/evaluation_speed.py [--presets artifact|paper|all] [--figures fig13]
        [--jobs 2] [--sweep-jobs 100] [--no-eval] [--no-sweep]

Numba's cache is filled first (one short job of each kind of figure, untimed), so the figures
are what a user sees once the package has run once on the machine.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SWEEP = ["experiment=fig13_linkfail", "engine.progress=false"]


def _run(cmd: list[str], cwd: str) -> float:
    t0 = time.perf_counter()
    done = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"evaluation_speed: {' '.join(cmd)} failed:\n{done.stderr[-2000:]}")
    return time.perf_counter() - t0


def evaluation(presets: str, figures: str, jobs: int, work: str) -> None:
    base = [sys.executable, "-m", "uno.claims.eval_cli", "--presets", presets, "--jobs", str(jobs)]
    if figures:
        base += ["--figures", figures]
    # fill Numba's cache (untimed): Figs. 4 and 13 C use every kind of kernel the rest use
    _run([sys.executable, "-m", "uno.claims.eval_cli", "--figures", "fig4,fig13c", "--jobs",
          str(jobs), "--out", f"{work}/warm", "--no-plots"], work)  # fmt: skip
    wall = _run([*base, "--out", f"{work}/eval"], work)
    print(f"evaluation_speed: uno-eval --presets {presets}"
          f"{' --figures ' + figures if figures else ''} --jobs {jobs}, {os.cpu_count()} cores")  # fmt: skip
    print(f"  the command: {wall:.0f} s ({wall / 60:.1f} min), figures and ledger included")
    for p in ("artifact", "paper") if presets == "all" else (presets,):
        stats = json.loads((Path(work) / "eval" / p / "timing.json").read_text())
        print(
            f"  {p} presets: {stats['jobs']} runs in {stats['wall_s']:.0f} s "
            f"({stats['wall_s'] / 60:.1f} min: its first job's start to its last's end)"
        )
        for name, fig in stats["figures"].items():
            print(
                f"    {name:<18} {fig['jobs']:>4} runs  wall {fig['wall_s']:7.1f} s  "
                f"core {fig['core_s']:7.1f} s  (engines {fig['engine_core_s']:7.1f} s)"
            )
        beyond = stats["beyond_engine_s"]
        print(
            f"    per job beyond its engine: mean {beyond['mean']:.3f} s, median "
            f"{beyond['median']:.3f} s; peak memory of a worker {stats['peak_rss_mib']:.0f} MiB"
        )


def _engine_s(sweep_dir: Path) -> float:
    return sum(json.loads(p.read_text())["run"]["wall_s"] for p in sweep_dir.glob("*/summary.json"))


def sweep(n_jobs: int, work: str) -> None:
    def one(n: int, name: str) -> tuple[float, float]:
        out = Path(work) / name
        wall = _run([sys.executable, "-m", "uno.cli", "-m", *SWEEP, f"seed=range({n})",
                     f"hydra.sweep.dir={out}"], work)  # fmt: skip
        return wall, _engine_s(out)

    one(1, "sweep_warm")
    start_wall, start_engine = one(1, "sweep_1")
    wall, engine = one(n_jobs, f"sweep_{n_jobs}")
    per_job = (wall - (start_wall - start_engine) - engine) / max(1, n_jobs - 1)
    print(f"evaluation_speed: uno-run -m {' '.join(SWEEP)} seed='range({n_jobs})' (one process)")
    print(
        f"  {n_jobs} jobs in {wall:.1f} s, engines {engine:.1f} s, start-up of a one-job sweep "
        f"{start_wall - start_engine:.1f} s; per job beyond its engine {per_job:.3f} s"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="artifact", choices=["artifact", "paper", "all"])
    ap.add_argument("--figures", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--sweep-jobs", type=int, default=100)
    ap.add_argument("--no-eval", action="store_true")
    ap.add_argument("--no-sweep", action="store_true")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="uno-eval-speed-") as work:
        if not args.no_sweep:
            sweep(args.sweep_jobs, work)
        if not args.no_eval:
            evaluation(args.presets, args.figures, args.jobs, work)


if __name__ == "__main__":
    main()

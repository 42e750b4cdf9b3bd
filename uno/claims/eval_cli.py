"""``uno-eval``: the Uno paper's whole evaluation in one command.

    uno-eval [--presets artifact|paper|all] [--figures fig10,fig13] [--jobs N] [--out DIR]
             [--list] [--no-plots]

Runs every sweep of the evaluation (:mod:`uno.claims.evaluation`: Figs. 3, 4, 8, 9, 10 at three
loads, 11 at four RTT ratios, 12 and 13 A/B/C with the artifact's seeds and repetition counts,
every scheme) in ``--jobs`` worker processes that each run many jobs (:mod:`uno.runs`), the
longest first, with one progress line for the whole evaluation. A job whose folder already
holds a complete run of its config is not run again, so an interrupted evaluation resumes
where it stopped. Then, per figure, the standard figures (``uno-plot``) beside its sweeps, and
the claim ledger's table of every claim whose full-form runs this evaluation made
(``DIR/<presets>/claims.md``; ``uno-claims --full`` runs the rest). ``DIR/<presets>/timing.json``
keeps the wall time of the evaluation (its jobs' first start to last end, and the command's)
and of each figure, the time each job took beyond its
engine, and the peak memory of a worker.

On a cluster: ``uno-eval --list`` prints one ``uno-run`` command line per job (its result
folder included); run them as an array job (e.g. ``uno-run $(sed -n "${SLURM_ARRAY_TASK_ID}p"
jobs.txt)``), then ``uno-eval`` with the same ``--out`` finds them complete and draws the
figures and the table.

Exit status: 0 when every run is complete; 1 when a run failed or ended with flows unfinished.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

from uno.claims.evaluation import PRESETS, Sweep, select_sweeps

#: seconds a job of each figure takes on one core, on average over both presets (an estimate,
#: only to start the longest first so that no worker is left alone with a long job at the end)
_COST_S = {"fig10": 12.0, "fig12": 12.0, "fig11": 9.0, "fig3": 7.0, "fig3_fig8": 7.0,
           "fig8": 7.0, "fig4": 3.0, "fig13c": 1.6, "fig9": 0.8}  # fmt: skip
_SHORT_COST_S = 0.3


def jobs_of(sweeps: list[Sweep], out: str) -> list[tuple[Sweep, object]]:
    """Every job of ``sweeps``: (its sweep, :class:`uno.runs.Job`), in sweep order."""
    from uno.config.compose import expand_sweep
    from uno.runs import Job

    jobs = []
    for sweep in sweeps:
        for num, overrides in enumerate(expand_sweep(list(sweep.overrides))):
            jobs.append((sweep, Job(tuple(overrides), f"{sweep.folder(out)}/{num}")))
    return jobs


def _clock(seconds: float) -> str:
    m, s = divmod(int(round(seconds)), 60)
    return f"{m}:{s:02d}"


class ProgressLine:
    """One line for the whole evaluation, rewritten in place on a terminal (else printed at
    every tenth of the jobs)."""

    def __init__(self, total: int, stream=sys.stderr):
        self.total, self.stream = total, stream
        self.t0 = time.perf_counter()
        self.reused = self.failed = 0
        self.tty = stream.isatty()
        self._next_print = 0

    def __call__(self, outcome, done: int, total: int) -> None:
        self.reused += outcome.reused
        self.failed += outcome.status == "failed"
        elapsed = time.perf_counter() - self.t0
        left = elapsed / done * (total - done) if done else 0.0
        text = (f"uno-eval: {done}/{total} runs ({self.reused} reused, {self.failed} failed), "
                f"{_clock(elapsed)} elapsed, about {_clock(left)} left")  # fmt: skip
        if self.tty:
            self.stream.write("\r" + text + ("\n" if done == total else ""))
            self.stream.flush()
        elif done >= self._next_print or done == total:
            print(text, file=self.stream, flush=True)
            self._next_print = done + max(1, total // 10)


def timing(pairs: list, outcomes: list, wall_s: float, workers: int) -> dict:
    """Wall time of the whole evaluation and of each figure (its first job's start to its last
    job's end), its core-seconds, and the time a job took beyond its engine."""
    by_figure: dict[str, list] = defaultdict(list)
    for (sweep, _), outcome in zip(pairs, outcomes, strict=True):
        by_figure[f"{sweep.presets}/{sweep.figure}"].append(outcome)
    ran = [o for o in outcomes if not o.reused and o.status != "failed"]
    beyond = sorted(o.job_s - o.engine_s for o in ran)
    fresh = [o for o in outcomes if not o.reused]
    figures = {}
    for name, group in by_figure.items():
        mine = [o for o in group if not o.reused]
        figures[name] = {"jobs": len(group), "ran": len(mine), "wall_s": _span(mine),
                         "core_s": sum(o.job_s for o in mine),
                         "engine_core_s": sum(o.engine_s for o in mine)}  # fmt: skip
    return {
        "workers": workers,
        "jobs": len(outcomes),
        "ran": len(ran),
        # these jobs' first start to last end (the command's whole time when it ran only them)
        "wall_s": _span(fresh),
        "command_wall_s": wall_s,
        "figures": figures,
        "beyond_engine_s": {
            "mean": sum(beyond) / len(beyond) if beyond else 0.0,
            "median": beyond[len(beyond) // 2] if beyond else 0.0,
        },
        "peak_rss_mib": max((o.peak_rss_mib for o in outcomes), default=0.0),
    }


def _span(outcomes: list) -> float:
    """From the first of ``outcomes``' jobs to start to the last to end (s)."""
    if not outcomes:
        return 0.0
    return max(o.started_at + o.job_s for o in outcomes) - min(o.started_at for o in outcomes)


def _plots(pairs: list, out: str) -> list[str]:
    """The standard figures of each figure's sweeps; returns one line per figure."""
    from uno.metrics.plots import standard_figures

    lines = []
    for folder in sorted({str(Path(s.folder(out)).parent) for s, _ in pairs}):
        try:
            files = standard_figures(folder)
        except (FileNotFoundError, KeyError, ValueError) as exc:
            lines.append(f"{folder}: no figures ({exc})")
        else:
            lines.append(f"{folder}: {', '.join(f.name for f in files)}")
    return lines


def ledger(pairs: list, outcomes: list, out_dir: Path, form: str = "full"):
    """The ledger's table, each claim measured on this evaluation's runs (matched by their
    overrides, in any order); a claim with runs missing here is "not run"."""
    from uno.api import load_result
    from uno.claims.cli import evaluate, markdown
    from uno.claims.ledger import load_claims

    done = {
        tuple(sorted(job.overrides)): job.folder
        for (_, job), o in zip(pairs, outcomes, strict=True)
        if o.status != "failed"
    }
    claims = load_claims()
    results = {
        tuple(o): load_result(done[tuple(sorted(o))])
        for c in claims
        for o in c.runs(form).values()
        if tuple(sorted(o)) in done
    }
    table = evaluate(claims, form, results)
    out_dir.mkdir(parents=True, exist_ok=True)
    table.to_parquet(out_dir / "claims.parquet", index=False)
    text = markdown(table, generated_by=f"uno-eval --presets {out_dir.name}")
    (out_dir / "claims.md").write_text(text, encoding="utf-8")
    return table


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="uno-eval", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)  # fmt: skip
    ap.add_argument("--presets", default="artifact", choices=[*PRESETS, "all"],
                    help="the artifact's presets (the default), the paper's, or both")  # fmt: skip
    ap.add_argument("--figures", default="", help="comma-separated figures, e.g. fig10,fig13")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="runs at a time")
    ap.add_argument("--out", default="results/evaluation", help="folder of the sweeps")
    ap.add_argument("--list", action="store_true", help="print the jobs as uno-run commands")
    ap.add_argument("--no-plots", action="store_true", help="skip the standard figures")
    args = ap.parse_args(argv)
    if args.jobs < 1:
        ap.error("--jobs must be at least 1")
    presets = PRESETS if args.presets == "all" else (args.presets,)
    figures = tuple(f.strip() for f in args.figures.split(",") if f.strip())
    try:
        sweeps = select_sweeps(presets, figures)
    except ValueError as exc:
        ap.error(str(exc))
    pairs = jobs_of(sweeps, args.out)
    if args.list:
        for _, job in pairs:
            print(" ".join(["uno-run", *job.overrides, "engine.progress=false",
                            f"out_dir={job.folder}"]))  # fmt: skip
        return 0
    return _run(pairs, args, presets)


def _run(pairs: list, args, presets: tuple[str, ...]) -> int:
    from uno.runs import run_jobs

    order = sorted(range(len(pairs)), key=lambda i: -_COST_S.get(pairs[i][0].figure, _SHORT_COST_S))
    print(f"uno-eval: {len(pairs)} runs of {len({s for s, _ in pairs})} sweeps "
          f"({', '.join(presets)} presets) in {args.jobs} worker(s), into {args.out}",
          file=sys.stderr)  # fmt: skip
    t0 = time.perf_counter()
    done = run_jobs([pairs[i][1] for i in order], args.jobs, ProgressLine(len(pairs)))
    wall_s = time.perf_counter() - t0
    outcomes = [None] * len(pairs)
    for i, outcome in zip(order, done, strict=True):
        outcomes[i] = outcome
    status = 0
    for (_, job), o in zip(pairs, outcomes, strict=True):
        if o.status != "complete":
            status = 1
            why = o.error or "flows unfinished at the stop time"
            print(f"uno-eval: {o.status}: {job.folder} ({' '.join(job.overrides)}): {why}",
                  file=sys.stderr)  # fmt: skip
    for p in presets:
        mine = [(pair, o) for pair, o in zip(pairs, outcomes, strict=True) if pair[0].presets == p]
        if not mine:
            continue
        base = Path(args.out) / p
        base.mkdir(parents=True, exist_ok=True)
        stats = timing([m[0] for m in mine], [m[1] for m in mine], wall_s, args.jobs)
        (base / "timing.json").write_text(json.dumps(stats, indent=2) + "\n")
        if not args.no_plots:
            for line in _plots([m[0] for m in mine], args.out):
                print(f"uno-eval: {line}", file=sys.stderr)
        table = ledger([m[0] for m in mine], [m[1] for m in mine], base)
        counts = table["status"].value_counts().to_dict()
        print(f"uno-eval: {p} presets: claim ledger in {base / 'claims.md'}: "
              f"{', '.join(f'{v} {k}' for k, v in counts.items())}")  # fmt: skip
    print(f"uno-eval: {len(pairs)} runs in {_clock(wall_s)} ({wall_s:.0f} s)")
    return status


if __name__ == "__main__":
    raise SystemExit(main())
